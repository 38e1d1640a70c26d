package table

import (
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// SpaceKey is the space (Version = space version).
func SpaceKey(space string) store.Key { return store.Key{PK: "space#" + space, SK: "space"} }

// SpaceListingKey is what list_spaces shows of a space, written with it; a
// public one's carries the box's spaces index entry.
func SpaceListingKey(space string) store.Key {
	return store.Key{PK: "space#" + space, SK: "listing"}
}

// SpaceMembersKey is a private space's member counter (Version =
// membership revision, Count = members).
func SpaceMembersKey(space string) store.Key {
	return store.Key{PK: "space#" + space, SK: "members"}
}

// SpaceMemberKey is a private space's member.
func SpaceMemberKey(space, agent string) store.Key {
	return store.Key{PK: "space#" + space, SK: "member#" + agent}
}

// SpaceMemberPrefix is the range of a private space's members.
func SpaceMemberPrefix(space string) (pk, prefix string) { return "space#" + space, "member#" }

// AgentSpaceKey is the member's side of a private space, for list_spaces;
// sortKey is SpaceSortKey.
func AgentSpaceKey(agent, sortKey string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "space#" + sortKey}
}

// AgentSpacePrefix is the range of an agent's private spaces.
func AgentSpacePrefix(agent string) (pk, prefix string) { return "agent#" + agent, "space#" }

// BoxSpacesIndex is the GSI1 partition of a box's public spaces'
// listings (SpaceSortKey).
func BoxSpacesIndex(box string) string { return "box#" + box + "#spaces" }

// SpaceSortKey orders spaces by creation, then id: fixed-width UTC time so
// that byte order is time order, and the id so that keys are unique. The
// public index and every agent's private list share it, so they share one
// order and one cursor.
func SpaceSortKey(created time.Time, id string) string {
	return created.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + id
}

// SpaceMember is a private space's member, on both sides.
type SpaceMember struct {
	SpaceID string    `json:"space_id"`
	AgentID string    `json:"agent_id"`
	AddedBy string    `json:"added_by"`
	AddedAt time.Time `json:"added_at"`
}

// VisibilityPublic is the visibility of a space every agent of its box
// sees; only such a space's listing is on the box's spaces index.
const VisibilityPublic = "public"

// Space is the stored space: its listing (what list_spaces shows) and the
// rest. The embedded listing's fields are Space's own in JSON, so a space
// item decodes as its listing too (entries written before listing items
// existed are found that way).
type Space struct {
	SpaceListing
	RequestID string `json:"request_id"`
	Goal      string `json:"goal"`
	UpdatedBy string `json:"updated_by"`
}

// SortKey is the space's place in its box's spaces index and in its
// members' agent-side lists: creation order.
func (r *Space) SortKey() string { return SpaceSortKey(r.CreatedAt, r.ID) }

// SpaceListing is a space's listing item: what list_spaces (and the
// operator view) show of it.
type SpaceListing struct {
	ID         string    `json:"id"`
	BoxID      string    `json:"box_id"`
	CreatorID  string    `json:"creator_id"`
	Title      string    `json:"title"`
	Status     string    `json:"status"`
	Visibility string    `json:"visibility"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Items returns the space item and its listing item at version; every
// write of a space puts both. Only a public space's listing is on the
// box's spaces index (GSI1).
func (r *Space) Items(version uint64) (space, listing *store.Item) {
	k, lk := SpaceKey(r.ID), SpaceListingKey(r.ID)
	space = &store.Item{PK: k.PK, SK: k.SK, Version: version, Data: Encode(r)}
	listing = &store.Item{PK: lk.PK, SK: lk.SK, Version: version, Data: Encode(r.SpaceListing)}
	if r.Visibility == VisibilityPublic {
		listing.GSI1PK, listing.GSI1SK = BoxSpacesIndex(r.BoxID), r.SortKey()
	}
	return space, listing
}

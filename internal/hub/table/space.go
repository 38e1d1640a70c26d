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

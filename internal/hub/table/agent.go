package table

import (
	"encoding/json"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// The agent partition, agent#<agent>: everything that is the agent's own
// lives beside its record, so a call's checks read one partition.

// AgentKey is the agent record (Version = admin revision).
func AgentKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "agent"} }

// ProfileKey is the private profile: its own item, so its Version is the
// profile version and PROFILE_OUTDATED fires for a profile change only.
func ProfileKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "profile"} }

// CheckpointKey is the shared checkpoint (Version = revision).
func CheckpointKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "checkpoint"}
}

// AckedCounterKey counts attention rows ACKed (Count); unread is the inbox
// head's Version minus it, so unread needs no scan.
func AckedCounterKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#acked"}
}

// AckSeqKey is the ACK sequencer: every ACK moves it, so two ACKs of one
// agent serialize; it also holds the open ACK intent and the acknowledged
// watermark.
func AckSeqKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "acks"} }

// RequestCounterKey is the live open request counter (Count), which bounds
// an agent's open requests without a scan.
func RequestCounterKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#requests"}
}

// SessionListKey lists an agent's sessions, oldest first, so a session cap
// knows which to end.
func SessionListKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "sessions"}
}

// SpacesCreatedKey counts the spaces an agent created, for its quota.
func SpacesCreatedKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#spaces"}
}

// CardKey is the directory card (Version = card revision).
func CardKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "card"} }

// CardListingKey is what a directory search filters on, written with the
// card; it alone carries the directory index entry, so the index projects
// a small item.
func CardListingKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "card#listing"}
}

// MembershipGenKey is the membership generation (Count): +1 on every add
// and remove, so rooms_list cursors bound to it notice a change.
func MembershipGenKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#memberships"}
}

// AgentMemberKey is the agent side of a current room membership
// (rooms_list, agent_prime).
func AgentMemberKey(agent, room string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "member#" + room}
}

// MembershipPrefix is the range of an agent's memberships.
func MembershipPrefix(agent string) (pk, prefix string) { return "agent#" + agent, "member#" }

// BoxAgentsIndex is the GSI1 partition of a box's agents (AgentOrderKey):
// the owner's listings.
func BoxAgentsIndex(box string) string { return "box#" + box + "#agents" }

// DirectoryIndex is the GSI2 partition of a box's listed, active agents'
// card listings (OrderKey): sparse, so a search reads only listed agents.
func DirectoryIndex(box string) string { return "box#" + box + "#directory" }

// KeyRecordKey is an agent key's record: the hash of its secret and its
// owner, found by the key id a bearer carries.
func KeyRecordKey(keyID string) store.Key { return store.Key{PK: "key#" + keyID, SK: "key"} }

// OwnerKeyKey is an owner key's record, found by its key id.
func OwnerKeyKey(keyID string) store.Key { return store.Key{PK: "okey#" + keyID, SK: "key"} }

// BoxOwnerKeysIndex is the GSI1 partition of a box's owner keys, by
// creation (OwnerKeySortKey).
func BoxOwnerKeysIndex(box string) string { return "box#" + box + "#ownerkeys" }

// OwnerKeySortKey orders an owner key on BoxOwnerKeysIndex: creation time
// (RFC 3339, UTC), then key id.
func OwnerKeySortKey(created time.Time, keyID string) string {
	return created.UTC().Format(time.RFC3339Nano) + "#" + keyID
}

// Agent is an agent as its owner manages it: name, status, keys,
// directory opt-in. The item's Version is an admin revision that serializes
// the owner's changes.
type Agent struct {
	ID              string    `json:"id"`
	BoxID           string    `json:"box_id"`
	Name            string    `json:"name"`
	DirectoryListed bool      `json:"directory_listed"`
	Status          string    `json:"status"`
	KeyIDs          []string  `json:"key_ids"`
	CreatedAt       time.Time `json:"created_at"`
}

// Profile is the agent's owner-managed private profile. It is its own
// item whose Version is the profile version, so PROFILE_OUTDATED fires for
// a profile change and for nothing else.
type Profile struct {
	Role           string          `json:"role,omitempty"`
	InstructionsMD string          `json:"instructions_md,omitempty"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

// KeyRecord binds a key id to its agent and the hash of its secret.
type KeyRecord struct {
	KeyID     string    `json:"key_id"`
	AgentID   string    `json:"agent_id"`
	BoxID     string    `json:"box_id"`
	SecretSHA string    `json:"secret_sha256"`
	CreatedAt time.Time `json:"created_at"`
	// Scope is ScopeRead for a read-only key; empty (every key issued
	// before scopes existed) is ScopeWrite.
	Scope string `json:"scope,omitempty"`
}

// Checkpoint is the record stored at its key.
type Checkpoint struct {
	BodyMD         string          `json:"body_md"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	SessionID      string          `json:"session_id"`
	ProfileVersion uint64          `json:"profile_version"`
	SavedAt        time.Time       `json:"saved_at"`
}

// Card is the stored directory card: its listing (what a search filters
// on) and the rest. AgentID, BoxID, Name and Listed are copied from the
// agent record at each write (the hub's cardItems); the rest is the
// agent's own. The embedded listing's fields are Card's own in JSON, so a
// card item decodes as its listing too.
type Card struct {
	CardListing
	DescriptionMD string    `json:"description_md,omitempty"`
	Skills        []string  `json:"skills,omitempty"`
	ContactNotes  string    `json:"contact_notes,omitempty"`
	UpdatedAt     time.Time `json:"updated_at,omitzero"`
}

// CardListing is a card's listing item: what a search filters on, kept
// apart from the card so a search page reads small items.
type CardListing struct {
	AgentID string `json:"agent_id"`
	BoxID   string `json:"box_id"`
	Name    string `json:"name"`
	Listed  bool   `json:"listed"`
	Role    string `json:"role,omitempty"`
}

// Items builds the card item and its listing item at version. The listing
// is on its box's directory index (GSI2, OrderKey) only while Listed, so
// a search never reads an unlisted card.
func (c *Card) Items(version uint64) (full, listing *store.Item) {
	k, lk := CardKey(c.AgentID), CardListingKey(c.AgentID)
	full = &store.Item{PK: k.PK, SK: k.SK, Version: version, Data: Encode(c)}
	listing = &store.Item{PK: lk.PK, SK: lk.SK, Version: version, Data: Encode(c.CardListing)}
	if c.Listed {
		listing.GSI2PK, listing.GSI2SK = DirectoryIndex(c.BoxID), OrderKey(c.Name, c.AgentID)
	}
	return full, listing
}

// OwnerKey is an owner key's record: the hash of its secret, never the
// secret, and the one box it reads.
type OwnerKey struct {
	KeyID     string    `json:"key_id"`
	BoxID     string    `json:"box_id"`
	SecretSHA string    `json:"secret_sha256"`
	CreatedAt time.Time `json:"created_at"`
	// Scope is OwnerScopeWrite for a key that may post as the box's
	// operator (hub/operate.go); empty, the default, is read-only.
	Scope string `json:"scope,omitempty"`
}

// OwnerScopeWrite is the stored scope of an owner key that may write.
const OwnerScopeWrite = "write"

// Item is the owner key's item, written once (Version 1), on its box's
// owner keys index in creation order.
func (r *OwnerKey) Item() *store.Item {
	k := OwnerKeyKey(r.KeyID)
	return &store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: Encode(r),
		GSI1PK: BoxOwnerKeysIndex(r.BoxID), GSI1SK: OwnerKeySortKey(r.CreatedAt, r.KeyID)}
}

package table

import (
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// The room partition, room#<room>: room-scoped items share it, so a room's
// roster is one Query and a tool's checks one batch. The room's message
// stream shares it too (message.go).

// RoomKey is the room record (Version = admin revision).
func RoomKey(room string) store.Key { return store.Key{PK: "room#" + room, SK: "room"} }

// BriefKey is the room brief (Version = brief revision; absent is 0).
func BriefKey(room string) store.Key { return store.Key{PK: "room#" + room, SK: "brief"} }

// RoomMemberKey is the room side of a current membership (Version =
// membership revision, unique across epochs).
func RoomMemberKey(room, agent string) store.Key {
	return store.Key{PK: "room#" + room, SK: "member#" + agent}
}

// RosterPrefix is the range of a room's current members.
func RosterPrefix(room string) (pk, prefix string) { return "room#" + room, "member#" }

// EpochKey is the epoch ledger of an agent in a room, never deleted
// (Version = epochs started), so a member re-added reads from its new epoch.
func EpochKey(room, agent string) store.Key {
	return store.Key{PK: "room#" + room, SK: "epoch#" + agent}
}

// MemberCountKey is the current member count (Count), which bounds a room
// without a scan.
func MemberCountKey(room string) store.Key {
	return store.Key{PK: "room#" + room, SK: "count#members"}
}

// BoxRoomsIndex is the GSI1 partition of a box's rooms (OrderKey).
func BoxRoomsIndex(box string) string { return "box#" + box + "#rooms" }

// RoomStreamPK is the partition of a room's message stream: the room's own.
func RoomStreamPK(room string) string { return "room#" + room }

// RoomHeadKey is the head of a room's stream.
func RoomHeadKey(room string) store.Key { return StreamHeadKey(RoomStreamPK(room)) }

// RoomMember is a current membership, room side; it is the authority for
// membership and the follow preference.
type RoomMember struct {
	AgentID   string    `json:"agent_id"`
	AgentName string    `json:"agent_name"`
	Epoch     uint64    `json:"epoch"`
	Follow    string    `json:"follow"`
	JoinedAt  time.Time `json:"joined_at"`
	// StartSeq is the first room stream sequence this epoch may read: the
	// room's head when the member was added, plus one.
	StartSeq uint64 `json:"start_seq,omitempty"`
	// Inactive marks the membership of a deactivated agent
	// (admin_status.go): kept, but absent from rosters and targets, and
	// not counted in the room's member counter.
	Inactive bool `json:"inactive,omitempty"`
}

// Membership is the agent-side copy of a current membership: only
// what is needed to find the room-side items.
type Membership struct {
	RoomID   string    `json:"room_id"`
	Epoch    uint64    `json:"epoch"`
	JoinedAt time.Time `json:"joined_at"`
}

// Epoch is the ledger of one (room, agent) pair. Its item's Version is
// the number of epochs started; RevisionFloor is the highest membership
// revision any ended epoch used.
type Epoch struct {
	AgentID       string    `json:"agent_id"`
	Epoch         uint64    `json:"epoch"`
	Active        bool      `json:"active"`
	RevisionFloor uint64    `json:"revision_floor"`
	JoinedAt      time.Time `json:"joined_at"`
	LeftAt        time.Time `json:"left_at,omitzero"`
}

// Room is a room as its owner manages it. The item's Version is an admin
// revision; it changes when the room is archived.
type Room struct {
	ID         string    `json:"id"`
	BoxID      string    `json:"box_id"`
	Name       string    `json:"name"`
	Archived   bool      `json:"archived"`
	CreatedAt  time.Time `json:"created_at"`
	ArchivedAt time.Time `json:"archived_at,omitzero"`
}

// Item is the room's item at version: on its box's rooms index, sorted by
// OrderKey so rooms list in name order.
func (r *Room) Item(version uint64) *store.Item {
	k := RoomKey(r.ID)
	return &store.Item{PK: k.PK, SK: k.SK, Version: version,
		GSI1PK: BoxRoomsIndex(r.BoxID), GSI1SK: OrderKey(r.Name, r.ID), Data: Encode(r)}
}

// Brief is a room's brief. UpdatedBy is the agent that last appended,
// empty when the owner wrote it.
type Brief struct {
	TextMD    string    `json:"text_md"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by,omitempty"`
}

package table

import "github.com/agentbox/agentbox/internal/store"

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

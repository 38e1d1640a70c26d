package hub

import "github.com/agentbox/agentbox/internal/store"

// Every item key of the table is built here, so the layout reads in one
// place:
//
//	box#<box>            box                 the box; GSI1 boxes / <folded name>\x01<box> (list-boxes)
//	agent#<agent>        agent               agent record: name, status, keys (Version =
//	                                         admin revision); GSI1 box#<box>#agents / <name>#<agent>
//	agent#<agent>        profile             private profile (Version = profile version)
//	agent#<agent>        checkpoint          shared checkpoint (Version = revision)
//	agent#<agent>        count#acked         attention rows ACKed (Count); unread = inbox head - acked
//	agent#<agent>        inbox, inbox#<seq>  inbox head and attention rows (messages.go)
//	agent#<agent>        count#requests      live open request counter (Count)
//	agent#<agent>        acks                ACK sequencer: moved by every ACK; the open ACK intent (inbox.go)
//	                                         and the acknowledged watermark (ackmark.go)
//	agent#<agent>        member#<room>       current room memberships
//	key#<key id>         key                 key record: hash of the secret, owner
//	ses#<session>        ses                 session (ExpiresAt = idle expiry); when bound,
//	                                         GSI1 seen#<agent> / <last use ns 20>#<session>
//	ses#<session>        rcpts               the session's retrieval receipts (receipts.go)
//	idem#<agent>         <mutation>          idempotency record of (agent, key), any tool (ExpiresAt)
//	config#cursor        key                 the HMAC secret of every cursor (cursorkey.go)
//	intent#<intent>      intent              open intent, its progress (Version = steps applied);
//	                                         GSI1 intents#open#<box shard> / <created ns>#<intent> (intent.go)
//	fan#<set>            part#<n>            a fan-out's recipients of step n, immutable (fanout.go)
//
// GSI1 on agents serves the owner's listings; directory and room indexes
// join as their tools arrive.
func boxKey(box string) store.Key       { return store.Key{PK: "box#" + box, SK: "box"} }
func agentKey(agent string) store.Key   { return store.Key{PK: "agent#" + agent, SK: "agent"} }
func profileKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "profile"} }
func checkpointKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "checkpoint"}
}
func ackedCounterKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#acked"}
}
func ackSeqKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "acks"} }
func requestCounterKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#requests"}
}
func membershipPrefix(agent string) (pk, prefix string) { return "agent#" + agent, "member#" }
func keyRecordKey(keyID string) store.Key               { return store.Key{PK: "key#" + keyID, SK: "key"} }
func sessionKey(id string) store.Key                    { return store.Key{PK: "ses#" + id, SK: "ses"} }
func cursorSecretKey() store.Key                        { return store.Key{PK: "config#cursor", SK: "key"} }

func idemKey(agent, key string) store.Key {
	return store.Key{PK: "idem#" + agent, SK: "k#" + key}
}
func boxAgentsIndex(box string) string { return "box#" + box + "#agents" }

// boxesIndex is the GSI1 partition of every box of the store.
const boxesIndex = "boxes"

// Directory and rooms (issue #3). Room-scoped items share the room's
// partition, so a room's roster is one Query and a tool's checks one batch.
//
//	agent#<agent>  card                 directory card: the owner's name plus the agent's own public
//	                                    fields (Version = card revision)
//	agent#<agent>  card#listing         what a search filters on, written with the card (Version =
//	                                    card revision); GSI2 box#<box>#directory /
//	                                    <folded name>\x01<agent> while listed and active (sparse)
//	agent#<agent>  count#memberships    membership generation (Count): +1 on every add and remove;
//	                                    rooms_list cursors are bound to it
//	agent#<agent>  member#<room>        current membership, agent side (rooms_list, agent_prime)
//	room#<room>    room                 room record: box, name, archived (Version = admin revision);
//	                                    GSI1 box#<box>#rooms / <folded name>\x01<room>
//	room#<room>    brief                room brief (Version = brief revision; absent is revision 0)
//	room#<room>    member#<agent>       current membership, room side: epoch, follow preference
//	                                    (Version = membership revision, unique across epochs)
//	room#<room>    epoch#<agent>        epoch ledger, never deleted (Version = epochs started)
//	room#<room>    count#members        current member count (Count)
//
// The \x01 separator sorts below every character a name may hold (names
// have no control characters), so "ab" sorts before "ab c" and the id
// breaks ties between equal names.
func cardKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "card"} }
func cardListingKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "card#listing"}
}
func membershipGenKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#memberships"}
}
func agentMemberKey(agent, room string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "member#" + room}
}
func roomKey(room string) store.Key  { return store.Key{PK: "room#" + room, SK: "room"} }
func briefKey(room string) store.Key { return store.Key{PK: "room#" + room, SK: "brief"} }
func roomMemberKey(room, agent string) store.Key {
	return store.Key{PK: "room#" + room, SK: "member#" + agent}
}
func rosterPrefix(room string) (pk, prefix string) { return "room#" + room, "member#" }
func epochKey(room, agent string) store.Key {
	return store.Key{PK: "room#" + room, SK: "epoch#" + agent}
}
func memberCountKey(room string) store.Key { return store.Key{PK: "room#" + room, SK: "count#members"} }
func directoryIndex(box string) string     { return "box#" + box + "#directory" }
func boxRoomsIndex(box string) string      { return "box#" + box + "#rooms" }

// boxRequestsIndex is the GSI1 partition of a box's request messages'
// pointers (msg#<id> / msg), by send time: the operator view's board.
func boxRequestsIndex(box string) string { return "box#" + box + "#requests" }

// orderKey is an index sort key ordering by folded name, then id.
func orderKey(name, id string) string { return sortFold(name) + "\x01" + id }

// Spaces and memory (seed 002; spaces.go, memory.go):
//
//	space#<space>    space                  the space (Version = space version)
//	space#<space>    listing                what list_spaces shows of it, written with it (Version =
//	                                        space version); a public one's is in GSI1
//	                                        box#<box>#spaces / <created>#<space>
//	space#<space>    members                a private space's member counter (Version =
//	                                        membership revision, Count = members)
//	space#<space>    member#<agent>         a private space's member
//	agent#<agent>    space#<created>#<space> the member's side of it, for list_spaces
//	agent#<agent>    memory#<name>          a memory note (Version = note version)
//	agent#<agent>    count#memory           the agent's note counter (Version = revision,
//	                                        Count = notes)
//
// <created> is spaceSortKey's fixed-width creation time, so the public index
// and every agent's private list share one order and one cursor.
func spaceKey(space string) store.Key { return store.Key{PK: "space#" + space, SK: "space"} }
func spaceListingKey(space string) store.Key {
	return store.Key{PK: "space#" + space, SK: "listing"}
}
func spaceMembersKey(space string) store.Key {
	return store.Key{PK: "space#" + space, SK: "members"}
}
func spaceMemberKey(space, agent string) store.Key {
	return store.Key{PK: "space#" + space, SK: "member#" + agent}
}
func spaceMemberPrefix(space string) (pk, prefix string) { return "space#" + space, "member#" }
func agentSpaceKey(agent, sortKey string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "space#" + sortKey}
}
func agentSpacePrefix(agent string) (pk, prefix string) { return "agent#" + agent, "space#" }
func boxSpacesIndex(box string) string                  { return "box#" + box + "#spaces" }
func memoryKey(agent, name string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "memory#" + name}
}
func memoryPrefix(agent string) (pk, prefix string) { return "agent#" + agent, "memory#" }
func memoryCounterKey(agent string) store.Key {
	return store.Key{PK: "agent#" + agent, SK: "count#memory"}
}

// Requests and file reports (requests.go, reports.go; their builders live
// there, beside the design notes that explain them):
//
//	req#<message>   to#<recipient>     a request (Version = declaration revision, 0 = open);
//	                                   GSI1 rin#<recipient> and GSI2 rout#<author> /
//	                                   <sent ns 20>#<message>#<recipient>
//	frep#<message>  <file>#<agent>     a file access report (Version = report revision)

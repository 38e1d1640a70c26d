package table

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// Streams: a room's stream lives in the room's partition (RoomStreamPK), a
// DM pair's in dm#<A>#<B> with A < B. A stream's head Version is the last
// sequence taken, and its messages are msg#<seq>, so a send moves the head
// and stores the message in one write and a reader never meets a hole.

// DMStreamPK is the partition of the DM stream of a pair, a < b.
func DMStreamPK(a, b string) string { return "dm#" + a + "#" + b }

// StreamHeadKey is a stream's head (Version = last sequence).
func StreamHeadKey(pk string) store.Key { return store.Key{PK: pk, SK: "head"} }

// StreamMsgPrefix is the range of a stream's messages.
const StreamMsgPrefix = "msg#"

// StreamMsgKey is message n of a stream, in full, immutable.
func StreamMsgKey(pk string, n uint64) store.Key {
	return store.Key{PK: pk, SK: StreamMsgPrefix + SeqKey(n)}
}

// MessagePointerKey is a message's address (stream, sequence, author,
// thread), found by its id alone.
func MessagePointerKey(id string) store.Key { return store.Key{PK: "msg#" + id, SK: "msg"} }

// MessageIDOfPointer is the message id of a pointer's partition key, for
// readers of the requests index, which yields pointers.
func MessageIDOfPointer(pk string) string { return strings.TrimPrefix(pk, "msg#") }

// BoxRequestsIndex is the GSI1 partition of a box's request messages'
// pointers, by send time (RequestsSortKey): the operator view's board.
func BoxRequestsIndex(box string) string { return "box#" + box + "#requests" }

// RequestsSortKey orders a request message on BoxRequestsIndex: by send
// time (Unix ns), then id.
func RequestsSortKey(sentNS int64, id string) string { return SeqKey(uint64(sentNS)) + "#" + id }

// BoxActivityIndex is the GSI2 partition of every message pointer of a
// box, rooms and DMs alike, by send time (ActivitySortKey): the operator
// view's activity feed, charts and files page page it newest first, so
// what happened lately is one bounded Query however many streams the box
// has. Every send puts its pointer on it (one index write more per send).
func BoxActivityIndex(box string) string { return "box#" + box + "#activity" }

// ActivitySortKey orders a message on BoxActivityIndex: by send time (Unix
// ns, fixed width), then id.
func ActivitySortKey(sentNS int64, id string) string { return SeqKey(uint64(sentNS)) + "#" + id }

// ActivityTime is the send time an ActivitySortKey holds.
func ActivityTime(sortKey string) (time.Time, bool) {
	ns, _, _ := strings.Cut(sortKey, "#")
	n, err := strconv.ParseUint(ns, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, int64(n)).UTC(), true
}

// ThreadKey is row n of a thread index: one row per message of the thread,
// so thread_read is one Query.
func ThreadKey(root string, n uint64) store.Key {
	return store.Key{PK: "thr#" + root, SK: "m#" + SeqKey(n)}
}

// ThreadPrefix is the range of a thread's rows.
func ThreadPrefix(root string) (pk, prefix string) { return "thr#" + root, "m#" }

// FanoutPartKey is part n of a fan-out's recipient set, immutable: written
// once before the message, so each fan-out step costs the same.
func FanoutPartKey(set string, n uint64) store.Key {
	return store.Key{PK: "fan#" + set, SK: fmt.Sprintf("part#%06d", n)}
}

// Pointer is a message's address, so that an id finds its stream.
type Pointer struct {
	Stream     string `json:"stream"`
	Seq        uint64 `json:"seq"`
	AuthorID   string `json:"author_id"`
	ReplyTo    string `json:"reply_to,omitempty"`
	ThreadRoot string `json:"thread_root"`
	// Requests are the agents the message requests something of. A
	// pointer with requests is on its box's requests index (GSI1
	// box#B#requests / <sent ns>#<message>), which the operator view's
	// board pages: one small entry per request message, none per
	// recipient, and no item of its own.
	Requests []string `json:"requests,omitempty"`
	// Every pointer is on its box's activity index (GSI2
	// box#B#activity / <sent ns>#<message>, BoxActivityIndex).
}

// ThreadRow is one row of a thread index.
type ThreadRow struct {
	ID      string `json:"id"`
	Stream  string `json:"stream"`
	Seq     uint64 `json:"seq"`
	ReplyTo string `json:"reply_to,omitempty"`
}

// Message is a stored message, immutable once written: the stream item
// at its sequence holds it whole.
type Message struct {
	ID         string `json:"id"`
	Stream     string `json:"stream"`
	Seq        uint64 `json:"seq"`
	Kind       string `json:"kind"`
	RoomID     string `json:"room_id,omitempty"`
	Recipient  string `json:"recipient,omitempty"`
	AuthorID   string `json:"author_id"`
	AuthorName string `json:"author_name"`
	// AuthorKind is "operator" for a message the box's owner posted
	// (hub/operate.go; AuthorID is then the box id), empty for an agent's.
	AuthorKind string `json:"author_kind,omitempty"`
	// Via records what wrote an operator's message: the owner key's id,
	// or "admin" for the admin CLI. Empty for an agent's.
	Via        string          `json:"via,omitempty"`
	BodyMD     string          `json:"body_md"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Files      []File          `json:"files,omitempty"`
	Mentions   []string        `json:"mentions,omitempty"`
	Requests   []string        `json:"requests,omitempty"`
	ReplyTo    string          `json:"reply_to,omitempty"`
	ThreadRoot string          `json:"thread_root"`
	SentAt     time.Time       `json:"sent_at"`
}

package table

import (
	"strings"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// The inbox lives in the agent's partition: its head (Version = last inbox
// sequence = rows ever written) and one attention row per message that
// asked for the agent's attention, numbered like a stream.

// InboxHeadKey is the inbox head.
func InboxHeadKey(agent string) store.Key { return store.Key{PK: "agent#" + agent, SK: "inbox"} }

// InboxHeadAgent returns the agent whose inbox head has the key pk/sk (a
// stream record's keys), or false for any other item.
func InboxHeadAgent(pk, sk string) (string, bool) {
	if sk != "inbox" {
		return "", false
	}
	return strings.CutPrefix(pk, "agent#")
}

// InboxRowPrefix is the range of an inbox's attention rows. The head's SK
// ("inbox") sorts before it and outside it.
const InboxRowPrefix = "inbox#"

// InboxRowKey is attention row n.
func InboxRowKey(agent string, n uint64) store.Key {
	return store.Key{PK: "agent#" + agent, SK: InboxRowPrefix + SeqKey(n)}
}

// AttentionIndex is the GSI1 partition of an agent's attention rows, by
// stream and stream sequence (AttentionSortKey): the receipt lookup of a
// message read in its stream.
func AttentionIndex(agent string) string { return "att#" + agent }

// AttentionSortKey orders a row on AttentionIndex.
func AttentionSortKey(stream string, seq uint64) string { return stream + "#" + SeqKey(seq) }

// Attention is one inbox row: a message that needs the agent's
// attention, with why.
type Attention struct {
	Seq       uint64    `json:"seq"`
	MessageID string    `json:"message_id"`
	Stream    string    `json:"stream"`
	StreamSeq uint64    `json:"stream_seq"`
	Reasons   int       `json:"reasons"`
	At        time.Time `json:"at"`
	AckedBy   string    `json:"acked_by,omitempty"`
	AckedAt   time.Time `json:"acked_at,omitzero"`
}

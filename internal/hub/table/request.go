package table

import (
	"fmt"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// RequestKey is a request to one recipient (Version = declaration
// revision, 0 = open).
func RequestKey(message, recipient string) store.Key {
	return store.Key{PK: "req#" + message, SK: "to#" + recipient}
}

// IncomingIndex is the GSI1 partition of an agent's incoming requests.
func IncomingIndex(agent string) string { return "rin#" + agent }

// OutgoingIndex is the GSI2 partition of an agent's outgoing requests.
func OutgoingIndex(agent string) string { return "rout#" + agent }

// RequestSortKey is a request's sort key in both indexes: send time, then
// message, then recipient.
func RequestSortKey(sent time.Time, message, recipient string) string {
	return fmt.Sprintf("%020d#%s#%s", sent.UnixNano(), message, recipient)
}

// Request is a request and its current declaration.
type Request struct {
	MessageID   string      `json:"message_id"`
	Destination Destination `json:"destination"`
	StreamSeq   uint64      `json:"stream_seq"`
	AuthorID    string      `json:"author_id"`
	// AuthorKind is the request message's (table.Message.AuthorKind).
	AuthorKind  string    `json:"author_kind,omitempty"`
	RecipientID string    `json:"recipient_id"`
	SentAt      time.Time `json:"sent_at"`
	Status      string    `json:"status"`
	DeclaredAt  time.Time `json:"declared_at,omitzero"`
	// ResponseID is the reply message of the current declaration.
	ResponseID string `json:"response_id,omitempty"`
}

// Destination is where a request's message went, as stored: the hub's
// Destination with the same fields and names, without its contract tags.
type Destination struct {
	Kind             string `json:"kind"`
	RecipientAgentID string `json:"recipient_agent_id,omitempty"`
	RoomID           string `json:"room_id,omitempty"`
}

// Item is the request's item at version, on its recipient's incoming
// index (GSI1) and its author's outgoing index (GSI2), both in the order
// RequestSortKey gives.
func (r *Request) Item(version uint64) *store.Item {
	k := RequestKey(r.MessageID, r.RecipientID)
	sk := RequestSortKey(r.SentAt, r.MessageID, r.RecipientID)
	return &store.Item{PK: k.PK, SK: k.SK, Version: version,
		GSI1PK: IncomingIndex(r.RecipientID), GSI1SK: sk,
		GSI2PK: OutgoingIndex(r.AuthorID), GSI2SK: sk,
		Data: Encode(r)}
}

package table

import (
	"fmt"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// SessionKey is a session (ExpiresAt = idle expiry).
func SessionKey(id string) store.Key { return store.Key{PK: "ses#" + id, SK: "ses"} }

// EndedSessionKey is the state item of a signed session id: its sort key
// is the one the tombstone of an ended session always had.
func EndedSessionKey(id string) store.Key { return store.Key{PK: "ses#" + id, SK: "ended"} }

// ReceiptsKey is the session's retrieval receipts, one item, so an ACK
// checks them in one read.
func ReceiptsKey(session string) store.Key { return store.Key{PK: "ses#" + session, SK: "rcpts"} }

// SeenIndex is the GSI1 partition of an agent's bound sessions, by last
// use (SeenSortKey): the operator view's "last seen" is its newest entry.
func SeenIndex(agent string) string { return "seen#" + agent }

// SeenSortKey orders a session on SeenIndex: last use, then id.
func SeenSortKey(lastSeen time.Time, id string) string {
	return fmt.Sprintf("%020d#%s", lastSeen.UnixNano(), id)
}

// Session is a durable session. AgentID is empty for an MCP session
// opened at initialize without a bearer key; the first authenticated
// agent_prime binds it, once.
type Session struct {
	ID             string    `json:"id"`
	AgentID        string    `json:"agent_id,omitempty"`
	BoxID          string    `json:"box_id,omitempty"`
	Transport      string    `json:"transport"`
	Primed         bool      `json:"primed"`
	ProfileVersion uint64    `json:"profile_version"`
	CreatedAt      time.Time `json:"created_at"`
	LastSeenAt     time.Time `json:"last_seen_at"`
	// TransportEnded is set when the MCP session that carried this
	// session was ended (DELETE): its Mcp-Session-Id no longer names it,
	// but the session lives on, until it expires, for calls that name it
	// as their session_id argument (session.go).
	TransportEnded bool `json:"transport_ended,omitempty"`
}

// SessionList is the record stored at its key.
type SessionList struct {
	IDs []string `json:"ids"`
}

package hub

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// The stored records. They are the domain's persistence shapes, kept apart
// from the DTOs tools return so a stored field never leaks by accident.

type boxRecord struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// agentRecord is an agent as its owner manages it: name, status, keys,
// directory opt-in. The item's Version is an admin revision that serializes
// the owner's changes.
type agentRecord struct {
	ID              string    `json:"id"`
	BoxID           string    `json:"box_id"`
	Name            string    `json:"name"`
	DirectoryListed bool      `json:"directory_listed"`
	Status          string    `json:"status"`
	KeyIDs          []string  `json:"key_ids"`
	CreatedAt       time.Time `json:"created_at"`
}

// profileRecord is the agent's owner-managed private profile. It is its own
// item whose Version is the profile version, so PROFILE_OUTDATED fires for
// a profile change and for nothing else.
type profileRecord struct {
	Role           string          `json:"role,omitempty"`
	InstructionsMD string          `json:"instructions_md,omitempty"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

// keyRecord binds a key id to its agent and the hash of its secret.
type keyRecord struct {
	KeyID     string    `json:"key_id"`
	AgentID   string    `json:"agent_id"`
	BoxID     string    `json:"box_id"`
	SecretSHA string    `json:"secret_sha256"`
	CreatedAt time.Time `json:"created_at"`
	// Scope is ScopeRead for a read-only key; empty (every key issued
	// before scopes existed) is ScopeWrite.
	Scope string `json:"scope,omitempty"`
}

// sessionRecord is a durable session. AgentID is empty for an MCP session
// opened at initialize without a bearer key; the first authenticated
// agent_prime binds it, once.
type sessionRecord struct {
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

type checkpointRecord struct {
	BodyMD         string          `json:"body_md"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	SessionID      string          `json:"session_id"`
	ProfileVersion uint64          `json:"profile_version"`
	SavedAt        time.Time       `json:"saved_at"`
}

// encode is the one encoder of stored records (and of what is measured
// against their limits): JSON without HTML escaping, so a "<", ">" or "&"
// an agent sent is stored, and counted, as the one byte it sent rather
// than as a six-byte \u003c, and a payload carried verbatim comes back as
// it was sent.
func encode(v any) []byte {
	b, err := strictjson.Marshal(v)
	if err != nil {
		// Records are plain structs of marshalable fields; failing here is
		// a programming error, not an input error.
		panic(fmt.Sprintf("hub: encoding %T: %v", v, err))
	}
	return b
}

func decode[T any](it *store.Item) (*T, error) {
	var v T
	if err := json.Unmarshal(it.Data, &v); err != nil {
		return nil, fmt.Errorf("hub: decoding %T at %s: %w", v, it.PK, err)
	}
	return &v, nil
}

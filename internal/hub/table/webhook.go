package table

import (
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// WebhookPartition holds every webhook endpoint: endpoints are few and
// written by the owner and the dispatcher only, so one Query reads them all.
const WebhookPartition = "webhooks"

// WebhookPrefix is the range of the endpoints.
const WebhookPrefix = "ep#"

// WebhookKey is an endpoint.
func WebhookKey(id string) store.Key { return store.Key{PK: WebhookPartition, SK: WebhookPrefix + id} }

// WebhookCursorPrefix is the range of a box endpoint's per-agent cursors.
// A box endpoint serves every agent of its box, so what it delivered is
// kept per agent: one item per (endpoint, agent), Version = the agent's
// inbox seq the endpoint last delivered (it only grows, so it doubles as
// the CAS version). "epa#" sorts apart from "ep#": a range read of the
// endpoints never returns a cursor.
const WebhookCursorPrefix = "epa#"

// WebhookCursorKey is a box endpoint's cursor for one agent.
func WebhookCursorKey(endpoint, agent string) store.Key {
	return store.Key{PK: WebhookPartition, SK: WebhookCursorPrefix + endpoint + "#" + agent}
}

// WebhookCursorsPrefix is the range of one box endpoint's cursors.
func WebhookCursorsPrefix(endpoint string) (pk, prefix string) {
	return WebhookPartition, WebhookCursorPrefix + endpoint + "#"
}

// WebhookSecret is one signing secret of an endpoint.
type WebhookSecret struct {
	Secret string `json:"secret"`
	// Until is when an old secret stops signing; zero for the current one.
	Until time.Time `json:"until,omitzero"`
}

// Webhook is an endpoint (WebhookKey): an agent endpoint serves one
// agent's inbox and keeps its delivered seq here; a box endpoint (AgentID
// empty) serves every agent of its box and keeps one cursor per agent
// (WebhookCursorKey). Secrets[0] is the current secret; a second one signs
// too until its Until, during a rotation's overlap.
type Webhook struct {
	ID           string          `json:"id"`
	BoxID        string          `json:"box_id"`
	AgentID      string          `json:"agent_id"`
	URL          string          `json:"url"`
	Secrets      []WebhookSecret `json:"secrets"`
	Status       string          `json:"status"`
	DeliveredSeq uint64          `json:"delivered_seq"`
	FailingSince time.Time       `json:"failing_since,omitzero"`
	LastStatus   int             `json:"last_status,omitempty"`
	LastAttempt  time.Time       `json:"last_attempt,omitzero"`
	CreatedAt    time.Time       `json:"created_at"`
}

// PerBox reports a box endpoint (no agent: its cursors are per agent).
func (r *Webhook) PerBox() bool { return r.AgentID == "" }

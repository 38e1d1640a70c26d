package table

import "github.com/agentbox/agentbox/internal/store"

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

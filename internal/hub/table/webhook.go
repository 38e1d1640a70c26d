package table

import "github.com/agentbox/agentbox/internal/store"

// WebhookPartition holds every webhook endpoint: endpoints are few and
// written by the owner and the dispatcher only, so one Query reads them all.
const WebhookPartition = "webhooks"

// WebhookPrefix is the range of the endpoints.
const WebhookPrefix = "ep#"

// WebhookKey is an endpoint.
func WebhookKey(id string) store.Key { return store.Key{PK: WebhookPartition, SK: WebhookPrefix + id} }

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

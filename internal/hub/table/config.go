package table

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// CursorSecretKey is the HMAC secret of every cursor, one item shared by
// every instance of the stack.
func CursorSecretKey() store.Key { return store.Key{PK: "config#cursor", SK: "key"} }

// IdemKey is the idempotency record of (agent, key), any tool (ExpiresAt).
func IdemKey(agent, key string) store.Key {
	return store.Key{PK: "idem#" + agent, SK: "k#" + key}
}

// RateShardKey is shard n of a rate limit of kind for id (ExpiresAt): a
// limit is split over shards so a busy one spreads its writes.
func RateShardKey(kind, id string, shard int) store.Key {
	return store.Key{PK: "rate#" + kind + "#" + id + "#m#" + strconv.Itoa(shard), SK: "rate"}
}

// Idem remembers one mutation ID: the tool, the hash of the
// canonical request, the compact receipt it produced and, for a call whose
// work continues after its first write, the intent finishing it.
type Idem struct {
	Tool        string          `json:"tool"`
	RequestHash string          `json:"request_hash"`
	Response    json.RawMessage `json:"response"`
	Intent      string          `json:"intent,omitempty"`
	At          time.Time       `json:"at"`
}

package table

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// IntentKey is an open intent (Version = steps applied).
func IntentKey(id string) store.Key { return store.Key{PK: "intent#" + id, SK: "intent"} }

// IntentShards is how many GSI1 partitions list open intents. A box's
// intents all go to one of them (IntentShard), so one busy box never
// shares its index partition with every other box, and the sweep reads
// them all.
const IntentShards = 16

// IntentShard is the GSI1 partition listing box's open intents.
func IntentShard(box string) string {
	h := fnv.New32a()
	h.Write([]byte(box))
	return fmt.Sprintf("%s#%02d", IntentIndex, h.Sum32()%IntentShards)
}

// IntentPartitions lists every GSI1 partition the sweep reads.
func IntentPartitions() []string {
	out := []string{IntentIndex}
	for i := range IntentShards {
		out = append(out, fmt.Sprintf("%s#%02d", IntentIndex, i))
	}
	return out
}

// IntentSortKey orders an intent on its shard: oldest first, for the sweep.
func IntentSortKey(created time.Time, id string) string {
	return fmt.Sprintf("%020d#%s", created.UnixNano(), id)
}

// Intent is an unfinished operation. The item's Version is the number of
// steps applied.
type Intent struct {
	ID      string          `json:"id"`
	Kind    string          `json:"kind"`
	Steps   uint64          `json:"steps"`
	Payload json.RawMessage `json:"payload"`
	Created time.Time       `json:"created"`
	// Box is the box the intent works for; it picks the index shard.
	Box string `json:"box,omitempty"`
}

// Item is the intent's item as it opens (Version 0), on its box's shard
// of the open intents index, oldest first for the sweep.
func (r *Intent) Item() *store.Item {
	k := IntentKey(r.ID)
	return &store.Item{PK: k.PK, SK: k.SK,
		GSI1PK: IntentShard(r.Box), GSI1SK: IntentSortKey(r.Created, r.ID),
		Data: Encode(r)}
}

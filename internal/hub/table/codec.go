package table

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// Encode is the one encoder of stored records (and of what is measured
// against their limits): JSON without HTML escaping, so a "<", ">" or "&"
// an agent sent is stored, and counted, as the one byte it sent rather
// than as a six-byte \u003c, and a payload carried verbatim comes back as
// it was sent.
func Encode(v any) []byte {
	b, err := strictjson.Marshal(v)
	if err != nil {
		// Records are plain structs of marshalable fields; failing here is
		// a programming error, not an input error.
		panic(fmt.Sprintf("table: encoding %T: %v", v, err))
	}
	return b
}

// Decode reads a stored record. A record that does not decode is damage,
// not bad input, so the error is already the domain's: a storage failure
// that hides the detail from the caller and keeps it for the log.
func Decode[T any](it *store.Item) (*T, error) {
	var v T
	if err := json.Unmarshal(it.Data, &v); err != nil {
		return nil, apperr.Normalize(fmt.Errorf("hub: decoding %T at %s: %w", v, it.PK, err))
	}
	return &v, nil
}

// SeqKey is a sequence number as a sort key: fixed width (20 digits holds
// every uint64), so byte order, which is the store's order, is numeric
// order.
func SeqKey(n uint64) string { return fmt.Sprintf("%020d", n) }

// TimeKey is an instant as a sort key: its Unix nanoseconds, fixed width
// like SeqKey, so byte order is time order.
func TimeKey(t time.Time) string { return SeqKey(uint64(t.UnixNano())) }

package hub

import (
	"context"
	"errors"
	"math/rand/v2"
	"regexp"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// Seed-002 calls: the spaces and memory tools.
//
// Their arguments are exactly seed 002's {id, data}: id addresses the
// resource (the REST path parameter), data is the body. Versions are JSON
// integers. They authenticate with the bearer key only (the strict {id,
// data} form has no box_key) and need a primed session like every tool.
//
// Idempotency is opt-in through operation_key, scoped to (agent, tool,
// key) for the hub's idempotency TTL (30 days). The machinery is mutate.go's
// with one difference the seed states: a replay answers the compact
// operation receipt {"operation": {...}, "replayed": true}, not the
// original body, so the record stores only the receipt (commitAs). Without
// operation_key no record is written and a retry is a new call, which CAS
// (expected_version) keeps from applying twice.

// operationKeyPattern is seed 002's operation_key pattern; memory note
// names follow it too, which keeps them safe inside item keys.
const operationKeyPattern = `^[a-z0-9]+(-[a-z0-9]+)*$`

var slugRE = regexp.MustCompile(operationKeyPattern)

// OpKey is embedded in every seed-002 mutation's data.
type OpKey struct {
	OperationKey string `json:"operation_key,omitempty" desc:"Optional retry key, kept 30 days: the same payload replays the receipt, a different one conflicts." schema:"maxLength=80,pattern=^[a-z0-9]+(-[a-z0-9]+)*$"`
}

// NoData is the data of a call that has no body fields (get_space,
// get_memory): seed 002's form still carries it, as {}.
type NoData struct{}

// Operation is the compact receipt of a seed-002 mutation. Every mutation
// result carries it; a replay carries nothing else.
type Operation struct {
	Tool         string `json:"tool"`
	OperationKey string `json:"operation_key,omitempty" desc:"The operation_key of the call, if it had one."`
	ResourceID   string `json:"resource_id" desc:"The space id or note name the operation addressed."`
	Version      uint64 `json:"version" desc:"The resource's version after the operation; for delete_memory the version deleted; for membership changes the space's membership revision."`
	At           string `json:"at" desc:"When the operation committed."`
}

// Receipt is embedded in every seed-002 mutation output.
type Receipt struct {
	Operation *Operation `json:"operation,omitempty" desc:"The operation's compact receipt."`
	Replayed  bool       `json:"replayed,omitempty" desc:"True when this answers a reused operation_key with an identical payload: only the original operation's receipt, nothing done again."`
}

func (r *Receipt) markReplayed()     { r.Replayed = true }
func (r *Receipt) receipt() *Receipt { return r }

// newOperation identifies a seed-002 mutation for idempotency: with an
// operation_key, the (agent, tool, key) record and the hash of payload (the
// canonical data without operation_key); without one, nothing.
func newOperation(tool, key string, payload any) mutation {
	if key == "" {
		return mutation{tool: tool}
	}
	return newMutation(tool, key, payload)
}

// keys returns the idempotency record's key for the call's first batched
// read, or none when the call has no operation_key.
func (m mutation) keys(agent string) []store.Key {
	if m.key == "" {
		return nil
	}
	return []store.Key{m.recordKey(agent)}
}

// receipted is implemented by seed-002 outputs (through Receipt).
type receipted interface {
	replayable
	receipt() *Receipt
}

// replayOperation answers a call from its idempotency record, if the call
// has a key and the record exists. items are begin's extra items, which
// start with the record when m has a key; rest are the items after it.
func replayOperation[Out any, P interface {
	*Out
	receipted
}](m mutation, items []*store.Item) (out P, rest []*store.Item, done bool, err error) {
	if m.key == "" {
		return nil, items, false, nil
	}
	out, done, err = replay[Out, P](m, items[0])
	return out, items[1:], done, err
}

// commitOperation commits a seed-002 mutation whose output carries its
// operation receipt, storing only that receipt for replays.
func commitOperation[Out any, P interface {
	*Out
	receipted
}](ctx context.Context, h *Hub, c *Caller, m mutation, ops []guardedOp, out P) (P, error) {
	stored := encode(struct {
		Operation *Operation `json:"operation"`
	}{out.receipt().Operation})
	return commitAs(ctx, h, c, m, ops, out, stored)
}

// operation builds the receipt of a mutation of resource at version.
func operation(c *Caller, m mutation, resource string, version uint64) *Operation {
	return &Operation{Tool: m.tool, OperationKey: m.key, ResourceID: resource, Version: version, At: timestamp(c.Now)}
}

// errContended is an onFail answer meaning "a concurrent call changed a
// bookkeeping item (a counter) this call read; run it again": the caller's
// own conditions are re-evaluated against the new state. It never leaves
// the hub: retryContended turns exhaustion into TEMPORARILY_UNAVAILABLE.
var errContended = errors.New("hub: bookkeeping item changed concurrently")

// contendedAttempts bounds retryContended. Contention needs concurrent
// writers of one agent's notes or one space's members, so a few attempts
// with jitter suffice.
const contendedAttempts = 6

// retryContended runs fn until it returns something other than
// errContended or a store refusal that wrote nothing (ErrUnavailable: on
// DynamoDB, a transaction conflict with the concurrent writer), at most
// contendedAttempts times. An uncertain failure (a timeout) is never
// retried here: its outcome is the caller's to resolve, with its
// operation_key.
func retryContended[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	var zero T
	var last error
	for attempt := range contendedAttempts {
		if attempt > 0 {
			d := time.Duration(rand.Int64N(int64(time.Millisecond<<attempt))) + 100*time.Microsecond
			select {
			case <-ctx.Done():
				return zero, apperr.Normalize(ctx.Err())
			case <-time.After(d):
			}
		}
		out, err := fn()
		if !errors.Is(err, errContended) && !errors.Is(err, store.ErrUnavailable) {
			return out, err
		}
		last = err
	}
	if errors.Is(last, errContended) {
		return zero, apperr.Unavailable(last)
	}
	return zero, last
}

// checkOperationKey enforces the operation_key rule in the service.
func checkOperationKey(key string) error {
	if key == "" {
		return nil
	}
	return checkSlug("operation_key", key)
}

// mutable refuses a mutation from a session that has not observed the
// agent's current profile (BRIEF §4); the write re-checks it (authChecks).
func mutable(c *Caller) error {
	if c.Session.ProfileVersion != c.ProfileVersion {
		return profileOutdated()
	}
	return nil
}

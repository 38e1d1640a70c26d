package hub

// Intents: work too big for one atomic write.
//
// A message to a 1,000-member room writes two items per recipient; an ACK of
// 100 rows writes more than a transaction holds. Such a mutation commits, in
// its first write (kernel.go), its idempotency record, its durable result
// and an intent record of the remaining work. The remaining work is a fixed
// number of steps; step n is one atomic write that carries, besides its own
// operations, the intent moved from version n to n+1 (the last step deletes
// it instead). So:
//
//   - each step applies exactly once: two processes finishing one intent
//     race on its version, and the loser re-reads it and goes on from there;
//   - a crash between steps loses nothing: the intent stays, and whoever
//     finishes it next starts at the first step not yet applied;
//   - the caller that committed the first write finishes the intent before
//     answering; a retry with the same idempotency key finishes it before
//     answering the receipt (idempotency.go); the sweep (Sweep) finishes
//     intents whose caller vanished — a scheduled function on Lambda, a
//     ticker in agentbox serve.
//
// A step is computed from the intent's payload and the step number alone,
// plus whatever it reads, so every process computes the same step. The
// intent item is the operation's progress record: it stays small (a
// fan-out's recipient list lives in immutable parts written once, see
// messages.go), so a step's advance costs the same however large the
// operation. Open intents are listed on GSI1, oldest first, for the sweep,
// in one of table.IntentShards partitions chosen by the box's id: no index
// partition is written by every box of a stack.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/ctxtime"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/google/uuid"
)

// intentStep computes step n of an intent: its operations, which commit
// with the intent's advance. A condition of theirs that another writer can
// move (a sequence counter) answers contended, and the step is computed
// again.
type intentStep func(h *Hub, ctx context.Context, rec *table.Intent, n uint64) ([]guardedOp, error)

// The kinds of intent. Their steps live with the tool that opens them;
// intentKinds (hub.go) wires each kind to its step.
const (
	intentFanout = "fanout"
	intentAck    = "ack"
)

// stepRoom is how many ops an intent step may return: its write also
// carries the intent's advance.
const stepRoom = store.MaxWriteItems - 1

func newIntent(kind string, steps uint64, payload any, now time.Time, box string) *table.Intent {
	return &table.Intent{ID: uuid.NewString(), Kind: kind, Steps: steps, Payload: table.Encode(payload), Created: now, Box: box}
}

// finishAttempts bounds how often finish computes one step again after
// losing its counters to concurrent writers.
const finishAttempts = 12

// finish applies every remaining step of intent id. It returns nil once the
// intent is gone (finished, by this call or another).
func (h *Hub) finish(ctx context.Context, id string) error {
	k := table.IntentKey(id)
	misses := 0
	// it is the intent as last read or written: after a step commits,
	// the write itself says what the intent now is, so only a lost race
	// reads it again (one round trip per step instead of two).
	var it *store.Item
	for {
		if it == nil {
			got, err := h.st.Get(ctx, k)
			if err != nil {
				return storageErr(err)
			}
			if got == nil {
				return nil
			}
			it = got
		}
		rec, err := table.Decode[table.Intent](it)
		if err != nil {
			return apperr.Normalize(err)
		}
		stepFn, ok := intentKinds[rec.Kind]
		if !ok {
			return apperr.Normalize(fmt.Errorf("hub: intent of unknown kind %q", rec.Kind))
		}
		ops, err := stepFn(h, ctx, rec, it.Version)
		if err != nil {
			return err
		}
		adv := guardedOp{op: store.Delete(k, store.AtVersion(it.Version)), onFail: contended}
		var next *store.Item // nil once the last step deletes the intent
		if it.Version+1 < rec.Steps {
			n := *it
			n.Version++
			next = &n
			adv.op = store.Put(next, store.AtVersion(it.Version))
		}
		err = h.write(ctx, append([]guardedOp{adv}, ops...), -1)
		if err == nil && rec.Kind == intentFanout {
			metrics.AddFanoutStep(ctx)
		}
		switch {
		case err == nil && next == nil:
			return nil
		case err == nil:
			misses, it = 0, next
			continue
		case errors.Is(err, errContended), errors.Is(err, store.ErrUnavailable):
			misses++
			if misses >= finishAttempts {
				return apperr.Unavailable(err)
			}
			metrics.AddRetry(ctx)
			if err := sleepBackoff(ctx, misses); err != nil {
				return err
			}
			it = nil // read again: another process may have moved it
		default:
			return err
		}
	}
}

// sleepBackoff waits a jittered, doubling delay before attempt n (n ≥ 1),
// or until ctx ends (the domain's error then).
func sleepBackoff(ctx context.Context, n int) error {
	if err := ctxtime.Sleep(ctx, ctxtime.Backoff(time.Millisecond, 0, 100*time.Microsecond, n)); err != nil {
		return apperr.Normalize(err)
	}
	return nil
}

// SweepGrace is how long an intent may stay open before the sweep takes it
// over from its caller, which normally finishes it within its own call.
const SweepGrace = time.Minute

// Sweep finishes intents opened more than grace ago, oldest first, at most
// limit of them, and reports how many it finished. Finishing is idempotent,
// so any number of sweepers may run at once.
func (h *Hub) Sweep(ctx context.Context, grace time.Duration, limit int) (int, error) {
	r, err := h.SweepReport(ctx, grace, limit)
	return r.Finished, err
}

// SweepReport is Sweep reporting what it found, finished and could not
// finish; the report also goes to the hub's metrics recorder. An intent it
// cannot finish (its step keeps failing) stays for the next run and counts
// as stuck, which is not an error of the run: an error is the sweep itself
// failing (its query).
func (h *Hub) SweepReport(ctx context.Context, grace time.Duration, limit int) (metrics.Sweep, error) {
	cutoff := h.clock().Add(-grace)
	parts := table.IntentPartitions()
	found := make([][]*store.Item, len(parts))
	err := eachLimit(ctx, len(parts), viewParallelism, func(ctx context.Context, i int) error {
		rows, err := h.st.Query(ctx, store.Query{Index: store.GSI1, PK: parts[i],
			To: table.TimeKey(cutoff) + "\U0010FFFF", Limit: limit})
		found[i] = rows
		return err
	})
	if err != nil {
		return metrics.Sweep{}, storageErr(err)
	}
	// Oldest first across the shards, at most limit.
	rows := slices.Concat(found...)
	slices.SortFunc(rows, func(a, b *store.Item) int { return cmp.Compare(a.GSI1SK, b.GSI1SK) })
	rows = rows[:min(len(rows), limit)]
	r := metrics.Sweep{Due: len(rows)}
	for _, it := range rows {
		rec, err := table.Decode[table.Intent](it)
		if err != nil {
			h.log.ErrorContext(ctx, "undecodable intent", "key", it.PK)
			r.Stuck++
			continue
		}
		if err := h.finish(ctx, rec.ID); err != nil {
			h.log.WarnContext(ctx, "sweep could not finish an intent", "intent", rec.ID, "err", err)
			r.Stuck++
			continue
		}
		r.Finished++
	}
	h.metrics.Sweep(ctx, r)
	return r, nil
}

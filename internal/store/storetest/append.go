package storetest

// Sequences without holes, built only on the port: the suite's model of
// the domain's streams (ConcurrentAppendsNoGapNoRepeatForReaders). The
// domain allocates its own sequences; what this proves of an engine, that
// a conditional multi-item Write and a strongly consistent Get and Query
// give a stream without holes whose head bounds a reader safely, is what
// that allocation relies on.
//
// A stream (a room, an inbox, a DM pair) numbers its rows 1, 2, 3, ... with a
// counter item whose Version is the last number allocated. Append reads the
// counter, asks the caller for the rows of number v+1, and commits
//
//	[ Put(counter with Version v+1, AtVersion(v) or Absent), rows... ]
//
// in one atomic Write. Two consequences carry the design:
//
//   - No holes and no duplicates: a number is taken only by a write that
//     also commits its rows, and two writers cannot both move the counter
//     from v (the loser's condition fails, it re-reads and tries v+2).
//   - Commit order is sequence order: row n commits together with counter
//     value n, and counter value n can only be written over value n-1, so
//     when a reader sees the counter at h (a strongly consistent Get), every
//     row numbered 1..h has committed and no row numbered <= h can commit
//     later. A reader that captures h with Head and then reads the table up
//     to h (strongly consistent Query) never skips a row: h is a safe upper
//     bound for a resume cursor (BRIEF §7, "No skipped rows").
//
// The price is that appends to one stream are serialized on its counter
// item; appendSeq retries on contention with jittered backoff, bounded, and
// then reports ErrUnavailable, which the domain maps to a retryable error.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// appendAttempts bounds appendSeq's retries on a contended counter. Each
// attempt is a Get and a Write; with the backoff below, 200 attempts sleep
// under 13 seconds in all (about half that on average) before appendSeq
// gives up with store.ErrUnavailable. Exponential backoff is not fair: the
// writer that just won retries at once while one that lost many times
// sleeps longest, and on a store whose commits take well under a
// millisecond (bbolt's journal) the winner's next Write usually lands
// first. 50 attempts let one of 8 racing writers give up under load.
const appendAttempts = 200

// appendSeq allocates the next number of the stream whose counter item is at
// counter and commits it atomically with the operations build returns for
// it. It returns the number allocated.
//
// build may be called several times, each time with a fresh number, when
// another writer wins the counter; it must therefore only construct
// operations, with no other effect. Its ops must not address the counter
// key, and may number at most store.MaxWriteItems-1. An error from build is
// returned unchanged and nothing is written.
//
// The counter item keeps every other field it has (so a stream's metadata
// item can serve as its counter); only its Version changes. A counter must
// never expire: an expired counter reads as absent and the stream would
// restart at 1 (and then fail on its own rows' conditions, if they carry
// Absent, as they should).
//
// Errors: a failed condition on one of build's ops is a
// *store.ConditionFailedError whose Index is that op's position in build's slice
// (not in the underlying Write, where the counter comes first). Contention
// on the counter that outlasts the retries, or store.ErrUnavailable from the
// engine on every attempt, is store.ErrUnavailable (wrapped). Any other Write
// error is returned as is, with an unknown outcome, as store.Store.Write says.
func appendSeq(ctx context.Context, s store.Store, counter store.Key, build func(seq uint64) ([]store.Op, error)) (uint64, error) {
	var lastErr error
	for attempt := range appendAttempts {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return 0, err
			}
		}
		cur, err := s.Get(ctx, counter)
		if err != nil {
			return 0, fmt.Errorf("store: read counter %s: %w", counter, err)
		}
		var next store.Item
		cond := store.Absent
		if cur != nil {
			next = *cur
			cond = store.AtVersion(cur.Version)
		} else {
			next = store.Item{PK: counter.PK, SK: counter.SK}
		}
		next.Version++
		seq := next.Version

		rows, err := build(seq)
		if err != nil {
			return 0, err
		}
		ops := make([]store.Op, 0, 1+len(rows))
		ops = append(ops, store.Put(&next, cond))
		ops = append(ops, rows...)

		err = s.Write(ctx, ops)
		if err == nil {
			return seq, nil
		}
		if cf, ok := store.ConditionFailed(err); ok {
			if cf.Index != 0 {
				// Only build's ops failed: name them in build's numbering.
				failed := make([]int, len(cf.Failed))
				for i, f := range cf.Failed {
					failed[i] = f - 1
				}
				return 0, &store.ConditionFailedError{Index: cf.Index - 1, Key: cf.Key, Failed: failed}
			}
			lastErr = err
			continue
		}
		if errors.Is(err, store.ErrUnavailable) {
			lastErr = err
			continue
		}
		return 0, err
	}
	return 0, fmt.Errorf("%w: counter %s still contended after %d attempts (last: %v)",
		store.ErrUnavailable, counter, appendAttempts, lastErr)
}

// head returns the last number allocated on the stream whose counter item
// is at counter (0 when nothing was ever appended). Every row numbered up
// to the result has committed, and none numbered at or below it can commit
// later; see the note at the top of this file.
func head(ctx context.Context, s store.Store, counter store.Key) (uint64, error) {
	it, err := s.Get(ctx, counter)
	if err != nil {
		return 0, fmt.Errorf("store: read counter %s: %w", counter, err)
	}
	if it == nil {
		return 0, nil
	}
	return it.Version, nil
}

// backoff sleeps before retry number attempt: a random duration up to a
// ceiling that doubles from 1ms to 64ms, so that writers colliding on one
// counter spread out instead of colliding again in lockstep.
func backoff(ctx context.Context, attempt int) error {
	ceiling := time.Millisecond << min(attempt-1, 6)
	d := time.Duration(rand.Int64N(int64(ceiling))) + 100*time.Microsecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("store: append: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

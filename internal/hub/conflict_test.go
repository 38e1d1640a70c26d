package hub_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// conflictingWrite is DynamoDB's TransactionConflict, which neither test
// engine produces (bbolt serializes writes; minidyn runs each transaction
// alone): when transactions touching a common item run at once, DynamoDB
// may cancel all but one, and the adapter reports store.ErrUnavailable
// with nothing written. arm(n) makes the next n writes wait for each other
// (all their calls have read); then the first to have arrived commits and
// every other one that shares an item with it is refused that way. Later
// writes pass through.
type conflictingWrite struct {
	store.Store
	mu       sync.Mutex
	waiting  int
	release  chan struct{}
	first    map[store.Key]bool
	refused  atomic.Int64
	attempts atomic.Int64
	always   bool   // refuse every write (retry exhaustion)
	onRefuse func() // when set, called after each refusal of always
}

func (c *conflictingWrite) arm(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiting, c.release, c.first = n, make(chan struct{}), nil
}

// setAlways makes every later write conflict (or none), counting attempts
// afresh.
func (c *conflictingWrite) setAlways(on bool) {
	c.mu.Lock()
	c.always = on
	c.mu.Unlock()
	c.attempts.Store(0)
}

func (c *conflictingWrite) Write(ctx context.Context, ops []store.Op) error {
	c.attempts.Add(1)
	c.mu.Lock()
	if c.always {
		onRefuse := c.onRefuse
		c.mu.Unlock()
		c.refused.Add(1)
		if onRefuse != nil {
			onRefuse()
		}
		return fmt.Errorf("TransactionConflict: %w", store.ErrUnavailable)
	}
	armed := c.waiting > 0
	ch := c.release
	leader := false
	if armed {
		if c.first == nil {
			leader = true
			c.first = map[store.Key]bool{}
			for _, op := range ops {
				c.first[op.OpKey()] = true
			}
		}
		c.waiting--
		if c.waiting == 0 {
			close(ch)
		}
	}
	first := c.first
	c.mu.Unlock()
	if !armed {
		return c.Store.Write(ctx, ops)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		// A racer failed before writing; its own assertions report it.
	}
	if !leader {
		for _, op := range ops {
			if first[op.OpKey()] {
				c.refused.Add(1)
				return fmt.Errorf("TransactionConflict: %w", store.ErrUnavailable)
			}
		}
	}
	return c.Store.Write(ctx, ops)
}

func withConflicts(c **conflictingWrite) func(store.Store) store.Store {
	return func(s store.Store) store.Store {
		*c = &conflictingWrite{Store: s}
		return *c
	}
}

// TestConflictReplaysDuplicates: concurrent duplicates whose writes the
// engine cancels as conflicting (not as a failed condition) must still
// take effect once, the others answering the winner's receipt: the kernel
// retries the refusal, and the retry's read finds the record.
func TestConflictReplaysDuplicates(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var cw *conflictingWrite
		f := newFixture(t, ad, withConflicts(&cw))
		cr := f.prime(f.a)
		duplicates(t, cw, 6, func() (bool, error) {
			out, err := save(f, cr, "dup", 0, "once")
			if err != nil {
				return false, err
			}
			return out.Replayed, nil
		})
		if got := cw.refused.Load(); got != 5 {
			t.Fatalf("engine conflicts injected = %d, want 5 (the path under test did not run)", got)
		}
		f.wantCheckpointAt(cr, 1, "after conflicting duplicates")
	})
}

// TestConflictRetriedForParallelMutations: eight parallel mutations of one
// agent share items (its auth checks, its note counter); the engine cancels
// all but one as conflicting, and then they contend on the counter. Every
// one must succeed through the kernel's retry, and the count be exact.
func TestConflictRetriedForParallelMutations(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var cw *conflictingWrite
		f := newFixture(t, ad, withConflicts(&cw))
		cr := f.prime(f.a)
		const n = 8
		cw.arm(n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, errs[i] = saveNote(f, cr, fmt.Sprintf("note-%d", i), 0, "x", "") })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("SaveMemory(note-%d) among %d parallel: %v, want success", i, n, err)
			}
		}
		if got := cw.refused.Load(); got != n-1 {
			t.Errorf("engine conflicts injected = %d, want %d", got, n-1)
		}
		if names, last := listNotes(f, cr, 100); len(names) != n || last.Total != n {
			t.Fatalf("after %d parallel saves: %d notes, count %d; want %d", n, len(names), last.Total, n)
		}
	})
}

// TestConflictRetryExhaustion: an engine that keeps cancelling is retried a
// bounded number of times, then answered TEMPORARILY_UNAVAILABLE with
// nothing written; the same key then takes effect once.
func TestConflictRetryExhaustion(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var cw *conflictingWrite
		f := newFixture(t, ad, withConflicts(&cw))
		cr := f.prime(f.a)
		cw.setAlways(true)
		_, err := save(f, cr, "busy", 0, "body")
		e := wantCode(t, "CheckpointSave while every write conflicts", err, apperr.TemporarilyUnavailable)
		if !e.Code.Retryable() || e.RetryAfter <= 0 {
			t.Errorf("exhaustion: retryable=%v retry_after=%d, want a retryable answer with a hint", e.Code.Retryable(), e.RetryAfter)
		}
		if got := cw.attempts.Load(); got != 14 {
			t.Errorf("write attempts = %d, want 14 (the kernel's bounded retry)", got)
		}
		cw.setAlways(false)
		out, err := save(f, cr, "busy", 0, "body")
		if err != nil || out.Replayed || out.Checkpoint.Revision != 1 {
			t.Fatalf("retry after exhaustion = %+v, %v; want a fresh effect at revision 1", out, err)
		}
	})
}

// TestConflictRetryCancelled: a caller that gives up (its context ends)
// stops the retry at once instead of sleeping through the remaining
// attempts.
func TestConflictRetryCancelled(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var cw *conflictingWrite
		f := newFixture(t, ad, withConflicts(&cw))
		cr := f.prime(f.a)
		ctx, cancel := context.WithCancel(f.ctx)
		// Cancel as the first write is refused: the call then finds its
		// context ended before its first backoff.
		cw.mu.Lock()
		cw.onRefuse = cancel
		cw.mu.Unlock()
		cw.setAlways(true)
		_, err := f.h.CheckpointSave(ctx, cr, hub.CheckpointSaveInput{
			Mutation: hub.Mutation{IdempotencyKey: "gone"}, ExpectedRevision: 0, BodyMD: "x"})
		if err == nil {
			t.Fatalf("CheckpointSave with a cancelled context: got success, want an error")
		}
		if got := cw.attempts.Load(); got >= 8 {
			t.Errorf("write attempts after cancellation = %d, want fewer than the 8 of an exhausted retry", got)
		}
	})
}

// TestConcurrentPrime: 30 agent_prime calls on one session, all reading
// before any writes. Priming is naturally idempotent: every one succeeds,
// and a loser finds the session primed as it would have left it, so it
// answers without writing again (the kernel's retry alone could exhaust).
func TestConcurrentPrime(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var b *writeBarrier
		var writes atomic.Int64
		f := newFixture(t, ad, withBarrier(&b), func(s store.Store) store.Store {
			return &beforeWrite{Store: s, hook: func() { writes.Add(1) }}
		})
		cr := f.prime(f.a)
		const n = 30
		b.arm(n)
		writes.Store(0)
		errs := make([]error, n)
		outs := make([]*hub.PrimeOutput, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				outs[i], errs[i] = f.h.Prime(f.ctx, cr, hub.PrimeInput{})
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Errorf("Prime %d of %d concurrent: %v, want success", i, n, errs[i])
				continue
			}
			if outs[i].SessionID != cr.SessionID || !outs[i].SessionResumed {
				t.Errorf("Prime %d: session %s resumed=%v, want %s resumed", i, outs[i].SessionID, outs[i].SessionResumed, cr.SessionID)
			}
		}
		// A loser answers from the winner's write instead of contending:
		// one session write per prime, no retries.
		if got := writes.Load(); got != n {
			t.Errorf("%d concurrent primes made %d writes, want %d (a loser must not retry)", n, got, n)
		}
		if _, err := save(f, cr, "after", 0, "x"); err != nil {
			t.Fatalf("CheckpointSave after concurrent primes: %v", err)
		}
	})
}

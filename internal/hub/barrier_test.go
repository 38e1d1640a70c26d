package hub_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// writeBarrier holds the next n writes until all n have arrived, so that n
// concurrent calls have all done their reads before any of them writes:
// the interleaving CAS and idempotency must survive, forced rather than
// hoped for. Later writes (a loser's retry) pass straight through.
type writeBarrier struct {
	store.Store
	mu      sync.Mutex
	waiting int
	release chan struct{}
}

// arm makes the next n writes wait for each other.
func (b *writeBarrier) arm(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting, b.release = n, make(chan struct{})
}

func (b *writeBarrier) Write(ctx context.Context, ops []store.Op) error {
	b.mu.Lock()
	wait := b.waiting > 0
	ch := b.release
	if wait {
		b.waiting--
		if b.waiting == 0 {
			close(ch)
		}
	}
	b.mu.Unlock()
	if wait {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			// A racer failed before writing; let the others go rather
			// than hang the test (its own assertions then report it).
		}
	}
	return b.Store.Write(ctx, ops)
}

// IndependentCalls tells hubtest the racers stand for separate processes:
// the barrier makes them read before any writes, which is possible only
// between processes, as they share no locks.
func (*writeBarrier) IndependentCalls() bool { return true }

func withBarrier(b **writeBarrier) func(store.Store) store.Store {
	return func(s store.Store) store.Store {
		*b = &writeBarrier{Store: s}
		return *b
	}
}

// armer is a store wrapper that can hold the next n writes until all n
// have arrived (writeBarrier, conflictingWrite).
type armer interface{ arm(n int) }

// atOnce arms b for n writes and runs call(0) … call(n-1) at once, each in
// its own goroutine, so that the n calls all read before any of them
// writes; it returns when every call has.
func atOnce(b armer, n int, call func(i int)) {
	b.arm(n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			call(i)
		})
	}
	close(start)
	wg.Wait()
}

// race runs n calls at once, all reading before any writes (b), and
// classifies the outcomes: exactly one winner is wanted, and every loser
// must answer REVISION_CONFLICT with current. Both test engines isolate
// transactions (bbolt serializes them; minidyn runs each alone), and a
// DynamoDB TransactionConflict is retried by the kernel until the loser
// sees the winner's write, so TEMPORARILY_UNAVAILABLE is a failure here:
// only retry exhaustion on a real, heavily contended table can produce it,
// and conflict_test.go covers that with an injected fault. It returns the
// winner's index.
func race(t *testing.T, b *writeBarrier, n int, current uint64, call func(i int) error) (winner int) {
	t.Helper()
	errs := make([]error, n)
	atOnce(b, n, func(i int) { errs[i] = call(i) })
	winner = -1
	for i, err := range errs {
		switch e, _ := apperr.As(err); {
		case err == nil:
			if winner >= 0 {
				t.Errorf("racers %d and %d both won", winner, i)
			}
			winner = i
		case e != nil && e.Code == apperr.RevisionConflict:
			if e.CurrentRevision == nil || *e.CurrentRevision != current {
				t.Errorf("racer %d: current %v, want %d", i, e.CurrentRevision, current)
			}
		default:
			t.Errorf("racer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("race: no winner")
	}
	return winner
}

// duplicates runs n calls of one mutation with one key at once, all reading
// before any writes (b), so that none can answer from the record in its
// first read: one must take effect and every other must lose the write on
// the idempotency record and answer the winner's receipt, marked replayed.
// Any error fails: both test engines isolate transactions and the kernel
// retries an engine conflict. call reports whether its answer was a replay.
func duplicates(t *testing.T, b armer, n int, call func() (replayed bool, err error)) {
	t.Helper()
	replayed := make([]bool, n)
	errs := make([]error, n)
	atOnce(b, n, func(i int) { replayed[i], errs[i] = call() })
	fresh := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("duplicate %d: %v, want the effect or the winner's receipt", i, errs[i])
		}
		if !replayed[i] {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d concurrent duplicates took effect, want exactly 1", fresh)
	}
}

package hub_test

import (
	"context"
	"sync"
	"time"

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

func withBarrier(b **writeBarrier) func(store.Store) store.Store {
	return func(s store.Store) store.Store {
		*b = &writeBarrier{Store: s}
		return *b
	}
}

package teststores

import (
	"context"
	"sync"

	"github.com/agentbox/agentbox/internal/store"
)

// Faults fails the reads or the writes of the store it wraps with the error
// it is armed with, or panics in them: the faults a real engine cannot be
// made to produce on demand (throttling, an outage, a bug in the engine's
// client). Unarmed, it passes every call through.
type Faults struct {
	store.Store
	mu          sync.Mutex
	read, write error
	panics      bool
}

// NewFaults wraps s, unarmed.
func NewFaults(s store.Store) *Faults { return &Faults{Store: s} }

// FailReads makes every Get, BatchGet and Query fail with err (nil: none).
func (f *Faults) FailReads(err error) { f.mu.Lock(); f.read = err; f.mu.Unlock() }

// FailWrites makes every Write fail with err (nil: none).
func (f *Faults) FailWrites(err error) { f.mu.Lock(); f.write = err; f.mu.Unlock() }

// Panic makes every call panic (false: none).
func (f *Faults) Panic(on bool) { f.mu.Lock(); f.panics = on; f.mu.Unlock() }

// fault is the armed error for a read or a write; it panics when armed to.
func (f *Faults) fault(write bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.panics {
		panic("teststores.Faults: injected panic")
	}
	if write {
		return f.write
	}
	return f.read
}

func (f *Faults) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	if err := f.fault(false); err != nil {
		return nil, err
	}
	return f.Store.Get(ctx, k)
}

func (f *Faults) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	if err := f.fault(false); err != nil {
		return nil, err
	}
	return f.Store.BatchGet(ctx, keys)
}

func (f *Faults) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	if err := f.fault(false); err != nil {
		return nil, err
	}
	return f.Store.Query(ctx, q)
}

func (f *Faults) Write(ctx context.Context, ops []store.Op) error {
	if err := f.fault(true); err != nil {
		return err
	}
	return f.Store.Write(ctx, ops)
}

package teststores

import (
	"context"
	"time"

	"github.com/agentbox/agentbox/internal/ctxtime"
	"github.com/agentbox/agentbox/internal/store"
)

// Latency wraps a store and adds a fixed round trip to every call: half
// before the wrapped store acts (the request on its way), half after (the
// answer on its way back), as a network engine does. Under testing/synctest
// the sleeps take no real time, so a test can measure what a design's
// round trips allow (rates, serialization on one item) in fake time,
// deterministically.
type Latency struct {
	store.Store
	RTT time.Duration
}

// NewLatency wraps s with round trip rtt.
func NewLatency(s store.Store, rtt time.Duration) *Latency { return &Latency{Store: s, RTT: rtt} }

func (l *Latency) trip(ctx context.Context, fn func() error) error {
	if err := l.wait(ctx); err != nil {
		return err
	}
	err := fn()
	if werr := l.wait(ctx); werr != nil && err == nil {
		return werr
	}
	return err
}

func (l *Latency) wait(ctx context.Context) error { return ctxtime.Sleep(ctx, l.RTT/2) }

// Get adds one round trip.
func (l *Latency) Get(ctx context.Context, k store.Key) (it *store.Item, err error) {
	err = l.trip(ctx, func() error { it, err = l.Store.Get(ctx, k); return err })
	return it, err
}

// BatchGet adds one round trip.
func (l *Latency) BatchGet(ctx context.Context, keys []store.Key) (items []*store.Item, err error) {
	err = l.trip(ctx, func() error { items, err = l.Store.BatchGet(ctx, keys); return err })
	return items, err
}

// Query adds one round trip.
func (l *Latency) Query(ctx context.Context, q store.Query) (items []*store.Item, err error) {
	err = l.trip(ctx, func() error { items, err = l.Store.Query(ctx, q); return err })
	return items, err
}

// Write adds one round trip.
func (l *Latency) Write(ctx context.Context, ops []store.Op) error {
	return l.trip(ctx, func() error { return l.Store.Write(ctx, ops) })
}

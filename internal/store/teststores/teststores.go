// Package teststores gives tests outside the store packages every real
// storage adapter, so that domain and transport tests run against both
// engines (and moto, a second DynamoDB emulator) without repeating the
// set-up, a counting wrapper to measure store round trips per call, and a
// metering wrapper to measure their DynamoDB capacity.
package teststores

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
	"github.com/agentbox/agentbox/internal/store/dynamo/mototest"
)

// Adapter names one storage engine and opens fresh, empty stores on it.
type Adapter struct {
	Name string
	// Open returns a new empty store whose expiry clock is now (time.Now
	// when nil), closed when t ends.
	Open func(t testing.TB, now func() time.Time) store.Store
	// OrderedWrites: the engine commits concurrent Writes in call order
	// (hub.Options.OrderedWrites), as bbolt's group commit does.
	OrderedWrites bool
}

// AdaptersEnv, when set, names the only adapter All returns ("bolt" or
// "dynamo"): make mutate runs the domain suite on one engine to keep a
// mutant's test run short. Unset, All returns both.
const AdaptersEnv = "AGENTBOX_TEST_ADAPTERS"

// All returns the embedded (bbolt) and DynamoDB (minidyn over HTTP)
// adapters, or only the one AdaptersEnv names.
func All() []Adapter {
	only := os.Getenv(AdaptersEnv)
	var out []Adapter
	for _, ad := range all() {
		if only == "" || ad.Name == only {
			out = append(out, ad)
		}
	}
	return out
}

func all() []Adapter {
	return []Adapter{
		{Name: "bolt", OrderedWrites: true, Open: func(t testing.TB, now func() time.Time) store.Store {
			t.Helper()
			s, err := bolt.Open(filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{Now: now})
			if err != nil {
				t.Fatalf("bolt.Open: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
		{Name: "dynamo", Open: func(t testing.TB, now func() time.Time) store.Store {
			t.Helper()
			return dynamotest.NewStore(t, now)
		}},
	}
}

// Bubbled returns All's adapters in forms that a test may open inside a
// testing/synctest bubble, so that waits and timeouts run on the bubble's
// clock: bbolt as All has it, and DynamoDB as minidyn served in the calling
// goroutine with no socket (dynamotest.NewInProcessStore), since a bubble
// whose goroutines wait on network I/O never moves its clock. Open them
// inside the bubble.
func Bubbled() []Adapter {
	out := All()
	for i, ad := range out {
		if ad.Name == "dynamo" {
			out[i].Open = func(t testing.TB, now func() time.Time) store.Store {
				t.Helper()
				return dynamotest.NewInProcessStore(t, now)
			}
		}
	}
	return out
}

// Moto returns the DynamoDB adapter on moto (a second, independent DynamoDB
// emulator; see mototest), a fresh table per store. Tests that race writers
// and rely on transaction isolation must not run on it: moto does not
// isolate concurrent writes (mototest.NoIsolation says so in a skip).
func Moto() Adapter {
	return Adapter{Name: "moto", Open: func(t testing.TB, now func() time.Time) store.Store {
		t.Helper()
		return mototest.NewStore(t, now)
	}}
}

// AllWithMoto returns All and Moto.
func AllWithMoto() []Adapter { return append(All(), Moto()) }

// Counting wraps a store and counts its round trips: each Get, BatchGet,
// Query and Write is one.
type Counting struct {
	store.Store
	n atomic.Int64
}

// NewCounting wraps s.
func NewCounting(s store.Store) *Counting { return &Counting{Store: s} }

// Reset zeroes the count and returns what it was.
func (c *Counting) Reset() int64 { return c.n.Swap(0) }

// Get counts one round trip.
func (c *Counting) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	c.n.Add(1)
	return c.Store.Get(ctx, k)
}

// BatchGet counts one round trip.
func (c *Counting) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	c.n.Add(1)
	return c.Store.BatchGet(ctx, keys)
}

// Query counts one round trip.
func (c *Counting) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	c.n.Add(1)
	return c.Store.Query(ctx, q)
}

// Write counts one round trip.
func (c *Counting) Write(ctx context.Context, ops []store.Op) error {
	c.n.Add(1)
	return c.Store.Write(ctx, ops)
}

// Clock is a settable test clock, safe for concurrent use.
type Clock struct{ ns atomic.Int64 }

// NewClock starts a clock at a fixed instant.
func NewClock() *Clock {
	c := &Clock{}
	c.ns.Store(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

// Now reads the clock.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

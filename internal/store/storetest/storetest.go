// Package storetest is the conformance suite of the storage port: one set of
// tests that every adapter of store.Store must pass, so that the domain can
// rely on the port's contract and not on an engine's quirks.
//
// An adapter's test calls Run (or RunWith) with a function that opens a
// fresh, empty store on the clock the suite gives it:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
//			s, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{Now: now})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The suite owns the clock: it starts at the real current time (so that an
// engine with a real TTL sweeper, such as DynamoDB, never deletes an item the
// suite still expects) and only the suite moves it forward, to expire items
// without waiting. The adapter must take the time from now for every
// expiry decision, and never from time.Now.
//
// Only port semantics are asserted. In particular nothing here depends on
// the order of index entries that tie on their sort key, on whether an
// expired item is physically deleted, or on indexes being read-after-write
// consistent: index assertions wait up to Options.IndexLag (zero for the
// local engines, which update indexes in the writing transaction).
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// Options scales the parts of the suite whose cost depends on the engine's
// speed. Zero fields take the defaults, sized for the embedded store; an
// adapter that reaches its engine over HTTP may lower them to keep the
// suite within a few seconds.
type Options struct {
	// Writers is the number of goroutines racing to append to one
	// sequence (default 8).
	Writers int
	// Appends is the number of appends each writer makes (default 50).
	Appends int
	// Readers is the number of goroutines polling the sequence while it
	// grows (default 4).
	Readers int
	// Adders is the number of goroutines racing OpAdd on one counter, each
	// adding Appends times (default 8).
	Adders int
	// IndexLag is how long an index query may take to reflect a write
	// (default 0: at once, as in bbolt, minidyn and DynamoDB Local). Set it
	// when running against real DynamoDB, whose indexes are eventually
	// consistent: index assertions are then retried until they hold or
	// IndexLag has passed. Table reads are never retried.
	IndexLag time.Duration
	// NoIsolation, when set, is why the engine cannot run the tests that
	// race writers and rely on transaction isolation (moto's transactions
	// interleave); those tests are skipped with this reason, and must run
	// on another engine of the same adapter.
	NoIsolation string
}

func (o Options) withDefaults() Options {
	if o.Writers <= 0 {
		o.Writers = 8
	}
	if o.Appends <= 0 {
		o.Appends = 50
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if o.Adders <= 0 {
		o.Adders = 8
	}
	return o
}

// Run runs the whole suite with the default Options.
func Run(t *testing.T, open func(t *testing.T, now func() time.Time) store.Store) {
	RunWith(t, open, Options{})
}

// RunWith runs the whole suite. Every subtest calls open for a fresh,
// empty store whose expiry decisions use now; open must register the
// store's Close with t.Cleanup, and fail t if it cannot open one.
func RunWith(t *testing.T, open func(t *testing.T, now func() time.Time) store.Store, o Options) {
	s := &suite{open: open, opts: o.withDefaults()}
	t.Run("Items", s.testItems)
	t.Run("Conditions", s.testConditions)
	t.Run("Limits", s.testLimits)
	t.Run("Add", s.testAdd)
	t.Run("BatchGet", s.testBatchGet)
	t.Run("Query", s.testQuery)
	t.Run("Indexes", s.testIndexes)
	t.Run("Expiry", s.testExpiry)
	t.Run("Sequence", s.testSequence)
}

type suite struct {
	open func(t *testing.T, now func() time.Time) store.Store
	opts Options
}

// env is one subtest's store and clock.
type env struct {
	t        *testing.T
	s        store.Store
	clock    *clock
	ctx      context.Context
	indexLag time.Duration
}

// needsIsolation skips t when the engine cannot isolate transactions.
func (s *suite) needsIsolation(t *testing.T) {
	t.Helper()
	if s.opts.NoIsolation != "" {
		t.Skip(s.opts.NoIsolation)
	}
}

func (s *suite) env(t *testing.T) *env {
	t.Helper()
	c := newClock()
	st := s.open(t, c.Now)
	if st == nil {
		t.Fatal("open returned a nil store")
	}
	return &env{t: t, s: st, clock: c, ctx: t.Context(), indexLag: s.opts.IndexLag}
}

// sub returns e for the subtest t (same store and clock).
func (e *env) sub(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// clock is a controllable time source, safe for concurrent use.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Now().Truncate(time.Second).UnixNano())
	return c
}

// Now returns the clock's current time.
func (c *clock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// Unix returns the clock's current time in Unix seconds.
func (c *clock) Unix() int64 { return c.Now().Unix() }

// Advance moves the clock forward by d.
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func (e *env) write(ops ...store.Op) {
	e.t.Helper()
	if err := e.s.Write(e.ctx, ops); err != nil {
		e.t.Fatalf("Write(%s) = %v, want nil", fmtOps(ops), err)
	}
}

func (e *env) get(k store.Key) *store.Item {
	e.t.Helper()
	it, err := e.s.Get(e.ctx, k)
	if err != nil {
		e.t.Fatalf("Get(%v) = %v, want nil error", k, err)
	}
	return it
}

func (e *env) query(q store.Query) []*store.Item {
	e.t.Helper()
	items, err := e.s.Query(e.ctx, q)
	if err != nil {
		e.t.Fatalf("%s = %v, want nil error", fmtQuery(q), err)
	}
	return items
}

// wantItem fails unless Get(k) returns an item equal to want (nil: none).
func (e *env) wantItem(k store.Key, want *store.Item) {
	e.t.Helper()
	got := e.get(k)
	if !sameItem(got, want) {
		e.t.Errorf("Get(%v) = %s, want %s", k, fmtItem(got), fmtItem(want))
	}
}

// wantKeys fails unless q returns the items at exactly want, in order. On
// an index it waits up to the index lag for the answer to settle.
func (e *env) wantKeys(q store.Query, want []store.Key) {
	e.t.Helper()
	deadline := time.Now().Add(e.indexLag)
	for {
		got := keysOf(e.query(q))
		if equalKeys(got, want) {
			return
		}
		if q.Index == store.Table || time.Now().After(deadline) {
			e.t.Errorf("%s returned %s, want %s", fmtQuery(q), fmtKeys(got), fmtKeys(want))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sameItem(a, b *store.Item) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.PK == b.PK && a.SK == b.SK &&
		a.GSI1PK == b.GSI1PK && a.GSI1SK == b.GSI1SK &&
		a.GSI2PK == b.GSI2PK && a.GSI2SK == b.GSI2SK &&
		a.Version == b.Version && a.Count == b.Count && a.ExpiresAt == b.ExpiresAt &&
		bytes.Equal(a.Data, b.Data)
}

func keysOf(items []*store.Item) []store.Key {
	keys := make([]store.Key, len(items))
	for i, it := range items {
		if it != nil {
			keys[i] = it.Key()
		}
	}
	return keys
}

func equalKeys(a, b []store.Key) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func fmtItem(it *store.Item) string {
	if it == nil {
		return "nil"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{%q/%q", it.PK, it.SK)
	if it.GSI1PK != "" || it.GSI1SK != "" {
		fmt.Fprintf(&b, " gsi1=%q/%q", it.GSI1PK, it.GSI1SK)
	}
	if it.GSI2PK != "" || it.GSI2SK != "" {
		fmt.Fprintf(&b, " gsi2=%q/%q", it.GSI2PK, it.GSI2SK)
	}
	fmt.Fprintf(&b, " ver=%d n=%d ttl=%d", it.Version, it.Count, it.ExpiresAt)
	if len(it.Data) > 32 {
		fmt.Fprintf(&b, " data=%q...(%d bytes)}", it.Data[:32], len(it.Data))
	} else {
		fmt.Fprintf(&b, " data=%q}", it.Data)
	}
	return b.String()
}

func fmtKeys(keys []store.Key) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		if k == (store.Key{}) {
			parts[i] = "nil"
		} else {
			parts[i] = fmt.Sprintf("%q/%q", k.PK, k.SK)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtQuery(q store.Query) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Query(%v PK=%q", q.Index, q.PK)
	if q.From != "" {
		fmt.Fprintf(&b, " From=%q", q.From)
	}
	if q.To != "" {
		fmt.Fprintf(&b, " To=%q", q.To)
	}
	if q.Reverse {
		b.WriteString(" Reverse")
	}
	if q.Limit != 0 {
		fmt.Fprintf(&b, " Limit=%d", q.Limit)
	}
	b.WriteString(")")
	return b.String()
}

var condNames = map[store.CondKind]string{
	store.Always: "", store.IfAbsent: " if absent", store.IfPresent: " if present",
}

func fmtOps(ops []store.Op) string {
	if len(ops) > 4 {
		return fmt.Sprintf("%s ... %d ops", fmtOps(ops[:2]), len(ops))
	}
	parts := make([]string, len(ops))
	for i, op := range ops {
		k := op.OpKey()
		var kind string
		switch op.Kind {
		case store.OpPut:
			kind = "put"
		case store.OpDelete:
			kind = "delete"
		case store.OpCheck:
			kind = "check"
		case store.OpAdd:
			kind = fmt.Sprintf("add %+d", op.Delta)
		}
		cond, ok := condNames[op.Cond.Kind]
		if !ok {
			cond = fmt.Sprintf(" at version %d", op.Cond.Version)
		}
		parts[i] = fmt.Sprintf("%s %q/%q%s", kind, k.PK, k.SK, cond)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// always is the zero Condition: apply unconditionally.
var always = store.Condition{}

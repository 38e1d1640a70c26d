package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

func (s *suite) testItems(t *testing.T) {
	t.Run("GetMissingIsNil", func(t *testing.T) {
		e := s.env(t)
		k := store.Key{PK: "P", SK: "missing"}
		if got, err := e.s.Get(e.ctx, k); got != nil || err != nil {
			t.Errorf("Get(%v) = %s, %v, want nil, nil", k, fmtItem(got), err)
		}
	})

	t.Run("PutGetRoundTripsEveryField", func(t *testing.T) {
		e := s.env(t)
		future := e.clock.Unix() + 3600
		for _, tc := range []struct {
			name string
			item store.Item
		}{
			{"EveryField", store.Item{
				PK: "P", SK: "every",
				GSI1PK: "G1", GSI1SK: "g1", GSI2PK: "G2", GSI2SK: "g2",
				Version: 7, Count: -3, ExpiresAt: future,
				Data: []byte{0x00, 0xff, 0xfe, 'j', 0x80, 0xc3, '"', '\\', 0x00},
			}},
			{"KeysOnly", store.Item{PK: "P", SK: "bare"}},
			// Numbers up to 2^53, the range that any engine keeping
			// numbers as float64 (minidyn does) represents exactly; the
			// domain's versions and counts stay far below it.
			{"LargeNumbers", store.Item{PK: "P", SK: "large", Version: 1 << 53, Count: 1 << 53}},
			{"LargeNegativeCount", store.Item{PK: "P", SK: "negative", Version: 1, Count: -(1 << 53)}},
			{"JSONData", store.Item{PK: "P", SK: "json", Data: []byte(`{"body_md":"héllo \u2028"}`)}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := e.sub(t)
				it := tc.item
				e.write(store.Put(&it, always))
				e.wantItem(it.Key(), &it)
			})
		}
	})

	t.Run("PutReplacesWholeItem", func(t *testing.T) {
		e := s.env(t)
		old := store.Item{PK: "P", SK: "a", GSI1PK: "G1", GSI1SK: "x", Version: 3, Count: 9, ExpiresAt: e.clock.Unix() + 60, Data: []byte("old")}
		e.write(store.Put(&old, always))
		next := store.Item{PK: "P", SK: "a", Data: []byte("new")}
		e.write(store.Put(&next, always))
		e.wantItem(next.Key(), &next)
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G1"}, nil)
	})

	t.Run("CallerMutationDoesNotLeak", func(t *testing.T) {
		e := s.env(t)
		it := store.Item{PK: "P", SK: "a", Data: []byte("abc")}
		e.write(store.Put(&it, always))
		it.Data[0] = 'X'
		got := e.get(it.Key())
		if got == nil || string(got.Data) != "abc" {
			t.Fatalf("Get(%v) after mutating the put item's Data = %s, want data \"abc\"", it.Key(), fmtItem(got))
		}
		got.Data[0] = 'Y'
		e.wantItem(it.Key(), &store.Item{PK: "P", SK: "a", Data: []byte("abc")})
	})

	t.Run("DeleteRemovesItem", func(t *testing.T) {
		e := s.env(t)
		it := store.Item{PK: "P", SK: "a"}
		e.write(store.Put(&it, always))
		e.write(store.Delete(it.Key(), always))
		e.wantItem(it.Key(), nil)
	})

	t.Run("MultiItemWriteCommitsEveryOp", func(t *testing.T) {
		e := s.env(t)
		gone := store.Item{PK: "P", SK: "gone"}
		counter := store.Item{PK: "P", SK: "n", Count: 1, Data: []byte("c")}
		e.write(store.Put(&gone, always), store.Put(&counter, always))
		a := store.Item{PK: "P", SK: "a", Version: 1}
		b := store.Item{PK: "Q", SK: "b", Version: 1}
		e.write(
			store.Put(&a, store.Absent),
			store.Put(&b, store.Absent),
			store.Delete(gone.Key(), store.Present),
			store.Add(counter.Key(), 4, 0),
			store.Check(store.Key{PK: "P", SK: "absent"}, store.Absent),
		)
		e.wantItem(a.Key(), &a)
		e.wantItem(b.Key(), &b)
		e.wantItem(gone.Key(), nil)
		e.wantItem(counter.Key(), &store.Item{PK: "P", SK: "n", Count: 5, Data: []byte("c")})
	})
}

func (s *suite) testConditions(t *testing.T) {
	// Every case of conditionCases runs on its own key of one store, so
	// that the expired state is prepared for all of them by one clock move.
	e := s.env(t)
	type prepared struct {
		k      store.Key
		before *store.Item // the live item before the op, nil if none
	}
	var setups []store.Op
	preps := make([]prepared, len(conditionCases))
	for i, tc := range conditionCases {
		k := store.Key{PK: "cond", SK: tc.name}
		preps[i].k = k
		old := &store.Item{PK: k.PK, SK: k.SK, Version: 3, Data: []byte("old")}
		switch tc.state {
		case stateLive:
			preps[i].before = old
			setups = append(setups, store.Put(old, always))
		case stateExpired:
			old.ExpiresAt = e.clock.Unix() + 60
			setups = append(setups, store.Put(old, always))
		}
	}
	for len(setups) > 0 {
		n := min(len(setups), store.MaxWriteItems)
		e.write(setups[:n]...)
		setups = setups[n:]
	}
	e.clock.Advance(2 * time.Minute)

	for i, tc := range conditionCases {
		t.Run(tc.name, func(t *testing.T) {
			e := e.sub(t)
			k := preps[i].k
			op := tc.op(k)
			err := e.s.Write(e.ctx, []store.Op{op})
			want := preps[i].before
			if tc.fail {
				cf, ok := store.ConditionFailed(err)
				if !ok {
					t.Fatalf("Write(%s) on a %s item = %v, want *ConditionFailedError", fmtOps([]store.Op{op}), tc.state, err)
				}
				if cf.Index != 0 || cf.Key != k || !slices.Equal(cf.Failed, []int{0}) {
					t.Errorf("Write(%s) failed on op %d key %v (all %v), want op 0 key %v (all [0])", fmtOps([]store.Op{op}), cf.Index, cf.Key, cf.Failed, k)
				}
			} else {
				if err != nil {
					t.Fatalf("Write(%s) on a %s item = %v, want nil", fmtOps([]store.Op{op}), tc.state, err)
				}
				switch op.Kind {
				case store.OpPut:
					want = op.Item
				case store.OpDelete:
					want = nil
				}
			}
			e.wantItem(k, want)
		})
	}

	t.Run("ConditionFailedNamesItem", func(t *testing.T) {
		e := s.env(t)
		taken := store.Item{PK: "P", SK: "taken", Version: 1, Data: []byte("first")}
		e.write(store.Put(&taken, always))
		a := store.Item{PK: "P", SK: "a"}
		c := store.Item{PK: "Q", SK: "c"}
		ops := []store.Op{
			store.Put(&a, store.Absent),
			store.Add(store.Key{PK: "P", SK: "n"}, 1, 0),
			store.Put(&store.Item{PK: "P", SK: "taken", Data: []byte("second")}, store.Absent),
			store.Put(&c, always),
		}
		err := e.s.Write(e.ctx, ops)
		cf, ok := store.ConditionFailed(err)
		if !ok {
			t.Fatalf("Write(%s) = %v, want *ConditionFailedError", fmtOps(ops), err)
		}
		if cf.Index != 2 || cf.Key != taken.Key() || !slices.Equal(cf.Failed, []int{2}) {
			t.Errorf("Write(%s) failed on op %d key %v (all %v), want op 2 key %v (all [2])", fmtOps(ops), cf.Index, cf.Key, cf.Failed, taken.Key())
		}
		e.wantItem(a.Key(), nil)
		e.wantItem(store.Key{PK: "P", SK: "n"}, nil)
		e.wantItem(c.Key(), nil)
		e.wantItem(taken.Key(), &taken)
	})

	t.Run("ConditionFailedNamesEveryFailingOp", func(t *testing.T) {
		e := s.env(t)
		live := store.Item{PK: "P", SK: "live", Version: 2, Data: []byte("kept")}
		e.write(store.Put(&live, always))
		fresh := store.Item{PK: "P", SK: "fresh"}
		ops := []store.Op{
			store.Put(&store.Item{PK: "P", SK: "live", Data: []byte("lost")}, store.Absent),
			store.Put(&fresh, always),
			store.Check(store.Key{PK: "P", SK: "parent"}, store.Present),
			store.Add(store.Key{PK: "P", SK: "n"}, 1, 0),
			store.Delete(store.Key{PK: "Q", SK: "gone"}, store.AtVersion(1)),
		}
		err := e.s.Write(e.ctx, ops)
		cf, ok := store.ConditionFailed(err)
		if !ok {
			t.Fatalf("Write(%s) = %v, want *ConditionFailedError", fmtOps(ops), err)
		}
		if want := []int{0, 2, 4}; !slices.Equal(cf.Failed, want) || cf.Index != 0 || cf.Key != live.Key() {
			t.Errorf("Write(%s) failed on ops %v (first %d, key %v), want ops %v (first 0, key %v)",
				fmtOps(ops), cf.Failed, cf.Index, cf.Key, want, live.Key())
		}
		e.wantItem(live.Key(), &live)
		e.wantItem(fresh.Key(), nil)
		e.wantItem(store.Key{PK: "P", SK: "n"}, nil)
	})

	t.Run("CheckFailureAbortsWrite", func(t *testing.T) {
		e := s.env(t)
		guard := store.Item{PK: "P", SK: "guard", Version: 5}
		e.write(store.Put(&guard, always))
		a := store.Item{PK: "P", SK: "a"}
		ops := []store.Op{
			store.Put(&a, always),
			store.Delete(guard.Key(), always),
			store.Check(store.Key{PK: "P", SK: "parent"}, store.Present),
		}
		err := e.s.Write(e.ctx, ops)
		cf, ok := store.ConditionFailed(err)
		if !ok || cf.Index != 2 {
			t.Fatalf("Write(%s) = %v, want *ConditionFailedError on op 2", fmtOps(ops), err)
		}
		e.wantItem(a.Key(), nil)
		e.wantItem(guard.Key(), &guard)
	})

	t.Run("ConcurrentCreatesOneWins", func(t *testing.T) {
		s.needsIsolation(t)
		e := s.env(t)
		k := store.Key{PK: "P", SK: "once"}
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				errs[i] = writeRetrying(e, store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: uint64(i + 1)}, store.Absent))
			})
		}
		wg.Wait()
		wins := 0
		for i, err := range errs {
			if err == nil {
				wins++
				continue
			}
			if _, ok := store.ConditionFailed(err); !ok {
				t.Errorf("writer %d: Write(put %v if absent) = %v, want nil or *ConditionFailedError", i, k, err)
			}
		}
		if wins != 1 {
			t.Errorf("%d concurrent Write(put %v if absent) succeeded %d times, want 1", n, k, wins)
		}
	})
}

type condState int

const (
	stateMissing condState = iota
	stateLive
	stateExpired
)

func (s condState) String() string { return [...]string{"missing", "live", "expired"}[s] }

func newCondItem(k store.Key) *store.Item {
	return &store.Item{PK: k.PK, SK: k.SK, Version: 9, Data: []byte("new")}
}

// conditionCases is the truth table of conditions: the item at the key
// has Version 3 when live or expired.
var conditionCases = []struct {
	name  string
	state condState
	op    func(k store.Key) store.Op
	fail  bool
}{
	{"PutAbsentOnMissingSucceeds", stateMissing, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.Absent) }, false},
	{"PutAbsentOnLiveFails", stateLive, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.Absent) }, true},
	{"PutAbsentOnExpiredSucceeds", stateExpired, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.Absent) }, false},
	{"PutPresentOnMissingFails", stateMissing, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.Present) }, true},
	{"PutPresentOnLiveSucceeds", stateLive, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.Present) }, false},
	{"PutPresentOnExpiredFails", stateExpired, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.Present) }, true},
	{"PutVersionMatchSucceeds", stateLive, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.AtVersion(3)) }, false},
	{"PutVersionMismatchFails", stateLive, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.AtVersion(4)) }, true},
	{"PutVersionZeroOnLiveFails", stateLive, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.AtVersion(0)) }, true},
	{"PutVersionOnMissingFails", stateMissing, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.AtVersion(0)) }, true},
	{"PutVersionOnExpiredFails", stateExpired, func(k store.Key) store.Op { return store.Put(newCondItem(k), store.AtVersion(3)) }, true},
	{"PutAlwaysOnLiveSucceeds", stateLive, func(k store.Key) store.Op { return store.Put(newCondItem(k), always) }, false},
	{"DeleteAlwaysOnMissingSucceeds", stateMissing, func(k store.Key) store.Op { return store.Delete(k, always) }, false},
	{"DeletePresentOnLiveSucceeds", stateLive, func(k store.Key) store.Op { return store.Delete(k, store.Present) }, false},
	{"DeletePresentOnMissingFails", stateMissing, func(k store.Key) store.Op { return store.Delete(k, store.Present) }, true},
	{"DeletePresentOnExpiredFails", stateExpired, func(k store.Key) store.Op { return store.Delete(k, store.Present) }, true},
	{"DeleteVersionMatchSucceeds", stateLive, func(k store.Key) store.Op { return store.Delete(k, store.AtVersion(3)) }, false},
	{"DeleteVersionMismatchKeepsItem", stateLive, func(k store.Key) store.Op { return store.Delete(k, store.AtVersion(2)) }, true},
	{"CheckAbsentOnLiveFails", stateLive, func(k store.Key) store.Op { return store.Check(k, store.Absent) }, true},
	{"CheckAbsentOnExpiredSucceeds", stateExpired, func(k store.Key) store.Op { return store.Check(k, store.Absent) }, false},
	{"CheckPresentOnMissingFails", stateMissing, func(k store.Key) store.Op { return store.Check(k, store.Present) }, true},
	{"CheckVersionMatchSucceeds", stateLive, func(k store.Key) store.Op { return store.Check(k, store.AtVersion(3)) }, false},
	{"CheckVersionMismatchFails", stateLive, func(k store.Key) store.Op { return store.Check(k, store.AtVersion(1)) }, true},
}

// writeRetrying writes ops, retrying while the engine reports
// ErrUnavailable (DynamoDB's transaction conflicts): nothing was written
// then, so a retry is what a caller does.
func writeRetrying(e *env, ops ...store.Op) error {
	for {
		err := e.s.Write(e.ctx, ops)
		if !errors.Is(err, store.ErrUnavailable) || e.ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *suite) testLimits(t *testing.T) {
	big := func(pk, sk string, n int) *store.Item {
		return &store.Item{PK: pk, SK: sk, Data: bytes.Repeat([]byte{'x'}, n)}
	}
	puts := func(n int, size int) []store.Op {
		ops := make([]store.Op, n)
		for i := range ops {
			ops[i] = store.Put(big("L", fmt.Sprintf("%03d", i), size), always)
		}
		return ops
	}
	for _, tc := range []struct {
		name string
		ops  []store.Op
		want error
	}{
		{"EmptyWriteInvalid", nil, store.ErrInvalid},
		{"DuplicateKeysInvalid", []store.Op{
			store.Put(&store.Item{PK: "L", SK: "a"}, always),
			store.Put(&store.Item{PK: "L", SK: "b"}, always),
			store.Delete(store.Key{PK: "L", SK: "a"}, always),
		}, store.ErrInvalid},
		{"EmptySortKeyInvalid", []store.Op{
			store.Put(&store.Item{PK: "L", SK: "a"}, always),
			store.Put(&store.Item{PK: "L"}, always),
		}, store.ErrInvalid},
		{"NulInKeyInvalid", []store.Op{
			store.Put(&store.Item{PK: "L", SK: "a"}, always),
			store.Put(&store.Item{PK: "L", SK: "b\x00c"}, always),
		}, store.ErrInvalid},
		{"NulInIndexKeyInvalid", []store.Op{
			store.Put(&store.Item{PK: "L", SK: "a", GSI2PK: "G\x00", GSI2SK: "x"}, always),
		}, store.ErrInvalid},
		{"IndexPartitionWithoutSortKeyInvalid", []store.Op{
			store.Put(&store.Item{PK: "L", SK: "a", GSI1PK: "G1"}, always),
		}, store.ErrInvalid},
		{"AddWithConditionInvalid", []store.Op{
			store.Put(&store.Item{PK: "L", SK: "a"}, always),
			{Kind: store.OpAdd, Key: store.Key{PK: "L", SK: "n"}, Delta: 1, Cond: store.Absent},
		}, store.ErrInvalid},
		{"TooManyOpsTooLarge", puts(store.MaxWriteItems+1, 10), store.ErrTooLarge},
		{"TotalOver4MBTooLarge", puts(12, 390<<10), store.ErrTooLarge},
		{"ItemOver400KBTooLarge", []store.Op{
			store.Put(big("L", "a", 10), always),
			store.Put(big("L", "b", store.MaxItemBytes), always),
		}, store.ErrTooLarge},
		{"PartitionKeyOver2KBTooLarge", []store.Op{
			store.Put(big("L", "a", 10), always),
			store.Put(&store.Item{PK: string(bytes.Repeat([]byte{'p'}, store.MaxPartitionKeyBytes+1)), SK: "b"}, always),
		}, store.ErrTooLarge},
		{"SortKeyOver1KBTooLarge", []store.Op{
			store.Check(store.Key{PK: "L", SK: string(bytes.Repeat([]byte{'s'}, store.MaxSortKeyBytes+1))}, store.Absent),
			store.Put(big("L", "a", 10), always),
		}, store.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := s.env(t)
			err := e.s.Write(e.ctx, tc.ops)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Write(%s) = %v, want %v", fmtOps(tc.ops), err, tc.want)
			}
			var keys []store.Key
			for _, op := range tc.ops {
				if k := op.OpKey(); k.PK != "" && k.SK != "" && len(k.PK) <= store.MaxPartitionKeyBytes &&
					len(k.SK) <= store.MaxSortKeyBytes && !bytes.ContainsRune([]byte(k.PK+k.SK), 0) {
					keys = append(keys, k)
				}
			}
			for _, k := range keys {
				e.wantItem(k, nil)
			}
		})
	}

	t.Run("HundredOpsCommit", func(t *testing.T) {
		e := s.env(t)
		ops := puts(store.MaxWriteItems, 100)
		e.write(ops...)
		for _, op := range ops {
			e.wantItem(op.Item.Key(), op.Item)
		}
	})
}

func (s *suite) testAdd(t *testing.T) {
	t.Run("AddCreatesItem", func(t *testing.T) {
		e := s.env(t)
		k := store.Key{PK: "A", SK: "n"}
		exp := e.clock.Unix() + 600
		e.write(store.Add(k, 5, exp))
		e.wantItem(k, &store.Item{PK: k.PK, SK: k.SK, Count: 5, ExpiresAt: exp})
	})

	t.Run("AddNegativeDeltaCreatesNegativeCount", func(t *testing.T) {
		e := s.env(t)
		k := store.Key{PK: "A", SK: "n"}
		e.write(store.Add(k, -2, 0))
		e.wantItem(k, &store.Item{PK: k.PK, SK: k.SK, Count: -2})
	})

	t.Run("AddIncrementsKeepingOtherFields", func(t *testing.T) {
		e := s.env(t)
		exp := e.clock.Unix() + 600
		it := store.Item{PK: "A", SK: "n", GSI1PK: "G1", GSI1SK: "x", Version: 4, Count: 10, ExpiresAt: exp, Data: []byte("keep")}
		e.write(store.Put(&it, always))
		steps := []struct {
			delta, expiresAt int64
			wantCount        int64
			wantExpiresAt    int64
		}{
			{3, 0, 13, exp},
			{-20, 0, -7, exp},
			{7, exp + 100, 0, exp + 100},
		}
		for _, st := range steps {
			e.write(store.Add(it.Key(), st.delta, st.expiresAt))
			want := it
			want.Count, want.ExpiresAt = st.wantCount, st.wantExpiresAt
			got := e.get(it.Key())
			if !sameItem(got, &want) {
				t.Errorf("Get(%v) after Add(%+d, expires %d) = %s, want %s", it.Key(), st.delta, st.expiresAt, fmtItem(got), fmtItem(&want))
			}
		}
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G1"}, []store.Key{it.Key()})
	})

	t.Run("AddOverExpiredStartsFresh", func(t *testing.T) {
		e := s.env(t)
		it := store.Item{PK: "A", SK: "n", GSI1PK: "G1", GSI1SK: "x", Version: 4, Count: 10, ExpiresAt: e.clock.Unix() + 10, Data: []byte("old")}
		e.write(store.Put(&it, always))
		e.clock.Advance(time.Minute)
		exp := e.clock.Unix() + 600
		e.write(store.Add(it.Key(), 2, exp))
		e.wantItem(it.Key(), &store.Item{PK: "A", SK: "n", Count: 2, ExpiresAt: exp})
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G1"}, nil)
	})

	t.Run("AddAbortedWithWrite", func(t *testing.T) {
		e := s.env(t)
		k := store.Key{PK: "A", SK: "n"}
		e.write(store.Add(k, 1, 0))
		ops := []store.Op{store.Add(k, 1, 0), store.Check(store.Key{PK: "A", SK: "missing"}, store.Present)}
		if _, ok := store.ConditionFailed(e.s.Write(e.ctx, ops)); !ok {
			t.Fatalf("Write(%s) succeeded or failed otherwise, want *ConditionFailedError", fmtOps(ops))
		}
		e.wantItem(k, &store.Item{PK: k.PK, SK: k.SK, Count: 1})
	})

	t.Run("ConcurrentAddsSumExactly", func(t *testing.T) {
		s.needsIsolation(t)
		e := s.env(t)
		k := store.Key{PK: "A", SK: "n"}
		adders, each := s.opts.Adders, s.opts.Appends
		var wg sync.WaitGroup
		for a := range adders {
			wg.Go(func() {
				for i := range each {
					delta := int64(2)
					if i%5 == 4 {
						delta = -1
					}
					if err := writeRetrying(e, store.Add(k, delta, 0)); err != nil {
						t.Errorf("adder %d: Write(add %+d %v) = %v, want nil", a, delta, k, err)
						return
					}
				}
			})
		}
		wg.Wait()
		perAdder := int64(0)
		for i := range each {
			if i%5 == 4 {
				perAdder--
			} else {
				perAdder += 2
			}
		}
		want := int64(adders) * perAdder
		if got := e.get(k); got == nil || got.Count != want {
			t.Errorf("Get(%v) after %d goroutines x %d adds = %s, want Count %d", k, adders, each, fmtItem(got), want)
		}
	})
}

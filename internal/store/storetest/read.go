package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

func (s *suite) testBatchGet(t *testing.T) {
	t.Run("OrderWithNilForMissingAndDuplicates", func(t *testing.T) {
		e := s.env(t)
		a := store.Item{PK: "B", SK: "a", Data: []byte("a")}
		b := store.Item{PK: "C", SK: "b", Version: 2}
		x := store.Item{PK: "B", SK: "x", ExpiresAt: e.clock.Unix() + 5}
		e.write(store.Put(&a, always), store.Put(&b, always), store.Put(&x, always))
		e.clock.Advance(10 * time.Second)
		keys := []store.Key{b.Key(), {PK: "B", SK: "missing"}, a.Key(), b.Key(), x.Key(), a.Key()}
		want := []*store.Item{&b, nil, &a, &b, nil, &a}
		got, err := e.s.BatchGet(e.ctx, keys)
		if err != nil {
			t.Fatalf("BatchGet(%s) = %v, want nil error", fmtKeys(keys), err)
		}
		if len(got) != len(want) {
			t.Fatalf("BatchGet(%s) returned %d items, want %d", fmtKeys(keys), len(got), len(want))
		}
		for i := range want {
			if !sameItem(got[i], want[i]) {
				t.Errorf("BatchGet(%s)[%d] = %s, want %s", fmtKeys(keys), i, fmtItem(got[i]), fmtItem(want[i]))
			}
		}
	})

	t.Run("EmptyReturnsEmpty", func(t *testing.T) {
		e := s.env(t)
		if got, err := e.s.BatchGet(e.ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("BatchGet(nil) = %d items, %v, want 0 items, nil", len(got), err)
		}
	})

	t.Run("ManyKeysKeepOrder", func(t *testing.T) {
		// 250 keys exceed DynamoDB's 100-key BatchGetItem: the adapter
		// must chunk and reassemble in the caller's order.
		e := s.env(t)
		const n = 250
		var keys []store.Key
		var want []*store.Item
		var ops []store.Op
		for i := range n {
			// Descending keys across two partitions, every third missing.
			k := store.Key{PK: fmt.Sprintf("B%d", i%2), SK: fmt.Sprintf("%04d", n-i)}
			keys = append(keys, k)
			if i%3 == 0 {
				want = append(want, nil)
				continue
			}
			it := &store.Item{PK: k.PK, SK: k.SK, Count: int64(i)}
			want = append(want, it)
			ops = append(ops, store.Put(it, always))
		}
		for len(ops) > 0 {
			m := min(len(ops), store.MaxWriteItems)
			e.write(ops[:m]...)
			ops = ops[m:]
		}
		got, err := e.s.BatchGet(e.ctx, keys)
		if err != nil {
			t.Fatalf("BatchGet(%d keys) = %v, want nil error", n, err)
		}
		if len(got) != n {
			t.Fatalf("BatchGet(%d keys) returned %d items, want %d", n, len(got), n)
		}
		for i := range want {
			if !sameItem(got[i], want[i]) {
				t.Errorf("BatchGet(%d keys)[%d] = %s, want %s", n, i, fmtItem(got[i]), fmtItem(want[i]))
			}
		}
	})

	t.Run("OverLimitTooLarge", func(t *testing.T) {
		e := s.env(t)
		keys := make([]store.Key, store.MaxBatchGetKeys+1)
		for i := range keys {
			keys[i] = store.Key{PK: "B", SK: fmt.Sprint(i)}
		}
		if _, err := e.s.BatchGet(e.ctx, keys); !errors.Is(err, store.ErrTooLarge) {
			t.Errorf("BatchGet(%d keys) = %v, want %v", len(keys), err, store.ErrTooLarge)
		}
	})
}

// fixture is a set of items written to a fresh store, and the model of
// what each index holds, for computing the expected answer of any query.
type fixture struct {
	items []*store.Item
}

// entry is one item as an index orders it.
type entry struct {
	sk  string
	key store.Key
}

func indexKeys(ix store.Index, it *store.Item) (pk, sk string) {
	switch ix {
	case store.GSI1:
		return it.GSI1PK, it.GSI1SK
	case store.GSI2:
		return it.GSI2PK, it.GSI2SK
	}
	return it.PK, it.SK
}

// model returns the live entries of partition pk of index ix in ascending
// order.
func (f *fixture) model(ix store.Index, pk string, now int64) []entry {
	var out []entry
	for _, it := range f.items {
		ipk, isk := indexKeys(ix, it)
		if ipk == pk && isk != "" && store.Live(it.ExpiresAt, now) {
			out = append(out, entry{isk, it.Key()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].sk != out[j].sk {
			return out[i].sk < out[j].sk
		}
		if out[i].key.PK != out[j].key.PK {
			return out[i].key.PK < out[j].key.PK
		}
		return out[i].key.SK < out[j].key.SK
	})
	return out
}

// answer computes q's expected result from the model.
func (f *fixture) answer(q store.Query, now int64) []store.Key {
	var keys []store.Key
	for _, en := range f.model(q.Index, q.PK, now) {
		if (q.From == "" || en.sk >= q.From) && (q.To == "" || en.sk <= q.To) {
			keys = append(keys, en.key)
		}
	}
	if q.Reverse {
		slices.Reverse(keys)
	}
	if q.Limit > 0 && len(keys) > q.Limit {
		keys = keys[:q.Limit]
	}
	return keys
}

func (f *fixture) add(it *store.Item) { f.items = append(f.items, it) }

func (f *fixture) writeTo(e *env) {
	e.t.Helper()
	ops := make([]store.Op, 0, len(f.items))
	for _, it := range f.items {
		ops = append(ops, store.Put(it, always))
	}
	for len(ops) > 0 {
		n := min(len(ops), store.MaxWriteItems)
		e.write(ops[:n]...)
		ops = ops[n:]
	}
}

// queryFixture is partition P of the table, GSI1 partition G1 (ordered
// opposite to the table), sparse GSI2 partition G2 (even items only), an
// expired item in the middle of each, keys outside the common prefix at
// both ends, and neighbouring partitions whose names extend P, G1 and G2.
func queryFixture(now int64) (*fixture, map[store.Index]string) {
	f := &fixture{}
	for i := range 12 {
		it := &store.Item{
			PK: "P", SK: fmt.Sprintf("item#%02d", i),
			GSI1PK: "G1", GSI1SK: fmt.Sprintf("g1#%02d", 11-i),
			Version: uint64(i),
		}
		if i%2 == 0 {
			it.GSI2PK, it.GSI2SK = "G2", fmt.Sprintf("g2#%02d", i)
		}
		switch i {
		case 6:
			it.ExpiresAt = now + 5 // expires once the clock moves
		case 4:
			it.ExpiresAt = now + 3600
		}
		f.add(it)
	}
	f.add(&store.Item{PK: "P", SK: "a", GSI1PK: "G1", GSI1SK: "a", GSI2PK: "G2", GSI2SK: "a"})
	f.add(&store.Item{PK: "P", SK: "zzz", GSI1PK: "G1", GSI1SK: "zzz", GSI2PK: "G2", GSI2SK: "zzz"})
	f.add(&store.Item{PK: "P#2", SK: "item#03", GSI1PK: "G1#2", GSI1SK: "g1#03", GSI2PK: "G2#2", GSI2SK: "g2#03"})
	f.add(&store.Item{PK: "P2", SK: "item#05", GSI1PK: "G10", GSI1SK: "g1#05", GSI2PK: "G22", GSI2SK: "g2#05"})
	return f, map[store.Index]string{store.Table: "item#", store.GSI1: "g1#", store.GSI2: "g2#"}
}

var partitionOf = map[store.Index]string{store.Table: "P", store.GSI1: "G1", store.GSI2: "G2"}

func (s *suite) testQuery(t *testing.T) {
	e := s.env(t)
	f, prefixes := queryFixture(e.clock.Unix())
	f.writeTo(e)
	e.clock.Advance(time.Minute)
	now := e.clock.Unix()
	for ix, pk := range partitionOf {
		e.wantKeys(store.Query{Index: ix, PK: pk}, f.answer(store.Query{Index: ix, PK: pk}, now))
	}

	for _, ix := range []store.Index{store.Table, store.GSI1, store.GSI2} {
		t.Run(strings.ToUpper(ix.String()[:1])+ix.String()[1:], func(t *testing.T) {
			pk := partitionOf[ix]
			model := f.model(ix, pk, now)
			k := func(i int) string { return model[i].sk }
			prefix := prefixes[ix]
			cases := []struct {
				name string
				q    store.Query
			}{
				{"AscendingAll", store.Query{}},
				{"ReverseAll", store.Query{Reverse: true}},
				{"LimitFirst", store.Query{Limit: 3}},
				{"ReverseLimitLast", store.Query{Reverse: true, Limit: 3}},
				{"LimitAboveCount", store.Query{Limit: 100}},
				{"InclusiveBounds", store.Query{From: k(2), To: k(5)}},
				{"InclusiveBoundsReverse", store.Query{From: k(2), To: k(5), Reverse: true}},
				{"InclusiveBoundsReverseLimit", store.Query{From: k(1), To: k(6), Reverse: true, Limit: 2}},
				{"FromOnly", store.Query{From: k(4)}},
				{"ToOnly", store.Query{To: k(3)}},
				{"ToOnlyReverse", store.Query{To: k(3), Reverse: true}},
				{"ExclusiveBoundsAfterBefore", store.Query{From: store.After(k(2)), To: store.Before(k(5))}},
				{"ExclusiveBoundsReverse", store.Query{From: store.After(k(2)), To: store.Before(k(5)), Reverse: true}},
				{"BoundsBetweenKeys", store.Query{From: k(2) + "!", To: k(5) + "!"}},
				{"SingleKeyRange", store.Query{From: k(3), To: k(3)}},
				{"EmptyRange", store.Query{From: k(5), To: k(2)}},
				{"PrefixBounds", store.Query{From: prefix, To: store.PrefixEnd(prefix)}},
				{"PrefixBoundsReverse", store.Query{From: prefix, To: store.PrefixEnd(prefix), Reverse: true, Limit: 4}},
				{"BoundsSkipExpiredUnderLimit", store.Query{From: prefix, Limit: 8}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					q := tc.q
					q.Index, q.PK = ix, pk
					e.sub(t).wantKeys(q, f.answer(q, now))
				})
			}

			t.Run("MissingPartitionEmpty", func(t *testing.T) {
				e.sub(t).wantKeys(store.Query{Index: ix, PK: pk + "-none"}, nil)
			})

			t.Run("KeysetPagingForwardNoGapNoRepeat", func(t *testing.T) {
				for _, limit := range []int{1, 2, 5} {
					want := f.answer(store.Query{Index: ix, PK: pk}, now)
					got := pageAll(e.sub(t), store.Query{Index: ix, PK: pk, Limit: limit})
					if !equalKeys(got, want) {
						t.Errorf("paging %v %q forward by %d with After = %s, want %s", ix, pk, limit, fmtKeys(got), fmtKeys(want))
					}
				}
			})

			t.Run("KeysetPagingBackwardNoGapNoRepeat", func(t *testing.T) {
				for _, limit := range []int{1, 3, 4} {
					want := f.answer(store.Query{Index: ix, PK: pk, Reverse: true}, now)
					got := pageAll(e.sub(t), store.Query{Index: ix, PK: pk, Limit: limit, Reverse: true})
					if !equalKeys(got, want) {
						t.Errorf("paging %v %q backward by %d with Before = %s, want %s", ix, pk, limit, fmtKeys(got), fmtKeys(want))
					}
				}
			})
		})
	}

	t.Run("UnicodeSortKeysOrderByUTF8Bytes", func(t *testing.T) {
		e := s.env(t)
		// UTF-8 byte order, which DynamoDB uses, differs from UTF-16 order
		// (U+E000, U+FFFD < U+1F600) and from collation (Z < a < é). Keys
		// ending in a continuation byte 0x80 check that Before stays valid
		// UTF-8.
		sks := []string{
			"a", "Z", "~", "\u007f", "\u0080", "À", "é", "aÀ", "aé", "a\u0800",
			"\u07ff", "\u0800", "日本", "\ud7ff", "\ue000", "\ufffd", "😀", "😀a", "\U0010fffd",
		}
		f := &fixture{}
		for i, sk := range sks {
			f.add(&store.Item{PK: "U", SK: sk, GSI1PK: "GU", GSI1SK: sk, Version: uint64(i)})
		}
		f.writeTo(e)
		sorted := slices.Clone(sks)
		sort.Strings(sorted)
		for _, ix := range []store.Index{store.Table, store.GSI1} {
			pk := map[store.Index]string{store.Table: "U", store.GSI1: "GU"}[ix]
			var want []store.Key
			for _, sk := range sorted {
				want = append(want, store.Key{PK: "U", SK: sk})
			}
			e.wantKeys(store.Query{Index: ix, PK: pk}, want)
			if got := pageAll(e, store.Query{Index: ix, PK: pk, Limit: 1}); !equalKeys(got, want) {
				t.Errorf("paging %v %q forward by 1 with After = %s, want %s", ix, pk, fmtKeys(got), fmtKeys(want))
			}
			slices.Reverse(want)
			if got := pageAll(e, store.Query{Index: ix, PK: pk, Limit: 1, Reverse: true}); !equalKeys(got, want) {
				t.Errorf("paging %v %q backward by 1 with Before = %s, want %s", ix, pk, fmtKeys(got), fmtKeys(want))
			}
		}
	})
}

// pageAll reads q's partition page by page (q.Limit items each), each page
// starting strictly after (or, in reverse, before) the last item of the
// previous one, as a keyset cursor does.
func pageAll(e *env, q store.Query) []store.Key {
	e.t.Helper()
	var all []store.Key
	for pages := 0; ; pages++ {
		if pages > 1000 {
			e.t.Fatalf("paging with %s did not end after 1000 pages", fmtQuery(q))
		}
		page := e.query(q)
		for _, it := range page {
			all = append(all, it.Key())
		}
		if len(page) < q.Limit || len(page) == 0 {
			return all
		}
		_, last := indexKeys(q.Index, page[len(page)-1])
		if q.Reverse {
			q.To = store.Before(last)
		} else {
			q.From = store.After(last)
		}
	}
}

func (s *suite) testIndexes(t *testing.T) {
	t.Run("SparseIndexOmitsItemWithoutKey", func(t *testing.T) {
		e := s.env(t)
		in := store.Item{PK: "P", SK: "in", GSI1PK: "G", GSI1SK: "1"}
		out := store.Item{PK: "P", SK: "out", GSI2PK: "G", GSI2SK: "2"}
		e.write(store.Put(&in, always), store.Put(&out, always))
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G"}, []store.Key{in.Key()})
		e.wantKeys(store.Query{Index: store.GSI2, PK: "G"}, []store.Key{out.Key()})
	})

	t.Run("IndexReturnsWholeItem", func(t *testing.T) {
		e := s.env(t)
		it := store.Item{PK: "P", SK: "a", GSI1PK: "G", GSI1SK: "1", GSI2PK: "H", GSI2SK: "2", Version: 3, Count: 4, ExpiresAt: e.clock.Unix() + 60, Data: []byte{0xff, 0}}
		e.write(store.Put(&it, always))
		for _, q := range []store.Query{{Index: store.GSI1, PK: "G"}, {Index: store.GSI2, PK: "H"}} {
			e.wantKeys(q, []store.Key{it.Key()})
			got := e.query(q)
			if len(got) != 1 || !sameItem(got[0], &it) {
				t.Errorf("%s = %d items (first %s), want [%s]", fmtQuery(q), len(got), fmtItem(first(got)), fmtItem(&it))
			}
		}
	})

	t.Run("UpdateMovesIndexEntry", func(t *testing.T) {
		e := s.env(t)
		it := store.Item{PK: "P", SK: "a", GSI1PK: "G", GSI1SK: "1", GSI2PK: "H", GSI2SK: "1"}
		e.write(store.Put(&it, always))
		it.GSI1SK = "2"  // same index partition, new sort key
		it.GSI2PK = "H2" // new index partition
		e.write(store.Put(&it, store.AtVersion(0)))
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G", To: "1"}, nil)
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G"}, []store.Key{it.Key()})
		e.wantKeys(store.Query{Index: store.GSI2, PK: "H"}, nil)
		e.wantKeys(store.Query{Index: store.GSI2, PK: "H2"}, []store.Key{it.Key()})

		it.GSI1PK, it.GSI1SK = "", "" // leaves the index
		e.write(store.Put(&it, always))
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G"}, nil)
		e.wantKeys(store.Query{Index: store.GSI2, PK: "H2"}, []store.Key{it.Key()})
	})

	t.Run("DeleteRemovesIndexEntries", func(t *testing.T) {
		e := s.env(t)
		it := store.Item{PK: "P", SK: "a", GSI1PK: "G", GSI1SK: "1", GSI2PK: "H", GSI2SK: "1"}
		keep := store.Item{PK: "P", SK: "b", GSI1PK: "G", GSI1SK: "2"}
		e.write(store.Put(&it, always), store.Put(&keep, always))
		e.write(store.Delete(it.Key(), store.Present))
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G"}, []store.Key{keep.Key()})
		e.wantKeys(store.Query{Index: store.GSI2, PK: "H"}, nil)
	})

	t.Run("ReplacingExpiredItemMovesIndexEntry", func(t *testing.T) {
		e := s.env(t)
		old := store.Item{PK: "P", SK: "a", GSI1PK: "G", GSI1SK: "old", ExpiresAt: e.clock.Unix() + 5}
		e.write(store.Put(&old, always))
		e.clock.Advance(time.Minute)
		next := store.Item{PK: "P", SK: "a", GSI1PK: "G", GSI1SK: "new"}
		e.write(store.Put(&next, store.Absent))
		e.wantKeys(store.Query{Index: store.GSI1, PK: "G"}, []store.Key{next.Key()})
		got := e.query(store.Query{Index: store.GSI1, PK: "G"})
		if len(got) != 1 || got[0].GSI1SK != "new" {
			t.Errorf("Query(gsi1 G) = %d items (first %s), want the new item only", len(got), fmtItem(first(got)))
		}
	})
}

func first(items []*store.Item) *store.Item {
	if len(items) == 0 {
		return nil
	}
	return items[0]
}

func (s *suite) testExpiry(t *testing.T) {
	t.Run("ExpiredItemsAbsentFromEveryRead", func(t *testing.T) {
		e := s.env(t)
		now := e.clock.Unix()
		a := store.Item{PK: "T", SK: "a", GSI1PK: "G", GSI1SK: "a", GSI2PK: "H", GSI2SK: "a"}
		b := store.Item{PK: "T", SK: "b", GSI1PK: "G", GSI1SK: "b", GSI2PK: "H", GSI2SK: "b", ExpiresAt: now + 30}
		c := store.Item{PK: "T", SK: "c", GSI1PK: "G", GSI1SK: "c", GSI2PK: "H", GSI2SK: "c", ExpiresAt: now + 3600}
		e.write(store.Put(&a, always), store.Put(&b, always), store.Put(&c, always))
		e.wantItem(b.Key(), &b) // live until its time comes
		e.clock.Advance(30 * time.Second)

		e.wantItem(b.Key(), nil)
		keys := []store.Key{a.Key(), b.Key(), c.Key()}
		got, err := e.s.BatchGet(e.ctx, keys)
		if err != nil || len(got) != 3 || !sameItem(got[0], &a) || got[1] != nil || !sameItem(got[2], &c) {
			t.Errorf("BatchGet(%s) = %s, %v, want [a nil c], nil", fmtKeys(keys), fmtKeys(keysOf(got)), err)
		}
		live := []store.Key{a.Key(), c.Key()}
		for _, q := range []store.Query{
			{Index: store.Table, PK: "T"},
			{Index: store.GSI1, PK: "G"},
			{Index: store.GSI2, PK: "H"},
		} {
			e.wantKeys(q, live)
			q.Reverse = true
			e.wantKeys(q, []store.Key{c.Key(), a.Key()})
			q.Reverse, q.From, q.Limit = false, "b", 1
			e.wantKeys(q, []store.Key{c.Key()})
		}
	})

	t.Run("ExpiresAtNowIsExpired", func(t *testing.T) {
		e := s.env(t)
		it := store.Item{PK: "T", SK: "a", ExpiresAt: e.clock.Unix() + 1}
		e.write(store.Put(&it, always))
		e.clock.Advance(time.Second)
		e.wantItem(it.Key(), nil)
	})

	t.Run("ExpiredItemReplacedByPut", func(t *testing.T) {
		e := s.env(t)
		old := store.Item{PK: "T", SK: "a", Version: 8, ExpiresAt: e.clock.Unix() + 1, Data: []byte("old")}
		e.write(store.Put(&old, always))
		e.clock.Advance(time.Hour)
		next := store.Item{PK: "T", SK: "a", Version: 1, Data: []byte("new")}
		e.write(store.Put(&next, store.Absent))
		e.wantItem(next.Key(), &next)
	})
}

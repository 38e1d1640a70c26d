package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// seqSK is a row's sort key: zero-padded so that byte order is numeric
// order.
func seqSK(seq uint64) string { return fmt.Sprintf("%020d", seq) }

// rowOps builds the row of a stream appended at seq.
func rowOps(pk string, data string) func(seq uint64) ([]store.Op, error) {
	return func(seq uint64) ([]store.Op, error) {
		return []store.Op{store.Put(&store.Item{PK: pk, SK: seqSK(seq), Data: []byte(data)}, store.Absent)}, nil
	}
}

func (s *suite) testSequence(t *testing.T) {
	t.Run("AppendNumbersFromOne", func(t *testing.T) {
		e := s.env(t)
		ctr := store.Key{PK: "S", SK: "counter"}
		if h, err := head(e.ctx, e.s, ctr); h != 0 || err != nil {
			t.Errorf("Head(%v) of a new stream = %d, %v, want 0, nil", ctr, h, err)
		}
		for want := uint64(1); want <= 3; want++ {
			got, err := appendSeq(e.ctx, e.s, ctr, rowOps("S", "row"))
			if got != want || err != nil {
				t.Fatalf("Append(%v) = %d, %v, want %d, nil", ctr, got, err, want)
			}
			e.wantItem(store.Key{PK: "S", SK: seqSK(want)}, &store.Item{PK: "S", SK: seqSK(want), Data: []byte("row")})
		}
		if h, err := head(e.ctx, e.s, ctr); h != 3 || err != nil {
			t.Errorf("Head(%v) after 3 appends = %d, %v, want 3, nil", ctr, h, err)
		}
	})

	t.Run("AppendKeepsCounterFields", func(t *testing.T) {
		e := s.env(t)
		meta := store.Item{PK: "S", SK: "meta", GSI1PK: "rooms", GSI1SK: "S", Version: 41, Data: []byte(`{"title":"x"}`)}
		e.write(store.Put(&meta, always))
		if got, err := appendSeq(e.ctx, e.s, meta.Key(), rowOps("S", "row")); got != 42 || err != nil {
			t.Fatalf("Append(%v) at version 41 = %d, %v, want 42, nil", meta.Key(), got, err)
		}
		want := meta
		want.Version = 42
		e.wantItem(meta.Key(), &want)
	})

	t.Run("AppendBuildErrorWritesNothing", func(t *testing.T) {
		e := s.env(t)
		ctr := store.Key{PK: "S", SK: "counter"}
		boom := errors.New("boom")
		_, err := appendSeq(e.ctx, e.s, ctr, func(uint64) ([]store.Op, error) { return nil, boom })
		if !errors.Is(err, boom) {
			t.Errorf("Append(%v) with a failing build = %v, want %v", ctr, err, boom)
		}
		e.wantItem(ctr, nil)
	})

	t.Run("AppendConditionFailureNamesCallerOp", func(t *testing.T) {
		e := s.env(t)
		ctr := store.Key{PK: "S", SK: "counter"}
		taken := store.Item{PK: "S", SK: "taken"}
		e.write(store.Put(&taken, always))
		build := func(seq uint64) ([]store.Op, error) {
			return []store.Op{
				store.Put(&store.Item{PK: "S", SK: seqSK(seq)}, store.Absent),
				store.Put(&store.Item{PK: "S", SK: "taken"}, store.Absent),
			}, nil
		}
		_, err := appendSeq(e.ctx, e.s, ctr, build)
		cf, ok := store.ConditionFailed(err)
		if !ok || cf.Index != 1 || cf.Key != taken.Key() {
			t.Fatalf("Append(%v) with build's op 1 failing = %v, want *ConditionFailedError{Index: 1, Key: %v}", ctr, err, taken.Key())
		}
		if h, err := head(e.ctx, e.s, ctr); h != 0 || err != nil {
			t.Errorf("Head(%v) after a failed append = %d, %v, want 0, nil", ctr, h, err)
		}
		e.wantItem(store.Key{PK: "S", SK: seqSK(1)}, nil)
	})

	t.Run("AppendHonorsCanceledContext", func(t *testing.T) {
		e := s.env(t)
		ctx, cancel := context.WithCancel(e.ctx)
		cancel()
		ctr := store.Key{PK: "S", SK: "counter"}
		if _, err := appendSeq(ctx, e.s, ctr, rowOps("S", "row")); err == nil {
			t.Errorf("Append(canceled ctx, %v) = nil error, want an error", ctr)
		}
	})

	t.Run("ConcurrentAppendsNoGapNoRepeatForReaders", s.testAppendRace)
}

// testAppendRace is the "no skipped rows" invariant (BRIEF §7) under load:
// writers race to append to one stream while readers poll it the way an
// inbox cursor does, capturing the head as an upper bound and paging the
// table up to it. A reader must see every row exactly once, in order, and
// must find every row at or below a head it captured.
func (s *suite) testAppendRace(t *testing.T) {
	s.needsIsolation(t)
	e := s.env(t)
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	const pk = "stream#race"
	ctr := store.Key{PK: pk, SK: "counter"} // sorts after every row key
	writers, appends, readers := s.opts.Writers, s.opts.Appends, s.opts.Readers
	total := uint64(writers * appends)

	var writersDone atomic.Bool
	allocated := make([][]uint64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for range appends {
				seq, err := appendSeq(ctx, e.s, ctr, rowOps(pk, strconv.Itoa(w)))
				if err != nil {
					t.Errorf("writer %d: Append(%v) = %v, want nil", w, ctr, err)
					cancel()
					return
				}
				allocated[w] = append(allocated[w], seq)
			}
		})
	}

	seen := make([]uint64, readers)
	var rg sync.WaitGroup
	for r := range readers {
		rg.Go(func() {
			seen[r] = readStream(t, ctx, e.s, r, ctr, &writersDone)
		})
	}
	wg.Wait()
	writersDone.Store(true)
	rg.Wait()
	if t.Failed() {
		return
	}

	got := make([]bool, total+1)
	for w, seqs := range allocated {
		for _, seq := range seqs {
			if seq == 0 || seq > total || got[seq] {
				t.Fatalf("writer %d: Append returned %d, a repeat or out of 1..%d", w, seq, total)
			}
			got[seq] = true
		}
	}
	for r, last := range seen {
		if last != total {
			t.Errorf("reader %d saw rows up to %d, want %d", r, last, total)
		}
	}
	if h, err := head(e.ctx, e.s, ctr); h != total || err != nil {
		t.Errorf("Head(%v) after %d x %d appends = %d, %v, want %d, nil", ctr, writers, appends, h, err, total)
	}
	q := store.Query{PK: pk, To: seqSK(total)}
	if n := len(e.query(q)); uint64(n) != total {
		t.Errorf("%s returned %d rows, want %d", fmtQuery(q), n, total)
	}
}

// readStream polls the stream until the writers are done and it has read
// up to the final head, and returns the last sequence it saw.
func readStream(t *testing.T, ctx context.Context, s store.Store, r int, ctr store.Key, writersDone *atomic.Bool) uint64 {
	var last uint64
	for {
		// Read done before the head: if the writers had finished then,
		// the head read next is final and this is the last round.
		done := writersDone.Load()
		upper, err := head(ctx, s, ctr)
		if err != nil {
			t.Errorf("reader %d: Head(%v) = %v, want nil", r, ctr, err)
			return last
		}
		if upper < last {
			t.Errorf("reader %d: Head(%v) = %d after the reader saw row %d, want >= %d", r, ctr, upper, last, last)
			return last
		}
		for last < upper {
			q := store.Query{PK: ctr.PK, From: store.After(seqSK(last)), To: seqSK(upper), Limit: 7}
			page, err := s.Query(ctx, q)
			if err != nil {
				t.Errorf("reader %d: %s = %v, want nil", r, fmtQuery(q), err)
				return last
			}
			if len(page) == 0 {
				t.Errorf("reader %d: %s returned no rows, want row %d (head %d was captured first): a row was skipped", r, fmtQuery(q), last+1, upper)
				return last
			}
			for _, it := range page {
				seq, err := strconv.ParseUint(it.SK, 10, 64)
				if err != nil || seq != last+1 {
					t.Errorf("reader %d: %s returned row %q after row %d, want row %d (a gap or a repeat)", r, fmtQuery(q), it.SK, last, last+1)
					return last
				}
				last = seq
			}
		}
		if done {
			return last
		}
		if err := ctx.Err(); err != nil {
			t.Errorf("reader %d: stopped at row %d: %v", r, last, err)
			return last
		}
		time.Sleep(100 * time.Microsecond)
	}
}

package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/storetest"
)

// TestConformanceCheckpointing runs the suite with checkpoints after
// every group and after every few groups, so that reads merge the overlay
// above bbolt in every proportion, and on serial commits.
func TestConformanceCheckpointing(t *testing.T) {
	for _, tc := range []struct {
		every  int64
		serial bool
	}{{1, false}, {4 << 10, false}, {4 << 10, true}} {
		every := tc.every
		t.Run(fmt.Sprintf("every%dB/serial=%v", every, tc.serial), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
				s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{Now: now, SerialCommit: tc.serial})
				bolt.CheckpointAt(s, every)
				t.Cleanup(func() {
					if err := s.Close(); err != nil {
						t.Errorf("Close() = %v, want nil", err)
					}
				})
				return s
			})
		})
	}
}

// journalHistory is a run of Writes whose effects a replay must rebuild:
// puts, an item moved from one index partition to another, a delete, and
// a counter added to. before, when not nil, runs before each of the first
// 30 Writes, with its number.
func journalHistory(t *testing.T, s *bolt.Store, before func(i int)) {
	t.Helper()
	ctx := context.Background()
	for i := range 30 {
		if before != nil {
			before(i)
		}
		it := &store.Item{PK: "P", SK: fmt.Sprintf("%03d", i), GSI1PK: "G", GSI1SK: fmt.Sprintf("%03d", i), Version: 1, Data: []byte("row")}
		if err := s.Write(ctx, []store.Op{store.Put(it, store.Absent), store.Add(store.Key{PK: "P", SK: "ctr"}, 1, 0)}); err != nil {
			t.Fatalf("Write(row %d) = %v", i, err)
		}
	}
	moved := &store.Item{PK: "P", SK: "005", GSI1PK: "H", GSI1SK: "x", Version: 2}
	if err := s.Write(ctx, []store.Op{store.Put(moved, store.AtVersion(1)), store.Delete(store.Key{PK: "P", SK: "007"}, store.Present)}); err != nil {
		t.Fatalf("Write(move 005, delete 007) = %v", err)
	}
}

// checkHistory verifies journalHistory's effects.
func checkHistory(t *testing.T, s *bolt.Store) {
	t.Helper()
	ctx := context.Background()
	ctr, err := s.Get(ctx, store.Key{PK: "P", SK: "ctr"})
	if err != nil || ctr == nil || ctr.Count != 30 {
		t.Errorf("Get(P/ctr) = %+v, %v, want Count 30", ctr, err)
	}
	for _, sk := range []string{"000", "029"} {
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: sk}); err != nil || it == nil {
			t.Errorf("Get(P/%s) = %+v, %v, want the row", sk, it, err)
		}
	}
	rows, err := s.Query(ctx, store.Query{PK: "P", To: "999"})
	if err != nil || len(rows) != 29 {
		t.Errorf("Query(P) = %d rows, %v, want 29 (30 put, one deleted)", len(rows), err)
	}
	g, err := s.Query(ctx, store.Query{Index: store.GSI1, PK: "G"})
	if err != nil || len(g) != 28 {
		t.Errorf("Query(gsi1 G) = %d items, %v, want 28 (one moved out, one deleted)", len(g), err)
	}
	for _, it := range g {
		if it.SK == "005" || it.SK == "007" {
			t.Errorf("Query(gsi1 G) holds %s, which left the partition", it.SK)
		}
	}
	h, err := s.Query(ctx, store.Query{Index: store.GSI1, PK: "H"})
	if err != nil || len(h) != 1 || h[0].SK != "005" || h[0].Version != 2 {
		t.Errorf("Query(gsi1 H) = %+v, %v, want the moved item at version 2", h, err)
	}
}

// TestJournalReplayAfterCrash: Writes answered but never checkpointed
// (the process ends without Close) are rebuilt from the journal by the
// next Open, with their index entries; so are Writes of which part was
// checkpointed before the crash, whatever stale records a rewound journal
// still holds.
func TestJournalReplayAfterCrash(t *testing.T) {
	t.Parallel()
	for _, every := range []int64{1 << 30, 1, 700} {
		t.Run(fmt.Sprintf("checkpointAt%d", every), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "agentbox.db")
			s := openStore(t, path, bolt.Options{})
			bolt.CheckpointAt(s, every)
			journalHistory(t, s, nil)
			checkHistory(t, s)
			if err := bolt.Abandon(s); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, path, bolt.Options{})
			checkHistory(t, s)
			// A second crash right after the recovery's checkpoint, with
			// no Write in between, replays nothing twice.
			if err := bolt.Abandon(s); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, path, bolt.Options{})
			defer s.Close()
			checkHistory(t, s)
		})
	}
}

// TestJournalAppendFailureRefusesWrites: after an append that failed (a
// short write, or a sync that failed), the Write is not answered with
// success, and neither is any later Write, deferred ones included; reads
// go on. A short write is a torn record, which the next Open does not
// replay.
func TestJournalAppendFailureRefusesWrites(t *testing.T) {
	t.Parallel()
	for _, write := range []bool{true, false} {
		t.Run(fmt.Sprintf("shortWrite=%v", write), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "agentbox.db")
			s := openStore(t, path, bolt.Options{})
			before := &store.Item{PK: "P", SK: "before", Data: []byte("x")}
			if err := s.Write(ctx, []store.Op{store.Put(before, store.Absent)}); err != nil {
				t.Fatal(err)
			}
			injected := errors.New("injected: no space left on device")
			bolt.FailJournal(s, write, injected)
			failed := &store.Item{PK: "P", SK: "failed", Data: []byte("y")}
			err := s.Write(ctx, []store.Op{store.Put(failed, store.Absent)})
			if err == nil {
				t.Fatalf("Write whose append failed = nil, want an error")
			}
			if _, ok := store.ConditionFailed(err); ok {
				t.Fatalf("Write whose append failed = %v, want a store error", err)
			}
			if !errors.Is(err, injected) {
				t.Errorf("Write whose append failed = %v, want it to wrap the file's error", err)
			}
			for name, wctx := range map[string]context.Context{"Write": ctx, "deferred Write": store.Deferred(ctx)} {
				later := &store.Item{PK: "Q", SK: name}
				err := s.Write(wctx, []store.Op{store.Put(later, store.Unconditional)})
				if err == nil || !strings.Contains(err.Error(), "refuses writes") {
					t.Errorf("%s after a failed append = %v, want it refused", name, err)
				}
			}
			if it, err := s.Get(ctx, before.Key()); err != nil || it == nil {
				t.Errorf("Get(%v) after a failed append = %+v, %v, want the earlier item", before.Key(), it, err)
			}
			if it, err := s.Get(ctx, failed.Key()); err != nil || it != nil {
				t.Errorf("Get(%v) after its append failed = %+v, %v, want nothing", failed.Key(), it, err)
			}
			if err := bolt.Abandon(s); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, path, bolt.Options{})
			defer s.Close()
			if it, err := s.Get(ctx, before.Key()); err != nil || it == nil {
				t.Errorf("Get(%v) after reopening = %+v, %v, want the earlier item", before.Key(), it, err)
			}
			it, err := s.Get(ctx, failed.Key())
			if err != nil || (write && it != nil) {
				t.Errorf("Get(%v) after a torn append and reopening = %+v, %v, want nothing", failed.Key(), it, err)
			}
			if err := s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "Q", SK: "reopened"}, store.Unconditional)}); err != nil {
				t.Errorf("Write after reopening = %v, want nil", err)
			}
		})
	}
}

// TestJournalConcurrentReadersSeeCommits races writers moving items
// between index partitions against readers, across checkpoints: every
// reader finds each item exactly once across the two partitions, at a
// version no older than one it saw before, and sees its own writes.
func TestJournalConcurrentReadersSeeCommits(t *testing.T) {
	t.Parallel()
	// Checkpoints after every group keep a frozen layer in flight most of
	// the time; after every 2 KiB, layers of many groups.
	for _, every := range []int64{1, 2 << 10} {
		t.Run(fmt.Sprintf("checkpointAt%d", every), func(t *testing.T) {
			t.Parallel()
			concurrentReadersSeeCommits(t, every)
		})
	}
}

func concurrentReadersSeeCommits(t *testing.T, every int64) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	defer s.Close()
	bolt.CheckpointAt(s, every)
	const items, writers, rounds = 8, 4, 60
	for i := range items {
		it := &store.Item{PK: "P", SK: fmt.Sprint(i), GSI1PK: "A", GSI1SK: fmt.Sprint(i), Version: 1}
		if err := s.Write(ctx, []store.Op{store.Put(it, store.Absent)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				i := (w + r*writers) % items
				k := store.Key{PK: "P", SK: fmt.Sprint(i)}
				cur, err := s.Get(ctx, k)
				if err != nil || cur == nil {
					t.Errorf("writer %d: Get(%v) = %+v, %v", w, k, cur, err)
					return
				}
				next := *cur
				next.Version++
				next.GSI1PK = map[string]string{"A": "B", "B": "A"}[cur.GSI1PK]
				err = s.Write(ctx, []store.Op{store.Put(&next, store.AtVersion(cur.Version))})
				if _, ok := store.ConditionFailed(err); ok {
					continue // another writer moved it first
				}
				if err != nil {
					t.Errorf("writer %d: Write = %v", w, err)
					return
				}
				got, err := s.Get(ctx, k)
				if err != nil || got == nil || got.Version < next.Version {
					t.Errorf("writer %d: Get(%v) after its Write = %+v, %v, want version >= %d", w, k, got, err, next.Version)
				}
			}
		})
	}
	var rg sync.WaitGroup
	for r := range 3 {
		rg.Go(func() {
			seen := map[string]uint64{}
			for {
				select {
				case <-done:
					return
				default:
				}
				a, errA := s.Query(ctx, store.Query{Index: store.GSI1, PK: "A"})
				b, errB := s.Query(ctx, store.Query{Index: store.GSI1, PK: "B"})
				if errA != nil || errB != nil {
					t.Errorf("reader %d: Query = %v, %v", r, errA, errB)
					return
				}
				for _, it := range append(a, b...) {
					if it.Version < seen[it.SK] {
						t.Errorf("reader %d: item %s at version %d after version %d", r, it.SK, it.Version, seen[it.SK])
					}
					seen[it.SK] = it.Version
				}
				if n := len(a) + len(b); n < items {
					// The two queries read two snapshots: an item may move
					// between them, but never out of both at once within
					// one snapshot; a full table read must hold all.
					all, err := s.Query(ctx, store.Query{PK: "P"})
					if err != nil || len(all) != items {
						t.Errorf("reader %d: Query(P) = %d items, %v, want %d", r, len(all), err, items)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(done)
	rg.Wait()
	a, _ := s.Query(ctx, store.Query{Index: store.GSI1, PK: "A"})
	b, _ := s.Query(ctx, store.Query{Index: store.GSI1, PK: "B"})
	if len(a)+len(b) != items {
		t.Errorf("after the race, gsi1 A and B hold %d + %d items, want %d in all", len(a), len(b), items)
	}
}

// TestDeferredWriteDurableWithNextWrite is the rule inbox_ack rests on: a
// deferred Write (a retrieval receipt) is journaled no later than the
// next Write answered after it, so a crash after that answer finds both,
// never the later Write without the receipt.
func TestDeferredWriteDurableWithNextWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentbox.db")
	s := openStore(t, path, bolt.Options{})
	rcpt := &store.Item{PK: "ses#1", SK: "rcpts", Version: 1, Data: []byte("shown 1-5")}
	if err := s.Write(store.Deferred(ctx), []store.Op{store.Put(rcpt, store.Absent)}); err != nil {
		t.Fatalf("deferred Write = %v", err)
	}
	ack := &store.Item{PK: "inbox#1", SK: "acked", Version: 1}
	if err := s.Write(ctx, []store.Op{store.Check(rcpt.Key(), store.AtVersion(1)), store.Put(ack, store.Absent)}); err != nil {
		t.Fatalf("Write checking the deferred item = %v", err)
	}
	if err := bolt.Abandon(s); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, bolt.Options{})
	defer s.Close()
	for _, k := range []store.Key{rcpt.Key(), ack.Key()} {
		if it, err := s.Get(ctx, k); err != nil || it == nil {
			t.Errorf("Get(%v) after a crash following the second Write's answer = %+v, %v, want the item", k, it, err)
		}
	}
}

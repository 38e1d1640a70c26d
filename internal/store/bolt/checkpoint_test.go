package bolt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

// holdCheckpoint makes s's first background checkpoint stop before its
// bbolt transaction (committed false) or after its commit (committed
// true) until release is called; held is closed once it has stopped.
// Later checkpoints run freely.
func holdCheckpoint(s *bolt.Store, committed bool) (held <-chan struct{}, release func()) {
	h, r := make(chan struct{}), make(chan struct{})
	var once sync.Once
	bolt.CheckpointHook(s, func(c bool) error {
		if c == committed {
			once.Do(func() {
				close(h)
				<-r
			})
		}
		return nil
	})
	return h, sync.OnceFunc(func() { close(r) })
}

// checkpointBefore returns a journalHistory hook that starts one
// checkpoint, after Write 15: its records are frozen and checkpointed in
// the background while Writes 16 on go to the other journal.
func checkpointBefore(s *bolt.Store) func(int) {
	bolt.CheckpointAt(s, 1<<30)
	return func(i int) {
		switch i {
		case 15:
			bolt.CheckpointAt(s, 1)
		case 16:
			bolt.CheckpointAt(s, 1<<30)
		}
	}
}

// TestCheckpointInFlightCrash: a crash while a background checkpoint is
// in flight leaves the records split across both journals, the frozen
// ones checkpointed or not and, once checkpointed, still in their
// journal; the next Open rebuilds every Write from bbolt and both
// journals, skipping stale records in either. A journal that lost
// records the other one continues fails Open.
func TestCheckpointInFlightCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		committed bool // the crash comes after the checkpoint's commit
		// staleTail appends the frozen journal's records, as the crash
		// found them, to the active journal's end: a truncation that did
		// not reach the disk under a journal written over again.
		staleTail bool
		// lose empties the frozen journal before the checkpoint commits.
		lose bool
	}{
		{name: "before commit"},
		{name: "after commit", committed: true},
		{name: "after commit, stale tail", committed: true, staleTail: true},
		{name: "frozen journal lost", lose: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "agentbox.db")
			journals := bolt.JournalPaths(path)
			s := openStore(t, path, bolt.Options{})
			held, release := holdCheckpoint(s, tc.committed)
			defer release()
			journalHistory(t, s, checkpointBefore(s))
			<-held
			checkHistory(t, s) // the overlay above the frozen layer
			var frozen []byte
			for i, p := range journals {
				b, err := os.ReadFile(p)
				if err != nil || len(b) == 0 {
					t.Fatalf("journal %d during the checkpoint: %d bytes, %v, want records", i, len(b), err)
				}
				if i == 0 {
					frozen = b
				}
			}
			if err := bolt.Abandon(s); err != nil {
				t.Fatal(err)
			}
			release() // the checkpoint goes on against closed files, and fails
			if tc.staleTail {
				f, err := os.OpenFile(journals[1], os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.Write(frozen); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.lose {
				if err := os.Truncate(journals[0], 0); err != nil {
					t.Fatal(err)
				}
				_, err := bolt.Open(path, bolt.Options{})
				if err == nil || !strings.Contains(err.Error(), "records are missing") {
					t.Fatalf("Open with the frozen journal's records lost = %v, want records missing", err)
				}
				return
			}
			s = openStore(t, path, bolt.Options{})
			checkHistory(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			checkClosedHistory(t, path)
		})
	}
}

// TestCheckpointLayersMoveItems: while a checkpoint is in flight, items
// the frozen layer moved to another index partition move again, or are
// deleted, in the overlay above it, and items it never held move too.
// Every read before, during and after the checkpoint, and after a reopen,
// finds each item in its one current partition.
func TestCheckpointLayersMoveItems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentbox.db")
	s := openStore(t, path, bolt.Options{})
	bolt.CheckpointAt(s, 1<<30)
	put := func(sk, gsi string, version uint64, cond store.Condition) {
		t.Helper()
		it := &store.Item{PK: "P", SK: sk, GSI1PK: gsi, GSI1SK: sk, Version: version}
		if err := s.Write(ctx, []store.Op{store.Put(it, cond)}); err != nil {
			t.Fatalf("Write(%s to %s at version %d) = %v", sk, gsi, version, err)
		}
	}
	for _, sk := range []string{"w", "x", "y", "z"} {
		put(sk, "A", 1, store.Absent)
	}
	if err := s.Close(); err != nil { // all four in bbolt
		t.Fatal(err)
	}
	s = openStore(t, path, bolt.Options{})
	held, release := holdCheckpoint(s, false)
	defer release()
	bolt.CheckpointAt(s, 1)
	if err := s.Write(ctx, []store.Op{
		store.Put(&store.Item{PK: "P", SK: "x", GSI1PK: "B", GSI1SK: "x", Version: 2}, store.AtVersion(1)),
		store.Put(&store.Item{PK: "P", SK: "y", GSI1PK: "B", GSI1SK: "y", Version: 2}, store.AtVersion(1)),
	}); err != nil {
		t.Fatalf("Write(x, y to B) = %v", err)
	}
	<-held // x and y in B, frozen
	bolt.CheckpointAt(s, 1<<30)
	put("x", "A", 3, store.AtVersion(2))
	if err := s.Write(ctx, []store.Op{store.Delete(store.Key{PK: "P", SK: "y"}, store.AtVersion(2))}); err != nil {
		t.Fatalf("Write(delete y) = %v", err)
	}
	put("z", "B", 2, store.AtVersion(1))
	check := func(when string) {
		t.Helper()
		for gsi, want := range map[string]string{"A": "w x", "B": "z"} {
			got, err := s.Query(ctx, store.Query{Index: store.GSI1, PK: gsi})
			var sks []string
			for _, it := range got {
				sks = append(sks, it.SK)
			}
			if err != nil || strings.Join(sks, " ") != want {
				t.Errorf("%s: Query(gsi1 %s) = %v, %v, want %s", when, gsi, sks, err, want)
			}
		}
		rows, err := s.Query(ctx, store.Query{PK: "P"})
		if err != nil || len(rows) != 3 {
			t.Errorf("%s: Query(P) = %d rows, %v, want w, x, z", when, len(rows), err)
		}
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: "x"}); err != nil || it == nil || it.Version != 3 {
			t.Errorf("%s: Get(x) = %+v, %v, want version 3", when, it, err)
		}
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: "y"}); err != nil || it != nil {
			t.Errorf("%s: Get(y) = %+v, %v, want it deleted", when, it, err)
		}
	}
	check("during the checkpoint")
	release()
	// The next checkpoint waits for the one in flight; after it, bbolt
	// holds the frozen layer and the overlay.
	bolt.CheckpointAt(s, 1)
	put("w", "A", 2, store.AtVersion(1))
	check("after the checkpoint")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, bolt.Options{})
	defer s.Close()
	check("after reopening")
}

// TestCloseWaitsForCheckpoint: Close during a background checkpoint waits
// for it, checkpoints what came after and leaves both journals empty,
// with every Write in bbolt.
func TestCloseWaitsForCheckpoint(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agentbox.db")
	s := openStore(t, path, bolt.Options{})
	held, release := holdCheckpoint(s, false)
	defer release()
	journalHistory(t, s, checkpointBefore(s))
	<-held
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close during a checkpoint returned (%v) before the checkpoint ended", err)
	default:
	}
	release()
	if err := <-closed; err != nil {
		t.Fatalf("Close during a checkpoint = %v, want nil", err)
	}
	checkClosedHistory(t, path)
}

// checkClosedHistory checks that the store at path, just closed, left
// both journals empty (everything in bbolt) and, reopened, holds
// journalHistory's effects.
func checkClosedHistory(t *testing.T, path string) {
	t.Helper()
	for i, p := range bolt.JournalPaths(path) {
		if fi, err := os.Stat(p); err != nil || fi.Size() != 0 {
			t.Errorf("journal %d after Close: %v, want it empty", i, err)
		}
	}
	s := openStore(t, path, bolt.Options{})
	defer s.Close()
	checkHistory(t, s)
}

// TestCheckpointFailureRefusesWrites: once a background checkpoint has
// failed, every later Write is refused, while reads still see every
// answered Write and the next Open replays them all.
func TestCheckpointFailureRefusesWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentbox.db")
	s := openStore(t, path, bolt.Options{})
	injected := errors.New("injected: bbolt commit failed")
	release := make(chan struct{})
	bolt.CheckpointHook(s, func(committed bool) error {
		if !committed {
			<-release
			return injected
		}
		return nil
	})
	write := func(sk string) {
		t.Helper()
		if err := s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: sk}, store.Absent)}); err != nil {
			t.Fatalf("Write(%s) = %v", sk, err)
		}
	}
	bolt.CheckpointAt(s, 1)
	write("a") // starts the checkpoint that fails
	bolt.CheckpointAt(s, 1<<30)
	write("b") // answered during it
	close(release)
	bolt.WaitCheckpoint(s)
	for name, wctx := range map[string]context.Context{"Write": ctx, "deferred Write": store.Deferred(ctx)} {
		err := s.Write(wctx, []store.Op{store.Put(&store.Item{PK: "Q", SK: name}, store.Unconditional)})
		if err == nil || !strings.Contains(err.Error(), "refuses writes") || !errors.Is(err, injected) {
			t.Errorf("%s after a failed checkpoint = %v, want it refused, wrapping the cause", name, err)
		}
	}
	for _, sk := range []string{"a", "b"} {
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: sk}); err != nil || it == nil {
			t.Errorf("Get(%s) after a failed checkpoint = %+v, %v, want the item", sk, it, err)
		}
	}
	if err := s.Close(); err == nil {
		t.Errorf("Close after a failed checkpoint = nil, want the failure")
	}
	s = openStore(t, path, bolt.Options{})
	defer s.Close()
	for _, sk := range []string{"a", "b"} {
		if it, err := s.Get(ctx, store.Key{PK: "P", SK: sk}); err != nil || it == nil {
			t.Errorf("Get(%s) after reopening = %+v, %v, want the item", sk, it, err)
		}
	}
}

package bolt_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/storetest"
)

func openStore(t testing.TB, path string, opts bolt.Options) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%q) = %v, want nil", path, err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		s := openStore(t, filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{Now: now})
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close() = %v, want nil", err)
			}
		})
		return s
	})
}

func TestSecondOpenFailsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentbox.db")
	s := openStore(t, path, bolt.Options{})
	defer s.Close()

	start := time.Now()
	s2, err := bolt.Open(path, bolt.Options{Timeout: 100 * time.Millisecond})
	if err == nil {
		s2.Close()
		t.Fatalf("second Open(%q) while the first is open = nil error, want ErrLocked", path)
	}
	if !errors.Is(err, bolt.ErrLocked) {
		t.Errorf("second Open(%q) = %v, want ErrLocked", path, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("second Open(%q) took %v, want about its 100ms timeout", path, d)
	}
}

func TestOpenAfterCloseSucceeds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentbox.db")
	openStore(t, path, bolt.Options{}).Close()
	openStore(t, path, bolt.Options{Timeout: 100 * time.Millisecond}).Close()
}

func TestDataSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentbox.db")
	it := store.Item{PK: "P", SK: "a", GSI1PK: "G", GSI1SK: "1", Version: 2, Count: -1, Data: []byte{0, 0xff}}

	s := openStore(t, path, bolt.Options{})
	if err := s.Write(ctx, []store.Op{store.Put(&it, store.Absent)}); err != nil {
		t.Fatalf("Write(put %v) = %v, want nil", it.Key(), err)
	}
	ctr := store.Item{PK: "P", SK: "ctr", Version: 1}
	if err := s.Write(ctx, []store.Op{store.Put(&ctr, store.Absent), store.Put(&store.Item{PK: "P", SK: "row1"}, store.Absent)}); err != nil {
		t.Fatalf("Write(counter at 1, row 1) = %v, want nil", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}

	s = openStore(t, path, bolt.Options{})
	defer s.Close()
	got, err := s.Get(ctx, it.Key())
	if err != nil || got == nil || got.Version != 2 || got.Count != -1 || string(got.Data) != "\x00\xff" {
		t.Errorf("Get(%v) after reopen = %+v, %v, want the item written before", it.Key(), got, err)
	}
	items, err := s.Query(ctx, store.Query{Index: store.GSI1, PK: "G"})
	if err != nil || len(items) != 1 {
		t.Errorf("Query(gsi1 G) after reopen = %d items, %v, want 1 item", len(items), err)
	}
	if c, err := s.Get(ctx, ctr.Key()); err != nil || c == nil || c.Version != 1 {
		t.Errorf("Get(%v) after reopen = %+v, %v, want the counter at 1", ctr.Key(), c, err)
	}
	if r, err := s.Get(ctx, store.Key{PK: "P", SK: "row1"}); err != nil || r == nil {
		t.Errorf("Get(P row1) after reopen = %+v, %v, want the row", r, err)
	}
}

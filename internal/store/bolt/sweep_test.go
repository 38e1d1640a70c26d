package bolt_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

func TestSweepRemovesOnlyExpired(t *testing.T) {
	clock := teststores.NewClock()
	s := openStore(t, filepath.Join(t.TempDir(), "db"), bolt.Options{Now: clock.Now})
	ctx := context.Background()
	soon := clock.Now().Add(time.Minute).Unix()
	var ops []store.Op
	for i := range 60 {
		exp := int64(0)
		if i%3 == 0 {
			exp = soon
		}
		ops = append(ops, store.Put(&store.Item{PK: "p", SK: fmt.Sprintf("%03d", i), ExpiresAt: exp,
			GSI1PK: "g", GSI1SK: fmt.Sprintf("%03d", i)}, store.Unconditional))
	}
	if err := s.Write(ctx, ops); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if n, err := s.Sweep(ctx, 1000); err != nil || n != 0 {
		t.Fatalf("Sweep before expiry = %d, %v; want 0", n, err)
	}
	clock.Advance(2 * time.Minute)
	if n, err := s.Sweep(ctx, 1000); err != nil || n != 20 {
		t.Fatalf("Sweep after expiry = %d, %v; want 20", n, err)
	}
	rows, err := s.Query(ctx, store.Query{PK: "p"})
	if err != nil || len(rows) != 40 {
		t.Fatalf("Query after sweep = %d rows, %v; want 40", len(rows), err)
	}
	idx, err := s.Query(ctx, store.Query{Index: store.GSI1, PK: "g"})
	if err != nil || len(idx) != 40 {
		t.Fatalf("index query after sweep = %d rows, %v; want 40", len(idx), err)
	}
	// Expired items are gone from the file, not merely hidden: a put with
	// no condition over the key starts afresh.
	if n, _ := s.Sweep(ctx, 1000); n != 0 {
		t.Fatalf("second Sweep = %d, want 0", n)
	}
}

func TestSweepLimit(t *testing.T) {
	clock := teststores.NewClock()
	s := openStore(t, filepath.Join(t.TempDir(), "db"), bolt.Options{Now: clock.Now})
	ctx := context.Background()
	var ops []store.Op
	for i := range 50 {
		ops = append(ops, store.Put(&store.Item{PK: "p", SK: fmt.Sprintf("%03d", i), ExpiresAt: clock.Now().Unix() - 1}, store.Unconditional))
	}
	if err := s.Write(ctx, ops); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if n, err := s.Sweep(ctx, 7); err != nil || n != 7 {
		t.Fatalf("Sweep(limit 7) = %d, %v; want 7", n, err)
	}
	if n, err := s.Sweep(ctx, 1000); err != nil || n != 43 {
		t.Fatalf("Sweep(rest) = %d, %v; want 43", n, err)
	}
}

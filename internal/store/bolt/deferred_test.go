package bolt_test

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

// TestDeferredWrite: a Write under store.Deferred is answered before its
// commit, read back at once by Get, BatchGet and Query, decided at once
// (a failed condition is answered), carried by the next Write's commit,
// and in the file after Close.
func TestDeferredWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "db")
		s, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := store.Deferred(t.Context())
		rcpt := &store.Item{PK: "ses#1", SK: "rcpts", Version: 1, Data: []byte("a")}
		before := s.Commits()
		if err := s.Write(ctx, []store.Op{store.Put(rcpt, store.Absent)}); err != nil {
			t.Fatalf("deferred Write: %v", err)
		}
		if n := s.Commits() - before; n != 0 {
			t.Errorf("deferred Write made %d commits before answering, want 0", n)
		}
		if got, err := s.Get(t.Context(), rcpt.Key()); err != nil || got == nil || string(got.Data) != "a" {
			t.Errorf("Get after deferred Write = %+v, %v; want the item", got, err)
		}
		again := &store.Item{PK: "ses#1", SK: "rcpts", Version: 2, Data: []byte("b")}
		if err := s.Write(ctx, []store.Op{store.Put(again, store.Absent)}); err == nil {
			t.Errorf("deferred Write conditioned on absence over a pending item = nil, want a failed condition")
		} else if _, ok := store.ConditionFailed(err); !ok {
			t.Errorf("deferred Write conditioned on absence over a pending item = %v, want a failed condition", err)
		}
		if err := s.Write(ctx, []store.Op{store.Put(again, store.AtVersion(1))}); err != nil {
			t.Fatalf("deferred Write at version 1: %v", err)
		}
		got, err := s.BatchGet(t.Context(), []store.Key{rcpt.Key(), {PK: "x", SK: "y"}})
		if err != nil || got[0] == nil || string(got[0].Data) != "b" || got[1] != nil {
			t.Errorf("BatchGet after two deferred Writes = %+v, %v; want the second item and nil", got, err)
		}
		other := &store.Item{PK: "msg#1", SK: "m", Data: []byte("m")}
		if err := s.Write(t.Context(), []store.Op{store.Put(other, store.Absent)}); err != nil {
			t.Fatal(err)
		}
		if n := s.Commits() - before; n != 1 {
			t.Errorf("a Write after two deferred ones made %d commits, want 1 carrying all three", n)
		}

		// Alone, a deferred Write is committed by the flusher.
		late := &store.Item{PK: "ses#2", SK: "rcpts", Data: []byte("c")}
		if err := s.Write(ctx, []store.Op{store.Put(late, store.Condition{})}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := s.Commits() - before; n != 2 {
			t.Errorf("a lone deferred Write, a second later: %d commits in all, want 2", n)
		}

		// A Query of a partition with a pending item reads it.
		part := &store.Item{PK: "ses#3", SK: "rcpts", Data: []byte("d")}
		if err := s.Write(ctx, []store.Op{store.Put(part, store.Condition{})}); err != nil {
			t.Fatal(err)
		}
		rows, err := s.Query(t.Context(), store.Query{Index: store.Table, PK: "ses#3", Limit: 10})
		if err != nil || len(rows) != 1 || string(rows[0].Data) != "d" {
			t.Errorf("Query of a partition with a deferred item = %+v, %v; want the item", rows, err)
		}

		// Items in an index are never deferred.
		indexed := &store.Item{PK: "ses#4", SK: "x", GSI1PK: "g", GSI1SK: "1", Data: []byte("e")}
		c := s.Commits()
		if err := s.Write(ctx, []store.Op{store.Put(indexed, store.Condition{})}); err != nil {
			t.Fatal(err)
		}
		if n := s.Commits() - c; n != 1 {
			t.Errorf("a deferred Write of an indexed item made %d commits before answering, want 1", n)
		}

		last := &store.Item{PK: "ses#5", SK: "rcpts", Data: []byte("f")}
		if err := s.Write(ctx, []store.Op{store.Put(last, store.Condition{})}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, want := range []*store.Item{again, other, late, part, indexed, last} {
			got, err := s.Get(t.Context(), want.Key())
			if err != nil || got == nil || string(got.Data) != string(want.Data) {
				t.Errorf("after Close and Open, Get(%v) = %+v, %v; want data %q", want.Key(), got, err, want.Data)
			}
		}
	})
}

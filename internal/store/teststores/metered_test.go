package teststores_test

import (
	"bytes"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

func TestMeteredAddsCosts(t *testing.T) {
	m := teststores.NewMetered(teststores.All()[0].Open(t, nil))
	ctx := t.Context()
	big := &store.Item{PK: "P", SK: "a", Data: bytes.Repeat([]byte{'x'}, 5000)}
	if err := m.Write(ctx, []store.Op{store.Put(big, store.Absent)}); err != nil {
		t.Fatalf("Write = %v", err)
	}
	// The same put again fails its condition and is charged all the same.
	if _, ok := store.ConditionFailed(m.Write(ctx, []store.Op{store.Put(big, store.Absent)})); !ok {
		t.Fatalf("second Write(put if absent) did not fail its condition")
	}
	if _, err := m.Get(ctx, big.Key()); err != nil {
		t.Fatalf("Get = %v", err)
	}
	if _, err := m.BatchGet(ctx, []store.Key{big.Key(), big.Key(), {PK: "P", SK: "none"}}); err != nil {
		t.Fatalf("BatchGet = %v", err)
	}
	table, index := m.Reset()
	// Writes: 5 KB item, twice. Reads: Get 2 (5 KB / 4 KB), BatchGet of
	// two distinct keys 2 + 1.
	if want := (dynamo.Units{Read: 5, Write: 10}); table != want || index != (dynamo.Units{}) {
		t.Errorf("Metered totals = table %+v index %+v, want table %+v and no index units", table, index, want)
	}
	if table, _ := m.Reset(); table != (dynamo.Units{}) {
		t.Errorf("Metered after Reset = %+v, want zero", table)
	}
}

package mototest_test

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo/mototest"
)

func TestOneServerPerBinaryFreshTablePerStore(t *testing.T) {
	first, second := mototest.Endpoint(t), mototest.Endpoint(t)
	if !strings.HasPrefix(first, "http://127.0.0.1:") || first != second {
		t.Fatalf("Endpoint() = %q then %q, want one loopback server for the binary", first, second)
	}
	a, b := mototest.NewStore(t, nil), mototest.NewStore(t, nil)
	it := store.Item{PK: "P", SK: "a", Data: []byte("x")}
	if err := a.Write(t.Context(), []store.Op{store.Put(&it, store.Unconditional)}); err != nil {
		t.Fatalf("Write on moto = %v", err)
	}
	if got, err := a.Get(t.Context(), it.Key()); err != nil || got == nil {
		t.Errorf("Get on the store written = %v, %v, want the item", got, err)
	}
	if got, err := b.Get(t.Context(), it.Key()); err != nil || got != nil {
		t.Errorf("Get on a second store = %v, %v, want nil: each store has its own table", got, err)
	}
}

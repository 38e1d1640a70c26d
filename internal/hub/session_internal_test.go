package hub

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestLegacyTombstoneStaysEnded: a tombstone written before signed ids
// remembered their binding is "{}"; it still reads as ended, so an id ended
// before the upgrade is never bound again after it.
func TestLegacyTombstoneStaysEnded(t *testing.T) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			ctx := context.Background()
			clock := teststores.NewClock()
			h := New(ad.Open(t, clock.Now), Options{Now: clock.Now})
			id, err := h.OpenSession(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			k := table.EndedSessionKey(id)
			if err := h.st.Write(ctx, []store.Op{store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: 1,
				ExpiresAt: clock.Now().Add(unboundIdle).Unix(), Data: []byte("{}")}, store.Absent)}); err != nil {
				t.Fatal(err)
			}
			st, err := h.readSession(ctx, id, Credentials{})
			if err != nil || st.status != sessionGone {
				t.Fatalf("readSession(id with a legacy tombstone) = %+v, %v; want sessionGone", st, err)
			}
		})
	}
}

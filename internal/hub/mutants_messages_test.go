package hub_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// Tests for messages.go mutants that survived make mutate-core.

// TestDMStreamLayout pins the table's layout for a DM pair: one stream
// for both directions, under dm#<A>#<B> with A < B (table.go). Every
// place that names a DM stream sorts the pair the same way, so a reversed
// order would pass every other test, and orphan every stored DM on
// upgrade.
func TestDMStreamLayout(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.prime(f.a), f.prime(f.b)
		for _, tc := range []struct {
			key  string
			from hub.Credentials
			to   string
		}{{"a-to-b", crA, f.b.AgentID}, {"b-to-a", crB, f.a.AgentID}} {
			if _, err := f.h.MessageSend(f.ctx, tc.from, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: tc.key},
				Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: tc.to}, BodyMD: tc.key}); err != nil {
				t.Fatalf("MessageSend(%s): %v", tc.key, err)
			}
		}
		lo, hi := min(f.a.AgentID, f.b.AgentID), max(f.a.AgentID, f.b.AgentID)
		for _, tc := range []struct {
			name     string
			pk       string
			wantHead uint64
		}{{"sorted", table.DMStreamPK(lo, hi), 2}, {"reversed", table.DMStreamPK(hi, lo), 0}} {
			it, err := f.raw.Get(f.ctx, table.StreamHeadKey(tc.pk))
			if err != nil {
				t.Fatalf("Get(%s head): %v", tc.name, err)
			}
			var head uint64
			if it != nil {
				head = it.Version
			}
			if head != tc.wantHead {
				t.Errorf("the %s pair's stream head = %d, want %d (both DMs on dm#<A>#<B>, A < B)", tc.name, head, tc.wantHead)
			}
		}
	})
}

package hub_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// Tests for messages.go mutants that survived make mutate-core.

// TestDMStreamLayout pins the table's layout for a DM pair: one stream
// for both directions, under dm#<A>#<B> with A < B (table.go). Every
// place that names a DM stream sorts the pair the same way, so a reversed
// order would pass every other test, and orphan every stored DM on
// upgrade.
func TestDMStreamLayout(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
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

// readCalls counts the store's point reads (Get, BatchGet calls).
type readCalls struct {
	store.Store
	n atomic.Int64
}

func (r *readCalls) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	r.n.Add(1)
	return r.Store.Get(ctx, k)
}

func (r *readCalls) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	r.n.Add(1)
	return r.Store.BatchGet(ctx, keys)
}

// TestRoomPostReadsMentionsUpFront: a room post reads its mentioned
// recipients' inbox heads in the call's first point read, with
// authentication (besides it, only the room's member query), not in a
// second read after it.
func TestRoomPostReadsMentionsUpFront(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var rc *readCalls
		f := newFixture(t, ad, func(s store.Store) store.Store { rc = &readCalls{Store: s}; return rc })
		c := f.mustAgent(f.box, "carol")
		room := f.mustRoom("work", "")
		for _, ag := range []*hub.AgentInfo{f.a, f.b, c} {
			f.mustAdd(room.RoomID, ag)
		}
		cr := f.prime(f.a)
		for i := range 2 {
			rc.n.Store(0)
			if _, err := f.h.MessageSend(f.ctx, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("post-%d", i)},
				Destination: hub.Destination{Kind: hub.KindRoom, RoomID: room.RoomID}, BodyMD: "look",
				Mentions: []string{f.b.AgentID, c.AgentID}}); err != nil {
				t.Fatalf("MessageSend(post %d): %v", i, err)
			}
			if n := rc.n.Load(); n != 1 {
				t.Errorf("post %d mentioning two members made %d point reads, want 1 (the heads read with authentication)", i, n)
			}
		}
	})
}

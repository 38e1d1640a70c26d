package hub_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// afterFirstWrite lets the writes up to a call's first write through once
// armed (a large fan-out writes its recipient parts, then the message and
// the intent), then refuses every later write (as an engine that stops
// answering would) until disarmed: the call's first write commits and the
// work after it fails.
type afterFirstWrite struct {
	store.Store
	armed atomic.Bool
	// passes is how many writes go through once armed.
	passes atomic.Int32
}

func (a *afterFirstWrite) Write(ctx context.Context, ops []store.Op) error {
	if a.armed.Load() && a.passes.Add(-1) < 0 {
		return fmt.Errorf("refused: %w", store.ErrUnavailable)
	}
	return a.Store.Write(ctx, ops)
}

// TestReplayFinishesOpenIntent: a room message to more recipients than one
// write holds commits with an intent for its fan-out; when the fan-out
// fails after that first write, a retry with the same key must finish the
// fan-out before answering the receipt, so every recipient has its row.
func TestReplayFinishesOpenIntent(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var fw *afterFirstWrite
		f := newFixture(t, ad, func(s store.Store) store.Store { fw = &afterFirstWrite{Store: s}; return fw })
		room := f.mustRoom("crowd", "", f.a)
		const n = 50 // followers of all: more rows than one write holds
		followers := make([]*hub.AgentInfo, n)
		for i := range followers {
			followers[i] = f.mustAgent(f.box, fmt.Sprintf("follower %02d", i))
			m := f.mustAdd(room.RoomID, followers[i])
			if _, err := follow(f, f.prime(followers[i]), "f", room.RoomID, m.FollowRevision, "all"); err != nil {
				t.Fatalf("RoomFollow(follower %d): %v", i, err)
			}
		}
		cr := f.prime(f.a)
		fw.passes.Store(2) // the recipient parts, then the first write
		fw.armed.Store(true)
		if _, err := sendRoom(f, cr, "big", room.RoomID, "all hands", nil, nil); err != nil {
			t.Logf("MessageSend with its fan-out refused: %v", err)
		}
		fw.armed.Store(false)
		if got := inboxHead(t, f, followers[n-1].AgentID); got != 0 {
			t.Fatalf("last follower's inbox head = %d before the retry: the fan-out was not interrupted", got)
		}
		out, err := sendRoom(f, cr, "big", room.RoomID, "all hands", nil, nil)
		if err != nil || !out.Replayed || out.AttentionCount != n {
			t.Fatalf("MessageSend(retry, same key) = %+v, %v; want the receipt replayed with %d attention rows", out, err, n)
		}
		for i, fl := range followers {
			if got := inboxHead(t, f, fl.AgentID); got != 1 {
				t.Fatalf("follower %d inbox head = %d after the replay, want 1 (fan-out finished)", i, got)
			}
		}
	})
}

package hub_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestIdempotencyKeyScope: a key is scoped to (agent, key), as seed 002
// says, in both dialects, and the tool is part of what a replay compares.
// The same key on another tool is IDEMPOTENCY_CONFLICT with no effect, even
// when the two tools' canonical requests are identical
// (add_space_member and remove_space_member of one agent); another agent,
// of this box or another, has its own keys.
func TestIdempotencyKeyScope(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		sp := mustCreateSpace(f, cr, "private", "plans")
		if _, err := updateSpace(f, cr, sp.ID, 1, "plans v2", "active", "upd-1"); err != nil {
			t.Fatalf("UpdateSpace(operation_key upd-1): %v", err)
		}
		_, err := saveNote(f, cr, "plan", 0, "x", "upd-1")
		wantCode(t, "SaveMemory(operation_key used by update_space)", err, apperr.IdempotencyConflict)
		if _, err := getNote(f, cr, "plan"); err == nil {
			t.Errorf("SaveMemory under a conflicting key saved the note")
		}
		// Seed 000's idempotency_key and seed 002's operation_key are one
		// key space per agent.
		_, err = save(f, cr, "upd-1", 0, "x")
		wantCode(t, "CheckpointSave(idempotency_key used by update_space)", err, apperr.IdempotencyConflict)

		// Identical canonical requests, different tools.
		if _, err := f.h.AddSpaceMember(f.ctx, cr, hub.SpaceMemberInput{SpaceRef: hub.SpaceRef{ID: sp.ID},
			Data: hub.SpaceMemberData{AgentID: f.b.AgentID, OpKey: hub.OpKey{OperationKey: "member-1"}}}); err != nil {
			t.Fatalf("AddSpaceMember(member-1): %v", err)
		}
		_, err = f.h.RemoveSpaceMember(f.ctx, cr, hub.SpaceMemberInput{SpaceRef: hub.SpaceRef{ID: sp.ID},
			Data: hub.SpaceMemberData{AgentID: f.b.AgentID, OpKey: hub.OpKey{OperationKey: "member-1"}}})
		wantCode(t, "RemoveSpaceMember(key of add_space_member, same request)", err, apperr.IdempotencyConflict)
		got, err := getSpace(f, cr, sp.ID)
		if err != nil || got.Space.MemberCount != 2 {
			t.Fatalf("GetSpace after the conflicting remove = %+v, %v; want 2 members (nothing removed)", got, err)
		}

		// Other agents, here and in another box, have their own keys.
		for _, ag := range []*hub.AgentInfo{f.b, f.other} {
			if out, err := saveNote(f, f.prime(ag), "plan", 0, "x", "upd-1"); err != nil || out.Replayed {
				t.Errorf("SaveMemory(%s, upd-1) = %+v, %v; want a fresh effect", ag.Name, out, err)
			}
		}
	})
}

// TestIdempotencyWindow: a key is remembered for 30 days. A second before
// the window ends it still replays (and still conflicts on another
// request); a second after, it is free and runs afresh.
func TestIdempotencyWindow(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		first, err := save(f, cr, "k", 0, "body")
		if err != nil {
			t.Fatalf("CheckpointSave: %v", err)
		}
		const window = 30 * 24 * time.Hour
		f.clock.Advance(window - time.Second)
		cr = f.prime(f.a) // the session idled out long ago
		again, err := save(f, cr, "k", 0, "body")
		if err != nil || !again.Replayed || again.Checkpoint.Revision != first.Checkpoint.Revision {
			t.Fatalf("CheckpointSave(same key) 1s before 30 days = %+v, %v; want the original receipt replayed", again, err)
		}
		_, err = save(f, cr, "k", 1, "other body")
		wantCode(t, "CheckpointSave(same key, other request) 1s before 30 days", err, apperr.IdempotencyConflict)

		f.clock.Advance(2 * time.Second)
		cr = f.prime(f.a)
		out, err := save(f, cr, "k", 1, "other body")
		if err != nil || out.Replayed || out.Checkpoint.Revision != 2 {
			t.Fatalf("CheckpointSave(same key) 1s after 30 days = %+v, %v; want a fresh effect at revision 2", out, err)
		}
	})
}

// TestNoOpMutationRemembersItsKey: a keyed mutation that changes nothing
// (adding a current member) still records its key, so a retry replays and
// the key cannot be reused for another request.
func TestNoOpMutationRemembersItsKey(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		sp := mustCreateSpace(f, cr, "private", "plans")
		add := func(agent, key string) (*hub.SpaceMemberOutput, error) {
			return f.h.AddSpaceMember(f.ctx, cr, hub.SpaceMemberInput{SpaceRef: hub.SpaceRef{ID: sp.ID},
				Data: hub.SpaceMemberData{AgentID: agent, OpKey: hub.OpKey{OperationKey: key}}})
		}
		out, err := add(f.a.AgentID, "noop-1") // the creator is a member already
		if err != nil || out.Membership.Changed {
			t.Fatalf("AddSpaceMember(creator) = %+v, %v; want an unchanged no-op", out, err)
		}
		again, err := add(f.a.AgentID, "noop-1")
		if err != nil || !again.Replayed {
			t.Fatalf("AddSpaceMember(same no-op, same key) = %+v, %v; want a replay", again, err)
		}
		_, err = add(f.b.AgentID, "noop-1")
		wantCode(t, "AddSpaceMember(other agent, key of a no-op)", err, apperr.IdempotencyConflict)
	})
}

// TestStreamSequence: a stream's messages take consecutive sequences from
// 1, each send moving the stream's counter up by one.
func TestStreamSequence(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("ops", "", f.a)
		cr := f.prime(f.a)
		for want := hub.Revision(1); want <= 3; want++ {
			out, err := sendRoom(f, cr, fmt.Sprintf("s%d", want), room.RoomID, "hi", nil, nil)
			if err != nil || out.StreamSeq != want {
				t.Fatalf("MessageSend #%d = %+v, %v; want stream_seq %d", want, out, err, want)
			}
		}
	})
}

package hub_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// unknownAgent is a well-formed agent id nothing holds.
const unknownAgent = "00000000-0000-4000-8000-00000000a9e7"

func sendRoom(f *fixture, cr hub.Credentials, key, room, body string, mentions, requests []string) (*hub.MessageSendOutput, error) {
	return f.h.MessageSend(f.ctx, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: key},
		Destination: hub.Destination{Kind: "room", RoomID: room}, BodyMD: body, Mentions: mentions, Requests: requests})
}

func sendDM(f *fixture, cr hub.Credentials, key, to, body string) (*hub.MessageSendOutput, error) {
	return f.h.MessageSend(f.ctx, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: key},
		Destination: hub.Destination{Kind: "dm", RecipientAgentID: to}, BodyMD: body})
}

// TestDeactivateAgent checks every effect of deactivation, and that
// reactivation undoes each: bob cannot authenticate, leaves the directory
// (and its index), the roster, the targets and the attention fan-out, is
// refused as a DM or space peer exactly like an unknown id, and keeps his
// messages and memberships.
func TestDeactivateAgent(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		carol := f.mustAgent(f.box, "carol")
		room := f.mustRoom("ops", "")
		for _, ag := range []*hub.AgentInfo{f.a, f.b, carol} {
			f.mustAdd(room.RoomID, ag)
			f.mustList(ag, true)
		}
		crA, crB := f.prime(f.a), f.prime(f.b)
		followed, err := follow(f, crB, "f1", room.RoomID, 1, "all")
		if err != nil {
			t.Fatalf("RoomFollow(bob, all): %v", err)
		}
		before, err := sendDM(f, crB, "m0", f.a.AgentID, "from bob, before")
		if err != nil {
			t.Fatalf("MessageSend(bob to alice): %v", err)
		}
		sent, err := sendRoom(f, crA, "m1", room.RoomID, "all hands", nil, nil)
		if err != nil || sent.AttentionCount != 1 {
			t.Fatalf("MessageSend(room) while bob is active = %+v, %v; want 1 attention row (bob follows all)", sent, err)
		}

		// Deactivate by the upper-case spelling of the id: UUIDs are
		// case-insensitive at every boundary, the admin plane included.
		info, err := f.h.Admin().DeactivateAgent(f.ctx, strings.ToUpper(f.b.AgentID))
		if err != nil || info.Status != "inactive" {
			t.Fatalf("DeactivateAgent(bob) = %+v, %v; want status inactive", info, err)
		}

		t.Run("CannotAuthenticate", func(t *testing.T) {
			_, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.b.BoxKey}, hub.PrimeInput{})
			wantCode(t, "Prime(deactivated)", err, apperr.AuthFailed)
			_, err = f.h.CheckpointGet(f.ctx, crB, hub.CheckpointGetInput{})
			wantCode(t, "CheckpointGet(deactivated, live session)", err, apperr.AuthFailed)
		})
		t.Run("AbsentFromDirectory", func(t *testing.T) {
			unknown := envelope(t, directoryGet(f, crA, unknownAgent))
			wantSameError(t, "DirectoryGet(deactivated)", directoryGet(f, crA, f.b.AgentID), unknown, "bob")
			got, err := search(f, crA, "bob", "", 0)
			if err != nil || len(got.Cards) != 0 {
				t.Fatalf("DirectorySearch(bob) = %+v, %v; want no card", got, err)
			}
			card, err := f.raw.Get(f.ctx, store.Key{PK: "agent#" + f.b.AgentID, SK: "card"})
			if err != nil || card == nil || card.GSI2PK != "" {
				t.Fatalf("bob's card = %+v, %v; want it kept, out of the directory index", card, err)
			}
		})
		t.Run("AbsentFromRoster", func(t *testing.T) {
			got, err := f.h.RoomGet(f.ctx, crA, hub.RoomIDInput{RoomID: room.RoomID})
			if err != nil {
				t.Fatalf("RoomGet: %v", err)
			}
			if got.Roster.Count != 2 || len(got.Roster.Members) != 2 || rosterHas(got.Roster, f.b.AgentID) {
				t.Fatalf("RoomGet roster = %+v, want alice and carol only, count 2", got.Roster)
			}
			if n := memberCount(t, f, room.RoomID); n != 2 {
				t.Fatalf("ListRooms member count = %d, want 2 active members", n)
			}
		})
		t.Run("NotATarget", func(t *testing.T) {
			_, ref := sendRoom(f, crA, "t0", room.RoomID, "hi", []string{unknownAgent}, nil)
			reference := envelope(t, ref)
			_, err := sendRoom(f, crA, "t1", room.RoomID, "hi", []string{f.b.AgentID}, nil)
			wantSameError(t, "MessageSend(mention deactivated)", err, reference)
			_, ref = sendRoom(f, crA, "t2", room.RoomID, "hi", []string{unknownAgent}, []string{unknownAgent})
			reference = envelope(t, ref)
			_, err = sendRoom(f, crA, "t3", room.RoomID, "hi", []string{f.b.AgentID}, []string{f.b.AgentID})
			wantSameError(t, "MessageSend(request deactivated)", err, reference)
		})
		t.Run("NoAttention", func(t *testing.T) {
			head := inboxHead(t, f, f.b.AgentID)
			out, err := sendRoom(f, crA, "n1", room.RoomID, "all hands again", nil, nil)
			if err != nil || out.AttentionCount != 0 {
				t.Fatalf("MessageSend(room) = %+v, %v; want no attention row for deactivated bob", out, err)
			}
			if got := inboxHead(t, f, f.b.AgentID); got != head {
				t.Fatalf("bob's inbox head moved %d -> %d while deactivated", head, got)
			}
		})
		t.Run("NoDM", func(t *testing.T) {
			_, ref := sendDM(f, crA, "d0", unknownAgent, "hello")
			_, err := sendDM(f, crA, "d1", f.b.AgentID, "hello")
			wantSameError(t, "MessageSend(DM to deactivated)", err, envelope(t, ref), "bob")
		})
		t.Run("NotASpaceMember", func(t *testing.T) {
			sp := mustCreateSpace(f, crA, "private", "secret plans")
			_, ref := addMember(f, crA, sp.ID, unknownAgent)
			_, err := addMember(f, crA, sp.ID, f.b.AgentID)
			wantSameError(t, "AddSpaceMember(deactivated)", err, envelope(t, ref), "bob")
		})
		t.Run("NotAddedToRooms", func(t *testing.T) {
			other := f.mustRoom("other", "")
			_, err := f.h.Admin().AddMember(f.ctx, other.RoomID, f.b.AgentID)
			wantCode(t, "AddMember(deactivated)", err, apperr.NotFoundOrForbidden)
		})
		t.Run("KeepsHistoryAndMemberships", func(t *testing.T) {
			got, err := f.h.MessageGet(f.ctx, crA, hub.MessageGetInput{MessageID: before.MessageID})
			if err != nil {
				t.Fatalf("MessageGet(bob's message) after deactivation: %v", err)
			}
			_ = got
			m, err := f.raw.Get(f.ctx, store.Key{PK: "agent#" + f.b.AgentID, SK: "member#" + room.RoomID})
			if err != nil || m == nil {
				t.Fatalf("bob's membership of the room = %v, %v; want it kept", m, err)
			}
		})

		// Deactivating twice changes nothing (and completes any marks).
		if _, err := f.h.Admin().DeactivateAgent(f.ctx, f.b.AgentID); err != nil {
			t.Fatalf("DeactivateAgent(bob) again: %v", err)
		}
		if got, _ := f.h.RoomGet(f.ctx, crA, hub.RoomIDInput{RoomID: room.RoomID}); got == nil || got.Roster.Count != 2 {
			t.Fatalf("roster after a second deactivation = %+v, want count 2", got)
		}

		info, err = f.h.Admin().ReactivateAgent(f.ctx, f.b.AgentID)
		if err != nil || info.Status != "active" {
			t.Fatalf("ReactivateAgent(bob) = %+v, %v; want status active", info, err)
		}
		t.Run("Reactivated", func(t *testing.T) {
			crB := f.prime(f.b)
			if _, err := f.h.DirectoryGet(f.ctx, crA, hub.DirectoryGetInput{AgentID: f.b.AgentID}); err != nil {
				t.Fatalf("DirectoryGet(reactivated bob): %v", err)
			}
			got, err := f.h.RoomGet(f.ctx, crB, hub.RoomIDInput{RoomID: room.RoomID})
			if err != nil {
				t.Fatalf("RoomGet(bob): %v", err)
			}
			if got.Roster.Count != 3 || !rosterHas(got.Roster, f.b.AgentID) || got.Membership.Follow != "all" {
				t.Fatalf("RoomGet after reactivation = roster %+v follow %s, want bob back (count 3) still following all", got.Roster, got.Membership.Follow)
			}
			// Membership revisions only grow: a room_follow prepared
			// before the deactivation is stale.
			if before := followed.Membership.FollowRevision; got.Membership.FollowRevision <= before {
				t.Errorf("follow revision after deactivate and reactivate = %d, want above %d", got.Membership.FollowRevision, before)
			}
			_, err = follow(f, crB, "f2", room.RoomID, followed.Membership.FollowRevision, "mute")
			wantCode(t, "RoomFollow(revision from before the deactivation)", err, apperr.RevisionConflict)
			out, err := sendRoom(f, crA, "r1", room.RoomID, "welcome back", []string{f.b.AgentID}, []string{f.b.AgentID})
			if err != nil || out.AttentionCount != 1 {
				t.Fatalf("MessageSend(mention+request bob) = %+v, %v; want 1 attention row", out, err)
			}
			if _, err := sendDM(f, crA, "r2", f.b.AgentID, "hello again"); err != nil {
				t.Fatalf("MessageSend(DM to reactivated bob): %v", err)
			}
		})
	})
}

// TestDeactivatedMemberRemoved: removing a deactivated member must not take
// it off the member counter twice (deactivation already did).
func TestDeactivatedMemberRemoved(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("ops", "", f.a, f.b)
		if _, err := f.h.Admin().DeactivateAgent(f.ctx, f.b.AgentID); err != nil {
			t.Fatalf("DeactivateAgent: %v", err)
		}
		f.mustRemove(room.RoomID, f.b)
		if _, err := f.h.Admin().ReactivateAgent(f.ctx, f.b.AgentID); err != nil {
			t.Fatalf("ReactivateAgent: %v", err)
		}
		got, err := f.h.RoomGet(f.ctx, f.prime(f.a), hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil || got.Roster.Count != 1 || rosterHas(got.Roster, f.b.AgentID) {
			t.Fatalf("RoomGet after deactivate, remove, reactivate = %+v, %v; want alice alone, count 1", got, err)
		}
		if n := memberCount(t, f, room.RoomID); n != 1 {
			t.Fatalf("ListRooms member count after deactivate, remove, reactivate = %d, want 1", n)
		}
	})
}

// TestDeactivateManyRooms crosses the chunk boundary of the membership
// marks.
func TestDeactivateManyRooms(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		const n = 45 // more than one chunk of marks
		rooms := make([]string, n)
		for i := range n {
			rooms[i] = f.mustRoom(fmt.Sprintf("room %02d", i), "").RoomID
			f.mustAdd(rooms[i], f.a)
			f.mustAdd(rooms[i], f.b)
		}
		if _, err := f.h.Admin().DeactivateAgent(f.ctx, f.b.AgentID); err != nil {
			t.Fatalf("DeactivateAgent: %v", err)
		}
		crA := f.prime(f.a)
		for _, r := range []string{rooms[0], rooms[n-1]} {
			got, err := f.h.RoomGet(f.ctx, crA, hub.RoomIDInput{RoomID: r})
			if err != nil || got.Roster.Count != 1 || rosterHas(got.Roster, f.b.AgentID) {
				t.Fatalf("RoomGet(%s) = %+v, %v; want bob absent, count 1", r, got, err)
			}
		}
	})
}

func directoryGet(f *fixture, cr hub.Credentials, agent string) error {
	_, err := f.h.DirectoryGet(f.ctx, cr, hub.DirectoryGetInput{AgentID: agent})
	return err
}

func rosterHas(r hub.Roster, agent string) bool {
	for _, m := range r.Members {
		if m.AgentID == agent {
			return true
		}
	}
	return false
}

// inboxHead reads an agent's inbox head (rows ever written) from the store.
func inboxHead(t *testing.T, f *fixture, agent string) uint64 {
	t.Helper()
	it, err := f.raw.Get(f.ctx, store.Key{PK: "agent#" + agent, SK: "inbox"})
	if err != nil {
		t.Fatalf("Get(inbox head): %v", err)
	}
	if it == nil {
		return 0
	}
	return it.Version
}

// memberCount is the room's member counter as the owner sees it.
func memberCount(t *testing.T, f *fixture, room string) int64 {
	t.Helper()
	rooms, err := f.h.Admin().ListRooms(f.ctx, f.box)
	if err != nil {
		t.Fatalf("ListRooms: %v", err)
	}
	for _, r := range rooms {
		if r.RoomID == room {
			return r.MemberCount
		}
	}
	t.Fatalf("ListRooms: room %s missing", room)
	return 0
}

// TestDeactivateRetriesOvertakenPass forces the interleaving in which the
// owner changes the agent record after deactivation's marking pass read it
// and before the pass writes its chunk: the chunk's write fails on the
// agent's revision, and the pass must run again rather than report
// success with the memberships unmarked.
func TestDeactivateRetriesOvertakenPass(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		hook := func() {}
		f := newFixture(t, ad, withHook(&hook))
		room := f.mustRoom("ops", "", f.a, f.b)
		crA := f.prime(f.a)
		var writes atomic.Int32
		hook = func() {
			// Write 1 is the status, write 2 the first chunk of marks.
			if writes.Add(1) == 2 {
				if _, err := f.h.Admin().SetDirectoryListed(f.ctx, f.b.AgentID, true); err != nil {
					t.Errorf("SetDirectoryListed racing the marks: %v", err)
				}
			}
		}
		if _, err := f.h.Admin().DeactivateAgent(f.ctx, f.b.AgentID); err != nil {
			t.Fatalf("DeactivateAgent overtaken by a listing change: %v", err)
		}
		hook = func() {}
		if writes.Load() < 4 {
			t.Fatalf("%d writes: the forced interleaving did not happen", writes.Load())
		}
		got, err := f.h.RoomGet(f.ctx, crA, hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil || rosterHas(got.Roster, f.b.AgentID) || got.Roster.Count != 1 {
			t.Fatalf("RoomGet after an overtaken pass = %+v, %v; want bob marked inactive (count 1)", got, err)
		}
	})
}

// TestDeactivationOvertakesInFlightMutation deactivates bob after his
// checkpoint_save read its keys and before it writes: the write checks the
// keys at the versions it read, which the deactivation moved, so the save
// fails AUTH_FAILED and nothing of it is stored. Reactivated, bob saves as
// before.
func TestDeactivationOvertakesInFlightMutation(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var hook onceHook
		f := newFixture(t, ad, withOnceHook(&hook))
		crB := f.prime(f.b)
		hook.set(func() {
			if _, err := f.h.Admin().DeactivateAgent(f.ctx, f.b.AgentID); err != nil {
				t.Errorf("DeactivateAgent between bob's read and write: %v", err)
			}
		})
		_, err := save(f, crB, "in-flight", 0, "written by an agent being deactivated")
		hook.raced(t, "checkpoint_save overtaken by a deactivation")
		wantCode(t, "checkpoint_save overtaken by a deactivation", err, apperr.AuthFailed)
		if _, err := f.h.Admin().ReactivateAgent(f.ctx, f.b.AgentID); err != nil {
			t.Fatalf("ReactivateAgent: %v", err)
		}
		got, err := f.h.CheckpointGet(f.ctx, crB, hub.CheckpointGetInput{})
		if err != nil || got.Checkpoint.Revision != 0 {
			t.Fatalf("checkpoint after the refused save = %+v, %v; want revision 0 (nothing stored)", got, err)
		}
		if _, err := save(f, crB, "after", 0, "back"); err != nil {
			t.Fatalf("checkpoint_save after reactivation: %v", err)
		}
	})
}

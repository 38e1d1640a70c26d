package hub_test

import (
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestCursorKeyCreationRace: several instances (Lambda containers) find the
// cursor secret missing at once and all try to create it; the losers must
// adopt the winner's secret, so that a cursor made by any instance is
// accepted by every other.
func TestCursorKeyCreationRace(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		clock := teststores.NewClock()
		b := &writeBarrier{Store: ad.Open(t, clock.Now)}
		const n = 4
		hubs := make([]*hub.Hub, n)
		boxes := make([]*hub.BoxInfo, n)
		errs := make([]error, n)
		for i := range hubs {
			hubs[i] = hub.New(b, hub.Options{Now: clock.Now})
		}
		// Every instance reads "no secret" before any creates it.
		atOnce(b, n, func(i int) { boxes[i], errs[i] = hubs[i].Admin().CreateBox(t.Context(), fmt.Sprintf("box %d", i)) })
		for i, err := range errs {
			if err != nil {
				t.Fatalf("CreateBox on instance %d racing the secret's creation: %v", i, err)
			}
		}
		// The first boxes create the secret, so agents' calls only read it.
		if it, err := b.Store.Get(t.Context(), store.Key{PK: "config#cursor", SK: "key"}); err != nil || it == nil {
			t.Fatalf("cursor secret after CreateBox = %v, %v; want it created", it, err)
		}
		ag, err := hubs[0].Admin().CreateAgent(t.Context(), boxes[0].BoxID, "alice", "")
		if err != nil {
			t.Fatalf("CreateAgent: %v", err)
		}
		p, err := hubs[0].Prime(t.Context(), hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
		if err != nil {
			t.Fatalf("Prime: %v", err)
		}
		cr := hub.Credentials{Bearer: ag.BoxKey, SessionID: p.SessionID, Transport: "rest"}
		for i := range 3 {
			if _, err := hubs[0].SaveMemory(t.Context(), cr, hub.SaveMemoryInput{NoteRef: hub.NoteRef{ID: fmt.Sprintf("note-%d", i)},
				Data: hub.SaveMemoryData{Content: "x"}}); err != nil {
				t.Fatalf("SaveMemory: %v", err)
			}
		}
		for i, h := range hubs {
			page, err := h.ListMemory(t.Context(), cr, hub.ListMemoryInput{Data: hub.ListMemoryData{Limit: 1}})
			if err != nil || page.NextCursor == "" {
				t.Fatalf("ListMemory(limit 1) on instance %d = %+v, %v; want a cursor", i, page, err)
			}
			for j, other := range hubs {
				if _, err := other.ListMemory(t.Context(), cr, hub.ListMemoryInput{Data: hub.ListMemoryData{Cursor: page.NextCursor, Limit: 1}}); err != nil {
					t.Errorf("cursor of instance %d on instance %d: %v, want it accepted (one shared secret)", i, j, err)
				}
			}
		}
	})
}

// TestDeleteMemoryLostRace: concurrent deletes of one note at its current
// version, all reading before any writes: one deletes it, and every other
// answers exactly what deleting a missing note answers — never a success,
// a REVISION_CONFLICT inviting a retry, or a second decrement of the count.
func TestDeleteMemoryLostRace(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var b *writeBarrier
		f := newFixture(t, ad, withBarrier(&b))
		cr := f.prime(f.a)
		for _, name := range []string{"plan", "keep"} {
			if _, err := saveNote(f, cr, name, 0, "v1", ""); err != nil {
				t.Fatalf("SaveMemory(%s): %v", name, err)
			}
		}
		_, missing := deleteNote(f, cr, "never", 1, "")
		reference := envelope(t, missing)
		const n = 6
		errs := make([]error, n)
		atOnce(b, n, func(i int) { _, errs[i] = deleteNote(f, cr, "plan", 1, "") })
		won := 0
		for i, err := range errs {
			if err == nil {
				won++
				continue
			}
			wantSameError(t, fmt.Sprintf("DeleteMemory %d (lost the race)", i), err, reference)
		}
		if won != 1 {
			t.Fatalf("concurrent deletes: %d succeeded, want exactly 1", won)
		}
		names, last := listNotes(f, cr, 10)
		if len(names) != 1 || last.Total != 1 {
			t.Fatalf("after the race: notes %v, count %d; want only keep, count 1", names, last.Total)
		}
	})
}

// TestSpaceMemberCounterContention: the creator adds several agents to a
// private space at once, all reading the member counter before any
// writes. Each add moves the counter, so all but one lose it; every add
// must still succeed (the kernel runs it again) and the count be exact.
func TestSpaceMemberCounterContention(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var b *writeBarrier
		f := newFixture(t, ad, withBarrier(&b))
		cr := f.prime(f.a)
		sp := mustCreateSpace(f, cr, "private", "crowd")
		const n = 5
		agents := make([]*hub.AgentInfo, n)
		for i := range agents {
			agents[i] = f.mustAgent(f.box, fmt.Sprintf("agent %d", i))
		}
		errs := make([]error, n)
		atOnce(b, n, func(i int) { _, errs[i] = addMember(f, cr, sp.ID, agents[i].AgentID) })
		for i, err := range errs {
			if err != nil {
				t.Errorf("AddSpaceMember(agent %d) among %d concurrent adds: %v, want success", i, n, err)
			}
		}
		got, err := getSpace(f, cr, sp.ID)
		if err != nil || got.Space.MemberCount != n+1 || len(got.Space.Members) != n+1 {
			t.Fatalf("GetSpace after %d concurrent adds = %+v, %v; want %d members", n, got, err, n+1)
		}
		for i, ag := range agents {
			if _, err := getSpace(f, f.prime(ag), sp.ID); err != nil {
				t.Errorf("GetSpace by added agent %d: %v", i, err)
			}
		}
	})
}

// TestCursorKeyCreatedOnFirstCall: a table whose cursor secret is missing
// (made before secrets existed, or restored without it) gets one from the
// first agent call of a fresh instance, and that instance's cursors work.
func TestCursorKeyCreatedOnFirstCall(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		if err := f.raw.Write(f.ctx, []store.Op{store.Delete(store.Key{PK: "config#cursor", SK: "key"}, store.Present)}); err != nil {
			t.Fatalf("deleting the cursor secret: %v", err)
		}
		fresh := hub.New(f.raw, hub.Options{Now: f.clock.Now})
		p, err := fresh.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey}, hub.PrimeInput{})
		if err != nil {
			t.Fatalf("Prime on an instance with no secret anywhere: %v", err)
		}
		cr := hub.Credentials{Bearer: f.a.BoxKey, SessionID: p.SessionID, Transport: "rest"}
		for i := range 2 {
			if _, err := fresh.SaveMemory(f.ctx, cr, hub.SaveMemoryInput{NoteRef: hub.NoteRef{ID: fmt.Sprintf("note-%d", i)},
				Data: hub.SaveMemoryData{Content: "x"}}); err != nil {
				t.Fatalf("SaveMemory: %v", err)
			}
		}
		page, err := fresh.ListMemory(f.ctx, cr, hub.ListMemoryInput{Data: hub.ListMemoryData{Limit: 1}})
		if err != nil || page.NextCursor == "" {
			t.Fatalf("ListMemory(limit 1) = %+v, %v; want a cursor", page, err)
		}
		if _, err := fresh.ListMemory(f.ctx, cr, hub.ListMemoryInput{Data: hub.ListMemoryData{Cursor: page.NextCursor, Limit: 1}}); err != nil {
			t.Fatalf("ListMemory(its own cursor): %v", err)
		}
	})
}

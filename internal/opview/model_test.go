package opview_test

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestOwnerView reads the owner's view on both adapters: the box's agents,
// rooms and requests, a room's folded timeline, an agent's backlog, and
// refusals for what lies outside the key's box.
func TestOwnerView(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.mustRoom("plan", "brief")
		f.mustAdd(room.RoomID, f.Alice)
		f.mustAdd(room.RoomID, f.Bob)
		ca, cb := f.Prime(f.Alice), f.Prime(f.Bob)
		ask, err := ibSend(f, ca, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "q"},
			Destination: hub.Destination{Kind: hub.KindRoom, RoomID: room.RoomID}, BodyMD: "review?\nmore",
			Requests: []string{f.Bob.AgentID}, Mentions: []string{f.Bob.AgentID}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ibSend(f, cb, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "r"},
			Destination: hub.Destination{Kind: hub.KindRoom, RoomID: room.RoomID}, BodyMD: "yes", ReplyTo: ask.MessageID}); err != nil {
			t.Fatal(err)
		}
		key, err := f.Admin.CreateOwnerKey(f.Ctx, f.Box)
		if err != nil {
			t.Fatal(err)
		}
		v, err := opview.Open(f.Ctx, f.Hub, key.Key)
		if err != nil {
			t.Fatalf("OwnerView(owner key): %v", err)
		}
		box, err := v.Box(f.Ctx, opview.BoxCursors{})
		if err != nil {
			t.Fatalf("Box: %v", err)
		}
		if len(box.Agents) != 2 || len(box.Rooms) != 1 || box.Rooms[0].Members != 2 || box.Rooms[0].Messages != 2 {
			t.Errorf("Box() = %d agents, rooms %+v; want 2 agents and one room of 2 members and 2 messages", len(box.Agents), box.Rooms)
		}
		for _, a := range box.Agents {
			if a.ID == f.Bob.AgentID && (a.RequestsIn != 1 || a.Unread == 0 || a.OldestUnread.IsZero()) {
				t.Errorf("Box() bob = %+v; want 1 request in and an oldest unread row", a)
			}
			if a.ID == f.Alice.AgentID && a.RequestsOut != 1 {
				t.Errorf("Box() alice = %+v; want 1 request out", a)
			}
		}
		board, err := v.Requests(f.Ctx, opview.BoardFilter{})
		if err != nil || len(board.Requests) != 1 || board.Requests[0].Summary != "review?" || board.Requests[0].ToNames[0] != "bob" ||
			board.Requests[0].Status != hub.StatusOpen || board.Requests[0].Revision != 0 || board.Requests[0].RoomName != "plan" {
			t.Errorf("Requests() = %+v, %v; want alice's one open request to bob in plan", board, err)
		}
		page, err := v.Room(f.Ctx, room.RoomID, opview.RoomCursors{})
		if err != nil || len(page.Timeline) != 1 || len(page.Timeline[0].Replies) != 1 || page.BriefMD != "brief" {
			t.Errorf("Room() = %+v, %v; want the brief and one root with its reply folded", page, err)
		} else if d := page.Timeline[0].Declarations; len(d) != 1 || d[0].AgentName != "bob" || d[0].Status != hub.StatusOpen || d[0].Revision != 0 {
			t.Errorf("Room() request declarations = %+v; want bob open at revision 0", d)
		}
		ag, err := v.Agent(f.Ctx, f.Bob.AgentID, opview.AgentCursors{})
		if err != nil || len(ag.Backlog) == 0 || len(ag.RequestsIn) != 1 || ag.ViewAgent.RequestsIn != 1 {
			t.Errorf("Agent(bob) = %+v, %v; want a backlog and one open request in", ag, err)
		}

		// Bob declares; a DM request from bob to alice is open. The board,
		// the counts, the room's chip and the agent pages read the records.
		if _, err := respond(f, cb, "acc", ask.MessageID, 0, hub.StatusAccepted); err != nil {
			t.Fatalf("RequestRespond(accepted): %v", err)
		}
		dm, err := ibSend(f, cb, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "dmq"},
			Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.Alice.AgentID}, BodyMD: "numbers?",
			Requests: []string{f.Alice.AgentID}})
		if err != nil {
			t.Fatal(err)
		}
		board, err = v.Requests(f.Ctx, opview.BoardFilter{})
		if err != nil || len(board.Requests) != 2 {
			t.Fatalf("Requests() after the declaration = %+v, %v; want two requests", board, err)
		}
		// The fixture's clock stands still: both were sent at the same time,
		// so the board's order between them is the message ids'.
		byID := map[string]opview.ViewRequest{}
		for _, r := range board.Requests {
			byID[r.MessageID] = r
		}
		if r := byID[ask.MessageID]; r.Status != hub.StatusAccepted || r.Revision != 1 || r.DeclaredAt.IsZero() {
			t.Errorf("Requests() alice's = %+v; want alice's request accepted at revision 1 with a declaration time", r)
		}
		if r := byID[dm.MessageID]; !r.DM || r.Status != hub.StatusOpen || r.FromName != "bob" || r.ToNames[0] != "alice" {
			t.Errorf("Requests() bob's = %+v; want bob's open DM request to alice", r)
		}
		box, err = v.Box(f.Ctx, opview.BoxCursors{})
		if err != nil {
			t.Fatalf("Box: %v", err)
		}
		for _, a := range box.Agents {
			want := map[string][2]int{f.Alice.AgentID: {1, 0}, f.Bob.AgentID: {0, 1}}[a.ID]
			if [2]int{a.RequestsIn, a.RequestsOut} != want {
				t.Errorf("Box() %s open requests in/out = %d/%d, want %d/%d", a.Name, a.RequestsIn, a.RequestsOut, want[0], want[1])
			}
		}
		page, err = v.Room(f.Ctx, room.RoomID, opview.RoomCursors{})
		if err != nil || len(page.Timeline) == 0 {
			t.Fatalf("Room() = %+v, %v", page, err)
		} else if d := page.Timeline[0].Declarations; len(d) != 1 || d[0].Status != hub.StatusAccepted || d[0].Revision != 1 || d[0].DeclaredAt.IsZero() {
			t.Errorf("Room() request declarations after accepting = %+v; want bob accepted at revision 1", d)
		}
		ag, err = v.Agent(f.Ctx, f.Bob.AgentID, opview.AgentCursors{})
		if err != nil || len(ag.RequestsIn) != 1 || ag.RequestsIn[0].Status != hub.StatusAccepted ||
			len(ag.RequestsOut) != 1 || ag.RequestsOut[0].MessageID != dm.MessageID || ag.ViewAgent.RequestsIn != 0 {
			t.Errorf("Agent(bob) = %+v, %v; want one accepted request in and the DM request out", ag, err)
		}

		// Private spaces and DMs: on their members' pages, and the DM page.
		hush := mustCreateSpace(f, ca, "private", "hush")
		ag, err = v.Agent(f.Ctx, f.Alice.AgentID, opview.AgentCursors{})
		if err != nil || len(ag.PrivateSpaces) != 1 || ag.PrivateSpaces[0].ID != hush.ID || ag.PrivateSpaces[0].Members != 1 ||
			len(ag.DMs) != 1 || ag.DMs[0].PeerID != f.Bob.AgentID || ag.DMs[0].Messages != 1 || ag.DMs[0].LastAuthor != "bob" || ag.DMs[0].LastAt.IsZero() {
			t.Errorf("Agent(alice) private spaces %+v, DMs %+v, %v; want hush with 1 member and one DM from bob", ag.PrivateSpaces, ag.DMs, err)
		}
		if bob, err := v.Agent(f.Ctx, f.Bob.AgentID, opview.AgentCursors{}); err != nil || len(bob.PrivateSpaces) != 0 || len(bob.DMs) != 1 {
			t.Errorf("Agent(bob) private spaces %+v, DMs %+v, %v; want none and the DM with alice", bob.PrivateSpaces, bob.DMs, err)
		}
		conv, err := v.DM(f.Ctx, f.Bob.AgentID, f.Alice.AgentID, "")
		if err != nil || len(conv.Timeline) != 1 || conv.Timeline[0].ID != dm.MessageID || len(conv.Timeline[0].Declarations) != 1 {
			t.Errorf("DM(bob, alice) = %+v, %v; want bob's request with its declaration", conv, err)
		}
		ov := ownerView(t, f, f.Mallory.BoxID)
		for name, call := range map[string]func() error{
			"other box's DM(alice, bob)":     func() error { _, err := ov.DM(f.Ctx, f.Alice.AgentID, f.Bob.AgentID, ""); return err },
			"other box's DM(mallory, alice)": func() error { _, err := ov.DM(f.Ctx, f.Mallory.AgentID, f.Alice.AgentID, ""); return err },
			"DM(alice, mallory)":             func() error { _, err := v.DM(f.Ctx, f.Alice.AgentID, f.Mallory.AgentID, ""); return err },
			"DM(alice, alice)":               func() error { _, err := v.DM(f.Ctx, f.Alice.AgentID, f.Alice.AgentID, ""); return err },
			"Agent(other box)":               func() error { _, err := v.Agent(f.Ctx, f.Mallory.AgentID, opview.AgentCursors{}); return err },
			"Agent(not uuid)":                func() error { _, err := v.Agent(f.Ctx, "x", opview.AgentCursors{}); return err },
			"Room(unknown)":                  func() error { _, err := v.Room(f.Ctx, f.Mallory.AgentID, opview.RoomCursors{}); return err },
		} {
			wantCode(t, name, call(), apperr.NotFoundOrForbidden)
		}
		for name, k := range map[string]string{"agent key": f.Alice.BoxKey, "garbage": "abo_x", "empty": ""} {
			_, err := f.Hub.OwnerScope(f.Ctx, k)
			wantCode(t, "OwnerScope("+name+")", err, apperr.AuthFailed)
		}
		// An owner key is no agent key.
		_, err = f.Hub.Prime(f.Ctx, hub.Credentials{Bearer: key.Key}, hub.PrimeInput{})
		wantCode(t, "Prime(owner key)", err, apperr.AuthFailed)
	})
}

// TestOwnerViewRequestActivity: the box and room charts count requests
// opened at their send hour and answered at the hour of their current
// result_ready or declined declaration; an acceptance, a hand-made reply
// whose payload looks like a declaration, and a superseded answer do not
// count.
func TestOwnerViewRequestActivity(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		c := f.MustAgent(f.Box, "carol")
		room := f.mustRoom("plan", "brief")
		for _, ag := range []*hub.AgentInfo{f.Alice, f.Bob, c} {
			f.mustAdd(room.RoomID, ag)
		}
		ca, cb, cc := f.Prime(f.Alice), f.Prime(f.Bob), f.Prime(c)
		at := hub.Destination{Kind: hub.KindRoom, RoomID: room.RoomID}
		// Hour 21: three requests opened (one message to bob and carol, one to bob).
		q1 := f.MustSend(ca, "q1", hub.MessageSendInput{Destination: at, BodyMD: "review?", Requests: []string{f.Bob.AgentID, c.AgentID}, Mentions: []string{f.Bob.AgentID, c.AgentID}})
		q2 := f.MustSend(ca, "q2", hub.MessageSendInput{Destination: at, BodyMD: "numbers?", Requests: []string{f.Bob.AgentID}, Mentions: []string{f.Bob.AgentID}})
		f.Clock.Advance(2 * time.Hour)
		// Hour 23: bob answers q1 (result_ready, then corrected to declined:
		// one answer), carol accepts q1, bob hand-writes a look-alike reply
		// to q2.
		for i, d := range []struct {
			cr     hub.Credentials
			key    string
			msg    string
			rev    hub.Revision
			status string
		}{{cb, "b1", q1.MessageID, 0, hub.StatusResultReady}, {cb, "b2", q1.MessageID, 1, hub.StatusDeclined},
			{cc, "c1", q1.MessageID, 0, hub.StatusAccepted}} {
			if _, err := respond(f, d.cr, d.key, d.msg, d.rev, d.status); err != nil {
				t.Fatalf("declaration %d: %v", i, err)
			}
		}
		f.MustSend(cb, "fake", hub.MessageSendInput{Destination: at, BodyMD: "done", ReplyTo: q2.MessageID,
			Payload: hub.Object(`{"response":{"request_message_id":"` + q2.MessageID + `","status":"result_ready"}}`)})

		v := ownerView(t, f, f.Box)
		box, err := v.Box(f.Ctx, opview.BoxCursors{})
		if err != nil {
			t.Fatalf("Box: %v", err)
		}
		page, err := v.Room(f.Ctx, room.RoomID, opview.RoomCursors{})
		if err != nil {
			t.Fatalf("Room: %v", err)
		}
		for name, got := range map[string]opview.RequestActivity{"Box": box.Requests, "Room": page.Requests} {
			want := opview.RequestActivity{Opened: make([]int, 24), Answered: make([]int, 24)}
			want.Opened[21], want.Answered[23] = 3, 1
			if !slices.Equal(got.Opened, want.Opened) || !slices.Equal(got.Answered, want.Answered) {
				t.Errorf("%s().Requests = %+v, want opened 3 at hour 21 and answered 1 at hour 23: %+v", name, got, want)
			}
		}
	})
}

// TestOwnerViewLastSeen: last seen is the session's recorded use (prime,
// then a touch once a quarter of the idle window has passed), read from the
// session index without any write of its own; an agent never primed is
// never seen.
func TestOwnerViewLastSeen(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var ro *readOnly
		f := newFixture(t, ad, func(s store.Store) store.Store { ro = &readOnly{Store: s}; return ro })
		v := ownerView(t, f, f.Box)
		seen := func() map[string]time.Time {
			t.Helper()
			// The view reads only: every write would fail.
			ro.on.Store(true)
			defer ro.on.Store(false)
			box, err := v.Box(f.Ctx, opview.BoxCursors{})
			if err != nil {
				t.Fatalf("Box: %v", err)
			}
			out := map[string]time.Time{}
			for _, a := range box.Agents {
				out[a.ID] = a.LastSeen
			}
			page, err := v.Agent(f.Ctx, f.Alice.AgentID, opview.AgentCursors{})
			if err != nil || !page.LastSeen.Equal(out[f.Alice.AgentID]) {
				t.Errorf("Agent(alice).LastSeen = %v, %v; want the box page's %v", page.LastSeen, err, out[f.Alice.AgentID])
			}
			return out
		}
		primed := f.Clock.Now()
		ca := f.Prime(f.Alice)
		f.Clock.Advance(time.Hour)
		if got := seen(); !got[f.Alice.AgentID].Equal(primed) || !got[f.Bob.AgentID].IsZero() {
			t.Errorf("last seen after alice primed = %v; want alice at %v, bob never", got, primed)
		}
		f.Clock.Advance(4 * time.Hour) // past a quarter of the idle window: the read touches
		if _, err := f.Hub.CheckpointGet(f.Ctx, ca, hub.CheckpointGetInput{}); err != nil {
			t.Fatalf("CheckpointGet: %v", err)
		}
		if got := seen(); !got[f.Alice.AgentID].Equal(f.Clock.Now()) {
			t.Errorf("alice last seen after a touching read = %v, want %v", got[f.Alice.AgentID], f.Clock.Now())
		}
	})
}

// TestOwnerViewPaging walks every list of the view one more entry than a
// page holds: each page has at most ViewPageSize entries, the pages
// together hold every entry once, and a cursor works only on the list, box
// and partition it came from.
func TestOwnerViewPaging(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		n := opview.ViewPageSize + 1
		agents := []*hub.AgentInfo{f.Alice, f.Bob}
		for i := len(agents); i < n; i++ {
			agents = append(agents, f.MustAgent(f.Box, fmt.Sprintf("agent %03d", i)))
		}
		crowd := f.MustRoom(f.Box, "crowd", agents...)
		rooms := []string{crowd.RoomID}
		for i := len(rooms); i < n; i++ {
			rooms = append(rooms, f.MustRoom(f.Box, fmt.Sprintf("room %03d", i)).RoomID)
		}
		ca := f.Prime(f.Alice)
		var spaces, private []string
		for i := range n {
			spaces = append(spaces, mustCreateSpace(f, ca, "public", fmt.Sprintf("space %03d", i)).ID)
			private = append(private, mustCreateSpace(f, ca, "private", fmt.Sprintf("private %03d", i)).ID)
		}
		// Alice's DM peers: one on each page of the box's agents (by name:
		// "agent 002" on the first, bob on the second).
		var toBob string
		for _, to := range []*hub.AgentInfo{agents[2], f.Bob} {
			toBob = f.MustSend(ca, "dm"+to.AgentID, hub.MessageSendInput{Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: to.AgentID}, BodyMD: "hi"}).MessageID
		}
		// Alice asks bob n times in a room of their own: n messages, n
		// requests each way, n inbox rows for bob.
		pair := f.MustRoom(f.Box, "pair", f.Alice, f.Bob)
		var msgs []string
		for i := range n {
			m := f.MustSend(ca, fmt.Sprintf("q%d", i), hub.MessageSendInput{Destination: hub.Destination{Kind: hub.KindRoom, RoomID: pair.RoomID},
				BodyMD: fmt.Sprintf("question %d", i), Requests: []string{f.Bob.AgentID}, Mentions: []string{f.Bob.AgentID}})
			msgs = append(msgs, m.MessageID)
			f.Clock.Advance(time.Second) // request order is send time
		}

		v := ownerView(t, f, f.Box)
		cursors := map[string]string{}
		// walk pages list through fetch and checks it yields want, each
		// entry once, in pages of at most ViewPageSize.
		walk := func(list string, want []string, fetch func(cur string) ([]string, string, error)) {
			t.Helper()
			seen := map[string]int{}
			cur, pages := "", 0
			for {
				ids, next, err := fetch(cur)
				if err != nil {
					t.Fatalf("%s page %d: %v", list, pages+1, err)
				}
				pages++
				if len(ids) > opview.ViewPageSize {
					t.Errorf("%s page %d has %d entries, want at most %d", list, pages, len(ids), opview.ViewPageSize)
				}
				for _, id := range ids {
					seen[id]++
				}
				if next == "" || pages > 3 {
					break
				}
				cursors[list] = next
				cur = next
			}
			for _, id := range want {
				if seen[id] != 1 {
					t.Errorf("%s: entry %s seen %d times over %d pages, want once", list, id, seen[id], pages)
				}
			}
			if len(seen) != len(want) || pages != 2 {
				t.Errorf("%s: %d entries over %d pages, want %d over 2", list, len(seen), pages, len(want))
			}
		}
		agentIDs := func(agents []*hub.AgentInfo) []string {
			return pluck(agents, func(a *hub.AgentInfo) string { return a.AgentID })
		}
		reqIDs := func(rs []opview.ViewRequest) []string {
			return pluck(rs, func(r opview.ViewRequest) string { return r.MessageID })
		}
		type fetch = func(cur string) ([]string, string, error)
		// The box page's three lists page together: the first page, then
		// the page at all three next cursors (two reads of the box page,
		// the costly one, for three walks).
		var boxPages [2]*opview.ViewBox
		boxList := func(next func(*opview.ViewBox) string, pick func(*opview.ViewBox) []string) fetch {
			return func(cur string) ([]string, string, error) {
				var err error
				if boxPages[0] == nil {
					if boxPages[0], err = v.Box(f.Ctx, opview.BoxCursors{}); err != nil {
						return nil, "", err
					}
				}
				if cur == "" {
					return pick(boxPages[0]), next(boxPages[0]), nil
				}
				if cur != next(boxPages[0]) {
					return nil, "", fmt.Errorf("cursor %q is not the first page's", cur)
				}
				if boxPages[1] == nil {
					first := boxPages[0]
					if boxPages[1], err = v.Box(f.Ctx, opview.BoxCursors{Agents: first.NextAgents, Rooms: first.NextRooms,
						Spaces: first.NextSpaces}); err != nil {
						return nil, "", err
					}
				}
				return pick(boxPages[1]), next(boxPages[1]), nil
			}
		}
		roomList := func(room string, at func(string) opview.RoomCursors, pick func(*opview.ViewRoomPage) ([]string, string)) fetch {
			return pager(func(c opview.RoomCursors) (*opview.ViewRoomPage, error) { return v.Room(f.Ctx, room, c) }, at, pick)
		}
		agentList := func(agent string, at func(string) opview.AgentCursors, pick func(*opview.ViewAgentPage) ([]string, string)) fetch {
			return pager(func(c opview.AgentCursors) (*opview.ViewAgentPage, error) { return v.Agent(f.Ctx, agent, c) }, at, pick)
		}
		for _, l := range []struct {
			name  string
			want  []string
			fetch fetch
		}{
			{"agents", agentIDs(agents), boxList(func(b *opview.ViewBox) string { return b.NextAgents },
				func(b *opview.ViewBox) []string {
					return pluck(b.Agents, func(a opview.ViewAgent) string { return a.ID })
				})},
			{"rooms", append(rooms, pair.RoomID), boxList(func(b *opview.ViewBox) string { return b.NextRooms },
				func(b *opview.ViewBox) []string {
					return pluck(b.Rooms, func(r opview.ViewRoom) string { return r.ID })
				})},
			{"spaces", spaces, boxList(func(b *opview.ViewBox) string { return b.NextSpaces },
				func(b *opview.ViewBox) []string {
					return pluck(b.Spaces, func(s opview.ViewSpace) string { return s.ID })
				})},
			{"members", agentIDs(agents), roomList(crowd.RoomID, func(c string) opview.RoomCursors { return opview.RoomCursors{Members: c} },
				func(p *opview.ViewRoomPage) ([]string, string) {
					return pluck(p.Members, func(m opview.ViewMember) string { return m.ID }), p.NextMembers
				})},
			{"timeline", msgs, roomList(pair.RoomID, func(c string) opview.RoomCursors { return opview.RoomCursors{Older: c} },
				func(p *opview.ViewRoomPage) ([]string, string) {
					return pluck(p.Timeline, func(m opview.ViewMessage) string { return m.ID }), p.Older
				})},
			{"inbox", append([]string{toBob}, msgs...), agentList(f.Bob.AgentID, func(c string) opview.AgentCursors { return opview.AgentCursors{Inbox: c} },
				func(p *opview.ViewAgentPage) ([]string, string) {
					return pluck(p.Backlog, func(r opview.ViewInboxRow) string { return r.MessageID }), p.NextInbox
				})},
			{"requests in", msgs, agentList(f.Bob.AgentID, func(c string) opview.AgentCursors { return opview.AgentCursors{In: c} },
				func(p *opview.ViewAgentPage) ([]string, string) { return reqIDs(p.RequestsIn), p.NextIn })},
			{"requests out", msgs, agentList(f.Alice.AgentID, func(c string) opview.AgentCursors { return opview.AgentCursors{Out: c} },
				func(p *opview.ViewAgentPage) ([]string, string) { return reqIDs(p.RequestsOut), p.NextOut })},
			{"private spaces", private, agentList(f.Alice.AgentID, func(c string) opview.AgentCursors { return opview.AgentCursors{Private: c} },
				func(p *opview.ViewAgentPage) ([]string, string) {
					return pluck(p.PrivateSpaces, func(s opview.ViewSpace) string { return s.ID }), p.NextPrivate
				})},
			{"DM peers", agentIDs([]*hub.AgentInfo{agents[2], f.Bob}), agentList(f.Alice.AgentID, func(c string) opview.AgentCursors { return opview.AgentCursors{Peers: c} },
				func(p *opview.ViewAgentPage) ([]string, string) {
					return pluck(p.DMs, func(d opview.ViewDM) string { return d.PeerID }), p.NextPeers
				})},
			// The board pages over the box's request messages: every
			// request is on it, once, though bob has more than
			// ViewRequestsPerAgent of them.
			{"board", msgs, func(cur string) ([]string, string, error) {
				b, err := v.Requests(f.Ctx, opview.BoardFilter{Cursor: cur})
				if err != nil {
					return nil, "", err
				}
				return reqIDs(b.Requests), b.Next, nil
			}},
		} {
			walk(l.name, l.want, l.fetch)
		}

		// A cursor is bound to its list, partition and box.
		ov := ownerView(t, f, f.Mallory.BoxID)
		if b, err := ov.Requests(f.Ctx, opview.BoardFilter{}); err != nil || len(b.Requests) != 0 {
			t.Errorf("another box's board = %d requests, %v; want none", len(b.Requests), err)
		}
		for name, call := range map[string]func() error{
			"agents cursor as rooms": func() error { _, err := v.Box(f.Ctx, opview.BoxCursors{Rooms: cursors["agents"]}); return err },
			"inbox cursor of bob for alice": func() error {
				_, err := v.Agent(f.Ctx, f.Alice.AgentID, opview.AgentCursors{Inbox: cursors["inbox"]})
				return err
			},
			"timeline cursor for another room": func() error {
				_, err := v.Room(f.Ctx, crowd.RoomID, opview.RoomCursors{Older: cursors["timeline"]})
				return err
			},
			"agents cursor on another box": func() error { _, err := ov.Box(f.Ctx, opview.BoxCursors{Agents: cursors["agents"]}); return err },
			"board cursor on another box":  func() error { _, err := ov.Requests(f.Ctx, opview.BoardFilter{Cursor: cursors["board"]}); return err },
			"tampered":                     func() error { _, err := v.Box(f.Ctx, opview.BoxCursors{Agents: cursors["agents"] + "A"}); return err },
		} {
			wantCode(t, name, call(), apperr.CursorInvalid)
		}
	})
}

// pluck maps xs through id.
func pluck[T any](xs []T, id func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, id(x))
	}
	return out
}

// pager reads the page a cursor names (at turns it into the reader's
// cursors) and picks the listed ids and the next cursor from it.
func pager[C, P any](read func(C) (P, error), at func(string) C, pick func(P) ([]string, string)) func(string) ([]string, string, error) {
	return func(cur string) ([]string, string, error) {
		p, err := read(at(cur))
		if err != nil {
			return nil, "", err
		}
		ids, next := pick(p)
		return ids, next, nil
	}
}

// TestOwnerViewBacklog: the backlog lists unread rows newest first (every
// row on request), and the oldest unread row is found when ACKs skip rows.
func TestOwnerViewBacklog(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		ca, cb := f.Prime(f.Alice), f.Prime(f.Bob)
		arrived := map[uint64]time.Time{}
		for i := uint64(1); i <= 5; i++ {
			arrived[i] = f.Clock.Now()
			ibMustDMs(f, ca, fmt.Sprintf("dm%d", i), f.Bob.AgentID, 1)
			f.Clock.Advance(time.Minute)
		}
		shown := f.Clock.Now()
		ibListAll(f, cb, hub.FilterAll) // receipts for rows 1-5
		if _, err := ibAck(f, cb, "ack", 1, 2, 4); err != nil {
			t.Fatalf("InboxAck: %v", err)
		}
		ibMustDMs(f, ca, "dm6", f.Bob.AgentID, 1) // row 6, never shown
		v := ownerView(t, f, f.Box)
		for _, tc := range []struct {
			all  bool
			want []uint64
		}{{false, []uint64{6, 5, 3}}, {true, []uint64{6, 5, 4, 3, 2, 1}}} {
			p, err := v.Agent(f.Ctx, f.Bob.AgentID, opview.AgentCursors{AllRows: tc.all})
			if err != nil {
				t.Fatalf("Agent(bob, all rows %v): %v", tc.all, err)
			}
			if got := pluck(p.Backlog, func(r opview.ViewInboxRow) string { return fmt.Sprint(r.Seq) }); !slices.Equal(got,
				pluck(tc.want, func(n uint64) string { return fmt.Sprint(n) })) || p.NextInbox != "" {
				t.Errorf("Agent(bob, all rows %v).Backlog seqs = %v, next %q; want %v and no next page", tc.all, got, p.NextInbox, tc.want)
			}
			for _, r := range p.Backlog {
				if want := map[bool]time.Time{true: shown}[r.Seq <= 5]; !r.ShownAt.Equal(want) || r.Acked != (r.Seq == 1 || r.Seq == 2 || r.Seq == 4) {
					t.Errorf("Agent(bob) row %d shown at %v, acked %v; want shown at %v (zero: never) and acked only for rows 1, 2, 4", r.Seq, r.ShownAt, r.Acked, want)
				}
			}
		}
		box, err := v.Box(f.Ctx, opview.BoxCursors{})
		if err != nil {
			t.Fatalf("Box: %v", err)
		}
		for _, a := range box.Agents {
			if a.ID == f.Bob.AgentID && (a.Unread != 3 || !a.OldestUnread.Equal(arrived[3])) {
				t.Errorf("Box() bob unread %d, oldest unread %v; want 3 and row 3's arrival %v", a.Unread, a.OldestUnread, arrived[3])
			}
		}
	})
}

// TestBoardIndexesRequestMessages: the board lists every request of the
// box from the box's requests index, which a send writes atomically with
// the message (a refused send leaves nothing on it); a message sent before
// the index existed (its pointer without the index keys) is put on it by
// migrate-listings, once.
func TestBoardIndexesRequestMessages(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.Prime(f.Alice), f.Prime(f.Bob)
		carol := f.MustAgent(f.Box, "carol")
		room := f.MustRoom(f.Box, "work", f.Alice, f.Bob, carol)
		inRoom := f.MustSend(crA, "both", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "review?",
			Requests: []string{f.Bob.AgentID, carol.AgentID}, Mentions: []string{f.Bob.AgentID, carol.AgentID}})
		f.Clock.Advance(time.Second)
		old := f.MustSend(crB, "dm", hub.MessageSendInput{Destination: hubtest.ToDM(f.Alice.AgentID), BodyMD: "numbers?",
			Requests: []string{f.Alice.AgentID}})
		// A send refused (the target is no member) writes nothing.
		if _, err := f.Send(crA, "refused", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "x",
			Requests: []string{f.Mallory.AgentID}, Mentions: []string{f.Mallory.AgentID}}); err == nil {
			t.Fatalf("a request to another box's agent was sent")
		}
		// The DM request as a message sent before the index existed.
		pk := table.MessagePointerKey(old.MessageID)
		it, err := f.Raw.Get(f.Ctx, pk)
		if err != nil || it == nil || it.GSI1PK != table.BoxRequestsIndex(f.Box) {
			t.Fatalf("pointer of a request message = %+v, %v; want it on the box's requests index", it, err)
		}
		it.GSI1PK, it.GSI1SK = "", ""
		if err := f.Raw.Write(f.Ctx, []store.Op{store.Put(it, store.AtVersion(it.Version))}); err != nil {
			t.Fatalf("writing the old shape: %v", err)
		}

		v := ownerView(t, f, f.Box)
		board := func(want ...string) {
			t.Helper()
			b, err := v.Requests(f.Ctx, opview.BoardFilter{})
			if err != nil {
				t.Fatalf("Requests: %v", err)
			}
			var got []string
			for _, r := range b.Requests {
				got = append(got, r.MessageID+"→"+r.ToIDs[0])
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("board = %q, want %q", got, want)
			}
		}
		board(inRoom.MessageID+"→"+f.Bob.AgentID, inRoom.MessageID+"→"+carol.AgentID)
		for run, want := range []int{1, 0} {
			got, err := f.Admin.MigrateListings(f.Ctx, f.Box)
			if err != nil || got.RequestMessages != want {
				t.Fatalf("MigrateListings(run %d) = %+v, %v; want %d request messages moved", run+1, got, err, want)
			}
		}
		board(inRoom.MessageID+"→"+f.Bob.AgentID, inRoom.MessageID+"→"+carol.AgentID, old.MessageID+"→"+f.Alice.AgentID)
		if b, err := ownerView(t, f, f.Mallory.BoxID).Requests(f.Ctx, opview.BoardFilter{}); err != nil || len(b.Requests) != 0 {
			t.Errorf("another box's board = %+v, %v; want no request", b, err)
		}
	})
}

// TestBacklogReasonNames: the backlog names reason bits as the API does
// (hub.ReasonNames, inbox_list's reason_names): a row of a room the agent
// follows in full reads "all", on the page and in the fragment.
func TestBacklogReasonNames(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.MustRoom(f.Box, "plan", f.Alice)
		m := f.mustAdd(room.RoomID, f.Bob)
		ca, cb := f.Prime(f.Alice), f.Prime(f.Bob)
		if _, err := f.Hub.RoomFollow(f.Ctx, cb, hub.RoomFollowInput{Mutation: hub.Mutation{IdempotencyKey: "f"},
			RoomID: room.RoomID, ExpectedRevision: m.FollowRevision, Follow: hub.FollowAll}); err != nil {
			t.Fatalf("RoomFollow(all): %v", err)
		}
		f.MustSend(ca, "m", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "hello"})
		want := hub.ReasonNames(hub.ReasonFollowAll)
		if !slices.Equal(want, []string{"all"}) {
			t.Fatalf("hub.ReasonNames(ReasonFollowAll) = %q, want [all]", want)
		}
		key, err := f.Admin.CreateOwnerKey(f.Ctx, f.Box)
		if err != nil {
			t.Fatal(err)
		}
		v, err := opview.Open(f.Ctx, f.Hub, key.Key)
		if err != nil {
			t.Fatal(err)
		}
		p, err := v.Agent(f.Ctx, f.Bob.AgentID, opview.AgentCursors{})
		if err != nil || len(p.Backlog) != 1 || !slices.Equal(p.Backlog[0].Reasons, want) {
			t.Fatalf("Agent(bob).Backlog = %+v, %v; want one row with reasons %q", p, err, want)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/ui/api/agent/"+f.Bob.AgentID, nil)
		req.Header.Set("Authorization", "Bearer "+key.Key)
		opview.New(f.Hub, slog.New(slog.DiscardHandler)).ServeHTTP(rec, req)
		if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, `<span class="chip reason">all</span>`) ||
			strings.Contains(body, `<span class="chip reason">follow</span>`) {
			t.Errorf("agent fragment = %d, reasons not shown as %q: %s", rec.Code, want, body)
		}
	})
}

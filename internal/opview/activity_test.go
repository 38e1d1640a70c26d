package opview_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// feed pages through the whole activity feed of v, at most 20 pages.
func feed(t *testing.T, f *fixture, v *opview.Model) []opview.ViewEvent {
	t.Helper()
	var out []opview.ViewEvent
	cur := ""
	for range 20 {
		page, err := v.Activity(f.Ctx, cur)
		if err != nil {
			t.Fatalf("Activity(%q): %v", cur, err)
		}
		if len(page.Events) > opview.ViewPageSize {
			t.Fatalf("Activity page of %d events, want at most %d", len(page.Events), opview.ViewPageSize)
		}
		out = append(out, page.Events...)
		if cur = page.Next; cur == "" {
			return out
		}
	}
	t.Fatal("Activity: no end after 20 pages")
	return nil
}

// TestActivityFeed: every message of the box, rooms and DMs, is on the
// feed once, newest first, with its author, place (room name or DM peer)
// and first words; a refused send leaves nothing on it; a message sent
// before the activity index existed is put on it by migrate-listings,
// once; another box's feed is empty.
func TestActivityFeed(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		carol := f.MustAgent(f.Box, "carol")
		room := f.MustRoom(f.Box, "plan", f.Alice, f.Bob, carol)
		ca, cb := f.Prime(f.Alice), f.Prime(f.Bob)
		inRoom := f.MustSend(ca, "room", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "first words\nthe rest"})
		f.Clock.Advance(time.Second)
		dm := f.MustSend(cb, "dm", hub.MessageSendInput{Destination: hubtest.ToDM(f.Alice.AgentID), BodyMD: "between us"})
		f.Clock.Advance(time.Second)
		if _, err := f.Send(ca, "refused", hub.MessageSendInput{Destination: hubtest.ToDM(f.Mallory.AgentID), BodyMD: "x"}); err == nil {
			t.Fatal("a DM to another box's agent was sent")
		}
		// More than a page: DMs from alice to carol.
		cc := f.Prime(carol)
		for i := range opview.ViewPageSize {
			f.Clock.Advance(time.Millisecond)
			f.MustSend(cc, fmt.Sprintf("bulk-%d", i), hub.MessageSendInput{Destination: hubtest.ToDM(f.Alice.AgentID), BodyMD: fmt.Sprintf("bulk %d", i)})
		}
		v := ownerView(t, f, f.Box)
		all := feed(t, f, v)
		if len(all) != opview.ViewPageSize+2 {
			t.Fatalf("feed holds %d events, want %d", len(all), opview.ViewPageSize+2)
		}
		if !slices.IsSortedFunc(all, func(a, b opview.ViewEvent) int { return b.SentAt.Compare(a.SentAt) }) {
			t.Errorf("feed is not newest first")
		}
		byID := map[string]opview.ViewEvent{}
		for _, e := range all {
			if _, dup := byID[e.MessageID]; dup {
				t.Errorf("feed lists %s twice", e.MessageID)
			}
			byID[e.MessageID] = e
		}
		if e := byID[inRoom.MessageID]; e.AuthorName != "alice" || e.RoomName != "plan" || e.DM || e.Excerpt != "first words" {
			t.Errorf("room message on the feed = %+v; want alice in plan, first words", e)
		}
		if e := byID[dm.MessageID]; e.AuthorName != "bob" || !e.DM || e.PeerName != "alice" || e.Excerpt != "between us" {
			t.Errorf("DM on the feed = %+v; want bob to alice, between us", e)
		}

		// The room message as one sent before the index existed.
		it, err := f.Raw.Get(f.Ctx, table.MessagePointerKey(inRoom.MessageID))
		if err != nil || it == nil || it.GSI2PK != table.BoxActivityIndex(f.Box) {
			t.Fatalf("pointer = %+v, %v; want it on the box's activity index", it, err)
		}
		it.GSI2PK, it.GSI2SK = "", ""
		if err := f.Raw.Write(f.Ctx, []store.Op{store.Put(it, store.AtVersion(it.Version))}); err != nil {
			t.Fatal(err)
		}
		if got := feed(t, f, v); len(got) != len(all)-1 {
			t.Fatalf("feed with one pointer off the index = %d events, want %d", len(got), len(all)-1)
		}
		for run, want := range []int{1, 0} {
			got, err := f.Admin.MigrateListings(f.Ctx, f.Box)
			if err != nil || got.ActivityMessages != want {
				t.Fatalf("MigrateListings(run %d) = %+v, %v; want %d activity messages moved", run+1, got, err, want)
			}
		}
		if got := feed(t, f, v); !slices.Equal(pluck(got, func(e opview.ViewEvent) string { return e.MessageID }),
			pluck(all, func(e opview.ViewEvent) string { return e.MessageID })) {
			t.Errorf("feed after the migration differs from before")
		}
		if got := feed(t, f, ownerView(t, f, f.OtherBox)); len(got) != 0 {
			t.Errorf("another box's feed = %+v, want empty", got)
		}
	})
}

// TestBoxChartsAndLastActivity: the box page's charts count DMs as well as
// rooms (messages and requests opened), per hour over 24 hours and per day
// over 7 days; rooms show their last message's time and agents their last
// message's.
func TestBoxChartsAndLastActivity(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.MustRoom(f.Box, "plan", f.Alice, f.Bob)
		// Three days ago: a room message. Now: a DM request and a room message.
		f.MustSend(f.Prime(f.Alice), "old", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "old"})
		f.Clock.Advance(72 * time.Hour)
		ca, cb := f.Prime(f.Alice), f.Prime(f.Bob)
		f.MustSend(cb, "ask", hub.MessageSendInput{Destination: hubtest.ToDM(f.Alice.AgentID), BodyMD: "numbers?", Requests: []string{f.Alice.AgentID}})
		f.Clock.Advance(time.Minute)
		last := f.Clock.Now()
		f.MustSend(ca, "new", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "new"})

		box, err := ownerView(t, f, f.Box).Box(f.Ctx, opview.BoxCursors{})
		if err != nil {
			t.Fatalf("Box: %v", err)
		}
		wantH := make([]int, 24)
		wantH[23] = 2
		wantD := []int{0, 0, 0, 1, 0, 0, 2}
		wantOpened := make([]int, 24)
		wantOpened[23] = 1
		if !slices.Equal(box.Activity, wantH) || !slices.Equal(box.Daily, wantD) || !slices.Equal(box.Requests.Opened, wantOpened) ||
			sum(box.RequestsWeek.Opened) != 1 || box.Truncated {
			t.Errorf("charts = hourly %v, daily %v, opened %v (week %v), truncated %v; want %v, %v, %v, 1 in the week, not truncated",
				box.Activity, box.Daily, box.Requests.Opened, box.RequestsWeek.Opened, box.Truncated, wantH, wantD, wantOpened)
		}
		if len(box.Rooms) != 1 || !box.Rooms[0].LastMessage.Equal(last) {
			t.Errorf("rooms = %+v; want plan's last message at %v", box.Rooms, last)
		}
		for _, a := range box.Agents {
			want := map[string]time.Time{f.Alice.AgentID: last, f.Bob.AgentID: last.Add(-time.Minute)}[a.ID]
			if !a.LastMessage.Equal(want) {
				t.Errorf("%s last message %v, want %v", a.Name, a.LastMessage, want)
			}
		}
	})
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestBoardDetails: the board shows each request's latest declaration's
// first words and its message's (DMs too), marks open requests older than
// ViewStaleAfter, filters by recipient, sender and room (another box's
// agent or room is NOT_FOUND_OR_FORBIDDEN), and the box page's attention
// panel lists the needs_context request, the oldest open one, the agents
// with unread rows longest first (whether each was ever shown its oldest
// unread row), and a deactivated agent with open requests.
func TestBoardDetails(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		carol := f.MustAgent(f.Box, "carol")
		room := f.MustRoom(f.Box, "plan", f.Alice, f.Bob, carol)
		ca, cb := f.Prime(f.Alice), f.Prime(f.Bob)
		old := f.MustSend(ca, "old", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "ancient ask",
			Requests: []string{carol.AgentID}, Mentions: []string{carol.AgentID}})
		f.Clock.Advance(opview.ViewStaleAfter + time.Minute)
		dm := f.MustSend(cb, "dm", hub.MessageSendInput{Destination: hubtest.ToDM(f.Alice.AgentID), BodyMD: "dm ask\nmore",
			Requests: []string{f.Alice.AgentID}})
		if _, err := f.Hub.RequestRespond(f.Ctx, ca, hub.RequestRespondInput{Mutation: hub.Mutation{IdempotencyKey: "nc"},
			RequestMessageID: dm.MessageID, Status: hub.StatusNeedsContext, BodyMD: "which numbers, Q3 or Q4?"}); err != nil {
			t.Fatalf("needs_context: %v", err)
		}
		fresh := f.MustSend(ca, "fresh", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "fresh ask",
			Requests: []string{f.Bob.AgentID}, Mentions: []string{f.Bob.AgentID}})
		ibListAll(f, ca, "") // alice is shown her rows; carol never reads hers
		if _, err := f.Admin.DeactivateAgent(f.Ctx, carol.AgentID); err != nil {
			t.Fatalf("DeactivateAgent: %v", err)
		}
		v := ownerView(t, f, f.Box)
		b, err := v.Requests(f.Ctx, opview.BoardFilter{})
		if err != nil {
			t.Fatalf("Requests: %v", err)
		}
		got := map[string]opview.ViewRequest{}
		for _, r := range b.Requests {
			got[r.MessageID] = r
		}
		if r := got[dm.MessageID]; !r.DM || r.Summary != "dm ask" || r.Declaration != "which numbers, Q3 or Q4?" || r.Status != hub.StatusNeedsContext || r.Stale {
			t.Errorf("DM request = %+v; want its excerpt, the needs_context text, not stale", r)
		}
		if r := got[old.MessageID]; !r.Stale || r.Summary != "ancient ask" {
			t.Errorf("old open request = %+v; want stale", r)
		}
		if r := got[fresh.MessageID]; r.Stale || r.Declaration != "" {
			t.Errorf("fresh open request = %+v; want not stale, no declaration", r)
		}
		ids := func(f opview.BoardFilter) []string {
			t.Helper()
			b, err := v.Requests(t.Context(), f)
			if err != nil {
				t.Fatalf("Requests(%+v): %v", f, err)
			}
			out := pluck(b.Requests, func(r opview.ViewRequest) string { return r.MessageID })
			slices.Sort(out)
			return out
		}
		sorted := func(s ...string) []string { slices.Sort(s); return s }
		for name, c := range map[string]struct {
			f    opview.BoardFilter
			want []string
		}{
			"to alice":   {opview.BoardFilter{To: f.Alice.AgentID}, sorted(dm.MessageID)},
			"from alice": {opview.BoardFilter{From: f.Alice.AgentID}, sorted(old.MessageID, fresh.MessageID)},
			"room plan":  {opview.BoardFilter{Room: room.RoomID}, sorted(old.MessageID, fresh.MessageID)},
		} {
			if g := ids(c.f); !slices.Equal(g, c.want) {
				t.Errorf("board filtered %s = %v, want %v", name, g, c.want)
			}
		}
		other := f.MustRoom(f.OtherBox, "theirs", f.Mallory)
		for name, bf := range map[string]opview.BoardFilter{"to": {To: f.Mallory.AgentID}, "from": {From: f.Mallory.AgentID},
			"room": {Room: other.RoomID}, "bad id": {To: "x"}} {
			_, err := v.Requests(f.Ctx, bf)
			wantCode(t, "Requests(another box's "+name+")", err, "NOT_FOUND_OR_FORBIDDEN")
		}

		box, err := v.Box(f.Ctx, opview.BoxCursors{})
		if err != nil {
			t.Fatalf("Box: %v", err)
		}
		at := box.Attention
		if len(at.NeedsContext) != 1 || at.NeedsContext[0].MessageID != dm.MessageID || at.NeedsContext[0].Declaration == "" {
			t.Errorf("attention needs_context = %+v, want the DM request with its text", at.NeedsContext)
		}
		if at.OldestOpen == nil || at.OldestOpen.MessageID != old.MessageID {
			t.Errorf("attention oldest open = %+v, want the old request", at.OldestOpen)
		}
		if len(at.Unread) < 2 || at.Unread[0].ID != carol.AgentID {
			t.Errorf("attention unread = %+v, want carol (unread longest) first", pluck(at.Unread, func(a opview.ViewAgent) string { return a.Name }))
		}
		for _, a := range at.Unread {
			if shown := !a.OldestUnreadShown.IsZero(); shown != (a.ID == f.Alice.AgentID) {
				t.Errorf("attention: %s's oldest unread row shown %v, want shown only for alice", a.Name, shown)
			}
		}
		if len(at.Deactivated) != 1 || at.Deactivated[0].ID != carol.AgentID {
			t.Errorf("attention deactivated = %+v, want carol", at.Deactivated)
		}
	})
}

// TestBacklogAndFiles: backlog rows say from whom, where and the first
// words; the files page lists every file reference with its versioning
// and its access reports; the message page shows one message of the box
// and refuses another box's.
func TestBacklogAndFiles(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.MustRoom(f.Box, "plan", f.Alice, f.Bob)
		ca, cb := f.Prime(f.Alice), f.Prime(f.Bob)
		sha := strings.Repeat("ab", 32)
		sent := f.MustSend(ca, "files", hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "notes attached\nbelow",
			Mentions: []string{f.Bob.AgentID}, Files: []hub.FileRefInput{
				{URL: "https://example.com/a.md", DisplayName: "a.md", SHA256: sha},
				{URL: "https://example.com/b.md", DisplayName: "b.md"}}})
		f.MustSend(ca, "dm", hub.MessageSendInput{Destination: hubtest.ToDM(f.Bob.AgentID), BodyMD: "psst"})
		got, err := f.Hub.MessageGet(f.Ctx, cb, hub.MessageGetInput{MessageID: sent.MessageID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Hub.FileAccessReport(f.Ctx, cb, hub.FileAccessReportInput{Mutation: hub.Mutation{IdempotencyKey: "rep"},
			MessageID: sent.MessageID, FileID: got.Message.Files[0].FileID, State: "denied", Note: "403 from the host"}); err != nil {
			t.Fatalf("FileAccessReport: %v", err)
		}
		v := ownerView(t, f, f.Box)
		page, err := v.Agent(f.Ctx, f.Bob.AgentID, opview.AgentCursors{})
		if err != nil {
			t.Fatalf("Agent: %v", err)
		}
		rows := map[string]opview.ViewInboxRow{}
		for _, r := range page.Backlog {
			rows[r.Excerpt] = r
		}
		if r := rows["notes attached"]; r.FromName != "alice" || r.RoomName != "plan" || r.MessageID != sent.MessageID {
			t.Errorf("room row = %+v; want from alice in plan", r)
		}
		if r := rows["psst"]; r.FromName != "alice" || !r.DM || r.PeerName != "alice" {
			t.Errorf("DM row = %+v; want from alice, DM with alice", r)
		}

		files, err := v.Files(f.Ctx, "")
		if err != nil {
			t.Fatalf("Files: %v", err)
		}
		if len(files.Files) != 2 {
			t.Fatalf("Files = %+v, want 2 references", files.Files)
		}
		a, b := files.Files[0], files.Files[1]
		if a.Label != "a.md" || a.SHA256 != sha || !a.Versioned() || a.RoomName != "plan" || a.AuthorName != "alice" ||
			len(a.Reports) != 1 || a.Reports[0].AgentName != "bob" || a.Reports[0].State != "denied" || a.Reports[0].Note != "403 from the host" {
			t.Errorf("a.md = %+v; want its sha256 and bob's denied report", a)
		}
		if b.Label != "b.md" || b.Versioned() || len(b.Reports) != 0 {
			t.Errorf("b.md = %+v; want unversioned, no report", b)
		}

		m, err := v.Message(f.Ctx, sent.MessageID)
		if err != nil || m.ID != sent.MessageID || m.Where.RoomName != "plan" || len(m.Files) != 2 || len(m.Files[0].Reports) != 1 {
			t.Errorf("Message = %+v, %v; want the message in plan with its files and report", m, err)
		}
		_, err = ownerView(t, f, f.OtherBox).Message(f.Ctx, sent.MessageID)
		wantCode(t, "Message(another box's)", err, "NOT_FOUND_OR_FORBIDDEN")
		_, err = v.Message(f.Ctx, "not-an-id")
		wantCode(t, "Message(bad id)", err, "NOT_FOUND_OR_FORBIDDEN")
	})
}

// boundedReads records what every read of the store asks for: a Query
// without a limit, or with one past ViewChartEntries+1, and a BatchGet of
// more than store.MaxBatchGetKeys keys are unbounded.
type boundedReads struct {
	store.Store
	mu        sync.Mutex
	calls     int
	unbounded []string
}

func (b *boundedReads) note(bad bool, what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if bad {
		b.unbounded = append(b.unbounded, what)
	}
}

func (b *boundedReads) reset() (int, []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, u := b.calls, b.unbounded
	b.calls, b.unbounded = 0, nil
	return n, u
}

func (b *boundedReads) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	b.note(q.Limit <= 0 || q.Limit > opview.ViewChartEntries+1, fmt.Sprintf("Query %s limit %d", q.PK, q.Limit))
	return b.Store.Query(ctx, q)
}

func (b *boundedReads) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	b.note(len(keys) > store.MaxBatchGetKeys, fmt.Sprintf("BatchGet of %d keys", len(keys)))
	return b.Store.BatchGet(ctx, keys)
}

func (b *boundedReads) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	b.note(false, "")
	return b.Store.Get(ctx, k)
}

// TestPagesReadBounded renders every page of the read model on a box with
// more messages, requests and files than a page holds: every Query has a
// limit, every BatchGet at most store.MaxBatchGetKeys keys, and a page
// makes at most maxCalls store calls (the files page one Query more per
// message with files on its page), so no page's reads grow with the
// box's history. One read is exempt: the box page's webhook panel lists
// the deployment's webhook partition through the admin plane
// (hub.Admin.ListWebhooks), which reads it whole.
func TestPagesReadBounded(t *testing.T) {
	const maxCalls = 30
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var rec *boundedReads
		f := newFixture(t, ad, func(s store.Store) store.Store { rec = &boundedReads{Store: s}; return rec })
		room := f.MustRoom(f.Box, "plan", f.Alice, f.Bob)
		ca, cb := f.Prime(f.Alice), f.Prime(f.Bob)
		var last *hub.MessageSendOutput
		for i := range opview.ViewPageSize + 5 {
			last = f.MustSend(ca, fmt.Sprintf("r%d", i), hub.MessageSendInput{Destination: hubtest.ToRoom(room.RoomID), BodyMD: "ask",
				Requests: []string{f.Bob.AgentID}, Mentions: []string{f.Bob.AgentID},
				Files: []hub.FileRefInput{{URL: "https://example.com/f.md", DisplayName: "f.md"}}})
			f.MustSend(cb, fmt.Sprintf("d%d", i), hub.MessageSendInput{Destination: hubtest.ToDM(f.Alice.AgentID), BodyMD: "dm"})
		}
		v := ownerView(t, f, f.Box)
		pages := map[string]func() error{
			"box":        func() error { _, err := v.Box(f.Ctx, opview.BoxCursors{}); return err },
			"activity":   func() error { _, err := v.Activity(f.Ctx, ""); return err },
			"files":      func() error { _, err := v.Files(f.Ctx, ""); return err },
			"board":      func() error { _, err := v.Requests(f.Ctx, opview.BoardFilter{}); return err },
			"board to":   func() error { _, err := v.Requests(f.Ctx, opview.BoardFilter{To: f.Bob.AgentID}); return err },
			"board from": func() error { _, err := v.Requests(f.Ctx, opview.BoardFilter{From: f.Alice.AgentID}); return err },
			"board room": func() error { _, err := v.Requests(f.Ctx, opview.BoardFilter{Room: room.RoomID}); return err },
			"room":       func() error { _, err := v.Room(f.Ctx, room.RoomID, opview.RoomCursors{}); return err },
			"agent":      func() error { _, err := v.Agent(f.Ctx, f.Bob.AgentID, opview.AgentCursors{AllRows: true}); return err },
			"dm":         func() error { _, err := v.DM(f.Ctx, f.Alice.AgentID, f.Bob.AgentID, ""); return err },
			"message":    func() error { _, err := v.Message(f.Ctx, last.MessageID); return err },
		}
		for name, read := range pages {
			rec.reset()
			if err := read(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			n, unbounded := rec.reset()
			unbounded = slices.DeleteFunc(unbounded, func(s string) bool { return name == "box" && s == "Query "+table.WebhookPartition+" limit 0" })
			bound := maxCalls
			if name == "files" {
				bound += opview.ViewPageSize
			}
			if len(unbounded) > 0 || n > bound {
				t.Errorf("%s page: %d store calls, unbounded reads %q; want at most %d calls, all bounded", name, n, unbounded, bound)
			}
		}
	})
}

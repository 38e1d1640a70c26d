package opview

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
)

// What happened lately (issue 26): the activity feed, the box page's
// charts and last-message times, the files page and the message page all
// read the box's activity index (GSI2 box#B#activity, table.BoxActivityIndex:
// every message pointer of the box, rooms and DMs, by send time), newest
// first, so each is one bounded Query however many rooms and DM pairs the
// box has, plus BatchGets by key of what the entries point at.
//
// Bounds: the feed reads ViewPageSize entries a page; the charts and the agents' "last message" read at most
// ViewChartEntries entries of the last 7 days (a busier box's charts count
// its newest ViewChartEntries messages and say so). The files page reads
// ViewPageSize entries a page and one Query of reports per message with
// files among them.

// ViewChartEntries bounds the charts' read of the activity index.
const ViewChartEntries = 1000

// agentInactive is a deactivated agent's stored status (hub
// admin_status.go).
const agentInactive = "inactive"

// ViewEvent is one message of the activity feed.
type ViewEvent struct {
	MessageID, AuthorID, AuthorName string
	// Operator marks a message of the box's operator (author_kind), whose
	// id names no agent page.
	Operator bool
	// Where: a room (RoomID, RoomName) or a DM (DM, the pair's ids and
	// names, author first).
	RoomID, RoomName string
	DM               bool
	PeerID, PeerName string
	Excerpt          string
	SentAt           time.Time
	Requests         int
	Reply            bool
}

// ViewActivity is a page of the activity feed, newest first.
type ViewActivity struct {
	Events []ViewEvent
	// Next is the cursor of the older page ("" at the end); Paged says
	// this is not the first.
	Next  string
	Paged bool
}

// Activity reads a page of the box's activity feed (at: its cursor):
// ViewPageSize messages, newest first — one Query, one BatchGet of the
// messages and one of the rooms' and DM peers' names.
func (v *Model) Activity(ctx context.Context, at string) (*ViewActivity, error) {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI2, PK: table.BoxActivityIndex(v.box), Reverse: true}, "activity", at, ViewPageSize)
	if err != nil {
		return nil, err
	}
	msgs, err := v.pointed(ctx, items)
	if err != nil {
		return nil, err
	}
	events, err := v.events(ctx, msgs)
	if err != nil {
		return nil, err
	}
	return &ViewActivity{Events: events, Next: next, Paged: at != ""}, nil
}

// pointed reads the messages the pointers items (of the activity index)
// point at, in their order, by key: one BatchGet. A message that is gone
// or does not decode is left out.
func (v *Model) pointed(ctx context.Context, items []*store.Item) ([]*table.Message, error) {
	var keys []store.Key
	for _, it := range items {
		p, err := table.Decode[table.Pointer](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		if k, ok := streamMsgKey(p.Stream, p.Seq); ok {
			keys = append(keys, k)
		}
	}
	got, err := v.batch(ctx, keys)
	if err != nil {
		return nil, err
	}
	var out []*table.Message
	for _, it := range got {
		if it == nil {
			continue
		}
		if m, err := table.Decode[table.Message](it); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// streamMsgKey is the key of message seq of the stream a pointer or an
// attention row names; false when the stream id does not parse.
func streamMsgKey(stream string, seq uint64) (store.Key, bool) {
	room, pair, ok := hub.ParseStreamID(stream)
	pk := table.DMStreamPK(pair[0], pair[1])
	if room != "" {
		pk = table.RoomStreamPK(room)
	}
	return table.StreamMsgKey(pk, seq), ok
}

// events describes msgs for the feed, naming their rooms and DM peers (one
// BatchGet of at most 2 × len(msgs) keys).
func (v *Model) events(ctx context.Context, msgs []*table.Message) ([]ViewEvent, error) {
	names := map[string]string{}
	var agents, rooms []string
	for _, m := range msgs {
		names[m.AuthorID] = m.AuthorName
		if m.RoomID != "" {
			rooms = append(rooms, m.RoomID)
		} else {
			agents = append(agents, m.Recipient)
		}
	}
	if err := v.name(ctx, names, agents, rooms); err != nil {
		return nil, err
	}
	out := make([]ViewEvent, len(msgs))
	for i, m := range msgs {
		out[i] = ViewEvent{MessageID: m.ID, AuthorID: m.AuthorID, AuthorName: m.AuthorName, Excerpt: summary(m.BodyMD),
			SentAt: m.SentAt, Requests: len(m.Requests), Reply: m.ReplyTo != "", Operator: m.AuthorKind == hub.AuthorOperator}
		if m.RoomID != "" {
			out[i].RoomID, out[i].RoomName = m.RoomID, cmp.Or(names[m.RoomID], m.RoomID)
		} else {
			out[i].DM, out[i].PeerID, out[i].PeerName = true, m.Recipient, cmp.Or(names[m.Recipient], m.Recipient)
		}
	}
	return out, nil
}

// name adds to names the agents and rooms it lacks, read by key (at most
// store.MaxBatchGetKeys of them; the rest show as ids). Only records of
// the view's box are named.
func (v *Model) name(ctx context.Context, names map[string]string, agents, rooms []string) error {
	var keys []store.Key
	if _, ok := names[v.box]; !ok {
		names[v.box] = hub.OperatorName // the box's operator (compose.go) has the box's id
	}
	want := func(id string, k store.Key) {
		if _, ok := names[id]; !ok && id != "" && len(keys) < store.MaxBatchGetKeys {
			names[id] = ""
			keys = append(keys, k)
		}
	}
	for _, a := range agents {
		want(a, table.AgentKey(a))
	}
	for _, r := range rooms {
		want(r, table.RoomKey(r))
	}
	got, err := v.batch(ctx, keys)
	if err != nil {
		return err
	}
	for _, it := range got {
		// Agents and rooms both carry id, name and box.
		if it == nil {
			continue
		}
		if r, err := table.Decode[struct {
			ID    string `json:"id"`
			Name  string `json:"name"`
			BoxID string `json:"box_id"`
		}](it); err == nil && r.BoxID == v.box {
			names[r.ID] = r.Name
		}
	}
	return nil
}

// entry is one message as the charts count it: from an activity index
// entry (the box page) or a timeline's message (room and DM pages).
type entry struct {
	id, author, stream, replyTo string
	at                          time.Time
	requests                    int
}

// Charts are a page's activity charts: messages and requests opened and
// answered per hour over the last 24 hours and per day over the last 7,
// oldest first. Truncated says the box page counted only its newest
// ViewChartEntries messages of the 7 days.
type Charts struct {
	Activity, Daily        []int
	Requests, RequestsWeek RequestActivity
	Truncated              bool
	// Now is the end of the charts' last bucket, for their labels.
	Now time.Time
}

// recentEntries reads the box's activity index over the 7 days before
// now, newest first, at most ViewChartEntries entries: one Query.
func (v *Model) recentEntries(ctx context.Context, now time.Time) ([]entry, bool, error) {
	items, err := v.st.Query(ctx, store.Query{Index: store.GSI2, PK: table.BoxActivityIndex(v.box),
		From: table.ActivitySortKey(now.Add(-7*24*time.Hour).UnixNano(), ""), Reverse: true, Limit: ViewChartEntries})
	if err != nil {
		return nil, false, err
	}
	out := make([]entry, 0, len(items))
	for _, it := range items {
		p, err := table.Decode[table.Pointer](it)
		if err != nil {
			return nil, false, apperr.Normalize(err)
		}
		at, ok := table.ActivityTime(it.GSI2SK)
		if !ok {
			continue
		}
		out = append(out, entry{id: table.MessageIDOfPointer(it.PK), author: p.AuthorID, stream: p.Stream, replyTo: p.ReplyTo,
			at: at, requests: len(p.Requests)})
	}
	return out, len(items) == ViewChartEntries, nil
}

func entriesOf(msgs []viewMessage) []entry {
	out := make([]entry, len(msgs))
	for i, m := range msgs {
		out[i] = entry{id: m.rec.ID, author: m.rec.AuthorID, stream: m.rec.Stream, replyTo: m.rec.ReplyTo, at: m.rec.SentAt,
			requests: len(m.rec.Requests)}
	}
	return out
}

// bucket places t among n buckets of width w ending at now, oldest first.
func bucket(now, t time.Time, w time.Duration, n int) (int, bool) {
	age := now.Sub(t)
	if age < 0 || age >= time.Duration(n)*w {
		return 0, false
	}
	return n - 1 - int(age/w), true
}

// charts counts es into a page's charts.
//
// Opened counts each (message, requested recipient) pair at its message's
// send time. Answered counts a request at the time of its current
// declaration when that declaration is result_ready or declined: every
// declaration posts one canonical reply (request_respond), so the
// candidates are the replies among es, and each is confirmed by its
// request record (keyed by the replied message and the reply's author:
// current status, and the record's response id is that reply), so a
// correction counts once, at its own time, and a reply that declares
// nothing counts never. The confirmation is one BatchGet of at most
// store.MaxBatchGetKeys request items (the newest candidates).
func (v *Model) charts(ctx context.Context, es []entry, now time.Time) (Charts, error) {
	const hour, day = time.Hour, 24 * time.Hour
	c := Charts{Now: now, Activity: make([]int, 24), Daily: make([]int, 7),
		Requests:     RequestActivity{Opened: make([]int, 24), Answered: make([]int, 24)},
		RequestsWeek: RequestActivity{Opened: make([]int, 7), Answered: make([]int, 7)}}
	var candidates []entry
	for _, e := range es {
		if i, ok := bucket(now, e.at, hour, 24); ok {
			c.Activity[i]++
			c.Requests.Opened[i] += e.requests
		}
		if i, ok := bucket(now, e.at, day, 7); ok {
			c.Daily[i]++
			c.RequestsWeek.Opened[i] += e.requests
			if e.replyTo != "" {
				candidates = append(candidates, e)
			}
		}
	}
	if len(candidates) == 0 {
		return c, nil
	}
	slices.SortFunc(candidates, func(a, b entry) int { return b.at.Compare(a.at) })
	candidates = candidates[:min(len(candidates), store.MaxBatchGetKeys)]
	keys := make([]store.Key, len(candidates))
	for i, e := range candidates {
		keys[i] = table.RequestKey(e.replyTo, e.author)
	}
	got, err := v.st.BatchGet(ctx, keys)
	if err != nil {
		return c, err
	}
	for i, it := range got {
		if it == nil {
			continue
		}
		r, err := table.Decode[table.Request](it)
		if err != nil || r.ResponseID != candidates[i].id || !answered(r.Status) {
			continue
		}
		if h, ok := bucket(now, r.DeclaredAt, hour, 24); ok {
			c.Requests.Answered[h]++
		}
		if d, ok := bucket(now, r.DeclaredAt, day, 7); ok {
			c.RequestsWeek.Answered[d]++
		}
	}
	return c, nil
}

// ViewFileRef is one file reference of a message, with its access
// reports.
type ViewFileRef struct {
	MessageID             string
	AuthorID, AuthorName  string
	Operator              bool // as in ViewEvent
	RoomID, RoomName      string
	DM                    bool
	PeerID, PeerName      string
	SentAt                time.Time
	Label, URL, MediaType string
	VersionLabel, SHA256  string
	Commit                string
	Reports               []ViewFileReport
	ReportsTruncated      bool
}

// Versioned says whether the reference pins a version.
func (f ViewFileRef) Versioned() bool {
	return f.VersionLabel != "" || f.SHA256 != "" || f.Commit != ""
}

// ViewFileReport is an agent's report of its access to a file.
type ViewFileReport struct {
	AgentID, AgentName, State, Note string
	At                              time.Time
}

// ViewFiles is a page of the files page: the file references of the box's
// ViewPageSize messages of one page of the activity index, newest first.
type ViewFiles struct {
	Files []ViewFileRef
	// Next is the cursor of the older messages' page ("" at the end).
	Next  string
	Paged bool
}

// ViewReportsPerMessage bounds the reports read of one message's files.
const ViewReportsPerMessage = 100

// Files reads a page of the files page (at: its cursor): the file
// references of ViewPageSize messages of the activity index, newest
// first (a page may list none and still have a next), and each message's
// access reports (one Query of at most
// ViewReportsPerMessage reports per message with files, eight at a time),
// with the rooms', peers' and reporters' names (one BatchGet).
func (v *Model) Files(ctx context.Context, at string) (*ViewFiles, error) {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI2, PK: table.BoxActivityIndex(v.box), Reverse: true}, "files", at, ViewPageSize)
	if err != nil {
		return nil, err
	}
	msgs, err := v.pointed(ctx, items)
	if err != nil {
		return nil, err
	}
	var with []*table.Message
	for _, m := range msgs {
		if len(m.Files) > 0 {
			with = append(with, m)
		}
	}
	refs, err := v.fileRefs(ctx, with)
	if err != nil {
		return nil, err
	}
	return &ViewFiles{Files: refs, Next: next, Paged: at != ""}, nil
}

// fileRefs lists the files of msgs with their reports and names.
func (v *Model) fileRefs(ctx context.Context, msgs []*table.Message) ([]ViewFileRef, error) {
	reports := make([][]*store.Item, len(msgs))
	err := eachLimit(ctx, len(msgs), func(ctx context.Context, i int) error {
		pk, prefix := table.FileReportPrefix(msgs[i].ID, "")
		items, err := v.st.Query(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix), Limit: ViewReportsPerMessage + 1})
		reports[i] = items
		return err
	})
	if err != nil {
		return nil, err
	}
	events, err := v.events(ctx, msgs)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	var reporters []string
	for _, items := range reports {
		for _, it := range items {
			if r, err := table.Decode[table.FileReport](it); err == nil {
				reporters = append(reporters, r.AgentID)
			}
		}
	}
	if err := v.name(ctx, names, reporters, nil); err != nil {
		return nil, err
	}
	var out []ViewFileRef
	for i, m := range msgs {
		ev := events[i]
		items := reports[i]
		truncated := len(items) > ViewReportsPerMessage
		items = items[:min(len(items), ViewReportsPerMessage)]
		for _, f := range m.Files {
			ref := ViewFileRef{MessageID: m.ID, AuthorID: m.AuthorID, AuthorName: m.AuthorName, Operator: ev.Operator, RoomID: ev.RoomID, RoomName: ev.RoomName, DM: ev.DM,
				PeerID: ev.PeerID, PeerName: ev.PeerName, SentAt: m.SentAt, Label: f.DisplayName, URL: f.URL, MediaType: f.MediaType,
				VersionLabel: f.VersionLabel, SHA256: f.SHA256, Commit: f.Commit, ReportsTruncated: truncated}
			for _, it := range items {
				r, err := table.Decode[table.FileReport](it)
				if err != nil || r.FileID != f.ID {
					continue
				}
				ref.Reports = append(ref.Reports, ViewFileReport{AgentID: r.AgentID, AgentName: cmp.Or(names[r.AgentID], r.AgentID),
					State: r.State, Note: r.Note, At: r.At})
			}
			out = append(out, ref)
		}
	}
	return out, nil
}

// ViewMessagePage is one message's page: the message with its requests'
// declarations, where it was sent, and its files' access reports.
type ViewMessagePage struct {
	ViewMessage
	Where ViewEvent
	Files []ViewFileRef
}

// Message reads one message of the box by id: its pointer and the message
// by key, the requests' declarations, the room's or peer's name, and its
// files' reports.
func (v *Model) Message(ctx context.Context, id string) (*ViewMessagePage, error) {
	if !isUUID(id) {
		return nil, apperr.Forbidden()
	}
	it, err := v.st.Get(ctx, table.MessagePointerKey(id))
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, apperr.Forbidden()
	}
	msgs, err := v.pointed(ctx, []*store.Item{it})
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, apperr.Forbidden()
	}
	m := msgs[0]
	// The message is the box's when its room, or its author, is.
	owner := table.AgentKey(m.AuthorID)
	if m.RoomID != "" {
		owner = table.RoomKey(m.RoomID)
	}
	ot, err := v.st.Get(ctx, owner)
	if err != nil {
		return nil, err
	}
	if _, err := ofBox(v, ot, func(r *struct {
		BoxID string `json:"box_id"`
	}) string {
		return r.BoxID
	}); err != nil {
		return nil, err
	}
	names := map[string]string{}
	vm := []viewMessage{{rec: m, room: m.RoomID}}
	if err := v.name(ctx, names, m.Requests, nil); err != nil {
		return nil, err
	}
	if err := v.declarations(ctx, vm, names); err != nil {
		return nil, err
	}
	out := &ViewMessagePage{ViewMessage: toViewMessage(m)}
	out.Declarations = vm[0].decls
	if out.Files, err = v.fileRefs(ctx, msgs); err != nil {
		return nil, err
	}
	ev, err := v.events(ctx, msgs)
	if err != nil {
		return nil, err
	}
	out.Where = ev[0]
	return out, nil
}

// ViewAttention is the box page's "needs attention" panel: what waits on
// a person.
type ViewAttention struct {
	// NeedsContext are requests whose recipient asks their author for
	// context; OldestOpen is the oldest open request; both among the
	// requests of the box's ViewBoardMessages newest request messages.
	NeedsContext []ViewRequest
	OldestOpen   *ViewRequest
	// Unread are the page's agents with unread rows, the longest unread
	// first (at most ViewAttentionAgents), each with when its oldest
	// unread row was first shown to it (OldestUnreadShown; zero: never).
	Unread []ViewAgent
	// Deactivated are the page's deactivated agents with open requests
	// (to them, or sent by them among those the page counted).
	Deactivated []ViewAgent
}

// ViewAttentionAgents bounds the agents the panel lists as unread.
const ViewAttentionAgents = 5

// attention fills the box page's panel from its agents and one page of the
// box's requests index (as the board's first page reads it).
func (v *Model) attention(ctx context.Context, agents []ViewAgent, names map[string]string) (ViewAttention, error) {
	var out ViewAttention
	reqs, _, err := v.boardPage(ctx, "", names)
	if err != nil {
		return out, err
	}
	for i := range reqs {
		r := reqs[i]
		switch r.Status {
		case hub.StatusNeedsContext:
			out.NeedsContext = append(out.NeedsContext, r)
		case hub.StatusOpen:
			if out.OldestOpen == nil || r.At.Before(out.OldestOpen.At) {
				out.OldestOpen = &reqs[i]
			}
		}
	}
	for _, a := range agents {
		if a.Unread > 0 && !a.OldestUnread.IsZero() {
			out.Unread = append(out.Unread, a)
		}
		if a.Status == agentInactive && a.RequestsIn+a.RequestsOut > 0 {
			out.Deactivated = append(out.Deactivated, a)
		}
	}
	slices.SortStableFunc(out.Unread, func(a, b ViewAgent) int { return a.OldestUnread.Compare(b.OldestUnread) })
	out.Unread = out.Unread[:min(len(out.Unread), ViewAttentionAgents)]
	// Whether each listed agent was ever shown its oldest unread row: its
	// receipts, a Query and a BatchGet per listed agent.
	err = eachLimit(ctx, len(out.Unread), func(ctx context.Context, i int) error {
		a := &out.Unread[i]
		row := []ViewInboxRow{{Seq: a.oldestUnreadSeq}}
		if err := v.receipts(ctx, a.ID, row); err != nil {
			return err
		}
		a.OldestUnreadShown = row[0].ShownAt
		return nil
	})
	return out, err
}

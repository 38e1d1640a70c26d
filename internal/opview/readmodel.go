package opview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
)

// The view's read model (issue 15): what the operator view shows, read
// from the table (internal/hub/table) through an owner key's read scope.
//
// Design note. A Model is bound to the one box its owner key sees
// (hub.OwnerScope); the scope's store has no Write, so nothing here can
// write, and its errors are already the domain's. Every method checks that what it is asked for
// belongs to that box and answers NOT_FOUND_OR_FORBIDDEN otherwise, so an
// id of another box and an id that does not exist look the same. Every read is bounded: a page of agents, rooms, spaces,
// members, inbox rows or requests is at most ViewPageSize items, a room
// timeline at most ViewTimelineSize messages, and the box page's charts
// read at most ViewChartEntries entries of the box's activity index
// (activity.go) — a page never reads more than a fixed number of items
// however large the box grows (TestPagesReadBounded).
//
// Paging. Every list is keyset-paged with the tools' cursors
// (internal/cursor, keyed by the deployment's cursor secret, which the
// scope carries):
// a page reads ViewPageSize+1 entries of its partition, and when the probe
// exists it returns an opaque cursor holding the last entry's sort key,
// bound to the box (in the Agent field, as "owner:<box>") and to the list
// and partition it came from, so a cursor of one list, agent or box is
// CURSOR_INVALID on any other. The view carries cursors in its query
// string; they grant nothing (the owner key is checked on every read).
//
// Requests come from the request records (the hub's requests.go): the
// board pages the box's requests index (GSI1 box#B#requests: the pointers of messages
// that carry requests, newest first) and re-reads every listed request
// item from the table, because the index may lag and only the table holds
// the current declaration (status, revision, time). An agent page pages
// through its own incoming and outgoing index (ViewPageSize a page) the
// same way; a room page reads the request items of the requests on its
// page by key. "Requests in" on the box page is the agent's open-request
// counter (count#requests); "requests out" counts the open requests among
// the page's agents' ViewRequestsPerAgent newest incoming requests.
//
// Panels. Each panel of a page is one reader here (a method that fills
// the page's field), one field of the page's type and one template block
// (templates/pages.html): a new panel adds those three and nothing else.
type Model struct {
	s   *hub.OwnerScope
	st  store.Reader
	box string
}

// View bounds.
const (
	ViewPageSize     = 50
	ViewTimelineSize = 50
	ViewScanMessages = 200
	// ViewRequestsPerAgent bounds the box page's read of each agent's
	// incoming requests: ViewPageSize agents × 20 = store.MaxBatchGetKeys.
	ViewRequestsPerAgent = 20
	// ViewBoardMessages is the board's page of request messages: at most
	// 20 requests each, so a page re-reads at most store.MaxBatchGetKeys
	// request items.
	ViewBoardMessages = 50
	// ViewSessions bounds the sessions whose receipts an agent page reads
	// (ViewPageSize rows × 10 = 500 keys, under store.MaxBatchGetKeys).
	ViewSessions = 10
)

// Open authenticates an owner key (hub.OwnerScope: any failure is
// AUTH_FAILED) and returns the read model of its box.
func Open(ctx context.Context, h *hub.Hub, key string) (*Model, error) {
	s, err := h.OwnerScope(ctx, key)
	if err != nil {
		return nil, err
	}
	return &Model{s: s, st: s.Store, box: s.Box}, nil
}

// BoxID is the box this view sees.
func (v *Model) BoxID() string { return v.box }

// ViewAgent is one agent on the box page.
//
// LastSeen is the newest of: the last use its sessions recorded (the
// session item's LastSeenAt, indexed by GSI1 seen#<agent>, one Query of
// one entry), its checkpoint's save time, and its messages among those the
// page read. A session records its use when it is primed, when its profile
// is refreshed and, after that, when a quarter of the idle window has
// passed since the last record (touch, session.go: 3 h with the default
// 12 h window) — so an agent that only reads is seen to within that
// quarter window, and one that writes messages or checkpoints exactly. An
// ended session's record is deleted, and an expired one's may be: an agent
// with no live session is seen by its writes only.
//
// LastMessage is when the agent last sent a message, among the box's
// ViewChartEntries newest messages of the last 7 days (the activity
// index; zero: none among them).
type ViewAgent struct {
	ID, Name, Role, Status string
	LastSeen               time.Time
	LastMessage            time.Time
	Unread                 int64
	OldestUnread           time.Time
	// OldestUnreadShown is when a session of the agent was first shown its
	// oldest unread row (zero: never, or not read); only the box page's
	// attention panel reads it, for the agents it lists.
	OldestUnreadShown       time.Time
	oldestUnreadSeq         uint64
	RequestsIn, RequestsOut int
}

// ViewRoom is one room on the box page; LastMessage is its stream's last
// message's send time (read by key from its head).
type ViewRoom struct {
	ID, Name    string
	Archived    bool
	Members     int64
	LastMessage time.Time
	Messages    uint64
}

// ViewSpace is one space: a public one on the box page, a private one on
// its members' pages (with Members).
type ViewSpace struct {
	ID, Title, Status string
	Version           uint64
	Members           int64
}

// ViewBox is the box page.
type ViewBox struct {
	BoxID, Name string
	Agents      []ViewAgent
	Rooms       []ViewRoom
	Spaces      []ViewSpace
	// Next* are the cursors of the lists' next pages ("" at the end);
	// Paged says this page is not the first of some list.
	NextAgents, NextRooms, NextSpaces string
	Paged                             bool
	// Charts count the box's messages, rooms and DMs, over the last 24
	// hours and 7 days (activity.go).
	Charts
	// Attention is the "needs attention" panel.
	Attention ViewAttention
	// Webhooks are the box's endpoints and their state (webhooks.go).
	Webhooks []ViewWebhook
}

// viewPos is a list position: the sort key of the last entry shown, in
// the index or table the list reads.
type viewPos struct {
	After string `json:"a"`
}

// position decodes cur, a cursor of list over partition pk ("" = the
// start), into the sort key it holds, with the scope to encode the next.
func (v *Model) position(ctx context.Context, list, pk, cur string) (cursor.Scope, string, error) {
	scope := cursor.Scope{Agent: "owner:" + v.box, Stream: "ui:" + list + ":" + pk, Key: v.s.CursorKey}
	if cur == "" {
		return scope, "", nil
	}
	var pos viewPos
	if err := cursor.Decode(cur, scope, &pos); err != nil {
		return scope, "", err
	}
	if pos.After == "" {
		return scope, "", cursor.Invalid()
	}
	return scope, pos.After, nil
}

// page reads one page of list from q: at most size entries after the
// position cur holds (before it when q.Reverse), and the cursor of the
// next page, "" when there is none.
func (v *Model) page(ctx context.Context, q store.Query, list, cur string, size int) ([]*store.Item, string, error) {
	scope, after, err := v.position(ctx, list, q.PK, cur)
	if err != nil {
		return nil, "", err
	}
	q = table.Resume(q, after)
	q.Limit = size + 1
	items, err := v.st.Query(ctx, q)
	if err != nil {
		return nil, "", err
	}
	if len(items) <= size {
		return items, "", nil
	}
	items = items[:size]
	last := items[size-1]
	sk := last.SK
	switch q.Index {
	case store.GSI1:
		sk = last.GSI1SK
	case store.GSI2:
		sk = last.GSI2SK
	}
	return items, cursor.Encode(scope, viewPos{After: sk}), nil
}

// BoxCursors are the box page's list positions ("" = first page).
type BoxCursors struct{ Agents, Rooms, Spaces string }

// Box reads the box page at the lists' positions at.
func (v *Model) Box(ctx context.Context, at BoxCursors) (*ViewBox, error) {
	it, err := v.st.Get(ctx, table.BoxKey(v.box))
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, apperr.Forbidden()
	}
	b, err := table.Decode[table.Box](it)
	if err != nil {
		return nil, err
	}
	out := &ViewBox{BoxID: v.box, Name: b.Name, Paged: at != BoxCursors{}}
	if err := v.rooms(ctx, out, at.Rooms); err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, r := range out.Rooms {
		names[r.ID] = r.Name
	}
	now := v.s.Now()
	entries, truncated, err := v.recentEntries(ctx, now)
	if err != nil {
		return nil, err
	}
	if err := v.agents(ctx, out, at.Agents, entries, names); err != nil {
		return nil, err
	}
	agentNames := map[string]string{}
	for _, a := range out.Agents {
		agentNames[a.ID] = a.Name
	}
	if out.Webhooks, err = v.webhooks(ctx, agentNames); err != nil {
		return nil, err
	}
	if err := v.spaces(ctx, out, at.Spaces); err != nil {
		return nil, err
	}
	if out.Charts, err = v.charts(ctx, entries, now); err != nil {
		return nil, err
	}
	out.Truncated = truncated
	if out.Attention, err = v.attention(ctx, out.Agents, names); err != nil {
		return nil, err
	}
	return out, nil
}

// rooms reads a page of the box's rooms: their member counters and stream
// heads, then each stream's last message (its time), by key.
func (v *Model) rooms(ctx context.Context, out *ViewBox, cur string) error {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI1, PK: table.BoxRoomsIndex(v.box)}, "rooms", cur, ViewPageSize)
	if err != nil {
		return err
	}
	out.NextRooms = next
	var keys []store.Key
	for _, it := range items {
		r, err := table.Decode[table.Room](it)
		if err != nil {
			return apperr.Normalize(err)
		}
		out.Rooms = append(out.Rooms, ViewRoom{ID: r.ID, Name: r.Name, Archived: r.Archived})
		keys = append(keys, table.MemberCountKey(r.ID), table.RoomHeadKey(r.ID))
	}
	got, err := v.batch(ctx, keys)
	if err != nil {
		return err
	}
	var last []store.Key
	var at []int
	for i := range out.Rooms {
		out.Rooms[i].Members = table.Count(got[2*i])
		if n := table.Version(got[2*i+1]); n > 0 {
			out.Rooms[i].Messages = n
			last, at = append(last, table.StreamMsgKey(table.RoomStreamPK(out.Rooms[i].ID), n)), append(at, i)
		}
	}
	msgs, err := v.batch(ctx, last)
	if err != nil {
		return err
	}
	for j, it := range msgs {
		if it == nil {
			continue
		}
		if m, err := table.Decode[table.Message](it); err == nil {
			out.Rooms[at[j]].LastMessage = m.SentAt
		}
	}
	return nil
}

// viewMessage is a stored message as the view reads it.
type viewMessage struct {
	rec   *table.Message
	room  string
	decls []ViewDeclaration
}

func (v *Model) agents(ctx context.Context, out *ViewBox, cur string, recent []entry, names map[string]string) error {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI1, PK: table.BoxAgentsIndex(v.box)}, "agents", cur, ViewPageSize)
	if err != nil {
		return err
	}
	out.NextAgents = next
	var keys []store.Key
	for _, it := range items {
		a, err := table.Decode[table.Agent](it)
		if err != nil {
			return apperr.Normalize(err)
		}
		out.Agents = append(out.Agents, ViewAgent{ID: a.ID, Name: a.Name, Status: a.Status})
		names[a.ID] = a.Name
		keys = append(keys, table.ProfileKey(a.ID), table.InboxHeadKey(a.ID), table.AckedCounterKey(a.ID), table.CheckpointKey(a.ID),
			table.RequestCounterKey(a.ID))
	}
	got, err := v.st.BatchGet(ctx, keys)
	if err != nil {
		return err
	}
	reqs, err := v.recentIncoming(ctx, out.Agents, names)
	if err != nil {
		return err
	}
	for i := range out.Agents {
		a := &out.Agents[i]
		row := got[5*i : 5*i+5]
		if row[0] != nil {
			if p, err := table.Decode[table.Profile](row[0]); err == nil {
				a.Role = p.Role
			}
		}
		a.Unread = table.Unread(row[1], row[2])
		if row[3] != nil {
			if c, err := table.Decode[table.Checkpoint](row[3]); err == nil {
				a.LastSeen = c.SavedAt
			}
		}
		a.RequestsIn = int(table.Count(row[4]))
		for _, r := range reqs {
			if r.FromID == a.ID && r.Status == hub.StatusOpen {
				a.RequestsOut++
			}
		}
		for _, e := range recent {
			if e.author == a.ID && e.at.After(a.LastMessage) {
				a.LastMessage = e.at
			}
		}
		if a.LastMessage.After(a.LastSeen) {
			a.LastSeen = a.LastMessage
		}
	}
	// A query or two per agent: eight at a time.
	return eachLimit(ctx, len(out.Agents), func(ctx context.Context, i int) error {
		a := &out.Agents[i]
		if err := v.seen(ctx, a); err != nil {
			return err
		}
		if a.Unread == 0 {
			return nil
		}
		var err error
		a.OldestUnread, a.oldestUnreadSeq, err = v.oldestUnread(ctx, a.ID, uint64(table.Count(got[5*i+2])))
		return err
	})
}

// seen moves a.LastSeen to its sessions' last recorded use when later.
func (v *Model) seen(ctx context.Context, a *ViewAgent) error {
	items, err := v.st.Query(ctx, store.Query{Index: store.GSI1, PK: table.SeenIndex(a.ID), Reverse: true, Limit: 1})
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	ns, _, _ := strings.Cut(items[0].GSI1SK, "#")
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return apperr.Normalize(fmt.Errorf("hub: session index key of %s: %w", a.ID, err))
	}
	if t := time.Unix(0, n).UTC(); t.After(a.LastSeen) {
		a.LastSeen = t
	}
	return nil
}

// spaces reads a page of the box's public spaces index (the one place the
// view reads it).
func (v *Model) spaces(ctx context.Context, out *ViewBox, cur string) error {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI1, PK: table.BoxSpacesIndex(v.box)}, "spaces", cur, ViewPageSize)
	if err != nil {
		return err
	}
	out.NextSpaces = next
	for _, it := range items {
		s, err := table.Decode[table.SpaceListing](it)
		if err != nil {
			return apperr.Normalize(err)
		}
		out.Spaces = append(out.Spaces, ViewSpace{ID: s.ID, Title: s.Title, Status: s.Status, Version: it.Version})
	}
	return nil
}

// RequestActivity is requests opened and answered per bucket (hour or
// day), oldest first; activity.go's charts says what counts.
type RequestActivity struct {
	Opened, Answered []int
}

func answered(status string) bool {
	return status == hub.StatusResultReady || status == hub.StatusDeclined
}

// ViewInboxRow is one row of an agent's inbox backlog.
type ViewInboxRow struct {
	Seq       uint64
	MessageID string
	RoomID    string
	DM        bool
	Peer      string // the DM's other agent
	Reasons   []string
	At        time.Time
	// ShownAt is when a session of the agent was first shown the row (its
	// earliest receipt among the agent's ViewSessions most recently used
	// sessions; zero when none of them was).
	ShownAt time.Time
	Acked   bool
	AckedAt time.Time
	// From, where and the first words: the message's author, its room's
	// or DM peer's name and its excerpt (read by key, backlogMessages).
	FromID, FromName, RoomName, PeerName, Excerpt string
	stream                                        string
	streamSeq                                     uint64
}

// backlog reads a page of agent's inbox rows, newest first: the unread
// ones, or every row when all is set. An unread page reads at most
// hub.InboxScanBudget rows (inbox_list's budget) past acknowledged ones; when
// the budget ends a page early, its cursor continues below the last row
// read.
func (v *Model) backlog(ctx context.Context, agent, cur string, all bool) ([]ViewInboxRow, string, error) {
	list := "inbox:unread"
	if all {
		list = "inbox:all"
	}
	pk := table.InboxHeadKey(agent).PK
	scope, after, err := v.position(ctx, list, pk, cur)
	if err != nil {
		return nil, "", err
	}
	to := store.PrefixEnd(table.InboxRowPrefix)
	if after != "" {
		to = store.Before(after)
	}
	var out []ViewInboxRow
	last, scanned, exhausted := "", 0, false
	for len(out) < ViewPageSize && scanned < hub.InboxScanBudget && !exhausted {
		n := min(ViewPageSize+1, hub.InboxScanBudget-scanned)
		items, err := v.st.Query(ctx, store.Query{PK: pk, From: table.InboxRowPrefix, To: to, Reverse: true, Limit: n})
		if err != nil {
			return nil, "", err
		}
		exhausted = len(items) < n
		for _, it := range items {
			if len(out) == ViewPageSize {
				exhausted = false
				break
			}
			scanned++
			last = it.SK
			r, err := table.Decode[table.Attention](it)
			if err != nil {
				return nil, "", apperr.Normalize(err)
			}
			if all || r.AckedBy == "" {
				out = append(out, inboxRow(agent, r))
			}
		}
		to = store.Before(last)
	}
	if exhausted || last == "" {
		return out, "", nil
	}
	return out, cursor.Encode(scope, viewPos{After: last}), nil
}

func inboxRow(agent string, r *table.Attention) ViewInboxRow {
	row := ViewInboxRow{Seq: r.Seq, MessageID: r.MessageID, Reasons: hub.ReasonNames(r.Reasons), At: r.At,
		Acked: r.AckedBy != "", AckedAt: r.AckedAt, stream: r.Stream, streamSeq: r.StreamSeq}
	if room, pair, ok := hub.ParseStreamID(r.Stream); ok {
		row.DM, row.RoomID = room == "", room
		if row.DM {
			row.Peer = pair[0]
			if row.Peer == agent {
				row.Peer = pair[1]
			}
		}
	}
	return row
}

// backlogMessages sets each row's author, place and excerpt: the rows'
// messages by key (one BatchGet of at most ViewPageSize keys) and the
// names of their rooms and peers (one more).
func (v *Model) backlogMessages(ctx context.Context, rows []ViewInboxRow) error {
	var keys []store.Key
	var at []int
	for i, r := range rows {
		if k, ok := streamMsgKey(r.stream, r.streamSeq); ok {
			keys, at = append(keys, k), append(at, i)
		}
	}
	got, err := v.batch(ctx, keys)
	if err != nil {
		return err
	}
	names := map[string]string{}
	var agents, rooms []string
	for j, it := range got {
		if it == nil {
			continue
		}
		m, err := table.Decode[table.Message](it)
		if err != nil {
			continue
		}
		r := &rows[at[j]]
		r.FromID, r.FromName, r.Excerpt = m.AuthorID, m.AuthorName, summary(m.BodyMD)
		names[m.AuthorID] = m.AuthorName
		rooms, agents = append(rooms, r.RoomID), append(agents, r.Peer)
	}
	if err := v.name(ctx, names, agents, rooms); err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		if r.DM {
			r.PeerName = cmp.Or(names[r.Peer], r.Peer)
		} else {
			r.RoomName = cmp.Or(names[r.RoomID], r.RoomID)
		}
	}
	return nil
}

// receipts sets each row's ShownAt from the receipts (ses#S / rcpts,
// receipts.go) of agent's ViewSessions most recently used sessions, found
// on the session index (GSI1 seen#<agent>): one Query and one BatchGet of
// at most ViewSessions keys. Receipts of older, ended or expired sessions
// are not consulted.
func (v *Model) receipts(ctx context.Context, agent string, rows []ViewInboxRow) error {
	if len(rows) == 0 {
		return nil
	}
	sessions, err := v.st.Query(ctx, store.Query{Index: store.GSI1, PK: table.SeenIndex(agent), Reverse: true, Limit: ViewSessions})
	if err != nil {
		return err
	}
	var keys []store.Key
	for _, it := range sessions {
		_, id, _ := strings.Cut(it.GSI1SK, "#")
		keys = append(keys, table.ReceiptsKey(id))
	}
	got, err := v.batch(ctx, keys)
	if err != nil {
		return err
	}
	for _, it := range got {
		shown, err := hub.Receipts(it)
		if err != nil {
			continue
		}
		for i := range rows {
			if at, ok := shown(rows[i].Seq); ok && (rows[i].ShownAt.IsZero() || at.Before(rows[i].ShownAt)) {
				rows[i].ShownAt = at
			}
		}
	}
	return nil
}

// batch reads the items at keys, and nothing, not even a round trip, when
// there are none.
func (v *Model) batch(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	return v.st.BatchGet(ctx, keys)
}

// oldestUnread is the arrival time and sequence of agent's oldest unread row among the
// ViewScanMessages rows up to sequence acked+1 (acked: rows acknowledged).
// Only acked rows are acknowledged, so at least one row up to acked+1 is
// unread: when ACKs go in order, row acked+1 is the oldest unread, and when
// they skip rows, the answer is exact as long as no unread row lies more
// than ViewScanMessages rows below acked+1. One bounded Query.
func (v *Model) oldestUnread(ctx context.Context, agent string, acked uint64) (time.Time, uint64, error) {
	items, err := v.st.Query(ctx, store.Query{PK: table.InboxHeadKey(agent).PK, From: table.InboxRowPrefix, To: table.InboxRowKey(agent, acked+1).SK,
		Reverse: true, Limit: ViewScanMessages})
	if err != nil {
		return time.Time{}, 0, err
	}
	var at time.Time
	var seq uint64
	for _, it := range items {
		r, err := table.Decode[table.Attention](it)
		if err != nil {
			return time.Time{}, 0, apperr.Normalize(err)
		}
		if r.AckedBy == "" {
			at, seq = r.At, r.Seq // newest first: the last one found is the oldest
		}
	}
	return at, seq, nil
}

// ViewAgentPage is the agent page.
type ViewAgentPage struct {
	ViewAgent
	// Backlog is a page of the inbox, newest first: unread rows, or every
	// row when AllRows.
	Backlog            []ViewInboxRow
	AllRows            bool
	CheckpointRevision uint64
	CheckpointAt       time.Time
	RequestsOut        []ViewRequest
	RequestsIn         []ViewRequest
	// PrivateSpaces are the private spaces the agent is a member of; DMs
	// its conversations with the agents of a page of the box's agents.
	PrivateSpaces []ViewSpace
	DMs           []ViewDM
	// Next* are the cursors of the lists' next pages ("" at the end).
	NextInbox, NextIn, NextOut, NextPrivate, NextPeers string
	// Box is the view's box: the operator's side of its DM with the agent
	// (compose.go); CanPost whether the key may post as the operator.
	Box     string
	CanPost bool
}

// ViewDM is one DM conversation on an agent page: metadata only; its
// messages are on the DM page.
type ViewDM struct {
	PeerID, PeerName string
	Messages         uint64
	LastAt           time.Time
	LastAuthor       string
}

// AgentCursors are the agent page's list positions ("" = first page);
// AllRows lists acknowledged inbox rows too.
type AgentCursors struct {
	Inbox, In, Out, Private, Peers string
	AllRows                        bool
}

// ofBox decodes it, a record of the view's box according to boxOf. An
// absent item, one that does not decode and one of another box all answer
// NOT_FOUND_OR_FORBIDDEN: the view tells nothing of other boxes.
func ofBox[T any](v *Model, it *store.Item, boxOf func(*T) string) (*T, error) {
	if it == nil {
		return nil, apperr.Forbidden()
	}
	r, err := table.Decode[T](it)
	if err != nil || boxOf(r) != v.box {
		return nil, apperr.Forbidden()
	}
	return r, nil
}

// Agent reads one agent's page at the lists' positions at.
func (v *Model) Agent(ctx context.Context, agent string, at AgentCursors) (*ViewAgentPage, error) {
	if !isUUID(agent) {
		return nil, apperr.Forbidden()
	}
	got, err := v.st.BatchGet(ctx, []store.Key{table.AgentKey(agent), table.ProfileKey(agent), table.InboxHeadKey(agent),
		table.AckedCounterKey(agent), table.CheckpointKey(agent), table.RequestCounterKey(agent)})
	if err != nil {
		return nil, err
	}
	a, err := ofBox(v, got[0], func(a *table.Agent) string { return a.BoxID })
	if err != nil {
		return nil, err
	}
	out := &ViewAgentPage{ViewAgent: ViewAgent{ID: a.ID, Name: a.Name, Status: a.Status,
		Unread: table.Unread(got[2], got[3])}, Box: v.box, CanPost: v.s.CanPost}
	if got[1] != nil {
		if p, err := table.Decode[table.Profile](got[1]); err == nil {
			out.Role = p.Role
		}
	}
	if got[4] != nil {
		out.CheckpointRevision = got[4].Version
		if c, err := table.Decode[table.Checkpoint](got[4]); err == nil {
			out.CheckpointAt, out.LastSeen = c.SavedAt, c.SavedAt
		}
	}
	if err := v.seen(ctx, &out.ViewAgent); err != nil {
		return nil, err
	}
	out.AllRows = at.AllRows
	if out.Backlog, out.NextInbox, err = v.backlog(ctx, agent, at.Inbox, at.AllRows); err != nil {
		return nil, err
	}
	if err := v.receipts(ctx, agent, out.Backlog); err != nil {
		return nil, err
	}
	if err := v.backlogMessages(ctx, out.Backlog); err != nil {
		return nil, err
	}
	names := map[string]string{a.ID: a.Name}
	if out.RequestsIn, out.NextIn, err = v.requestPage(ctx, store.GSI1, table.IncomingIndex(agent), "in", at.In, names); err != nil {
		return nil, err
	}
	if out.RequestsOut, out.NextOut, err = v.requestPage(ctx, store.GSI2, table.OutgoingIndex(agent), "out", at.Out, names); err != nil {
		return nil, err
	}
	// The open-request counter, as on the box page; requests out are not
	// counted (their open ones are on the list's pages).
	out.ViewAgent.RequestsIn = int(table.Count(got[5]))
	if out.PrivateSpaces, out.NextPrivate, err = v.privateSpaces(ctx, agent, at.Private); err != nil {
		return nil, err
	}
	if out.DMs, out.NextPeers, err = v.dms(ctx, agent, at.Peers); err != nil {
		return nil, err
	}
	return out, nil
}

// privateSpaces reads a page of agent's private spaces: its side of each
// membership, then the spaces and their member counters by key.
func (v *Model) privateSpaces(ctx context.Context, agent, cur string) ([]ViewSpace, string, error) {
	pk, prefix := table.AgentSpacePrefix(agent)
	items, next, err := v.page(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)}, "private", cur, ViewPageSize)
	if err != nil || len(items) == 0 {
		return nil, next, err
	}
	ids := make([]string, len(items))
	members := make([]store.Key, len(items))
	for i, it := range items {
		m, err := table.Decode[table.SpaceMember](it)
		if err != nil {
			return nil, "", apperr.Normalize(err)
		}
		ids[i], members[i] = m.SpaceID, table.SpaceMembersKey(m.SpaceID)
	}
	// The small listing items, not the spaces (goals up to 20 KiB each).
	listings, err := v.s.SpaceListings(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	counts, err := v.st.BatchGet(ctx, members)
	if err != nil {
		return nil, "", err
	}
	var out []ViewSpace
	for i, it := range listings {
		if it == nil {
			continue
		}
		sp, err := table.Decode[table.SpaceListing](it)
		if err != nil || sp.BoxID != v.box || sp.Visibility != visibilityPrivate {
			continue
		}
		out = append(out, ViewSpace{ID: sp.ID, Title: sp.Title, Status: sp.Status, Version: it.Version,
			Members: table.Count(counts[i])})
	}
	return out, next, nil
}

// dms reads agent's DM streams with a page of the box's agents: their
// heads (message count) and last messages (time, author), by key — two
// BatchGets of at most ViewPageSize keys. A DM stream exists only between
// agents of one box.
func (v *Model) dms(ctx context.Context, agent, cur string) ([]ViewDM, string, error) {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI1, PK: table.BoxAgentsIndex(v.box)}, "peers:"+agent, cur, ViewPageSize)
	if err != nil {
		return nil, "", err
	}
	var peers []ViewDM
	var heads []store.Key
	for _, it := range items {
		a, err := table.Decode[table.Agent](it)
		if err != nil {
			return nil, "", apperr.Normalize(err)
		}
		if a.ID != agent {
			peers = append(peers, ViewDM{PeerID: a.ID, PeerName: a.Name})
			heads = append(heads, table.StreamHeadKey(dmPK(agent, a.ID)))
		}
	}
	if len(heads) == 0 {
		return nil, next, nil
	}
	got, err := v.st.BatchGet(ctx, heads)
	if err != nil {
		return nil, "", err
	}
	var out []ViewDM
	var last []store.Key
	for i, it := range got {
		if n := table.Version(it); n > 0 {
			peers[i].Messages = n
			out = append(out, peers[i])
			last = append(last, table.StreamMsgKey(dmPK(agent, peers[i].PeerID), n))
		}
	}
	if len(last) == 0 {
		return nil, next, nil
	}
	msgs, err := v.st.BatchGet(ctx, last)
	if err != nil {
		return nil, "", err
	}
	for i, it := range msgs {
		if it == nil {
			continue
		}
		if m, err := table.Decode[table.Message](it); err == nil {
			out[i].LastAt, out[i].LastAuthor = m.SentAt, m.AuthorName
		}
	}
	return out, next, nil
}

// ViewDMPage is a DM conversation's page: content as for a room.
type ViewDMPage struct {
	A, B ViewMember
	ViewTimeline
	// CanPost is whether the key may post as the operator (compose.go).
	CanPost bool
}

// DM reads the DM conversation of agents a and b, both of the box: up to
// ViewTimelineSize messages older than older (the newest when empty).
func (v *Model) DM(ctx context.Context, a, b, older string) (*ViewDMPage, error) {
	if !isUUID(a) || !isUUID(b) || a == b {
		return nil, apperr.Forbidden()
	}
	got, err := v.st.BatchGet(ctx, []store.Key{table.AgentKey(a), table.AgentKey(b)})
	if err != nil {
		return nil, err
	}
	out := &ViewDMPage{CanPost: v.s.CanPost}
	names := map[string]string{}
	for i, it := range got {
		var m ViewMember
		if id := []string{a, b}[i]; v.isOperator(id) && !v.isOperator([]string{a, b}[1-i]) {
			m = v.operatorMember() // a DM with the box's operator (compose.go)
		} else {
			r, err := ofBox(v, it, func(a *table.Agent) string { return a.BoxID })
			if err != nil {
				return nil, err
			}
			m = ViewMember{ID: r.ID, Name: r.Name}
		}
		names[m.ID] = m.Name
		if i == 0 {
			out.A = m
		} else {
			out.B = m
		}
	}
	if out.ViewTimeline, err = v.timeline(ctx, dmPK(a, b), "", older, names); err != nil {
		return nil, err
	}
	return out, nil
}

// requestPage reads a page of one agent's request index, newest first,
// then the requests themselves (oldest first on the page).
func (v *Model) requestPage(ctx context.Context, index store.Index, partition, list, cur string, names map[string]string) ([]ViewRequest, string, error) {
	entries, next, err := v.page(ctx, store.Query{Index: index, PK: partition, Reverse: true}, list, cur, ViewPageSize)
	if err != nil {
		return nil, "", err
	}
	reqs, err := v.requestsAt(ctx, keysOf(entries), names)
	return reqs, next, err
}

func keysOf(items []*store.Item) []store.Key {
	keys := make([]store.Key, len(items))
	for i, it := range items {
		keys[i] = it.Key()
	}
	return keys
}

// ViewMessage is one message of a room timeline.
type ViewMessage struct {
	ID, AuthorID, AuthorName, BodyMD string
	// Operator marks a message of the box's operator (author_kind).
	Operator            bool
	Seq                 uint64
	SentAt              time.Time
	Mentions, Requests  []string
	ReplyTo, ThreadRoot string
	// Declarations are the requested recipients' current declarations.
	Declarations []ViewDeclaration
	Files        []ViewFile
	// Replies are the thread's replies folded under their root (only on
	// roots within the page).
	Replies []ViewMessage
}

// ViewDeclaration is one requested recipient's current declaration of a
// request: open (revision 0) until it responds.
type ViewDeclaration struct {
	AgentID, AgentName, Status string
	Revision                   uint64
	DeclaredAt                 time.Time
}

// ViewFile is a file reference, shown as text.
type ViewFile struct{ Label, URL string }

// ViewMember is a room member, or a side of a DM; Operator marks the box's
// operator (compose.go).
type ViewMember struct {
	ID, Name, Follow string
	Operator         bool
}

// ViewRoomPage is the room page.
type ViewRoomPage struct {
	ID, Name, BriefMD string
	Archived          bool
	Members           []ViewMember
	// NextMembers is the cursor of the roster's next page ("" at the end).
	NextMembers string
	ViewTimeline
	// CanPost is whether the key may post as the operator (compose.go).
	CanPost bool
}

// RoomCursors are the room page's list positions ("" = first page).
type RoomCursors struct{ Older, Members string }

// Room reads a room page: the brief, a page of the roster (sorted by name
// within the page) and up to
// ViewTimelineSize messages older than at.Older (the newest when empty),
// with replies folded under their thread roots.
func (v *Model) Room(ctx context.Context, room string, at RoomCursors) (*ViewRoomPage, error) {
	if !isUUID(room) {
		return nil, apperr.Forbidden()
	}
	got, err := v.st.BatchGet(ctx, []store.Key{table.RoomKey(room), table.BriefKey(room)})
	if err != nil {
		return nil, err
	}
	r, err := ofBox(v, got[0], func(r *table.Room) string { return r.BoxID })
	if err != nil {
		return nil, err
	}
	out := &ViewRoomPage{ID: r.ID, Name: r.Name, Archived: r.Archived, CanPost: v.s.CanPost}
	if got[1] != nil {
		if b, err := table.Decode[table.Brief](got[1]); err == nil {
			out.BriefMD = b.TextMD
		}
	}
	pk, prefix := table.RosterPrefix(room)
	members, next, err := v.page(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)}, "members", at.Members, ViewPageSize)
	if err != nil {
		return nil, err
	}
	out.NextMembers = next
	for _, it := range members {
		m, err := table.Decode[table.RoomMember](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		out.Members = append(out.Members, ViewMember{ID: m.AgentID, Name: m.AgentName, Follow: m.Follow})
	}
	// The roster pages by agent id; a page shows its members by name.
	slices.SortStableFunc(out.Members, func(a, b ViewMember) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	})
	names := map[string]string{}
	for _, m := range out.Members {
		names[m.ID] = m.Name
	}
	if out.ViewTimeline, err = v.timeline(ctx, table.RoomStreamPK(room), room, at.Older, names); err != nil {
		return nil, err
	}
	return out, nil
}

// ViewTimeline is a page of a room's or DM's messages, newest first (a
// thread's replies under their root, oldest first), with its charts.
type ViewTimeline struct {
	Timeline []ViewMessage
	// Older is the cursor of the older messages' page ("" at the start).
	Older string
	// Charts count the page's messages.
	Charts
}

// timeline reads up to ViewTimelineSize messages of the stream in
// partition pk (of room; "" for a DM) older than the
// position cur holds (the newest when empty), their requests'
// declarations, and folds replies under their thread roots.
func (v *Model) timeline(ctx context.Context, pk, room, cur string, names map[string]string) (ViewTimeline, error) {
	var out ViewTimeline
	items, older, err := v.page(ctx, store.Query{PK: pk, From: table.StreamMsgPrefix, To: store.PrefixEnd(table.StreamMsgPrefix), Reverse: true},
		"timeline", cur, ViewTimelineSize)
	if err != nil {
		return out, err
	}
	out.Older = older
	var msgs []viewMessage
	for _, it := range items {
		m, err := table.Decode[table.Message](it)
		if err != nil {
			return out, apperr.Normalize(err)
		}
		msgs = append(msgs, viewMessage{rec: m, room: room})
	}
	if err := v.declarations(ctx, msgs, names); err != nil {
		return out, err
	}
	if out.Charts, err = v.charts(ctx, entriesOf(msgs), v.s.Now()); err != nil {
		return out, err
	}
	out.Timeline = foldThreads(msgs)
	return out, nil
}

// declarations reads the request items of msgs' requests by key (at most
// ViewTimelineSize messages × 20 requests = store.MaxBatchGetKeys).
func (v *Model) declarations(ctx context.Context, msgs []viewMessage, names map[string]string) error {
	var keys []store.Key
	for _, m := range msgs {
		for _, to := range m.rec.Requests {
			keys = append(keys, table.RequestKey(m.rec.ID, to))
		}
	}
	got, err := v.batch(ctx, keys)
	if err != nil {
		return err
	}
	i := 0
	for j := range msgs {
		m := &msgs[j]
		for _, to := range m.rec.Requests {
			d := ViewDeclaration{AgentID: to, AgentName: cmp.Or(names[to], to), Status: hub.StatusOpen}
			if it := got[i]; it != nil {
				if r, err := table.Decode[table.Request](it); err == nil {
					d.Status, d.Revision, d.DeclaredAt = r.Status, it.Version, r.DeclaredAt
				}
			}
			m.decls = append(m.decls, d)
			i++
		}
	}
	return nil
}

// foldThreads puts each reply of msgs under its thread root when the root
// is on the page (replies oldest first) and orders the rest newest first.
func foldThreads(msgs []viewMessage) []ViewMessage {
	slices.SortFunc(msgs, func(a, b viewMessage) int { return cmp.Compare(a.rec.Seq, b.rec.Seq) })
	var out []ViewMessage
	at := map[string]int{}
	for _, m := range msgs {
		vm := toViewMessage(m.rec)
		vm.Declarations = m.decls
		if i, ok := at[vm.ThreadRoot]; ok && vm.ThreadRoot != vm.ID {
			out[i].Replies = append(out[i].Replies, vm)
			continue
		}
		at[vm.ID] = len(out)
		out = append(out, vm)
	}
	slices.Reverse(out)
	return out
}

func toViewMessage(m *table.Message) ViewMessage {
	vm := ViewMessage{ID: m.ID, AuthorID: m.AuthorID, AuthorName: m.AuthorName, BodyMD: m.BodyMD, Seq: m.Seq,
		Operator: m.AuthorKind == hub.AuthorOperator,
		SentAt:   m.SentAt, Mentions: m.Mentions, Requests: m.Requests, ReplyTo: m.ReplyTo, ThreadRoot: m.ThreadRoot}
	for _, f := range m.Files {
		vm.Files = append(vm.Files, ViewFile{Label: f.DisplayName, URL: f.URL})
	}
	return vm
}

// ViewRequest is one request (a message and one requested recipient)
// with the recipient's current declaration.
type ViewRequest struct {
	MessageID, RoomID, RoomName string
	DM                          bool
	FromID, FromName            string
	ToIDs, ToNames              []string
	Status                      string
	// Revision is the declaration revision (0 while open), DeclaredAt its
	// time.
	Revision   uint64
	DeclaredAt time.Time
	At         time.Time
	// Summary is the first words of the request's message; Declaration
	// those of the recipient's current declaration (its canonical reply:
	// what needs_context asks, what result_ready answers).
	Summary, Declaration string
	// Stale marks an open request older than ViewStaleAfter.
	Stale bool
}

// ViewStaleAfter is how long a request may stay open before the view
// marks it stale.
const ViewStaleAfter = 4 * time.Hour

// ViewBoard is the requests board: requests oldest first, grouped by
// status in Statuses order.
type ViewBoard struct {
	Requests []ViewRequest
	Statuses []string
	// Filter is the board's filter, FilterName what it names (an agent or
	// a room); Agents and Rooms are the filters the page offers.
	Filter     BoardFilter
	FilterName string
	Agents     []ViewMember
	Rooms      []ViewMember
	// Next is the cursor of the board's next page ("" at the end); Paged
	// says this is not the first.
	Next  string
	Paged bool
}

// BoardFilter is the board's position and filter: at most one of To (the
// requests an agent is asked), From (those it asked) and Room (those of a
// room's messages, among a page's).
type BoardFilter struct {
	Cursor, To, From, Room string
}

// RequestStatuses are the board's groups, in order.
var RequestStatuses = []string{hub.StatusOpen, hub.StatusAccepted, hub.StatusNeedsContext, hub.StatusDeclined, hub.StatusResultReady, hub.StatusRecipientRemoved}

// Requests reads one page of the requests board. Unfiltered, and filtered
// by room, it pages the box's request messages, newest first,
// ViewBoardMessages a page, from the box's requests index (the message
// pointers of messages that carry requests), with every request of each
// re-read from the table for its current declaration (a room's filter
// keeps the page's requests of that room: a page may show none and still
// have a next). Filtered by agent, it pages that agent's incoming (To) or
// outgoing (From) index, ViewPageSize a page, as the agent page does.
// Every request of the box is on some page.
func (v *Model) Requests(ctx context.Context, at BoardFilter) (*ViewBoard, error) {
	out := &ViewBoard{Statuses: RequestStatuses, Filter: at, Paged: at.Cursor != ""}
	names := map[string]string{}
	var err error
	switch {
	case at.To != "" || at.From != "":
		agent, index, partition, list := at.To, store.GSI1, table.IncomingIndex(at.To), "in"
		if at.To == "" {
			agent, index, partition, list = at.From, store.GSI2, table.OutgoingIndex(at.From), "out"
		}
		if out.FilterName, err = v.agentName(ctx, agent); err != nil {
			return nil, err
		}
		names[agent] = out.FilterName
		out.Requests, out.Next, err = v.requestPage(ctx, index, partition, list, at.Cursor, names)
	default:
		if at.Room != "" {
			if !isUUID(at.Room) {
				return nil, apperr.Forbidden()
			}
			it, err := v.st.Get(ctx, table.RoomKey(at.Room))
			if err != nil {
				return nil, err
			}
			r, err := ofBox(v, it, func(r *table.Room) string { return r.BoxID })
			if err != nil {
				return nil, err
			}
			out.FilterName = r.Name
		}
		out.Requests, out.Next, err = v.boardPage(ctx, at.Cursor, names)
	}
	if err != nil {
		return nil, err
	}
	if at.Room != "" {
		out.Requests = slices.DeleteFunc(out.Requests, func(r ViewRequest) bool { return r.RoomID != at.Room })
	}
	seen := map[string]bool{}
	for _, r := range out.Requests {
		for _, m := range []ViewMember{{ID: r.FromID, Name: r.FromName}, {ID: r.ToIDs[0], Name: r.ToNames[0]}} {
			if !seen[m.ID] {
				seen[m.ID] = true
				out.Agents = append(out.Agents, m)
			}
		}
		if r.RoomID != "" && !seen[r.RoomID] {
			seen[r.RoomID] = true
			out.Rooms = append(out.Rooms, ViewMember{ID: r.RoomID, Name: r.RoomName})
		}
	}
	byName := func(a, b ViewMember) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	}
	slices.SortFunc(out.Agents, byName)
	slices.SortFunc(out.Rooms, byName)
	return out, nil
}

// agentName is the name of agent, an agent of the box.
func (v *Model) agentName(ctx context.Context, agent string) (string, error) {
	if !isUUID(agent) {
		return "", apperr.Forbidden()
	}
	it, err := v.st.Get(ctx, table.AgentKey(agent))
	if err != nil {
		return "", err
	}
	a, err := ofBox(v, it, func(a *table.Agent) string { return a.BoxID })
	if err != nil {
		return "", err
	}
	return a.Name, nil
}

// boardPage reads a page of the box's requests index (ViewBoardMessages
// request messages, newest first) and the requests of its messages.
func (v *Model) boardPage(ctx context.Context, cur string, names map[string]string) ([]ViewRequest, string, error) {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI1, PK: table.BoxRequestsIndex(v.box), Reverse: true}, "board", cur, ViewBoardMessages)
	if err != nil {
		return nil, "", err
	}
	var keys []store.Key
	for _, it := range items {
		p, err := table.Decode[table.Pointer](it)
		if err != nil {
			return nil, "", apperr.Normalize(err)
		}
		id := table.MessageIDOfPointer(it.PK)
		for _, to := range p.Requests {
			keys = append(keys, table.RequestKey(id, to))
		}
	}
	reqs, err := v.requestsAt(ctx, keys, names)
	return reqs, next, err
}

// recentIncoming reads the newest ViewRequestsPerAgent incoming requests of
// each of agents, eight agents at a time: at most ViewPageSize ×
// ViewRequestsPerAgent = store.MaxBatchGetKeys request items. The box page
// counts the open requests each agent sent among them.
func (v *Model) recentIncoming(ctx context.Context, agents []ViewAgent, names map[string]string) ([]ViewRequest, error) {
	per := make([][]store.Key, len(agents))
	err := eachLimit(ctx, len(agents), func(ctx context.Context, i int) error {
		entries, err := v.st.Query(ctx, store.Query{Index: store.GSI1, PK: table.IncomingIndex(agents[i].ID), Reverse: true, Limit: ViewRequestsPerAgent})
		if err != nil {
			return err
		}
		per[i] = keysOf(entries)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v.requestsAt(ctx, slices.Concat(per...), names)
}

// requestsAt reads the request items at keys from the table (their current
// declaration; the index may lag), the messages they belong to (their
// summary, rooms and DMs), their declarations' replies (pointer, then
// message: their first words) and the names names lacks (authors,
// recipients and rooms, by key): at most six bounded reads. Oldest first.
func (v *Model) requestsAt(ctx context.Context, keys []store.Key, names map[string]string) ([]ViewRequest, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	got, err := v.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	var recs []*table.Request
	var versions []uint64
	for _, it := range got {
		if it == nil {
			continue
		}
		r, err := table.Decode[table.Request](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		recs, versions = append(recs, r), append(versions, it.Version)
	}
	if err := v.nameRequests(ctx, recs, names); err != nil {
		return nil, err
	}
	now := v.s.Now()
	var out []ViewRequest
	var msgKeys, replyKeys []store.Key
	at := map[store.Key][]int{}
	replyAt := map[string][]int{}
	for i, r := range recs {
		vr := ViewRequest{MessageID: r.MessageID, FromID: r.AuthorID, FromName: cmp.Or(names[r.AuthorID], r.AuthorID),
			ToIDs: []string{r.RecipientID}, ToNames: []string{cmp.Or(names[r.RecipientID], r.RecipientID)},
			Status: r.Status, Revision: versions[i], DeclaredAt: r.DeclaredAt, At: r.SentAt,
			Stale: r.Status == hub.StatusOpen && now.Sub(r.SentAt) > ViewStaleAfter}
		pk := dmPK(r.AuthorID, r.Destination.RecipientAgentID)
		if r.Destination.Kind == hub.KindRoom {
			vr.RoomID, vr.RoomName = r.Destination.RoomID, names[r.Destination.RoomID]
			pk = table.RoomStreamPK(r.Destination.RoomID)
		} else {
			vr.DM = true
		}
		k := table.StreamMsgKey(pk, r.StreamSeq)
		if at[k] == nil {
			msgKeys = append(msgKeys, k)
		}
		at[k] = append(at[k], len(out))
		if r.ResponseID != "" {
			if replyAt[r.ResponseID] == nil {
				replyKeys = append(replyKeys, table.MessagePointerKey(r.ResponseID))
			}
			replyAt[r.ResponseID] = append(replyAt[r.ResponseID], len(out))
		}
		out = append(out, vr)
	}
	msgs, err := v.batch(ctx, msgKeys)
	if err != nil {
		return nil, err
	}
	for i, it := range msgs {
		if it == nil {
			continue
		}
		if m, err := table.Decode[table.Message](it); err == nil {
			for _, j := range at[msgKeys[i]] {
				out[j].Summary = summary(m.BodyMD)
			}
		}
	}
	// The declarations' replies: their pointers, then the messages.
	pointers, err := v.batch(ctx, replyKeys)
	if err != nil {
		return nil, err
	}
	replies, err := v.pointed(ctx, slices.DeleteFunc(pointers, func(it *store.Item) bool { return it == nil }))
	if err != nil {
		return nil, err
	}
	for _, m := range replies {
		for _, j := range replyAt[m.ID] {
			out[j].Declaration = summary(m.BodyMD)
		}
	}
	slices.SortStableFunc(out, func(a, b ViewRequest) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.MessageID, b.MessageID), cmp.Compare(a.ToIDs[0], b.ToIDs[0]))
	})
	return out, nil
}

// nameRequests adds to names the agents and rooms of recs it lacks.
func (v *Model) nameRequests(ctx context.Context, recs []*table.Request, names map[string]string) error {
	var agents, rooms []string
	for _, r := range recs {
		agents = append(agents, r.AuthorID, r.RecipientID)
		if r.Destination.Kind == hub.KindRoom {
			rooms = append(rooms, r.Destination.RoomID)
		}
	}
	return v.name(ctx, names, agents, rooms)
}

func summary(md string) string {
	line, _, _ := strings.Cut(md, "\n")
	if r := []rune(line); len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return line
}

// parallelism bounds the reads one page runs at once: a box page reads a
// query per room and per agent, which one after another take a round trip
// each on DynamoDB.
const parallelism = 8

// eachLimit calls fn for 0 ≤ i < n, parallelism at a time, and returns the
// first error. fn must write only to what belongs to i.
func eachLimit(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism)
	for i := range n {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// dmPK is the partition of the DM stream of agents a and b, either order.
func dmPK(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return table.DMStreamPK(a, b)
}

// isUUID says whether s is a UUID in its 36-character form (any case), as
// the tools require of ids.
func isUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

// visibilityPrivate is a private space's stored Visibility (hub spaces.go).
const visibilityPrivate = "private"

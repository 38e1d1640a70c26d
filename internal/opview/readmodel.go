package opview

import (
	"cmp"
	"context"
	"encoding/json"
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
// timeline at most ViewTimelineSize messages, and the activity charts read
// at most ViewScanMessages recent messages per room of the page — a page
// never reads more than a fixed number of items however large the box
// grows.
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
type ViewAgent struct {
	ID, Name, Role, Status  string
	LastSeen                time.Time
	Unread                  int64
	OldestUnread            time.Time
	RequestsIn, RequestsOut int
}

// ViewRoom is one room on the box page.
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
	// Activity is messages per hour over the last 24 hours, oldest first;
	// Requests the requests opened and answered in those hours.
	Activity []int
	Requests RequestActivity
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
	rooms, err := v.rooms(ctx, out, at.Rooms)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, r := range out.Rooms {
		names[r.ID] = r.Name
	}
	msgs, err := v.recentMessages(ctx, rooms)
	if err != nil {
		return nil, err
	}
	if err := v.agents(ctx, out, at.Agents, msgs, names); err != nil {
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
	now := v.s.Now()
	out.Activity = hourly(msgs, now)
	if out.Requests, err = v.requestActivity(ctx, msgs, now); err != nil {
		return nil, err
	}
	return out, nil
}

func (v *Model) rooms(ctx context.Context, out *ViewBox, cur string) ([]string, error) {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI1, PK: table.BoxRoomsIndex(v.box)}, "rooms", cur, ViewPageSize)
	if err != nil {
		return nil, err
	}
	out.NextRooms = next
	var ids []string
	var keys []store.Key
	for _, it := range items {
		r, err := table.Decode[table.Room](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		out.Rooms = append(out.Rooms, ViewRoom{ID: r.ID, Name: r.Name, Archived: r.Archived})
		ids = append(ids, r.ID)
		keys = append(keys, table.MemberCountKey(r.ID), table.RoomHeadKey(r.ID))
	}
	got, err := v.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	for i := range out.Rooms {
		out.Rooms[i].Members = table.Count(got[2*i])
		out.Rooms[i].Messages = table.Version(got[2*i+1])
	}
	return ids, nil
}

// viewMessage is a stored message as the view reads it.
type viewMessage struct {
	rec   *table.Message
	room  string
	decls []ViewDeclaration
}

// recentMessages reads up to ViewScanMessages newest messages per room.
func (v *Model) recentMessages(ctx context.Context, rooms []string) ([]viewMessage, error) {
	per := make([][]viewMessage, len(rooms))
	err := eachLimit(ctx, len(rooms), func(ctx context.Context, i int) error {
		items, err := v.st.Query(ctx, store.Query{PK: table.RoomStreamPK(rooms[i]), From: table.StreamMsgPrefix, To: store.PrefixEnd(table.StreamMsgPrefix),
			Reverse: true, Limit: ViewScanMessages})
		if err != nil {
			return err
		}
		for _, it := range items {
			m, err := table.Decode[table.Message](it)
			if err != nil {
				return apperr.Normalize(err)
			}
			per[i] = append(per[i], viewMessage{rec: m, room: rooms[i]})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(per...), nil
}

func (v *Model) agents(ctx context.Context, out *ViewBox, cur string, msgs []viewMessage, names map[string]string) error {
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
		for _, m := range msgs {
			if m.rec.AuthorID == a.ID && m.rec.SentAt.After(a.LastSeen) {
				a.LastSeen = m.rec.SentAt
			}
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
		a.OldestUnread, err = v.oldestUnread(ctx, a.ID, uint64(table.Count(got[5*i+2])))
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

// hourly counts msgs per hour over the 24 hours before now, oldest first.
func hourly(msgs []viewMessage, now time.Time) []int {
	out := make([]int, 24)
	for _, m := range msgs {
		age := now.Sub(m.rec.SentAt)
		if age < 0 || age >= 24*time.Hour {
			continue
		}
		out[23-int(age/time.Hour)]++
	}
	return out
}

// RequestActivity is requests opened and answered per hour over the 24
// hours before now, oldest first.
//
// Opened counts each (message, requested recipient) pair at its message's
// send time. Answered counts a request at the time of its current
// declaration when that declaration is result_ready or declined: every
// declaration posts one canonical reply (request_respond), so the
// candidates are the scanned replies whose payload declares one of those
// two, and each is confirmed by its request record (current status, and
// the record's response id is that reply), so a correction counts once, at
// its own time, and a look-alike payload an agent sent by hand counts
// never. Both come from the messages the page already read: the box page's
// ViewScanMessages newest per room of its page, a room page's timeline
// page; the confirmation is one BatchGet of at most
// store.MaxBatchGetKeys request items (the newest candidates).
type RequestActivity struct {
	Opened, Answered []int
}

// declared is the declaration a canonical reply's payload carries.
type declared struct {
	Response struct {
		Status string `json:"status"`
	} `json:"response"`
}

func (v *Model) requestActivity(ctx context.Context, msgs []viewMessage, now time.Time) (RequestActivity, error) {
	out := RequestActivity{Opened: make([]int, 24), Answered: make([]int, 24)}
	hour := func(t time.Time) (int, bool) {
		age := now.Sub(t)
		if age < 0 || age >= 24*time.Hour {
			return 0, false
		}
		return 23 - int(age/time.Hour), true
	}
	var candidates []*table.Message
	for _, m := range msgs {
		h, ok := hour(m.rec.SentAt)
		if !ok {
			continue
		}
		out.Opened[h] += len(m.rec.Requests)
		if m.rec.ReplyTo == "" || len(m.rec.Payload) == 0 {
			continue
		}
		var d declared
		if json.Unmarshal(m.rec.Payload, &d) == nil && answered(d.Response.Status) {
			candidates = append(candidates, m.rec)
		}
	}
	if len(candidates) == 0 {
		return out, nil
	}
	slices.SortFunc(candidates, func(a, b *table.Message) int { return b.SentAt.Compare(a.SentAt) })
	candidates = candidates[:min(len(candidates), store.MaxBatchGetKeys)]
	keys := make([]store.Key, len(candidates))
	for i, m := range candidates {
		keys[i] = table.RequestKey(m.ReplyTo, m.AuthorID)
	}
	got, err := v.st.BatchGet(ctx, keys)
	if err != nil {
		return out, err
	}
	for i, it := range got {
		if it == nil {
			continue
		}
		r, err := table.Decode[table.Request](it)
		if err != nil || r.ResponseID != candidates[i].ID || !answered(r.Status) {
			continue
		}
		if h, ok := hour(r.DeclaredAt); ok {
			out.Answered[h]++
		}
	}
	return out, nil
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
		Acked: r.AckedBy != "", AckedAt: r.AckedAt}
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

// oldestUnread is the arrival time of agent's oldest unread row among the
// ViewScanMessages rows up to sequence acked+1 (acked: rows acknowledged).
// Only acked rows are acknowledged, so at least one row up to acked+1 is
// unread: when ACKs go in order, row acked+1 is the oldest unread, and when
// they skip rows, the answer is exact as long as no unread row lies more
// than ViewScanMessages rows below acked+1. One bounded Query.
func (v *Model) oldestUnread(ctx context.Context, agent string, acked uint64) (time.Time, error) {
	items, err := v.st.Query(ctx, store.Query{PK: table.InboxHeadKey(agent).PK, From: table.InboxRowPrefix, To: table.InboxRowKey(agent, acked+1).SK,
		Reverse: true, Limit: ViewScanMessages})
	if err != nil {
		return time.Time{}, err
	}
	var at time.Time
	for _, it := range items {
		r, err := table.Decode[table.Attention](it)
		if err != nil {
			return time.Time{}, apperr.Normalize(err)
		}
		if r.AckedBy == "" {
			at = r.At // newest first: the last one found is the oldest
		}
	}
	return at, nil
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

// Room reads a room page: the brief, a page of the roster and up to
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
	names := map[string]string{}
	for _, m := range out.Members {
		names[m.ID] = m.Name
	}
	if out.ViewTimeline, err = v.timeline(ctx, table.RoomStreamPK(room), room, at.Older, names); err != nil {
		return nil, err
	}
	return out, nil
}

// ViewTimeline is a page of a room's or DM's messages, newest page first,
// oldest first within the page, with its charts.
type ViewTimeline struct {
	Timeline []ViewMessage
	// Older is the cursor of the older messages' page ("" at the start).
	Older    string
	Activity []int
	Requests RequestActivity
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
	now := v.s.Now()
	out.Activity = hourly(msgs, now)
	if out.Requests, err = v.requestActivity(ctx, msgs, now); err != nil {
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

// foldThreads orders msgs oldest first and puts each reply under its thread root
// when the root is on the page.
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
	Summary    string
}

// ViewBoard is the requests board: requests oldest first, grouped by
// status in Statuses order.
type ViewBoard struct {
	Requests []ViewRequest
	Statuses []string
	// Next is the cursor of the board's next page of agents ("" at the
	// end); Paged says this is not the first.
	Next  string
	Paged bool
}

// RequestStatuses are the board's groups, in order.
var RequestStatuses = []string{hub.StatusOpen, hub.StatusAccepted, hub.StatusNeedsContext, hub.StatusDeclined, hub.StatusResultReady, hub.StatusRecipientRemoved}

// Requests reads one page of the requests board: the box's request
// messages, newest first, ViewBoardMessages a page (at: its cursor), from
// the box's requests index (the message pointers of messages that carry
// requests, keys.go), with every request of each re-read from the table
// for its current declaration. Every request of the box is on some page.
func (v *Model) Requests(ctx context.Context, at string) (*ViewBoard, error) {
	items, next, err := v.page(ctx, store.Query{Index: store.GSI1, PK: table.BoxRequestsIndex(v.box), Reverse: true}, "board", at, ViewBoardMessages)
	if err != nil {
		return nil, err
	}
	var keys []store.Key
	for _, it := range items {
		p, err := table.Decode[table.Pointer](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		id := table.MessageIDOfPointer(it.PK)
		for _, to := range p.Requests {
			keys = append(keys, table.RequestKey(id, to))
		}
	}
	reqs, err := v.requestsAt(ctx, keys, map[string]string{})
	if err != nil {
		return nil, err
	}
	return &ViewBoard{Requests: reqs, Statuses: RequestStatuses, Next: next, Paged: at != ""}, nil
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
// declaration; the index may lag), the room messages they belong to (their
// summary) and the names names lacks (authors, recipients and rooms, by
// key): at most four bounded reads. Oldest first.
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
	var out []ViewRequest
	var msgKeys []store.Key
	at := map[store.Key][]int{}
	for i, r := range recs {
		vr := ViewRequest{MessageID: r.MessageID, FromID: r.AuthorID, FromName: cmp.Or(names[r.AuthorID], r.AuthorID),
			ToIDs: []string{r.RecipientID}, ToNames: []string{cmp.Or(names[r.RecipientID], r.RecipientID)},
			Status: r.Status, Revision: versions[i], DeclaredAt: r.DeclaredAt, At: r.SentAt}
		if r.Destination.Kind == hub.KindRoom {
			vr.RoomID, vr.RoomName = r.Destination.RoomID, names[r.Destination.RoomID]
			k := table.StreamMsgKey(table.RoomStreamPK(r.Destination.RoomID), r.StreamSeq)
			if at[k] == nil {
				msgKeys = append(msgKeys, k)
			}
			at[k] = append(at[k], len(out))
		} else {
			vr.DM = true
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
	slices.SortStableFunc(out, func(a, b ViewRequest) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.MessageID, b.MessageID), cmp.Compare(a.ToIDs[0], b.ToIDs[0]))
	})
	return out, nil
}

// nameRequests adds to names the agents and rooms of recs it lacks, read by
// key (at most store.MaxBatchGetKeys of them; the rest show as ids).
func (v *Model) nameRequests(ctx context.Context, recs []*table.Request, names map[string]string) error {
	var keys []store.Key
	if _, ok := names[v.box]; !ok {
		names[v.box] = hub.OperatorName // the operator's requests (compose.go)
	}
	want := func(id string, k store.Key) {
		if _, ok := names[id]; !ok && len(keys) < store.MaxBatchGetKeys {
			names[id] = ""
			keys = append(keys, k)
		}
	}
	for _, r := range recs {
		want(r.AuthorID, table.AgentKey(r.AuthorID))
		want(r.RecipientID, table.AgentKey(r.RecipientID))
		if r.Destination.Kind == hub.KindRoom {
			want(r.Destination.RoomID, table.RoomKey(r.Destination.RoomID))
		}
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

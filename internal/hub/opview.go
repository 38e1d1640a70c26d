package hub

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// The owner's read API (issue 15): what the operator view shows.
//
// Design note. An OwnerView is bound to the one box its owner key sees
// (OwnerBox, admin_owner.go); every method checks that what it is asked for
// belongs to that box and answers NOT_FOUND_OR_FORBIDDEN otherwise, so an
// id of another box and an id that does not exist look the same. Nothing
// here writes. Every read is bounded: a page of agents or rooms is at most
// ViewPageSize items, a room timeline at most ViewTimelineSize messages, an
// inbox backlog at most ViewPageSize rows, and the requests board and the
// activity charts read at most ViewScanMessages recent messages per room of
// the page — a page never reads more than a fixed number of items however
// large the box grows.
//
// Requests come from the request records (requests.go): the board reads
// the incoming index (GSI1 rin#<agent>) of each agent of the box page, at
// most ViewRequestsPerAgent newest entries each, and re-reads every listed
// request item from the table, because the index may lag and only the
// table holds the current declaration (status, revision, time). An agent
// page reads its own incoming and outgoing index (ViewPageSize each) the
// same way; a room page reads the request items of the requests on its
// page by key. "Requests in" on the box page is the agent's open-request
// counter (count#requests); "requests out" counts the open requests among
// the board's records.
type OwnerView struct {
	h   *Hub
	box string
}

// View bounds.
const (
	ViewPageSize     = 50
	ViewTimelineSize = 50
	ViewScanMessages = 200
	// ViewRequestsPerAgent bounds the board's read of each agent's
	// incoming requests: ViewPageSize agents × 20 = store.MaxBatchGetKeys.
	ViewRequestsPerAgent = 20
)

// OwnerView authenticates an owner key and returns the view of its box.
func (h *Hub) OwnerView(ctx context.Context, key string) (*OwnerView, error) {
	box, err := h.OwnerBox(ctx, key)
	if err != nil {
		return nil, err
	}
	return &OwnerView{h: h, box: box}, nil
}

// BoxID is the box this view sees.
func (v *OwnerView) BoxID() string { return v.box }

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

// ViewSpace is one public space on the box page.
type ViewSpace struct {
	ID, Title, Status string
	Version           uint64
}

// ViewBox is the box page.
type ViewBox struct {
	BoxID, Name string
	Agents      []ViewAgent
	Rooms       []ViewRoom
	Spaces      []ViewSpace
	// More* say a list was cut at ViewPageSize.
	MoreAgents, MoreRooms, MoreSpaces bool
	// Activity is messages per hour over the last 24 hours, oldest first;
	// Requests the requests opened and answered in those hours.
	Activity []int
	Requests RequestActivity
}

func (v *OwnerView) query(ctx context.Context, q store.Query) ([]*store.Item, bool, error) {
	q.Limit = ViewPageSize + 1
	items, err := v.h.st.Query(ctx, q)
	if err != nil {
		return nil, false, storageErr(err)
	}
	if len(items) > ViewPageSize {
		return items[:ViewPageSize], true, nil
	}
	return items, false, nil
}

// Box reads the box page.
func (v *OwnerView) Box(ctx context.Context) (*ViewBox, error) {
	bi, err := v.h.st.Get(ctx, boxKey(v.box))
	if err != nil {
		return nil, storageErr(err)
	}
	if bi == nil {
		return nil, apperr.Forbidden()
	}
	b, err := decode[boxRecord](bi)
	if err != nil {
		return nil, apperr.Normalize(err)
	}
	out := &ViewBox{BoxID: v.box, Name: b.Name}
	rooms, err := v.rooms(ctx, out)
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
	if err := v.agents(ctx, out, msgs, names); err != nil {
		return nil, err
	}
	if err := v.spaces(ctx, out); err != nil {
		return nil, err
	}
	now := v.h.clock()
	out.Activity = hourly(msgs, now)
	if out.Requests, err = v.requestActivity(ctx, msgs, now); err != nil {
		return nil, err
	}
	return out, nil
}

func (v *OwnerView) rooms(ctx context.Context, out *ViewBox) ([]string, error) {
	items, more, err := v.query(ctx, store.Query{Index: store.GSI1, PK: boxRoomsIndex(v.box)})
	if err != nil {
		return nil, err
	}
	out.MoreRooms = more
	var ids []string
	var keys []store.Key
	for _, it := range items {
		r, err := decode[roomRecord](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		out.Rooms = append(out.Rooms, ViewRoom{ID: r.ID, Name: r.Name, Archived: r.Archived})
		ids = append(ids, r.ID)
		keys = append(keys, memberCountKey(r.ID), roomHeadKey(r.ID))
	}
	got, err := v.h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	for i := range out.Rooms {
		out.Rooms[i].Members = count(got[2*i])
		out.Rooms[i].Messages = version(got[2*i+1])
	}
	return ids, nil
}

// viewMessage is a stored message as the view reads it.
type viewMessage struct {
	rec   *messageRecord
	room  string
	decls []ViewDeclaration
}

// recentMessages reads up to ViewScanMessages newest messages per room.
func (v *OwnerView) recentMessages(ctx context.Context, rooms []string) ([]viewMessage, error) {
	var out []viewMessage
	for _, id := range rooms {
		s := roomStream(id)
		items, err := v.h.st.Query(ctx, store.Query{PK: s.pk(), From: "msg#", To: store.PrefixEnd("msg#"),
			Reverse: true, Limit: ViewScanMessages})
		if err != nil {
			return nil, storageErr(err)
		}
		for _, it := range items {
			m, err := decode[messageRecord](it)
			if err != nil {
				return nil, apperr.Normalize(err)
			}
			out = append(out, viewMessage{rec: m, room: id})
		}
	}
	return out, nil
}

func (v *OwnerView) agents(ctx context.Context, out *ViewBox, msgs []viewMessage, names map[string]string) error {
	items, more, err := v.query(ctx, store.Query{Index: store.GSI1, PK: boxAgentsIndex(v.box)})
	if err != nil {
		return err
	}
	out.MoreAgents = more
	var keys []store.Key
	for _, it := range items {
		a, err := decode[agentRecord](it)
		if err != nil {
			return apperr.Normalize(err)
		}
		out.Agents = append(out.Agents, ViewAgent{ID: a.ID, Name: a.Name, Status: a.Status})
		names[a.ID] = a.Name
		keys = append(keys, profileKey(a.ID), inboxHeadKey(a.ID), ackedCounterKey(a.ID), checkpointKey(a.ID),
			requestCounterKey(a.ID))
	}
	got, err := v.h.st.BatchGet(ctx, keys)
	if err != nil {
		return storageErr(err)
	}
	reqs, err := v.boardRequests(ctx, out.Agents, names)
	if err != nil {
		return err
	}
	for i := range out.Agents {
		a := &out.Agents[i]
		row := got[5*i : 5*i+5]
		if row[0] != nil {
			if p, err := decode[profileRecord](row[0]); err == nil {
				a.Role = p.Role
			}
		}
		a.Unread = unread(row[1], row[2])
		if row[3] != nil {
			if c, err := decode[checkpointRecord](row[3]); err == nil {
				a.LastSeen = c.SavedAt
			}
		}
		if err := v.seen(ctx, a); err != nil {
			return err
		}
		a.RequestsIn = int(count(row[4]))
		for _, r := range reqs {
			if r.FromID == a.ID && r.Status == StatusOpen {
				a.RequestsOut++
			}
		}
		for _, m := range msgs {
			if m.rec.AuthorID == a.ID && m.rec.SentAt.After(a.LastSeen) {
				a.LastSeen = m.rec.SentAt
			}
		}
		if a.Unread > 0 {
			backlog, err := v.backlog(ctx, a.ID)
			if err != nil {
				return err
			}
			for _, r := range backlog {
				if !r.Acked {
					a.OldestUnread = r.At
					break
				}
			}
		}
	}
	return nil
}

// seen moves a.LastSeen to its sessions' last recorded use when later.
func (v *OwnerView) seen(ctx context.Context, a *ViewAgent) error {
	items, err := v.h.st.Query(ctx, store.Query{Index: store.GSI1, PK: seenIndex(a.ID), Reverse: true, Limit: 1})
	if err != nil {
		return storageErr(err)
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

func (v *OwnerView) spaces(ctx context.Context, out *ViewBox) error {
	items, more, err := v.query(ctx, store.Query{Index: store.GSI1, PK: boxSpacesIndex(v.box)})
	if err != nil {
		return err
	}
	out.MoreSpaces = more
	for _, it := range items {
		s, err := decode[spaceRecord](it)
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

func (v *OwnerView) requestActivity(ctx context.Context, msgs []viewMessage, now time.Time) (RequestActivity, error) {
	out := RequestActivity{Opened: make([]int, 24), Answered: make([]int, 24)}
	hour := func(t time.Time) (int, bool) {
		age := now.Sub(t)
		if age < 0 || age >= 24*time.Hour {
			return 0, false
		}
		return 23 - int(age/time.Hour), true
	}
	var candidates []*messageRecord
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
	slices.SortFunc(candidates, func(a, b *messageRecord) int { return b.SentAt.Compare(a.SentAt) })
	candidates = candidates[:min(len(candidates), store.MaxBatchGetKeys)]
	keys := make([]store.Key, len(candidates))
	for i, m := range candidates {
		keys[i] = requestKey(m.ReplyTo, m.AuthorID)
	}
	got, err := v.h.st.BatchGet(ctx, keys)
	if err != nil {
		return out, storageErr(err)
	}
	for i, it := range got {
		if it == nil {
			continue
		}
		r, err := decode[requestRecord](it)
		if err != nil || r.ResponseID != candidates[i].ID || !answered(r.Status) {
			continue
		}
		if h, ok := hour(r.DeclaredAt); ok {
			out.Answered[h]++
		}
	}
	return out, nil
}

func answered(status string) bool { return status == StatusResultReady || status == StatusDeclined }

// ViewInboxRow is one row of an agent's inbox backlog.
type ViewInboxRow struct {
	Seq       uint64
	MessageID string
	RoomID    string
	DM        bool
	Reasons   []string
	At        time.Time
	Acked     bool
	AckedAt   time.Time
}

// ReasonNames names the reason bits, in bit order.
func ReasonNames(bits int) []string {
	var out []string
	for _, r := range []struct {
		bit  int
		name string
	}{{ReasonDM, "dm"}, {ReasonFollowAll, "follow"}, {ReasonMention, "mention"}, {ReasonReply, "reply"}, {ReasonRequest, "request"}} {
		if bits&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	return out
}

func (v *OwnerView) backlog(ctx context.Context, agent string) ([]ViewInboxRow, error) {
	pk := inboxHeadKey(agent).PK
	items, err := v.h.st.Query(ctx, store.Query{PK: pk, From: "inbox#", To: store.PrefixEnd("inbox#"), Limit: ViewPageSize})
	if err != nil {
		return nil, storageErr(err)
	}
	out := make([]ViewInboxRow, 0, len(items))
	for _, it := range items {
		r, err := decode[attentionRecord](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		row := ViewInboxRow{Seq: r.Seq, MessageID: r.MessageID, Reasons: ReasonNames(r.Reasons), At: r.At,
			Acked: r.AckedBy != "", AckedAt: r.AckedAt}
		if s, ok := parseStream(r.Stream); ok {
			row.DM, row.RoomID = s.kind == KindDM, s.room
		}
		out = append(out, row)
	}
	return out, nil
}

// ViewAgentPage is the agent page.
type ViewAgentPage struct {
	ViewAgent
	Backlog            []ViewInboxRow
	CheckpointRevision uint64
	CheckpointAt       time.Time
	RequestsOut        []ViewRequest
	RequestsIn         []ViewRequest
}

// Agent reads one agent's page.
func (v *OwnerView) Agent(ctx context.Context, agent string) (*ViewAgentPage, error) {
	if checkUUID("agent", agent) != nil {
		return nil, apperr.Forbidden()
	}
	got, err := v.h.st.BatchGet(ctx, []store.Key{agentKey(agent), profileKey(agent), inboxHeadKey(agent),
		ackedCounterKey(agent), checkpointKey(agent)})
	if err != nil {
		return nil, storageErr(err)
	}
	if got[0] == nil {
		return nil, apperr.Forbidden()
	}
	a, err := decode[agentRecord](got[0])
	if err != nil || a.BoxID != v.box {
		return nil, apperr.Forbidden()
	}
	out := &ViewAgentPage{ViewAgent: ViewAgent{ID: a.ID, Name: a.Name, Status: a.Status,
		Unread: unread(got[2], got[3])}}
	if got[1] != nil {
		if p, err := decode[profileRecord](got[1]); err == nil {
			out.Role = p.Role
		}
	}
	if got[4] != nil {
		out.CheckpointRevision = got[4].Version
		if c, err := decode[checkpointRecord](got[4]); err == nil {
			out.CheckpointAt, out.LastSeen = c.SavedAt, c.SavedAt
		}
	}
	if err := v.seen(ctx, &out.ViewAgent); err != nil {
		return nil, err
	}
	if out.Backlog, err = v.backlog(ctx, agent); err != nil {
		return nil, err
	}
	names, err := v.names(ctx)
	if err != nil {
		return nil, err
	}
	if out.RequestsIn, err = v.readRequests(ctx, store.GSI1, []string{incomingIndex(agent)}, ViewPageSize, names); err != nil {
		return nil, err
	}
	if out.RequestsOut, err = v.readRequests(ctx, store.GSI2, []string{outgoingIndex(agent)}, ViewPageSize, names); err != nil {
		return nil, err
	}
	out.ViewAgent.RequestsIn, out.ViewAgent.RequestsOut = len(out.RequestsIn), len(out.RequestsOut)
	return out, nil
}

// ViewMessage is one message of a room timeline.
type ViewMessage struct {
	ID, AuthorID, AuthorName, BodyMD string
	Seq                              uint64
	SentAt                           time.Time
	Mentions, Requests               []string
	ReplyTo, ThreadRoot              string
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

// ViewMember is a room member.
type ViewMember struct{ ID, Name, Follow string }

// ViewRoomPage is the room page.
type ViewRoomPage struct {
	ID, Name, BriefMD string
	Archived          bool
	Members           []ViewMember
	Timeline          []ViewMessage
	// Before, when non-zero, is the sequence to pass for the older page.
	Before   uint64
	Activity []int
	Requests RequestActivity
}

// Room reads a room page: the brief, the roster and up to
// ViewTimelineSize messages before sequence before (0: the newest), with
// replies folded under their thread roots.
func (v *OwnerView) Room(ctx context.Context, room string, before uint64) (*ViewRoomPage, error) {
	if checkUUID("room", room) != nil {
		return nil, apperr.Forbidden()
	}
	got, err := v.h.st.BatchGet(ctx, []store.Key{roomKey(room), briefKey(room)})
	if err != nil {
		return nil, storageErr(err)
	}
	if got[0] == nil {
		return nil, apperr.Forbidden()
	}
	r, err := decode[roomRecord](got[0])
	if err != nil || r.BoxID != v.box {
		return nil, apperr.Forbidden()
	}
	out := &ViewRoomPage{ID: r.ID, Name: r.Name, Archived: r.Archived}
	if got[1] != nil {
		if b, err := decode[briefRecord](got[1]); err == nil {
			out.BriefMD = b.TextMD
		}
	}
	pk, prefix := rosterPrefix(room)
	members, err := v.h.st.Query(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix), Limit: ViewPageSize})
	if err != nil {
		return nil, storageErr(err)
	}
	for _, it := range members {
		m, err := decode[memberRecord](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		out.Members = append(out.Members, ViewMember{ID: m.AgentID, Name: m.AgentName, Follow: m.Follow})
	}
	s := roomStream(room)
	to := store.PrefixEnd("msg#")
	if before > 0 {
		to = store.Before(s.msgKey(before).SK)
	}
	items, err := v.h.st.Query(ctx, store.Query{PK: s.pk(), From: "msg#", To: to, Reverse: true, Limit: ViewTimelineSize + 1})
	if err != nil {
		return nil, storageErr(err)
	}
	if len(items) > ViewTimelineSize {
		items = items[:ViewTimelineSize]
	}
	var msgs []viewMessage
	for _, it := range items {
		m, err := decode[messageRecord](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		msgs = append(msgs, viewMessage{rec: m, room: room})
	}
	if len(msgs) == ViewTimelineSize && msgs[len(msgs)-1].rec.Seq > 1 {
		out.Before = msgs[len(msgs)-1].rec.Seq
	}
	names := map[string]string{}
	for _, m := range out.Members {
		names[m.ID] = m.Name
	}
	if err := v.declarations(ctx, msgs, names); err != nil {
		return nil, err
	}
	now := v.h.clock()
	out.Activity = hourly(msgs, now)
	if out.Requests, err = v.requestActivity(ctx, msgs, now); err != nil {
		return nil, err
	}
	out.Timeline = foldThreads(msgs)
	return out, nil
}

// declarations reads the request items of msgs' requests by key (at most
// ViewTimelineSize messages × 20 requests = store.MaxBatchGetKeys).
func (v *OwnerView) declarations(ctx context.Context, msgs []viewMessage, names map[string]string) error {
	var keys []store.Key
	for _, m := range msgs {
		for _, to := range m.rec.Requests {
			keys = append(keys, requestKey(m.rec.ID, to))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	got, err := v.h.st.BatchGet(ctx, keys)
	if err != nil {
		return storageErr(err)
	}
	i := 0
	for j := range msgs {
		m := &msgs[j]
		for _, to := range m.rec.Requests {
			d := ViewDeclaration{AgentID: to, AgentName: cmp.Or(names[to], to), Status: StatusOpen}
			if it := got[i]; it != nil {
				if r, err := decode[requestRecord](it); err == nil {
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

func toViewMessage(m *messageRecord) ViewMessage {
	vm := ViewMessage{ID: m.ID, AuthorID: m.AuthorID, AuthorName: m.AuthorName, BodyMD: m.BodyMD, Seq: m.Seq,
		SentAt: m.SentAt, Mentions: m.Mentions, Requests: m.Requests, ReplyTo: m.ReplyTo, ThreadRoot: m.ThreadRoot}
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
}

// RequestStatuses are the board's groups, in order.
var RequestStatuses = []string{StatusOpen, StatusAccepted, StatusNeedsContext, StatusDeclined, StatusResultReady}

// Requests reads the requests board: the incoming requests of the box
// page's agents (see the design note).
func (v *OwnerView) Requests(ctx context.Context) (*ViewBoard, error) {
	var box ViewBox
	if _, err := v.rooms(ctx, &box); err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, r := range box.Rooms {
		names[r.ID] = r.Name
	}
	items, _, err := v.query(ctx, store.Query{Index: store.GSI1, PK: boxAgentsIndex(v.box)})
	if err != nil {
		return nil, err
	}
	var agents []ViewAgent
	for _, it := range items {
		a, err := decode[agentRecord](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		names[a.ID] = a.Name
		agents = append(agents, ViewAgent{ID: a.ID})
	}
	reqs, err := v.boardRequests(ctx, agents, names)
	if err != nil {
		return nil, err
	}
	return &ViewBoard{Requests: reqs, Statuses: RequestStatuses}, nil
}

// boardRequests reads the newest ViewRequestsPerAgent incoming requests of
// each of agents.
func (v *OwnerView) boardRequests(ctx context.Context, agents []ViewAgent, names map[string]string) ([]ViewRequest, error) {
	partitions := make([]string, len(agents))
	for i, a := range agents {
		partitions[i] = incomingIndex(a.ID)
	}
	return v.readRequests(ctx, store.GSI1, partitions, ViewRequestsPerAgent, names)
}

// names maps the ids of the box page's rooms and agents to their names.
func (v *OwnerView) names(ctx context.Context) (map[string]string, error) {
	names := map[string]string{}
	for _, q := range []string{boxRoomsIndex(v.box), boxAgentsIndex(v.box)} {
		items, _, err := v.query(ctx, store.Query{Index: store.GSI1, PK: q})
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			// Rooms and agents both carry id and name.
			if r, err := decode[struct{ ID, Name string }](it); err == nil {
				names[r.ID] = r.Name
			}
		}
	}
	return names, nil
}

// readRequests reads at most limit newest index entries of each partition
// of index, then the request items themselves from the table (their
// current declaration) and the room messages they belong to (their
// summary): three bounded reads whatever the box holds. Oldest first.
func (v *OwnerView) readRequests(ctx context.Context, index store.Index, partitions []string, limit int, names map[string]string) ([]ViewRequest, error) {
	var keys []store.Key
	seen := map[store.Key]bool{}
	for _, p := range partitions {
		entries, err := v.h.st.Query(ctx, store.Query{Index: index, PK: p, Reverse: true, Limit: limit})
		if err != nil {
			return nil, storageErr(err)
		}
		for _, it := range entries {
			if k := it.Key(); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	got, err := v.h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	var out []ViewRequest
	var msgKeys []store.Key
	at := map[store.Key][]int{}
	for _, it := range got {
		if it == nil {
			continue
		}
		r, err := decode[requestRecord](it)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		vr := ViewRequest{MessageID: r.MessageID, FromID: r.AuthorID, FromName: cmp.Or(names[r.AuthorID], r.AuthorID),
			ToIDs: []string{r.RecipientID}, ToNames: []string{cmp.Or(names[r.RecipientID], r.RecipientID)},
			Status: r.Status, Revision: it.Version, DeclaredAt: r.DeclaredAt, At: r.SentAt}
		if r.Destination.Kind == KindRoom {
			vr.RoomID, vr.RoomName = r.Destination.RoomID, names[r.Destination.RoomID]
			k := roomStream(r.Destination.RoomID).msgKey(r.StreamSeq)
			if at[k] == nil {
				msgKeys = append(msgKeys, k)
			}
			at[k] = append(at[k], len(out))
		} else {
			vr.DM = true
		}
		out = append(out, vr)
	}
	if len(msgKeys) > 0 {
		msgs, err := v.h.st.BatchGet(ctx, msgKeys)
		if err != nil {
			return nil, storageErr(err)
		}
		for i, it := range msgs {
			if it == nil {
				continue
			}
			if m, err := decode[messageRecord](it); err == nil {
				for _, j := range at[msgKeys[i]] {
					out[j].Summary = summary(m.BodyMD)
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b ViewRequest) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.MessageID, b.MessageID), cmp.Compare(a.ToIDs[0], b.ToIDs[0]))
	})
	return out, nil
}

func summary(md string) string {
	line, _, _ := strings.Cut(md, "\n")
	if r := []rune(line); len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return line
}

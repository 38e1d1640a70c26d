package hub

// Messages, streams and attention.
//
// Streams. Every room has one stream and every unordered pair of agents of a
// box one DM stream. A stream numbers its messages 1, 2, 3, ... without
// holes: its head item's Version is the last number taken, and a send moves
// it from v to v+1 in the same atomic write that stores message v+1
// (plan.next). Commit order is therefore sequence order, and a reader that
// captured head h can never later meet a message numbered h or below that it
// did not see (BRIEF §7, "No skipped rows"): that is what makes h a safe
// upper bound for a resume cursor.
//
//	room#R / head                room stream head (Version = last sequence)
//	room#R / msg#<seq>           a room message, in full
//	dm#<A>#<B> / head            DM stream head of the pair, A < B
//	dm#<A>#<B> / msg#<seq>       a DM, in full
//	msg#<id> / msg               the message's address: stream, sequence, author, thread;
//	                             with requests, GSI1 box#<box>#requests / <sent ns 20>#<id>
//	thr#<root> / m#<seq>         the thread index: one row per message of the thread
//
// Attention. At send time each recipient other than the author gets at most
// one attention row whose reasons are the OR of seed 000's bits (1 DM, 2
// follows all, 4 mention, 8 reply to own message, 16 request), filtered by
// the recipient's follow preference of its current epoch (DMs ignore room
// preferences). A row is numbered in the recipient's own inbox stream, with
// the same hole-free head discipline:
//
//	agent#A / inbox              inbox head (Version = last inbox sequence = rows ever written)
//	agent#A / inbox#<seq>        attention row; GSI1 att#<A> / <stream>#<seq> (receipt lookup)
//
// so a recipient costs two items: its head and its row. Small fan-outs
// commit with the message; larger ones continue as an intent (intent.go) in
// chunks of fanoutChunk recipients, each chunk one atomic write that also
// advances the intent, so a crash between chunks loses nothing and repeats
// nothing. The recipient list is written once, before the message, as
// immutable parts (fanout.go): a chunk costs the same in any room.
//
// Epochs. A room member reads the room from its epoch's StartSeq (the head
// when it was added, plus one): what was said before it joined, and in the
// gap of an earlier removal, stays hidden. A removed member reads nothing.

import (
	"context"
	"encoding/json"
	"github.com/agentbox/agentbox/internal/hub/table"
	"slices"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/google/uuid"
)

// Attention reasons (seed 000).
const (
	ReasonDM        = 1
	ReasonFollowAll = 2
	ReasonMention   = 4
	ReasonReply     = 8
	ReasonRequest   = 16
)

// Destination kinds.
const (
	KindDM   = "dm"
	KindRoom = "room"
)

const (
	// DefaultConversationPage and MaxConversationPage bound a history page.
	DefaultConversationPage = 50
	MaxConversationPage     = 100
	// DefaultPageBytes and MaxPageBytes bound the messages of one page; a
	// page always holds at least one message, however large.
	DefaultPageBytes = 128 << 10
	MaxPageBytes     = 256 << 10
	MinPageBytes     = 1 << 10
	// MaxThreadMessages bounds thread_read's family.
	MaxThreadMessages = 200
)

// stream identifies one room or DM stream.
type stream struct {
	kind string
	room string    // kind room
	pair [2]string // kind dm, sorted
}

func roomStream(room string) stream { return stream{kind: KindRoom, room: room} }

func dmStream(a, b string) stream {
	if b < a {
		a, b = b, a
	}
	return stream{kind: KindDM, pair: [2]string{a, b}}
}

// id is the stream's name in cursors, pointers and attention rows.
func (s stream) id() string {
	if s.kind == KindRoom {
		return "r:" + s.room
	}
	return "d:" + s.pair[0] + ":" + s.pair[1]
}

func (s stream) pk() string {
	if s.kind == KindRoom {
		return table.RoomStreamPK(s.room)
	}
	return table.DMStreamPK(s.pair[0], s.pair[1])
}

func (s stream) head() store.Key { return table.StreamHeadKey(s.pk()) }
func (s stream) msgKey(n uint64) store.Key {
	return table.StreamMsgKey(s.pk(), n)
}

// parseStream reverses id.
func parseStream(id string) (stream, bool) {
	switch {
	case strings.HasPrefix(id, "r:"):
		return roomStream(id[2:]), true
	case strings.HasPrefix(id, "d:"):
		a, b, ok := strings.Cut(id[2:], ":")
		return dmStream(a, b), ok
	}
	return stream{}, false
}

// pointerItem is a message's pointer item, on the box's activity index,
// and on its requests index when the message carries requests.
func pointerItem(box string, msg *table.Message) *store.Item {
	pk := table.MessagePointerKey(msg.ID)
	it := &store.Item{PK: pk.PK, SK: pk.SK, Version: 1, Data: table.Encode(table.Pointer{Stream: msg.Stream, Seq: msg.Seq,
		AuthorID: msg.AuthorID, ReplyTo: msg.ReplyTo, ThreadRoot: msg.ThreadRoot, Requests: msg.Requests}),
		GSI2PK: table.BoxActivityIndex(box), GSI2SK: table.ActivitySortKey(msg.SentAt.UnixNano(), msg.ID)}
	if len(msg.Requests) > 0 {
		it.GSI1PK, it.GSI1SK = table.BoxRequestsIndex(box), requestsIndexKey(msg)
	}
	return it
}

// requestsIndexKey orders a request message on its box's requests index:
// by send time, then id.
func requestsIndexKey(msg *table.Message) string {
	return table.RequestsSortKey(msg.SentAt.UnixNano(), msg.ID)
}

// Destination is where a message goes, or which conversation to read:
// exactly {kind:"dm", recipient_agent_id} or {kind:"room", room_id}.
type Destination struct {
	Kind             string `json:"kind" desc:"dm or room." schema:"enum=dm|room" example:"\"room\""`
	RecipientAgentID string `json:"recipient_agent_id,omitempty" desc:"For dm: the other agent." schema:"format=uuid"`
	RoomID           string `json:"room_id,omitempty" desc:"For room." schema:"format=uuid"`
}

// check validates the destination's shape and canonicalizes its id.
func (d *Destination) check(field string) error {
	switch d.Kind {
	case KindDM:
		if d.RoomID != "" || d.RecipientAgentID == "" {
			return apperr.Invalid(field, "a dm destination has exactly recipient_agent_id")
		}
		return uuidArg(field+".recipient_agent_id", &d.RecipientAgentID)
	case KindRoom:
		if d.RecipientAgentID != "" || d.RoomID == "" {
			return apperr.Invalid(field, "a room destination has exactly room_id")
		}
		return uuidArg(field+".room_id", &d.RoomID)
	}
	return apperr.Invalid(field+".kind", "must be dm or room")
}

// stream returns the destination's stream as seen by agent.
func (d *Destination) stream(agent string) stream {
	if d.Kind == KindRoom {
		return roomStream(d.RoomID)
	}
	return dmStream(agent, d.RecipientAgentID)
}

// MessageDTO is the canonical message.
type MessageDTO struct {
	MessageID     string       `json:"message_id"`
	StreamSeq     Revision     `json:"stream_seq" desc:"Position in its room or DM stream."`
	Destination   Destination  `json:"destination"`
	AuthorAgentID string       `json:"author_agent_id" desc:"The author: an agent, or for author_kind operator the box id."`
	AuthorName    string       `json:"author_name"`
	AuthorKind    string       `json:"author_kind" desc:"agent, or operator: the box's owner stepping in, never an agent." schema:"enum=agent|operator"`
	BodyMD        string       `json:"body_md"`
	Payload       Object       `json:"payload,omitempty"`
	Files         []FileRefDTO `json:"files,omitempty"`
	Mentions      []string     `json:"mentions,omitempty"`
	Requests      []string     `json:"requests,omitempty"`
	ReplyTo       string       `json:"reply_to,omitempty"`
	ThreadRootID  string       `json:"thread_root_id"`
	SentAt        string       `json:"sent_at"`
}

// MessageSendInput is message_send's input.
type MessageSendInput struct {
	Auth
	Mutation
	Destination Destination    `json:"destination"`
	BodyMD      string         `json:"body_md" desc:"Markdown, up to 16 KiB. Messages are final: correct with a reply." schema:"minLength=1,maxLength=16384" example:"\"Parser done; please review.\""`
	Payload     Object         `json:"payload,omitempty" desc:"Optional JSON object, no secrets."`
	Files       []FileRefInput `json:"files,omitempty" desc:"Links to files, never bytes." schema:"maxItems=20"`
	Mentions    []string       `json:"mentions,omitempty" desc:"Agent ids to notify; @Name in text does nothing." schema:"maxItems=20,itemFormat=uuid"`
	Requests    []string       `json:"requests,omitempty" desc:"Agent ids asked to respond; in a room also mention them." schema:"maxItems=20,itemFormat=uuid"`
	ReplyTo     string         `json:"reply_to,omitempty" desc:"Message id this answers; same room or DM." schema:"format=uuid"`
}

// MessageSendOutput is the durable receipt of a send: stored, not
// delivered.
type MessageSendOutput struct {
	MessageID      string   `json:"message_id"`
	StreamSeq      Revision `json:"stream_seq"`
	SentAt         string   `json:"sent_at"`
	ThreadRootID   string   `json:"thread_root_id"`
	AttentionCount int      `json:"attention_count" desc:"How many recipients got an attention row."`
	RequestCount   int      `json:"request_count" desc:"How many response requests the message carries."`
	Replay
}

// targets checks mentions or requests: distinct UUIDs (canonicalized in
// place), at most MaxTargets, never the sender.
func checkTargets(field string, ids []string, self string) error {
	if len(ids) > MaxTargets {
		return apperr.Limit(field, "20 agents")
	}
	seen := make(map[string]bool, len(ids))
	for i := range ids {
		if err := uuidArg(field, &ids[i]); err != nil {
			return err
		}
		if seen[ids[i]] {
			return apperr.Invalid(field, "must not repeat an agent")
		}
		seen[ids[i]] = true
		if ids[i] == self {
			return apperr.Invalid(field, "must not name yourself")
		}
	}
	return nil
}

// validate checks everything that needs no store read.
func (in *MessageSendInput) validate() (json.RawMessage, []table.File, error) {
	if err := in.Destination.check("destination"); err != nil {
		return nil, nil, err
	}
	if err := checkBodyMD("body_md", in.BodyMD); err != nil {
		return nil, nil, err
	}
	payload, err := checkPayload("payload", json.RawMessage(in.Payload))
	if err != nil {
		return nil, nil, err
	}
	files, err := checkFiles("files", in.Files, false)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range []struct {
		name string
		ids  []string
	}{{"mentions", in.Mentions}, {"requests", in.Requests}} {
		if len(f.ids) > MaxTargets {
			return nil, nil, apperr.Limit(f.name, "20 agents")
		}
		for i := range f.ids {
			if err := uuidArg(f.name, &f.ids[i]); err != nil {
				return nil, nil, err
			}
		}
	}
	if in.ReplyTo != "" {
		if err := uuidArg("reply_to", &in.ReplyTo); err != nil {
			return nil, nil, err
		}
	}
	return payload, files, nil
}

// MessageSend stores a message in a room or DM stream and gives each
// recipient at most one attention row. The result is the durable receipt.
//
// Errors: INVALID_ARGUMENT (shape, a target that is yourself, repeated, not
// a current member, or a request not also mentioned in a room; a DM to
// yourself), LIMIT_EXCEEDED (body, payload, files, envelope, targets),
// NOT_FOUND_OR_FORBIDDEN (a room you are not a current member of; a DM
// recipient that is unknown, of another box or not active; a reply_to you
// cannot see or of another conversation), ROOM_ARCHIVED, PROFILE_OUTDATED,
// IDEMPOTENCY_CONFLICT, TEMPORARILY_UNAVAILABLE.
func (h *Hub) MessageSend(ctx context.Context, cr Credentials, in MessageSendInput) (*MessageSendOutput, error) {
	return h.sendVia(ctx, "message_send", &in, func(m mutation, r reads, fn func(*call) (*MessageSendOutput, *plan, error)) (*MessageSendOutput, error) {
		return mutate(ctx, h, cr, m, r, fn)
	})
}

// sendVia validates and runs the send of in as tool, with run the
// kernel's runner for its caller: mutate for an agent's message_send,
// operate for the box's operator (operate.go). The rules and the plan are
// one and the same.
func (h *Hub) sendVia(ctx context.Context, tool string, in *MessageSendInput,
	run func(m mutation, r reads, fn func(*call) (*MessageSendOutput, *plan, error)) (*MessageSendOutput, error)) (*MessageSendOutput, error) {
	payload, files, err := in.validate()
	if err != nil {
		return nil, err
	}
	m := newMutation(tool, in.IdempotencyKey, struct {
		D  Destination
		B  string
		P  json.RawMessage
		F  []table.File
		M  []string
		R  []string
		To string
	}{in.Destination, in.BodyMD, payload, stripIDs(files), in.Mentions, in.Requests, in.ReplyTo})
	msg, err := newMessage(in, payload, files)
	if err != nil {
		return nil, err
	}

	var s slots
	var to []recipient
	// late are recipients a room post found only after its read whose
	// heads it could not lock then: the next attempt declares them.
	var late []string
	out, err := run(m, func(agent string, b *batch) {
		s = declareSend(b, in, agent, h.hot, late)
	}, func(c *call) (*MessageSendOutput, *plan, error) {
		return h.send(ctx, c, in, s, msg, &to, &late)
	})
	if err == nil {
		h.notifySent(to)
	}
	return out, err
}

// newMessage is the template of the message in: everything but what the
// send derives (id, stream, author, time, thread), within the envelope
// bound.
func newMessage(in *MessageSendInput, payload json.RawMessage, files []table.File) (*table.Message, error) {
	msg := &table.Message{Kind: in.Destination.Kind, RoomID: in.Destination.RoomID, Recipient: in.Destination.RecipientAgentID,
		BodyMD: in.BodyMD, Payload: payload, Files: files, Mentions: in.Mentions, Requests: in.Requests, ReplyTo: in.ReplyTo}
	if envelopeBytes(msg) > MaxEnvelopeBytes { // envelope.go: measured on what the agent sent
		return nil, apperr.Limit("message", "64 KiB for the whole message with its file metadata")
	}
	return msg, nil
}

// notifySent wakes the waiting readers of a committed send's recipients.
func (h *Hub) notifySent(to []recipient) {
	agents := make([]string, len(to))
	for i, r := range to {
		agents[i] = r.Agent
	}
	h.waiters.notify(agents)
}

// slots are what message_send reads with authentication.
type slots struct {
	st                stream
	head, parent      slot
	room, member      slot            // room
	heads             map[string]slot // room: inbox heads of expected recipients
	peerInbox, peerAg slot            // dm
}

// declareSend declares message_send's reads. Every counter a send moves
// by compare-and-set is declared hot (serial.go): the stream head, and
// each recipient's inbox head — for a DM its recipient, for a room post
// those expected (mentioned, named late by an earlier attempt, or
// recipients of the room's last post in this process); send locks any
// other without waiting. The open-request counters move by OpAdd, without
// a condition, and belong to recipients whose heads are declared.
func declareSend(b *batch, in *MessageSendInput, agent string, hot *hotLocks, late []string) slots {
	s := slots{st: in.Destination.stream(agent)}
	s.head = b.addHot(s.st.head())
	if in.ReplyTo != "" {
		s.parent = b.add(table.MessagePointerKey(in.ReplyTo))
	}
	if s.st.kind == KindRoom {
		s.room, s.member = b.add(table.RoomKey(in.Destination.RoomID)), b.add(table.RoomMemberKey(in.Destination.RoomID, agent))
		s.heads = map[string]slot{}
		for _, ids := range [][]string{in.Mentions, late, hot.recipients(in.Destination.RoomID)} {
			for _, id := range ids {
				if _, ok := s.heads[id]; !ok && id != agent {
					s.heads[id] = b.addHot(table.InboxHeadKey(id))
				}
			}
		}
	} else if in.Destination.RecipientAgentID != agent {
		s.peerAg = b.add(table.AgentKey(in.Destination.RecipientAgentID))
		s.peerInbox = b.addHot(table.InboxHeadKey(in.Destination.RecipientAgentID))
	}
	return s
}

// send applies message_send's rules to what was read and builds the plan.
// The recipients given attention are left in *notify, for waking waiting
// readers once the send has committed.
func (h *Hub) send(ctx context.Context, c *call, in *MessageSendInput, s slots, tmpl *table.Message, notify *[]recipient, late *[]string) (*MessageSendOutput, *plan, error) {
	msg := *tmpl
	msg.ID, msg.Stream, msg.AuthorID, msg.AuthorName, msg.SentAt = newMessageID(), s.st.id(), c.AgentID, c.Agent.Name, c.Now
	if c.isOperator() {
		msg.AuthorKind, msg.Via = AuthorOperator, c.operator.via
	}
	p := &plan{}

	// Where the message goes, and who may be targeted.
	var members map[string]*table.RoomMember // room: current members by agent
	var startSeq uint64                      // room: the sender's epoch start
	// toOperator: a DM to the box's operator (operate.go), which has no
	// agent record and no inbox.
	toOperator := false
	if s.st.kind == KindRoom {
		room, err := sendRoom(c, s, &startSeq)
		if err != nil {
			return nil, nil, err
		}
		roster, err := h.roster(ctx, room.ID)
		if err != nil {
			return nil, nil, err
		}
		members = roster
		if !c.isOperator() {
			p.add(stillMember(room.ID, c.AgentID))
		}
		p.add(h.roomUnchanged(room.ID, c.item(s.room).Version))
	} else {
		if in.Destination.RecipientAgentID == c.AgentID {
			return nil, nil, apperr.Invalid("destination.recipient_agent_id", "must not be yourself")
		}
		toOperator = in.Destination.RecipientAgentID == c.BoxID
		if toOperator && (len(in.Mentions) > 0 || len(in.Requests) > 0) {
			return nil, nil, apperr.Invalid("mentions", "a DM to the operator carries no mentions or requests")
		}
		if !toOperator {
			peer, err := sameBoxAgent(c.Caller, c.item(s.peerAg))
			if err != nil || peer.Status != statusActive {
				return nil, nil, apperr.Forbidden()
			}
			// The recipient must still be there when the DM commits.
			p.check(table.AgentKey(peer.ID), store.AtVersion(c.item(s.peerAg).Version), contended)
		}
	}

	// Targets: valid before any reply or sequence work.
	if err := h.checkSendTargets(c, in, members); err != nil {
		return nil, nil, err
	}
	if members != nil {
		// The roster was read before the write: a target removed since
		// must not be mentioned. Run again, and the check above refuses
		// it. (Requests are mentions too, in a room.)
		for _, id := range in.Mentions {
			p.check(table.RoomMemberKey(in.Destination.RoomID, id), store.Present, contended)
		}
	}

	// The reply's parent: visible to the sender, in the same stream.
	parentAuthor := ""
	msg.ThreadRoot = msg.ID
	if in.ReplyTo != "" {
		ptr, err := visiblePointer(c.item(s.parent), s.st, startSeq)
		if err != nil {
			return nil, nil, err
		}
		parentAuthor, msg.ThreadRoot = ptr.AuthorID, ptr.ThreadRoot
	}

	msg.Seq = p.next(c, s.head)
	mk := s.st.msgKey(msg.Seq)
	p.put(&store.Item{PK: mk.PK, SK: mk.SK, Version: 1, Data: table.Encode(&msg)}, store.Absent, contended)
	p.put(pointerItem(c.BoxID, &msg), store.Absent, nil)
	tk := table.ThreadKey(msg.ThreadRoot, msg.Seq)
	p.put(&store.Item{PK: tk.PK, SK: tk.SK, Version: 1, Data: table.Encode(table.ThreadRow{ID: msg.ID, Stream: msg.Stream,
		Seq: msg.Seq, ReplyTo: msg.ReplyTo})}, store.Absent, contended)
	// One open request per requested recipient (requests.go), two items
	// each, counted in the budget below.
	p.add(requestOps(&msg)...)

	var to []recipient
	if !toOperator {
		to = attention(c.AgentID, in, members, parentAuthor)
	}
	*notify = to
	out := &MessageSendOutput{MessageID: msg.ID, StreamSeq: Revision(msg.Seq), SentAt: timestamp(c.Now),
		ThreadRootID: msg.ThreadRoot, AttentionCount: len(to), RequestCount: len(in.Requests)}
	fan := fanoutPayload{MessageID: msg.ID, Stream: msg.Stream, Seq: msg.Seq, At: c.Now, To: to}

	// Small fan-outs commit with the message; the DM's one recipient was
	// read with authentication.
	room := c.room(p)
	switch {
	case len(to) == 0:
	case s.st.kind == KindDM:
		p.add(fanoutOps(fan, to, []*store.Item{c.item(s.peerInbox)})...)
	case 2*len(to) <= room:
		heads, err := h.roomHeads(ctx, c, s, in.Destination.RoomID, to, late)
		if err != nil {
			return nil, nil, err
		}
		p.add(fanoutOps(fan, to, heads)...)
	default:
		planFanout(p, c, fan, to)
	}
	return out, p, nil
}

// sendRoom is the room a send posts in, setting *startSeq to the first
// sequence the sender may see: a member's room, from its epoch, or for the
// operator any room of its box (operate.go), whole.
func sendRoom(c *call, s slots, startSeq *uint64) (*table.Room, error) {
	rs := roomSlots{room: s.room, member: s.member}
	if c.isOperator() {
		*startSeq = 1
		return rs.operatorWritable(c)
	}
	room, mem, err := rs.writable(c)
	if err != nil {
		return nil, err
	}
	*startSeq = max(mem.StartSeq, 1)
	return room, nil
}

// roster reads a room's current active members: a deactivated agent's
// membership is neither a target nor a recipient of attention.
func (h *Hub) roster(ctx context.Context, room string) (map[string]*table.RoomMember, error) {
	pk, prefix := table.RosterPrefix(room)
	recs, _, err := query[table.RoomMember](ctx, h.st, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	members := make(map[string]*table.RoomMember, len(recs))
	for _, m := range recs {
		if m.Inactive {
			continue
		}
		members[m.AgentID] = m
	}
	return members, nil
}

// checkSendTargets applies seed 000's target rules. members is nil for a
// DM.
func (h *Hub) checkSendTargets(c *call, in *MessageSendInput, members map[string]*table.RoomMember) error {
	for _, f := range []struct {
		name string
		ids  []string
	}{{"mentions", in.Mentions}, {"requests", in.Requests}} {
		if err := checkTargets(f.name, f.ids, c.AgentID); err != nil {
			return err
		}
		for _, id := range f.ids {
			if members == nil {
				if id != in.Destination.RecipientAgentID {
					return apperr.Invalid(f.name, "in a DM may name only its recipient")
				}
				continue
			}
			if _, ok := members[id]; !ok {
				return apperr.Invalid(f.name, "must name current members of the room")
			}
		}
	}
	if members != nil {
		for _, id := range in.Requests {
			if !slices.Contains(in.Mentions, id) {
				return apperr.Invalid("requests", "in a room, each requested agent must also be mentioned")
			}
		}
	}
	return nil
}

// visiblePointer decodes a message pointer the caller read and requires the
// message to be in stream st at or after the caller's epoch start.
func visiblePointer(it *store.Item, st stream, startSeq uint64) (*table.Pointer, error) {
	ptr, err := decode[table.Pointer](it, apperr.Forbidden())
	if err != nil {
		return nil, err
	}
	if ptr.Stream != st.id() || ptr.Seq < startSeq {
		return nil, apperr.Forbidden()
	}
	return ptr, nil
}

// attention computes each recipient's reasons (seed 000's table).
func attention(author string, in *MessageSendInput, members map[string]*table.RoomMember, parentAuthor string) []recipient {
	reasons := func(agent, follow string, dm bool) int {
		r := 0
		if dm {
			r |= ReasonDM
		}
		if slices.Contains(in.Mentions, agent) {
			r |= ReasonMention
		}
		if agent == parentAuthor {
			r |= ReasonReply
		}
		if slices.Contains(in.Requests, agent) {
			r |= ReasonRequest
		}
		if dm {
			return r
		}
		switch follow {
		case FollowAll:
			r |= ReasonFollowAll
		case FollowMentions:
		case FollowReplies:
			r &^= ReasonMention
		default: // mute, and anything unknown
			r = 0
		}
		// A mention alone reaches "replies" members not at all; with a
		// reply or request the row carries only the permitted bits.
		return r
	}
	var to []recipient
	if members == nil {
		if r := reasons(in.Destination.RecipientAgentID, "", true); r != 0 {
			to = append(to, recipient{Agent: in.Destination.RecipientAgentID, Reasons: r})
		}
		return to
	}
	ids := make([]string, 0, len(members))
	for id := range members {
		if id != author {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if r := reasons(id, members[id].Follow, false); r != 0 {
			to = append(to, recipient{Agent: id, Reasons: r})
		}
	}
	return to
}

// roomHeads returns the inbox heads of a room post's recipients, in
// order, holding each one's lock (declareSend): those declared come from
// the call's read; the others are locked without waiting and read now.
// When one of those locks is busy the post runs again with them declared.
func (h *Hub) roomHeads(ctx context.Context, c *call, s slots, room string, to []recipient, late *[]string) ([]*store.Item, error) {
	ids := make([]string, len(to))
	heads := make([]*store.Item, len(to))
	var missing []recipient
	var at []int
	for i, r := range to {
		ids[i] = r.Agent
		if sl, ok := s.heads[r.Agent]; ok {
			heads[i] = c.item(sl)
			continue
		}
		missing, at = append(missing, r), append(at, i)
	}
	h.hot.remember(room, ids)
	if len(missing) == 0 {
		return heads, nil
	}
	keys := make([]store.Key, len(missing))
	for i, r := range missing {
		keys[i] = table.InboxHeadKey(r.Agent)
	}
	if !c.holdLate(keys) {
		*late = ids
		return nil, errContended
	}
	got, err := h.inboxHeads(ctx, missing)
	if err != nil {
		return nil, err
	}
	h.hot.latest(keys, keys, got)
	for j, i := range at {
		heads[i] = got[j]
	}
	return heads, nil
}

// inboxHeads reads the inbox heads of recipients, in order.
func (h *Hub) inboxHeads(ctx context.Context, to []recipient) ([]*store.Item, error) {
	keys := make([]store.Key, len(to))
	for i, r := range to {
		keys[i] = table.InboxHeadKey(r.Agent)
	}
	items, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	return items, nil
}

// MessageGetInput is message_get's input.
type MessageGetInput struct {
	Auth
	MessageID string `json:"message_id" desc:"Message id." schema:"format=uuid"`
}

// MessageGetOutput is one message.
type MessageGetOutput struct {
	Message MessageDTO `json:"message"`
	// InboxSeq is set when the message is in the caller's inbox.
	InboxSeq *Revision `json:"inbox_seq,omitempty" desc:"Your inbox row for this message, if it has one; reading it recorded a retrieval receipt for this session (not an ACK)."`
}

// MessageGet returns a message the caller may see: a message of its own DM
// pair, or of a room it is a current member of, sent since its epoch began.
// Anything else answers the same NOT_FOUND_OR_FORBIDDEN. When the message is
// in the caller's inbox it records a retrieval receipt for this session;
// it never ACKs.
func (h *Hub) MessageGet(ctx context.Context, cr Credentials, in MessageGetInput) (*MessageGetOutput, error) {
	if err := uuidArg("message_id", &in.MessageID); err != nil {
		return nil, err
	}
	var ptr, shown slot
	return read(ctx, h, cr, func(_ string, b *batch) {
		ptr = b.add(table.MessagePointerKey(in.MessageID))
		shown = declareReceipts(b, cr)
	}, func(c *call) (*MessageGetOutput, error) {
		msg, err := h.resolveVisible(ctx, c, ptr)
		if err != nil {
			return nil, err
		}
		out := &MessageGetOutput{Message: messageDTO(msg)}
		seqs, err := h.recordReceipts(ctx, c, c.receiptsRead(shown), msg.Stream, []*table.Message{msg})
		if err != nil {
			return nil, err
		}
		if len(seqs) == 1 {
			r := Revision(seqs[0])
			out.InboxSeq = &r
		}
		return out, nil
	})
}

// visibleRead is the read of a tool about one message: it declares the
// pointer of message id in the call's batch, and its second result
// resolves the message in the call (resolveVisible).
func (h *Hub) visibleRead(ctx context.Context, id string) (reads, func(*call) (*table.Message, error)) {
	var ptr slot
	return func(_ string, b *batch) { ptr = b.add(table.MessagePointerKey(id)) },
		func(c *call) (*table.Message, error) { return h.resolveVisible(ctx, c, ptr) }
}

// resolveVisible returns the message at the pointer the call read, when the
// caller may see it; NOT_FOUND_OR_FORBIDDEN otherwise.
func (h *Hub) resolveVisible(ctx context.Context, c *call, ptr slot) (*table.Message, error) {
	msgs, err := h.visibleMessages(ctx, c, []*store.Item{c.item(ptr)})
	if err != nil {
		return nil, err
	}
	if msgs[0] == nil {
		return nil, apperr.Forbidden()
	}
	return msgs[0], nil
}

// visibleMessages resolves message pointers to the messages the caller may
// see (nil entries for the rest) with one batched read of the messages and
// the caller's memberships of their rooms.
func (h *Hub) visibleMessages(ctx context.Context, c *call, ptrs []*store.Item) ([]*table.Message, error) {
	out := make([]*table.Message, len(ptrs))
	var keys []store.Key
	type want struct {
		i      int
		st     stream
		seq    uint64
		msg    int
		member int
		room   int
	}
	var wants []want
	recs, err := decodeAll[table.Pointer](ptrs, nil)
	if err != nil {
		return nil, err
	}
	for i, p := range recs {
		if p == nil {
			continue
		}
		st, ok := parseStream(p.Stream)
		if !ok {
			continue
		}
		w := want{i: i, st: st, seq: p.Seq, member: -1, room: -1}
		if st.kind == KindDM && st.pair[0] != c.AgentID && st.pair[1] != c.AgentID {
			continue
		}
		w.msg = len(keys)
		keys = append(keys, st.msgKey(p.Seq))
		if st.kind == KindRoom {
			w.room, w.member = len(keys), len(keys)+1
			keys = append(keys, table.RoomKey(st.room), table.RoomMemberKey(st.room, c.AgentID))
		}
		wants = append(wants, w)
	}
	if len(keys) == 0 {
		return out, nil
	}
	items, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	for _, w := range wants {
		if w.room >= 0 {
			_, mem, err := roomAccess(c.Caller, items[w.room], items[w.member])
			if err != nil || w.seq < max(mem.StartSeq, 1) {
				continue
			}
		}
		if items[w.msg] == nil {
			continue
		}
		m, err := table.Decode[table.Message](items[w.msg])
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		out[w.i] = m
	}
	return out, nil
}

// recordReceipts records, for this session, a retrieval receipt for every
// message of msgs (all of one stream, ascending) that has a row in the
// caller's inbox, and returns those rows' inbox sequences. The rows are
// found on GSI1: a row written an instant ago may not be there yet, in
// which case no receipt is recorded for it now — inbox_list, which reads
// the table, always records its own.
func (h *Hub) recordReceipts(ctx context.Context, c *call, rc receiptsRead, streamID string, msgs []*table.Message) ([]uint64, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	lo, hi := msgs[0].Seq, msgs[len(msgs)-1].Seq
	recs, _, err := query[table.Attention](ctx, h.st, store.Query{Index: store.GSI1, PK: table.AttentionIndex(c.AgentID),
		From: table.AttentionSortKey(streamID, lo), To: table.AttentionSortKey(streamID, hi)})
	if err != nil {
		return nil, err
	}
	want := make(map[uint64]bool, len(msgs))
	for _, m := range msgs {
		want[m.Seq] = true
	}
	var seqs []uint64
	for _, a := range recs {
		if want[a.StreamSeq] {
			seqs = append(seqs, a.Seq)
		}
	}
	sorted := slices.Clone(seqs)
	slices.Sort(sorted)
	if err := h.recordShown(ctx, c, rc, spansOf(sorted, c.Now)); err != nil {
		return nil, err
	}
	return seqs, nil
}

// ConversationReadInput is conversation_read's input.
type ConversationReadInput struct {
	Auth
	Conversation Destination `json:"conversation" desc:"A room, or your DM with one agent."`
	Cursor       string      `json:"cursor,omitempty" desc:"From an earlier page." schema:"maxLength=2048"`
	Limit        int         `json:"limit,omitempty" desc:"Page size (default 50)." schema:"minimum=1,maximum=100"`
	MaxBytes     int         `json:"max_bytes,omitempty" desc:"Page byte budget (default 128 KiB)." schema:"minimum=1024,maximum=262144"`
}

// ConversationReadOutput is one page of a conversation, oldest first.
type ConversationReadOutput struct {
	Messages     []MessageDTO `json:"messages"`
	NextCursor   string       `json:"next_cursor,omitempty" desc:"More messages up to this read's snapshot remain: pass it to continue."`
	ResumeCursor string       `json:"resume_cursor,omitempty" desc:"The snapshot is complete: pass it later to get only newer messages."`
}

// ConversationRead pages through a room (from the caller's epoch start) or
// the caller's own DM pair, ascending. The first page fixes an upper bound
// (the stream's head); next_cursor continues after the last message
// actually returned, and a complete page answers resume_cursor at the
// upper, from which a later read captures a new upper and returns only
// newer messages. The byte budget never skips a message. Receipts are
// recorded for returned messages that are in the caller's inbox. Served from
// the table, never from an index.
func (h *Hub) ConversationRead(ctx context.Context, cr Credentials, in ConversationReadInput) (*ConversationReadOutput, error) {
	if err := in.Conversation.check("conversation"); err != nil {
		return nil, err
	}
	limit, err := pageSize("limit", in.Limit, DefaultConversationPage, MaxConversationPage)
	if err != nil {
		return nil, err
	}
	budget, err := pageBytes(in.MaxBytes)
	if err != nil {
		return nil, err
	}
	var head, room, member, shown slot
	var st stream
	return read(ctx, h, cr, func(agent string, b *batch) {
		st = in.Conversation.stream(agent)
		head = b.add(st.head())
		shown = declareReceipts(b, cr)
		if st.kind == KindRoom {
			room, member = b.add(table.RoomKey(st.room)), b.add(table.RoomMemberKey(st.room, agent))
		}
	}, func(c *call) (*ConversationReadOutput, error) {
		start, epoch := uint64(1), uint64(0)
		if st.kind == KindRoom {
			_, mem, err := roomAccess(c.Caller, c.item(room), c.item(member))
			if err != nil {
				return nil, err
			}
			start, epoch = max(mem.StartSeq, 1), mem.Epoch
		} else if in.Conversation.RecipientAgentID == c.AgentID {
			return nil, apperr.Invalid("conversation.recipient_agent_id", "must not be yourself")
		}
		hist := table.History{Scope: cursor.Scope{Agent: c.AgentID, Stream: "conv:" + st.id(), Epoch: epoch, Key: c.cursorKey}}
		pos, err := hist.Start(in.Cursor, start-1, version(c.item(head)))
		if err != nil {
			return nil, err
		}
		out := &ConversationReadOutput{Messages: []MessageDTO{}}
		msgs, last, err := h.streamPage(ctx, st, pos.After, pos.Upper, limit, budget)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			out.Messages = append(out.Messages, messageDTO(m))
		}
		if next, resume := hist.Next(pos, last); resume {
			out.ResumeCursor = next
		} else {
			out.NextCursor = next
		}
		if _, err := h.recordReceipts(ctx, c, c.receiptsRead(shown), st.id(), msgs); err != nil {
			return nil, err
		}
		return out, nil
	})
}

// streamPage reads messages after..upper of st, at most limit and within
// budget bytes (but at least one). last is the last sequence returned
// (after when none).
func (h *Hub) streamPage(ctx context.Context, st stream, after, upper uint64, limit, budget int) ([]*table.Message, uint64, error) {
	if after >= upper {
		return nil, after, nil
	}
	rows, err := h.st.Query(ctx, store.Query{PK: st.pk(), From: st.msgKey(after + 1).SK, To: st.msgKey(upper).SK, Limit: limit})
	if err != nil {
		return nil, 0, storageErr(err)
	}
	rows = rows[:table.Fit(len(rows), budget, func(i int) int { return len(rows[i].Data) })]
	msgs, err := decodeAll[table.Message](rows, nil)
	if err != nil {
		return nil, 0, err
	}
	last := after
	if len(msgs) > 0 {
		last = msgs[len(msgs)-1].Seq
	}
	return msgs, last, nil
}

// ThreadReadInput is thread_read's input.
type ThreadReadInput struct {
	Auth
	MessageID string `json:"message_id" desc:"Any message of the thread." schema:"format=uuid"`
}

// ThreadEntry is one message of a thread: the message, or only its id when
// it is an ancestor you cannot see.
type ThreadEntry struct {
	MessageID string      `json:"message_id"`
	Redacted  bool        `json:"redacted,omitempty" desc:"True for an ancestor you cannot see (sent before your membership began): only its id is shown."`
	Message   *MessageDTO `json:"message,omitempty"`
}

// ThreadReadOutput is a thread, oldest first.
type ThreadReadOutput struct {
	ThreadRootID string        `json:"thread_root_id"`
	Entries      []ThreadEntry `json:"entries"`
	Truncated    bool          `json:"truncated" desc:"True when the thread has more than 200 messages; use thread_export for all of it."`
}

// ThreadRead returns the thread of a visible anchor: every message of the
// thread the caller may see, oldest first, and the anchor's ancestors it
// may not see as redacted references (id only).
func (h *Hub) ThreadRead(ctx context.Context, cr Credentials, in ThreadReadInput) (*ThreadReadOutput, error) {
	if err := uuidArg("message_id", &in.MessageID); err != nil {
		return nil, err
	}
	declare, visible := h.visibleRead(ctx, in.MessageID)
	return read(ctx, h, cr, declare, func(c *call) (*ThreadReadOutput, error) {
		anchor, err := visible(c)
		if err != nil {
			return nil, err
		}
		return h.thread(ctx, c, anchor, MaxThreadMessages)
	})
}

// thread reads the family of a visible anchor, at most limit rows of it.
func (h *Hub) thread(ctx context.Context, c *call, anchor *table.Message, limit int) (*ThreadReadOutput, error) {
	v, err := h.viewThread(ctx, c, anchor)
	if err != nil {
		return nil, err
	}
	rows, more, err := h.threadRows(ctx, v, 0, 0, limit)
	if err != nil {
		return nil, err
	}
	out := &ThreadReadOutput{ThreadRootID: anchor.ThreadRoot, Entries: []ThreadEntry{}, Truncated: more}
	for _, r := range rows {
		if r.entry != nil {
			out.Entries = append(out.Entries, *r.entry)
		}
	}
	return out, nil
}

// threadView is what one caller may see of a thread: the messages at or
// after its epoch start, and the visible anchor's hidden ancestors as
// redacted references. thread_read and thread_export share it.
type threadView struct {
	st        stream
	root      string
	start     uint64          // the first stream sequence the caller may see
	ancestors map[string]bool // the anchor's ancestors, by id
}

// viewThread decides what the caller may see of a visible anchor's thread.
func (h *Hub) viewThread(ctx context.Context, c *call, anchor *table.Message) (*threadView, error) {
	st, _ := parseStream(anchor.Stream)
	v := &threadView{st: st, root: anchor.ThreadRoot, start: 1, ancestors: map[string]bool{}}
	if st.kind == KindRoom {
		// The anchor was visible: the caller is a current member; its
		// epoch start decides the rest.
		mem, _, err := get[table.RoomMember](ctx, h.st, table.RoomMemberKey(st.room, c.AgentID), apperr.Forbidden())
		if err != nil {
			return nil, err
		}
		v.start = max(mem.StartSeq, 1)
	}
	if v.start <= 1 || anchor.ReplyTo == "" {
		return v, nil // nothing is hidden, or the anchor has no ancestor
	}
	// Only hidden ancestors need naming; their chain runs through the
	// index rows up to the anchor.
	pk, prefix := table.ThreadPrefix(anchor.ThreadRoot)
	recs, _, err := query[table.ThreadRow](ctx, h.st, store.Query{PK: pk, From: prefix, To: prefix + table.SeqKey(anchor.Seq)})
	if err != nil {
		return nil, err
	}
	parent := map[string]string{}
	for _, r := range recs {
		parent[r.ID] = r.ReplyTo
	}
	for id := anchor.ReplyTo; id != "" && !v.ancestors[id]; id = parent[id] {
		v.ancestors[id] = true
	}
	return v, nil
}

// threadRow is one row of a thread's index as the caller sees it: entry
// is nil for a hidden message that is not an ancestor of the anchor.
type threadRow struct {
	seq   uint64
	entry *ThreadEntry
}

// threadRows reads at most limit index rows of v's thread after stream
// sequence after (and up to upper, 0 for no bound), oldest first; more
// reports rows beyond them.
func (h *Hub) threadRows(ctx context.Context, v *threadView, after, upper uint64, limit int) ([]threadRow, bool, error) {
	pk, prefix := table.ThreadPrefix(v.root)
	to := store.PrefixEnd(prefix)
	if upper > 0 {
		to = prefix + table.SeqKey(upper)
	}
	rows, more, err := table.Probe(ctx, h.st, store.Query{PK: pk, From: prefix + table.SeqKey(after+1), To: to}, limit)
	if err != nil {
		return nil, false, storageErr(err)
	}
	recs, err := decodeAll[table.ThreadRow](rows, nil)
	if err != nil {
		return nil, false, err
	}
	var visible []store.Key
	for _, r := range recs {
		if r.Seq >= v.start {
			visible = append(visible, v.st.msgKey(r.Seq))
		}
	}
	msgs, _, err := getMany[table.Message](ctx, h.st, visible, nil)
	if err != nil {
		return nil, false, err
	}
	byID := map[string]*table.Message{}
	for _, m := range msgs {
		if m != nil {
			byID[m.ID] = m
		}
	}
	out := make([]threadRow, len(recs))
	for i, r := range recs {
		out[i].seq = r.Seq
		if m, ok := byID[r.ID]; ok {
			d := messageDTO(m)
			out[i].entry = &ThreadEntry{MessageID: r.ID, Message: &d}
		} else if v.ancestors[r.ID] {
			out[i].entry = &ThreadEntry{MessageID: r.ID, Redacted: true}
		}
	}
	return out, more, nil
}

// newMessageID returns a new message id: a UUIDv7, whose leading bits are
// the time it was made, so that the items a send keys by its message id
// (the pointer, the stream row's index entries) land next to those of
// the sends just before it instead of on random pages of the embedded
// store. On DynamoDB a key's partition is its hash: the order changes
// nothing there. Its 74 random bits keep ids unguessable.
func newMessageID() string { return uuid.Must(uuid.NewV7()).String() }

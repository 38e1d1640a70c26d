package hub

// Rooms, memberships and epochs.
//
// The owner creates rooms and adds and removes members (admin_rooms.go);
// agents read what they are members of and change only their own follow
// preference and the brief. Items (keys.go):
//
//	room#R / room            the room: box, name, archived
//	room#R / brief           the brief, Version = brief revision
//	room#R / member#A        A's current membership: epoch, follow preference;
//	                         Version = membership revision
//	agent#A / member#R       the same membership seen from A (rooms_list, agent_prime)
//	room#R / epoch#A         the epoch ledger of (R, A), never deleted
//
// Epochs. Each add of A to R starts a new epoch: the ledger's Version counts
// epochs started, and both membership items are created with the new
// epoch's number and the default preference. A removal deletes both items
// and records in the ledger the highest membership revision the epoch used;
// the next epoch's membership starts above it. Membership revisions thus
// never repeat across epochs, so a room_follow CAS prepared in an old epoch
// fails with REVISION_CONFLICT in the new one instead of applying to it,
// and the old preference cannot come back.
//
// Authorization. An agent may see a room exactly while room#R/member#A
// exists and R is a room of its box. Everything else — a room that does not
// exist, one of another box, one the agent was never in or was removed
// from — answers the same NOT_FOUND_OR_FORBIDDEN, before any other check,
// so that no error reveals that a room exists or is archived.
//
// Mutations (room_follow, room_brief_update) carry, in their one atomic
// write, a check that the room record is still at the version read (it
// changes only when the room is archived) and that the membership still
// exists, so neither an archive nor a removal between read and write can be
// slipped past.

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
)

// Follow preferences (seed 000). DefaultFollow is what every new epoch
// starts with: mentions, replies and requests reach the member's inbox,
// ordinary posts do not.
const (
	FollowAll      = "all"
	FollowMentions = "mentions"
	FollowReplies  = "replies"
	FollowMute     = "mute"
	DefaultFollow  = FollowMentions
)

// Room limits, enforced by the service.
const (
	// MaxBriefBytes bounds a room brief's whole text (UTF-8).
	MaxBriefBytes = 64 << 10
	// MaxRosterMembers bounds the roster room_get returns.
	MaxRosterMembers = 50
	// DefaultRoomsPage and MaxRoomsPage bound rooms_list's page size.
	DefaultRoomsPage = 50
	MaxRoomsPage     = 100
	// MaxPrimeRooms bounds the rooms agent_prime lists.
	MaxPrimeRooms = 100
)

func roomArchived() error {
	return apperr.New(apperr.RoomArchived, "The room is archived; it can be read but not changed.")
}

// RoomIDInput is the input of the room read tools.
type RoomIDInput struct {
	Auth
	RoomID string `json:"room_id" desc:"A room id from rooms_list or agent_prime." schema:"format=uuid"`
}

// RoomRef is a current membership as agent_prime and rooms_list show it.
type RoomRef struct {
	RoomID         string   `json:"room_id"`
	Name           string   `json:"name"`
	Archived       bool     `json:"archived" desc:"Archived rooms are read-only."`
	Follow         string   `json:"follow" desc:"Your follow preference in this membership epoch: all, mentions, replies or mute." schema:"enum=all|mentions|replies|mute"`
	FollowRevision Revision `json:"follow_revision" desc:"Membership revision; room_follow takes it as expected_revision."`
	BriefRevision  Revision `json:"brief_revision" desc:"Current brief revision (\"0\": no brief yet)."`
	Epoch          Revision `json:"epoch" desc:"Your membership epoch: it grows each time the owner adds you to this room again."`
	JoinedAt       string   `json:"joined_at" desc:"When this membership epoch started."`
}

// roomRefs resolves agent-side membership rows to RoomRefs with one batched
// read of each room's record, brief and room-side membership. A row whose
// membership ended between the two reads is left out.
func (h *Hub) roomRefs(ctx context.Context, agent string, rows []*store.Item) ([]RoomRef, error) {
	refs := make([]RoomRef, 0, len(rows))
	if len(rows) == 0 {
		return refs, nil
	}
	ms, err := decodeAll[table.Membership](rows, nil)
	if err != nil {
		return nil, err
	}
	keys := make([]store.Key, 0, 3*len(rows))
	for _, m := range ms {
		keys = append(keys, table.RoomKey(m.RoomID), table.BriefKey(m.RoomID), table.RoomMemberKey(m.RoomID, agent))
	}
	items, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	for i := 0; i < len(items); i += 3 {
		if items[i] == nil || items[i+2] == nil {
			continue
		}
		room, err := table.Decode[table.Room](items[i])
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		mem, err := table.Decode[table.RoomMember](items[i+2])
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		refs = append(refs, RoomRef{RoomID: room.ID, Name: room.Name, Archived: room.Archived,
			Follow: mem.Follow, FollowRevision: Revision(items[i+2].Version),
			BriefRevision: Revision(version(items[i+1])), Epoch: Revision(mem.Epoch),
			JoinedAt: timestamp(mem.JoinedAt)})
	}
	return refs, nil
}

// currentRooms lists up to limit of the agent's current rooms, by room id,
// and whether there are more.
func (h *Hub) currentRooms(ctx context.Context, agent string, limit int) ([]RoomRef, bool, error) {
	pk, prefix := table.MembershipPrefix(agent)
	rows, more, err := table.Probe(ctx, h.st, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)}, limit)
	if err != nil {
		return nil, false, storageErr(err)
	}
	refs, err := h.roomRefs(ctx, agent, rows)
	return refs, more, err
}

// RoomsListInput is rooms_list's input.
type RoomsListInput struct {
	Auth
	Cursor string `json:"cursor,omitempty" desc:"next_cursor from the previous page." schema:"maxLength=2048"`
	Limit  int    `json:"limit,omitempty" desc:"Page size, 1-100 (default 50)." schema:"minimum=1,maximum=100"`
}

// RoomsListOutput is one page of the caller's current memberships.
type RoomsListOutput struct {
	Rooms      []RoomRef `json:"rooms" desc:"Your current rooms, ordered by room id."`
	NextCursor string    `json:"next_cursor,omitempty" desc:"Present when more rooms follow."`
}

type roomsPos struct {
	R string `json:"r"`
}

// RoomsList browses the caller's current memberships with their follow
// preference and brief revision. Its cursor is bound to the caller's
// membership generation, which every add and remove changes, so a cursor
// made before a membership change is CURSOR_INVALID (browse from zero after
// changes) rather than silently skipping or repeating a room. Archiving a
// room, a follow change or a brief update do not change the set or its
// order and leave cursors valid.
func (h *Hub) RoomsList(ctx context.Context, cr Credentials, in RoomsListInput) (*RoomsListOutput, error) {
	limit, err := pageSize("limit", in.Limit, DefaultRoomsPage, MaxRoomsPage)
	if err != nil {
		return nil, err
	}
	var gen slot
	return read(ctx, h, cr, func(agent string, b *batch) {
		gen = b.add(table.MembershipGenKey(agent))
	}, func(c *call) (*RoomsListOutput, error) {
		return h.roomsPage(ctx, c, uint64(count(c.item(gen))), in.Cursor, limit)
	})
}

// roomsPage reads one page of rooms_list in membership generation gen.
func (h *Hub) roomsPage(ctx context.Context, c *call, gen uint64, cur string, limit int) (*RoomsListOutput, error) {
	pk, prefix := table.MembershipPrefix(c.AgentID)
	ks := table.Keyset[roomsPos]{
		Scope: cursor.Scope{Agent: c.AgentID, Stream: "rooms", Epoch: gen, Key: c.cursorKey},
		Key:   func(p roomsPos) (string, bool) { return prefix + p.R, checkUUID("cursor", p.R) == nil },
		Pos:   func(sk string) roomsPos { return roomsPos{R: strings.TrimPrefix(sk, prefix)} },
	}
	rows, next, err := pageUnder(ctx, h.st, pk, prefix, ks, cur, limit)
	if err != nil {
		return nil, err
	}
	out := &RoomsListOutput{NextCursor: next}
	if out.Rooms, err = h.roomRefs(ctx, c.AgentID, rows); err != nil {
		return nil, err
	}
	return out, nil
}

// roomAccess decides whether the caller may see the room from the items
// read in its batch: the room record and the caller's room-side membership.
func roomAccess(c *Caller, roomIt, memberIt *store.Item) (*table.Room, *table.RoomMember, error) {
	if roomIt == nil || memberIt == nil {
		return nil, nil, apperr.Forbidden()
	}
	room, err := table.Decode[table.Room](roomIt)
	if err != nil {
		return nil, nil, apperr.Normalize(err)
	}
	mem, err := table.Decode[table.RoomMember](memberIt)
	if err != nil {
		return nil, nil, apperr.Normalize(err)
	}
	if room.BoxID != c.BoxID || mem.AgentID != c.AgentID {
		return nil, nil, apperr.Forbidden()
	}
	return room, mem, nil
}

// RoomDTO describes a room.
type RoomDTO struct {
	RoomID        string   `json:"room_id"`
	Name          string   `json:"name"`
	Archived      bool     `json:"archived" desc:"Archived rooms are read-only: every change answers ROOM_ARCHIVED."`
	BriefRevision Revision `json:"brief_revision" desc:"Current brief revision (\"0\": no brief yet)."`
	CreatedAt     string   `json:"created_at"`
	ArchivedAt    string   `json:"archived_at,omitempty"`
}

func roomDTO(r *table.Room, briefRevision uint64) RoomDTO {
	d := RoomDTO{RoomID: r.ID, Name: r.Name, Archived: r.Archived, BriefRevision: Revision(briefRevision),
		CreatedAt: timestamp(r.CreatedAt)}
	if r.Archived && !r.ArchivedAt.IsZero() {
		d.ArchivedAt = timestamp(r.ArchivedAt)
	}
	return d
}

// MembershipDTO is the caller's current membership of a room.
type MembershipDTO struct {
	RoomID         string   `json:"room_id"`
	Epoch          Revision `json:"epoch" desc:"Your membership epoch: it grows each time the owner adds you to this room again."`
	Follow         string   `json:"follow" desc:"Your follow preference in this epoch." schema:"enum=all|mentions|replies|mute"`
	FollowRevision Revision `json:"follow_revision" desc:"Membership revision; room_follow takes it as expected_revision."`
	JoinedAt       string   `json:"joined_at" desc:"When this epoch started."`
}

func membershipDTO(room string, m *table.RoomMember, revision uint64) MembershipDTO {
	return MembershipDTO{RoomID: room, Epoch: Revision(m.Epoch), Follow: m.Follow,
		FollowRevision: Revision(revision), JoinedAt: timestamp(m.JoinedAt)}
}

// RosterEntry is one current member as the roster shows it.
type RosterEntry struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name" desc:"The member's public name."`
}

// Roster is a bounded list of current members.
type Roster struct {
	Members   []RosterEntry `json:"members" desc:"Up to 50 current members, ordered by agent id."`
	Count     int64         `json:"count" desc:"How many current members the room has."`
	Truncated bool          `json:"truncated" desc:"True when members lists only part of the room."`
}

// RoomGetOutput is room_get's result.
type RoomGetOutput struct {
	Room       RoomDTO       `json:"room"`
	Membership MembershipDTO `json:"membership"`
	Roster     Roster        `json:"roster"`
}

// RoomGet returns a room the caller is a current member of: its details,
// the caller's membership and a bounded roster of current members' public
// names and ids. Archived rooms stay readable.
func (h *Hub) RoomGet(ctx context.Context, cr Credentials, in RoomIDInput) (*RoomGetOutput, error) {
	if err := uuidArg("room_id", &in.RoomID); err != nil {
		return nil, err
	}
	var rs roomSlots
	var brief, members slot
	return read(ctx, h, cr, func(agent string, b *batch) {
		rs = rs.declare(b, in.RoomID, agent)
		brief, members = b.add(table.BriefKey(in.RoomID)), b.add(table.MemberCountKey(in.RoomID))
	}, func(c *call) (*RoomGetOutput, error) {
		room, mem, err := rs.access(c)
		if err != nil {
			return nil, err
		}
		return h.roomGet(ctx, room, mem, c.item(rs.member).Version, version(c.item(brief)), count(c.item(members)))
	})
}

// roomGet completes room_get with the roster.
func (h *Hub) roomGet(ctx context.Context, room *table.Room, mem *table.RoomMember, memberRev, briefRev uint64, members int64) (*RoomGetOutput, error) {
	pk, prefix := table.RosterPrefix(room.ID)
	rows, more, err := table.Probe(ctx, h.st, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)}, MaxRosterMembers)
	if err != nil {
		return nil, storageErr(err)
	}
	recs, err := decodeAll[table.RoomMember](rows, nil)
	if err != nil {
		return nil, err
	}
	roster := Roster{Members: make([]RosterEntry, 0, len(rows)), Count: members, Truncated: more}
	for _, m := range recs {
		if m.Inactive {
			continue
		}
		roster.Members = append(roster.Members, RosterEntry{AgentID: m.AgentID, Name: m.AgentName})
	}
	// The counter and the roster are read apart; never report fewer
	// members than were listed.
	roster.Count = max(roster.Count, int64(len(roster.Members)))
	roster.Truncated = roster.Truncated || roster.Count > int64(len(roster.Members))
	return &RoomGetOutput{
		Room:       roomDTO(room, briefRev),
		Membership: membershipDTO(room.ID, mem, memberRev),
		Roster:     roster,
	}, nil
}

// RoomFollowInput is room_follow's input.
type RoomFollowInput struct {
	Auth
	Mutation
	RoomID           string   `json:"room_id" desc:"The room whose preference to change." schema:"format=uuid"`
	ExpectedRevision Revision `json:"expected_revision" desc:"The follow_revision you last read. A stale one, including one from an earlier membership epoch, fails with REVISION_CONFLICT."`
	Follow           string   `json:"follow" desc:"all: every message; mentions: mentions, replies to you and requests; replies: replies to you and requests; mute: nothing." schema:"enum=all|mentions|replies|mute" example:"\"all\""`
}

// RoomFollowOutput is the membership after the change.
type RoomFollowOutput struct {
	Membership MembershipDTO `json:"membership"`
	Replay
}

func validFollow(f string) bool {
	switch f {
	case FollowAll, FollowMentions, FollowReplies, FollowMute:
		return true
	}
	return false
}

// RoomFollow sets the caller's follow preference for its current epoch of
// a room, under CAS on the membership revision. It is prospective: it
// decides the attention of messages sent afterwards, and neither adds nor
// removes attention already computed.
//
// Errors: NOT_FOUND_OR_FORBIDDEN (not a current member, whatever the
// reason), ROOM_ARCHIVED, PROFILE_OUTDATED, REVISION_CONFLICT with the
// current revision, IDEMPOTENCY_CONFLICT, INVALID_ARGUMENT.
func (h *Hub) RoomFollow(ctx context.Context, cr Credentials, in RoomFollowInput) (*RoomFollowOutput, error) {
	if err := uuidArg("room_id", &in.RoomID); err != nil {
		return nil, err
	}
	if !validFollow(in.Follow) {
		return nil, apperr.Invalid("follow", "must be all, mentions, replies or mute")
	}
	m := newMutation("room_follow", in.IdempotencyKey, struct {
		Room string
		R    Revision
		F    string
	}{in.RoomID, in.ExpectedRevision, in.Follow})
	var rs roomSlots
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		rs = rs.declare(b, in.RoomID, agent)
	}, func(c *call) (*RoomFollowOutput, *plan, error) {
		room, mem, err := rs.writable(c)
		if err != nil {
			return nil, nil, err
		}
		current := c.item(rs.member).Version
		if uint64(in.ExpectedRevision) != current {
			return nil, nil, apperr.Conflict(current)
		}
		mem.Follow = in.Follow
		mk := table.RoomMemberKey(room.ID, c.AgentID)
		p := &plan{}
		// The archive check goes before the CAS: when both fail (a
		// concurrent archive and follow), the answer is ROOM_ARCHIVED,
		// which no retry can get past, not a REVISION_CONFLICT inviting
		// one.
		p.add(h.roomUnchanged(room.ID, c.item(rs.room).Version))
		p.put(&store.Item{PK: mk.PK, SK: mk.SK, Version: current + 1, Data: table.Encode(mem)}, store.AtVersion(current),
			h.conflictOrGoneAt(mk))
		return &RoomFollowOutput{Membership: membershipDTO(room.ID, mem, current+1)}, p, nil
	})
}

// roomSlots are the two items every room tool reads: the room and the
// caller's room-side membership.
type roomSlots struct{ room, member slot }

func (roomSlots) declare(b *batch, room, agent string) roomSlots {
	return roomSlots{room: b.add(table.RoomKey(room)), member: b.add(table.RoomMemberKey(room, agent))}
}

// access applies roomAccess to the slots.
func (rs roomSlots) access(c *call) (*table.Room, *table.RoomMember, error) {
	return roomAccess(c.Caller, c.item(rs.room), c.item(rs.member))
}

// writable is access for a mutation: the room must not be archived.
func (rs roomSlots) writable(c *call) (*table.Room, *table.RoomMember, error) {
	room, mem, err := rs.access(c)
	if err != nil {
		return nil, nil, err
	}
	if room.Archived {
		return nil, nil, roomArchived()
	}
	return room, mem, nil
}

// operatorWritable is writable for the box's operator (operate.go), which
// is no member: any room of its box that is not archived.
func (rs roomSlots) operatorWritable(c *call) (*table.Room, error) {
	room, err := decode[table.Room](c.item(rs.room), apperr.Forbidden())
	if err != nil {
		return nil, err
	}
	if room.BoxID != c.BoxID {
		return nil, apperr.Forbidden()
	}
	if room.Archived {
		return nil, roomArchived()
	}
	return room, nil
}

// stillMember guards a mutation against the caller's removal between its
// read and its write.
func stillMember(room, agent string) guardedOp {
	return guardedOp{op: store.Check(table.RoomMemberKey(room, agent), store.Present), onFail: answer(func() error { return apperr.Forbidden() })}
}

// roomUnchanged guards a mutation against the room being archived between
// its read and its write: the room record's version changes only then.
func (h *Hub) roomUnchanged(room string, v uint64) guardedOp {
	return guardedOp{
		op: store.Check(table.RoomKey(room), store.AtVersion(v)),
		onFail: func(ctx context.Context) error {
			it, err := h.st.Get(ctx, table.RoomKey(room))
			if err != nil {
				return storageErr(err)
			}
			if it == nil {
				return apperr.Forbidden()
			}
			if r, err := table.Decode[table.Room](it); err == nil && r.Archived {
				return roomArchived()
			}
			return apperr.Unavailable(nil).WithNext("The room changed at the same moment; retry with the same idempotency_key.")
		},
	}
}

// BriefDTO is a room's brief.
type BriefDTO struct {
	RoomID    string   `json:"room_id"`
	Revision  Revision `json:"revision" desc:"Brief revision (\"0\": no brief yet); room_brief_update takes it as expected_revision."`
	TextMD    string   `json:"text_md,omitempty" desc:"The brief, Markdown, at most 64 KiB. Absent when there is no brief yet, and in a replayed receipt."`
	UpdatedAt string   `json:"updated_at,omitempty"`
	UpdatedBy string   `json:"updated_by_agent_id,omitempty" desc:"The member who appended last; absent when the owner wrote the brief."`
}

func briefDTO(room string, it *store.Item) (BriefDTO, error) {
	d := BriefDTO{RoomID: room}
	if it == nil {
		return d, nil
	}
	b, err := table.Decode[table.Brief](it)
	if err != nil {
		return BriefDTO{}, apperr.Normalize(err)
	}
	return briefOf(b, room, it.Version), nil
}

// briefOf is brief b as revision version of room's brief.
func briefOf(b *table.Brief, room string, version uint64) BriefDTO {
	return BriefDTO{RoomID: room, Revision: Revision(version), TextMD: b.TextMD,
		UpdatedAt: timestamp(b.UpdatedAt), UpdatedBy: b.UpdatedBy}
}

// RoomBriefOutput is the result of room_brief_get and room_brief_update.
type RoomBriefOutput struct {
	Brief BriefDTO `json:"brief"`
	Replay
}

// RoomBriefGet returns the current brief of a room the caller is a current
// member of, however recently it was added (onboarding), archived or not.
func (h *Hub) RoomBriefGet(ctx context.Context, cr Credentials, in RoomIDInput) (*RoomBriefOutput, error) {
	if err := uuidArg("room_id", &in.RoomID); err != nil {
		return nil, err
	}
	var rs roomSlots
	var brief slot
	return read(ctx, h, cr, func(agent string, b *batch) {
		rs = rs.declare(b, in.RoomID, agent)
		brief = b.add(table.BriefKey(in.RoomID))
	}, func(c *call) (*RoomBriefOutput, error) {
		room, _, err := rs.access(c)
		if err != nil {
			return nil, err
		}
		d, err := briefDTO(room.ID, c.item(brief))
		if err != nil {
			return nil, err
		}
		return &RoomBriefOutput{Brief: d}, nil
	})
}

// RoomBriefUpdateInput is room_brief_update's input.
type RoomBriefUpdateInput struct {
	Auth
	Mutation
	RoomID           string   `json:"room_id" desc:"The room whose brief to extend." schema:"format=uuid"`
	ExpectedRevision Revision `json:"expected_revision" desc:"The brief revision you last read (\"0\" when there is none). A stale one fails with REVISION_CONFLICT and appends nothing."`
	AppendMD         string   `json:"append_md" desc:"Markdown paragraph to append, 1 byte to 16 KiB." schema:"minLength=1,maxLength=16384" example:"\"Decision: parsers live in internal/parse.\""`
}

// appendParagraph appends add to text so that it starts a new paragraph.
func appendParagraph(text, add string) string {
	switch {
	case text == "" || strings.HasSuffix(text, "\n\n"):
		return text + add
	case strings.HasSuffix(text, "\n"):
		return text + "\n" + add
	}
	return text + "\n\n" + add
}

// RoomBriefUpdate appends to a room's brief under CAS on the brief
// revision. It is an explicit append (no replacement, no merge), needs a
// fresh profile and a room that is not archived, and generates no message.
//
// Errors: NOT_FOUND_OR_FORBIDDEN, ROOM_ARCHIVED, PROFILE_OUTDATED,
// REVISION_CONFLICT with the current revision, LIMIT_EXCEEDED (append over
// 16 KiB, brief over 64 KiB), INVALID_ARGUMENT, IDEMPOTENCY_CONFLICT.
func (h *Hub) RoomBriefUpdate(ctx context.Context, cr Credentials, in RoomBriefUpdateInput) (*RoomBriefOutput, error) {
	if err := uuidArg("room_id", &in.RoomID); err != nil {
		return nil, err
	}
	if err := checkBodyMD("append_md", in.AppendMD); err != nil {
		return nil, err
	}
	m := newMutation("room_brief_update", in.IdempotencyKey, struct {
		Room string
		R    Revision
		A    string
	}{in.RoomID, in.ExpectedRevision, in.AppendMD})
	var rs roomSlots
	var brief slot
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		rs = rs.declare(b, in.RoomID, agent)
		brief = b.add(table.BriefKey(in.RoomID))
	}, func(c *call) (*RoomBriefOutput, *plan, error) {
		room, _, err := rs.writable(c)
		if err != nil {
			return nil, nil, err
		}
		// The revision first: a losing attempt on a hot brief must not pay
		// for decoding up to 64 KiB of text it will not use.
		current, text := version(c.item(brief)), ""
		if uint64(in.ExpectedRevision) != current {
			return nil, nil, apperr.Conflict(current)
		}
		if it := c.item(brief); it != nil {
			b, err := table.Decode[table.Brief](it)
			if err != nil {
				return nil, nil, apperr.Normalize(err)
			}
			text = b.TextMD
		}
		text = appendParagraph(text, in.AppendMD)
		if len(text) > MaxBriefBytes {
			return nil, nil, apperr.Limit("brief", "64 KiB of UTF-8 in all")
		}
		bk := table.BriefKey(room.ID)
		rec := table.Brief{TextMD: text, UpdatedAt: c.Now, UpdatedBy: c.AgentID}
		item := &store.Item{PK: bk.PK, SK: bk.SK, Version: current + 1, Data: table.Encode(rec)}
		d := briefOf(&rec, room.ID, item.Version) // not decoded back from item: 64 KiB of JSON
		// Checks in the order of the read path: membership, archive, then
		// the CAS. When several fail, the first decides the answer, so a
		// member removed meanwhile gets NOT_FOUND_OR_FORBIDDEN, never the
		// current revision of a room it may no longer see.
		p := &plan{}
		p.add(stillMember(room.ID, c.AgentID), h.roomUnchanged(room.ID, c.item(rs.room).Version))
		p.put(item, casCond(c.item(brief)), h.conflictAt(bk))
		receipt := d
		receipt.TextMD = ""
		p.receipt = &RoomBriefOutput{Brief: receipt}
		return &RoomBriefOutput{Brief: d}, p, nil
	})
}

// checkBrief validates an owner-written brief.
func checkBrief(s string) error {
	return checkSized("brief", s, false, MaxBriefBytes, "64 KiB of UTF-8")
}

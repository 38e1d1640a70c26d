package hub

// The owner's plane for rooms, memberships and directory opt-in. See
// rooms.go for the membership and epoch model and directory.go for cards.
//
// Each command reads what it needs, then writes under conditions on what it
// read, and starts again (a few times) when a concurrent change won: two
// owners adding the same agent at once start one epoch, not two.

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/google/uuid"
)

// RoomInfo describes a room to its owner.
type RoomInfo struct {
	RoomID        string   `json:"room_id"`
	BoxID         string   `json:"box_id"`
	Name          string   `json:"name"`
	Archived      bool     `json:"archived"`
	BriefRevision Revision `json:"brief_revision"`
	MemberCount   int64    `json:"member_count"`
	CreatedAt     string   `json:"created_at"`
	ArchivedAt    string   `json:"archived_at,omitempty"`
}

func roomInfo(r *table.Room, briefRevision uint64, members int64) *RoomInfo {
	d := roomDTO(r, briefRevision)
	return &RoomInfo{RoomID: r.ID, BoxID: r.BoxID, Name: r.Name, Archived: r.Archived,
		BriefRevision: d.BriefRevision, MemberCount: max(members, 0), CreatedAt: d.CreatedAt, ArchivedAt: d.ArchivedAt}
}

// MembershipInfo describes one (room, agent) membership to the owner.
// Changed is false when the command found the membership already as asked
// (adding a current member).
type MembershipInfo struct {
	RoomID         string   `json:"room_id"`
	AgentID        string   `json:"agent_id"`
	AgentName      string   `json:"agent_name"`
	Member         bool     `json:"member"`
	Epoch          Revision `json:"epoch"`
	Follow         string   `json:"follow,omitempty"`
	FollowRevision Revision `json:"follow_revision,omitempty"`
	JoinedAt       string   `json:"joined_at,omitempty"`
	LeftAt         string   `json:"left_at,omitempty"`
	Changed        bool     `json:"changed"`
	// RequestsClosed (remove-member) counts the agent's open requests in
	// the room that left its open set (admin_requests.go).
	RequestsClosed int `json:"requests_closed,omitempty"`
}

// CreateRoom creates a room in box, with a first brief when brief is not
// empty (the owner's, revision 1).
func (a *Admin) CreateRoom(ctx context.Context, box, name, brief string) (*RoomInfo, error) {
	if err := uuidArg("box", &box); err != nil {
		return nil, err
	}
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	if err := checkBrief(brief); err != nil {
		return nil, err
	}
	now := a.h.clock()
	r := &table.Room{ID: uuid.NewString(), BoxID: box, Name: name, CreatedAt: now}
	ops := []store.Op{
		store.Check(table.BoxKey(box), store.Present),
		store.Put(r.Item(1), store.Absent),
	}
	briefRev := uint64(0)
	if brief != "" {
		bk := table.BriefKey(r.ID)
		ops = append(ops, store.Put(&store.Item{PK: bk.PK, SK: bk.SK, Version: 1,
			Data: table.Encode(table.Brief{TextMD: brief, UpdatedAt: now})}, store.Absent))
		briefRev = 1
	}
	err := a.h.st.Write(ctx, ops)
	if cf, ok := store.ConditionFailed(err); ok && cf.Index == 0 {
		return nil, unknownBox(box)
	}
	if err != nil {
		return nil, storageErr(err)
	}
	return roomInfo(r, briefRev, 0), nil
}

// loadRoom reads a room for an admin command with its brief revision and
// member count.
func (a *Admin) loadRoom(ctx context.Context, room string) (*table.Room, uint64, *RoomInfo, error) {
	if err := uuidArg("room", &room); err != nil {
		return nil, 0, nil, err
	}
	items, err := a.h.st.BatchGet(ctx, []store.Key{table.RoomKey(room), table.BriefKey(room), table.MemberCountKey(room)})
	if err != nil {
		return nil, 0, nil, storageErr(err)
	}
	r, err := decode[table.Room](items[0], apperr.Forbidden())
	if err != nil {
		return nil, 0, nil, err
	}
	return r, items[0].Version, roomInfo(r, version(items[1]), count(items[2])), nil
}

// ArchiveRoom makes a room read-only for good: members keep reading it,
// every change answers ROOM_ARCHIVED. Archiving an archived room changes
// nothing.
func (a *Admin) ArchiveRoom(ctx context.Context, room string) (*RoomInfo, error) {
	return retry(ctx, func() (*RoomInfo, error) {
		r, ver, info, err := a.loadRoom(ctx, room)
		if err != nil {
			return nil, err
		}
		if r.Archived {
			return info, nil
		}
		r.Archived, r.ArchivedAt = true, a.h.clock()
		err = a.h.st.Write(ctx, []store.Op{store.Put(r.Item(ver+1), store.AtVersion(ver))})
		if err = written(err); err != nil {
			return nil, err
		}
		info.Archived, info.ArchivedAt = true, timestamp(r.ArchivedAt)
		return info, nil
	})
}

// AddMember adds agent to room, starting a new membership epoch with the
// default follow preference. The agent must belong to the room's box; the
// room must not be archived (ROOM_ARCHIVED) nor full (LIMIT_EXCEEDED at the
// stack's room member cap). Adding a current member
// changes nothing and reports the current membership with changed=false.
func (a *Admin) AddMember(ctx context.Context, room, agent string) (*MembershipInfo, error) {
	if err := uuidArg("room", &room); err != nil {
		return nil, err
	}
	if err := uuidArg("agent", &agent); err != nil {
		return nil, err
	}
	return retry(ctx, func() (*MembershipInfo, error) {
		items, err := a.h.st.BatchGet(ctx, []store.Key{table.RoomKey(room), table.AgentKey(agent), table.EpochKey(room, agent), table.RoomMemberKey(room, agent), table.RoomHeadKey(room), table.MemberCountKey(room)})
		if err != nil {
			return nil, storageErr(err)
		}
		if items[0] == nil || items[1] == nil {
			return nil, apperr.Forbidden()
		}
		r, err := table.Decode[table.Room](items[0])
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		ag, err := table.Decode[table.Agent](items[1])
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		if ag.BoxID != r.BoxID {
			return nil, apperr.New(apperr.NotFoundOrForbidden, "The agent does not belong to the room's box.")
		}
		if items[3] != nil {
			mem, err := table.Decode[table.RoomMember](items[3])
			if err != nil {
				return nil, apperr.Normalize(err)
			}
			return &MembershipInfo{RoomID: room, AgentID: agent, AgentName: ag.Name, Member: true,
				Epoch: Revision(mem.Epoch), Follow: mem.Follow, FollowRevision: Revision(items[3].Version),
				JoinedAt: timestamp(mem.JoinedAt)}, nil
		}
		if r.Archived {
			return nil, roomArchived()
		}
		if ag.Status != statusActive {
			return nil, apperr.New(apperr.NotFoundOrForbidden, "The agent is not active.")
		}
		// The cap is read, not locked: owners adding members to one room
		// at the same moment may pass it by as many as add at once.
		if err := a.h.limits.roomFull(count(items[5])); err != nil {
			return nil, err
		}

		ledger := &table.Epoch{AgentID: agent}
		started, ledgerCond := uint64(0), store.Absent
		if items[2] != nil {
			if ledger, err = table.Decode[table.Epoch](items[2]); err != nil {
				return nil, apperr.Normalize(err)
			}
			started, ledgerCond = items[2].Version, store.AtVersion(items[2].Version)
		}
		now := a.h.clock()
		epoch, rev := started+1, ledger.RevisionFloor+1
		ledger.Epoch, ledger.Active, ledger.JoinedAt, ledger.LeftAt = epoch, true, now, time.Time{}
		// The epoch begins after the room's last message: the write checks
		// the room stream's head is still there, so no message can commit
		// between the head read and the membership.
		head := version(items[4])
		mem := table.RoomMember{AgentID: agent, AgentName: ag.Name, Epoch: epoch, Follow: DefaultFollow, JoinedAt: now, StartSeq: head + 1}
		ek, mk, amk := table.EpochKey(room, agent), table.RoomMemberKey(room, agent), table.AgentMemberKey(agent, room)
		err = a.h.st.Write(ctx, []store.Op{
			store.Put(&store.Item{PK: ek.PK, SK: ek.SK, Version: epoch, Data: table.Encode(ledger)}, ledgerCond),
			store.Put(&store.Item{PK: mk.PK, SK: mk.SK, Version: rev, Data: table.Encode(mem)}, store.Absent),
			store.Put(&store.Item{PK: amk.PK, SK: amk.SK, Version: epoch,
				Data: table.Encode(table.Membership{RoomID: room, Epoch: epoch, JoinedAt: now})}, store.Absent),
			store.Check(table.RoomKey(room), store.AtVersion(items[0].Version)),
			// The agent record as read (active): a deactivation that
			// commits first makes this write fail and the retry refuse,
			// and one that commits later finds this membership to mark.
			store.Check(table.AgentKey(agent), store.AtVersion(items[1].Version)),
			store.Add(table.MemberCountKey(room), 1, 0),
			store.Add(table.MembershipGenKey(agent), 1, 0),
			store.Check(table.RoomHeadKey(room), casCond(items[4])),
		})
		// A failed condition: a concurrent change won; read again.
		if err = written(err); err != nil {
			return nil, err
		}
		return &MembershipInfo{RoomID: room, AgentID: agent, AgentName: ag.Name, Member: true,
			Epoch: Revision(epoch), Follow: mem.Follow, FollowRevision: Revision(rev),
			JoinedAt: timestamp(now), Changed: true}, nil
	})
}

// RemoveMember ends agent's current membership epoch of room: it loses
// access to the room at once, and a later AddMember starts a new epoch.
// Removing from an archived room is allowed (it withdraws read access).
// An agent that is not a current member is NOT_FOUND_OR_FORBIDDEN.
func (a *Admin) RemoveMember(ctx context.Context, room, agent string) (*MembershipInfo, error) {
	if err := uuidArg("room", &room); err != nil {
		return nil, err
	}
	if err := uuidArg("agent", &agent); err != nil {
		return nil, err
	}
	return retry(ctx, func() (*MembershipInfo, error) {
		items, err := a.h.st.BatchGet(ctx, []store.Key{table.RoomKey(room), table.EpochKey(room, agent), table.RoomMemberKey(room, agent)})
		if err != nil {
			return nil, storageErr(err)
		}
		if items[0] == nil {
			return nil, apperr.Forbidden()
		}
		if items[2] == nil {
			// Not a member (any more): finish closing its requests here,
			// which an interrupted or overtaken removal may have left.
			n, err := a.closeRemovedRequests(ctx, room, agent)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				return &MembershipInfo{RoomID: room, AgentID: agent, Member: false, Changed: false, RequestsClosed: n}, nil
			}
			return nil, apperr.New(apperr.NotFoundOrForbidden, "The agent is not a current member of this room.")
		}
		mem, err := table.Decode[table.RoomMember](items[2])
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		ledger := &table.Epoch{AgentID: agent, Epoch: mem.Epoch, JoinedAt: mem.JoinedAt}
		started, ledgerCond := mem.Epoch, store.Absent
		if items[1] != nil {
			if ledger, err = table.Decode[table.Epoch](items[1]); err != nil {
				return nil, apperr.Normalize(err)
			}
			started, ledgerCond = items[1].Version, store.AtVersion(items[1].Version)
		}
		now := a.h.clock()
		ledger.Active, ledger.LeftAt = false, now
		ledger.RevisionFloor = max(ledger.RevisionFloor, items[2].Version)
		ek := table.EpochKey(room, agent)
		// The member counter counts active members: an inactive one
		// (deactivated agent) was already taken off it.
		active := int64(1)
		if mem.Inactive {
			active = 0
		}
		err = a.h.st.Write(ctx, []store.Op{
			store.Delete(table.RoomMemberKey(room, agent), store.AtVersion(items[2].Version)),
			store.Delete(table.AgentMemberKey(agent, room), store.Unconditional),
			store.Put(&store.Item{PK: ek.PK, SK: ek.SK, Version: started, Data: table.Encode(ledger)}, ledgerCond),
			store.Add(table.MemberCountKey(room), -active, 0),
			store.Add(table.MembershipGenKey(agent), 1, 0),
		})
		if err = written(err); err != nil {
			return nil, err
		}
		closed, err := a.closeRemovedRequests(ctx, room, agent)
		if err != nil {
			return nil, err
		}
		return &MembershipInfo{RoomID: room, AgentID: agent, AgentName: mem.AgentName, Member: false,
			Epoch: Revision(mem.Epoch), JoinedAt: timestamp(mem.JoinedAt), LeftAt: timestamp(now), Changed: true,
			RequestsClosed: closed}, nil
	})
}

// ListRooms lists a box's rooms by name. It reads an index, so a room
// created a moment ago may appear a moment later on DynamoDB.
func (a *Admin) ListRooms(ctx context.Context, box string) ([]*RoomInfo, error) {
	if err := uuidArg("box", &box); err != nil {
		return nil, err
	}
	if err := a.requireBox(ctx, box); err != nil {
		return nil, err
	}
	items, err := a.h.st.Query(ctx, store.Query{Index: store.GSI1, PK: table.BoxRoomsIndex(box)})
	if err != nil {
		return nil, storageErr(err)
	}
	out := make([]*RoomInfo, 0, len(items))
	const perBatch = store.MaxBatchGetKeys / 2
	for start := 0; start < len(items); start += perBatch {
		chunk := items[start:min(start+perBatch, len(items))]
		recs, err := decodeAll[table.Room](chunk, nil)
		if err != nil {
			return nil, err
		}
		keys := make([]store.Key, 0, 2*len(chunk))
		for _, r := range recs {
			keys = append(keys, table.BriefKey(r.ID), table.MemberCountKey(r.ID))
		}
		extra, err := a.h.st.BatchGet(ctx, keys)
		if err != nil {
			return nil, storageErr(err)
		}
		for i, r := range recs {
			out = append(out, roomInfo(r, version(extra[2*i]), count(extra[2*i+1])))
		}
	}
	return out, nil
}

// SetDirectoryListed opts an agent in to the box directory or out of it.
// Only the owner decides this; the agent's own card fields are kept either
// way and reappear when it is listed again.
func (a *Admin) SetDirectoryListed(ctx context.Context, agent string, listed bool) (*AgentInfo, error) {
	return a.updateVisibility(ctx, agent, func(rec *table.Agent) { rec.DirectoryListed = listed })
}

// updateVisibility applies change (to the listing or the status) to the
// agent record and rewrites the card with it in one write, so the card is
// in the directory index exactly while visible(rec) holds. A change that
// changes nothing writes nothing.
// bumpKeys rewrites the key records ids as they are, one version on, each
// conditioned on the version read.
func (a *Admin) bumpKeys(ctx context.Context, ids []string) ([]store.Op, error) {
	keys := make([]store.Key, len(ids))
	for i, id := range ids {
		keys[i] = table.KeyRecordKey(id)
	}
	items, err := a.h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	var ops []store.Op
	for _, it := range items {
		if it == nil {
			continue
		}
		next := *it
		next.Version++
		ops = append(ops, store.Put(&next, store.AtVersion(it.Version)))
	}
	return ops, nil
}

func (a *Admin) updateVisibility(ctx context.Context, agent string, change func(rec *table.Agent)) (*AgentInfo, error) {
	if err := uuidArg("agent", &agent); err != nil {
		return nil, err
	}
	return retry(ctx, func() (*AgentInfo, error) {
		rec, ver, err := a.loadAgent(ctx, agent)
		if err != nil {
			return nil, err
		}
		cardIt, err := a.h.st.Get(ctx, table.CardKey(agent))
		if err != nil {
			return nil, storageErr(err)
		}
		card := &table.Card{}
		cardVer, cardCond := uint64(0), store.Absent
		if cardIt != nil {
			if card, err = table.Decode[table.Card](cardIt); err != nil {
				return nil, apperr.Normalize(err)
			}
			cardVer, cardCond = cardIt.Version, store.AtVersion(cardIt.Version)
		}
		before := *rec
		change(rec)
		unchanged := before.DirectoryListed == rec.DirectoryListed && before.Status == rec.Status
		if unchanged && (cardIt == nil && !visible(rec) || cardIt != nil && card.Listed == visible(rec)) {
			return a.describe(ctx, rec)
		}
		ops := []store.Op{store.Put(a.agentItem(rec, ver+1), store.AtVersion(ver))}
		if before.Status != rec.Status {
			// A mutation that authenticated before this change checks its
			// keys at the versions it read (authChecks): moving them makes
			// it fail rather than commit for an agent no longer active.
			keyOps, err := a.bumpKeys(ctx, rec.KeyIDs)
			if err != nil {
				return nil, err
			}
			ops = append(ops, keyOps...)
		}
		if cardIt != nil || visible(rec) {
			// The card keeps its revision: opt-in is not a card change the
			// agent has to merge.
			full, listing := cardItems(rec, card, cardVer)
			ops = append(ops, store.Put(full, cardCond), store.Put(listing, store.Unconditional))
		}
		err = a.h.st.Write(ctx, ops)
		if err = written(err); err != nil {
			return nil, err
		}
		return a.describe(ctx, rec)
	})
}

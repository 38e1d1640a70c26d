package hub

// Deactivation: the owner takes an agent out of its box without erasing it.
//
// A deactivated agent
//
//   - cannot authenticate: begin refuses an agent whose status is not
//     active, with every key it holds; and a mutation that authenticated
//     just before cannot commit after it: the status write moves the
//     agent's key records one version on, and every mutation checks its
//     keys at the versions it read (authChecks);
//   - is absent from the directory: its card leaves the box's directory
//     index (cardItems lists only visible agents) and directory_get answers
//     as for an unknown id;
//   - is absent from rosters and targets: its room-side member items carry
//     Inactive, and room_get's roster, message_send's target check and its
//     attention fan-out (roster) skip them, so mentioning or requesting it
//     fails as for a non-member, and it gets no attention rows;
//   - cannot be DM'd or added to a space: those check the peer's status
//     and answer NOT_FOUND_OR_FORBIDDEN, byte-identical to an unknown id
//     (the owner's add-member refuses it too, saying why);
//   - keeps its history (messages, checkpoint, memory) and its memberships:
//     the member items stay, marked; reactivation clears the marks.
//
// The status commits first, together with the card, in one write
// conditioned on the agent record's admin revision (updateVisibility). The
// marks follow in chunks (syncMemberships); each chunk's write is
// conditioned on the agent record still being at the revision the pass
// read, so a pass that a later status change overtook fails and starts
// over with the newer status: the last change's marks win. AddMember is
// conditioned on the agent record too, so a membership added concurrently
// is either seen by the pass or refused. A crash between chunks leaves some
// marks stale; the command is idempotent (a pass rewrites only marks that
// differ from the status), so running it again completes them.
//
// The room's member counter counts active members: marking one inactive
// takes it off, clearing the mark puts it back (RemoveMember knows).

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/store"
)

// statusInactive is a deactivated agent's status.
const statusInactive = "inactive"

// markChunk bounds the memberships one write marks: two ops each (the
// member item and the room's counter) plus the agent check, well inside a
// transaction's 100 items.
const markChunk = 40

// DeactivateAgent deactivates an agent (see the design note): it can no
// longer authenticate and disappears from the directory, rosters and
// targets, keeping its history and memberships. Deactivating an inactive
// agent completes any marks a failed run left and changes nothing else.
func (a *Admin) DeactivateAgent(ctx context.Context, agent string) (*AgentInfo, error) {
	return a.setStatus(ctx, agent, statusInactive)
}

// ReactivateAgent undoes DeactivateAgent: its keys work again, its card
// returns to the directory if the owner lists it, and its memberships
// count again (with their follow preferences).
func (a *Admin) ReactivateAgent(ctx context.Context, agent string) (*AgentInfo, error) {
	return a.setStatus(ctx, agent, statusActive)
}

func (a *Admin) setStatus(ctx context.Context, agent, status string) (*AgentInfo, error) {
	if err := uuidArg("agent", &agent); err != nil {
		return nil, err
	}
	info, err := a.updateVisibility(ctx, agent, func(rec *table.Agent) { rec.Status = status })
	if err != nil {
		return nil, err
	}
	if err := a.syncMemberships(ctx, agent); err != nil {
		return nil, err
	}
	return info, nil
}

// syncMemberships makes the Inactive mark of every room-side member item
// of agent match the agent's current status, in chunks.
func (a *Admin) syncMemberships(ctx context.Context, agent string) error {
	_, err := retry(ctx, func() (struct{}, error) {
		done, err := a.syncPass(ctx, agent)
		if err == nil && !done {
			err = errContended
		}
		return struct{}{}, err
	})
	return err
}

// syncPass is one pass of syncMemberships; done is false when a concurrent
// change (to the agent or to a membership) failed a chunk's write.
func (a *Admin) syncPass(ctx context.Context, agent string) (done bool, err error) {
	rec, ver, err := a.loadAgent(ctx, agent)
	if err != nil {
		return false, err
	}
	inactive := rec.Status != statusActive
	pk, prefix := table.MembershipPrefix(agent)
	rows, err := a.h.st.Query(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)})
	if err != nil {
		return false, storageErr(err)
	}
	for start := 0; start < len(rows); start += markChunk {
		chunk := rows[start:min(start+markChunk, len(rows))]
		ms, err := decodeAll[table.Membership](chunk, nil)
		if err != nil {
			return false, err
		}
		rooms := make([]string, len(chunk))
		keys := make([]store.Key, len(chunk))
		for i, m := range ms {
			rooms[i], keys[i] = m.RoomID, table.RoomMemberKey(m.RoomID, agent)
		}
		mems, items, err := getMany[table.RoomMember](ctx, a.h.st, keys, nil)
		if err != nil {
			return false, err
		}
		ops := []store.Op{store.Check(table.AgentKey(agent), store.AtVersion(ver))}
		for i, mem := range mems {
			if mem == nil || mem.Inactive == inactive {
				continue // removed since the listing, or already marked
			}
			it := items[i]
			mem.Inactive = inactive
			delta := int64(1)
			if inactive {
				delta = -1
			}
			// A new membership revision: a room_follow that read the
			// item before the mark cannot write the old mark back.
			next := *it
			next.Version, next.Data = it.Version+1, table.Encode(mem)
			ops = append(ops, store.Put(&next, store.AtVersion(it.Version)), store.Add(table.MemberCountKey(rooms[i]), delta, 0))
		}
		if len(ops) == 1 {
			continue
		}
		err = a.h.st.Write(ctx, ops)
		if _, ok := store.ConditionFailed(err); ok {
			return false, nil
		}
		if err != nil {
			return false, storageErr(err)
		}
	}
	return true, nil
}

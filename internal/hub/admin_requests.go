package hub

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/store"
)

// Requests of a removed member.
//
// A requested recipient removed from the room can no longer answer its
// open requests there: request_respond needs the request message visible,
// and neither the removal nor a later re-add (a new epoch, which reads only
// what was said after it) gives it back. So remove-member takes those
// requests out of the recipient's open set: each open request to the agent
// in the room becomes StatusRecipientRemoved (revision 1, a CAS from 0,
// so exactly one of the removal and a racing first declaration wins), and
// the recipient's open-request counter moves by -1 in the same write. The
// count then equals what the agent can answer, requests_list shows the
// request as recipient_removed to both sides (the sender sees why), and a
// re-add changes nothing. Requests the agent had already declared keep
// their declaration.
//
// The requests are found on the agent's incoming-requests index, which
// DynamoDB updates a moment after the table: a request sent in the instant
// before the removal may not be on it yet. Running remove-member again
// finishes the job (it closes what it finds also when the agent is no
// longer a member), as it does after a crash between the two steps.

// StatusRecipientRemoved is the state of a request whose recipient was
// removed from the room before declaring anything: not open, not a
// declaration, and final.
const StatusRecipientRemoved = "recipient_removed"

// closeRemovedRequests closes agent's open requests in room, which it has
// left; it returns how many it closed.
func (a *Admin) closeRemovedRequests(ctx context.Context, room, agent string) (int, error) {
	var open []*table.Request
	err := a.eachEntry(ctx, store.Query{Index: store.GSI1, PK: table.IncomingIndex(agent)}, func(it *store.Item) error {
		r, err := table.Decode[table.Request](it)
		if err != nil {
			return err
		}
		// The index copy may be older than the table, but a request
		// never returns to open: one declared there is declared.
		if r.Destination.Kind == KindRoom && r.Destination.RoomID == room && r.Status == StatusOpen {
			open = append(open, r)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	closed := 0
	for _, r := range open {
		k := table.RequestKey(r.MessageID, agent)
		it, err := a.h.st.Get(ctx, k)
		if err != nil {
			return closed, storageErr(err)
		}
		if it == nil || it.Version != 0 {
			continue
		}
		cur, err := table.Decode[table.Request](it)
		if err != nil {
			return closed, err
		}
		cur.Status, cur.DeclaredAt = StatusRecipientRemoved, a.h.clock()
		err = a.h.st.Write(ctx, []store.Op{
			store.Put(cur.Item(1), store.AtVersion(0)),
			store.Add(table.RequestCounterKey(agent), -1, 0),
		})
		if _, ok := store.ConditionFailed(err); ok {
			continue // declared meanwhile
		}
		if err != nil {
			return closed, storageErr(err)
		}
		closed++
	}
	return closed, nil
}

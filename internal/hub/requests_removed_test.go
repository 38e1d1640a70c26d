package hub_test

import (
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestRemovedRecipientLeavesOpenSet: a requested recipient removed from
// the room before answering can no longer answer, so its request leaves
// its open set: the count drops, requests_list shows recipient_removed to
// both sides, and a re-add resurrects nothing. A request already declared
// keeps its declaration.
func TestRemovedRecipientLeavesOpenSet(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		sent := r.request("please review", r.b, r.c)
		r.mustAnswer(r.crB, "b1", sent.MessageID, hub.StatusAccepted)
		if got := openCount(t, r.fixture, r.c); got != 1 {
			t.Fatalf("carol's open_request_count before removal = %d, want 1", got)
		}
		admin := r.h.Admin()
		for _, tc := range []struct {
			ag     *hub.AgentInfo
			closed int
		}{{r.b, 0}, {r.c, 1}} {
			info, err := admin.RemoveMember(r.ctx, r.room, tc.ag.AgentID)
			if err != nil || info.RequestsClosed != tc.closed {
				t.Fatalf("RemoveMember(%s) = %+v, %v; want requests_closed %d", tc.ag.Name, info, err, tc.closed)
			}
		}
		wantState := func(when string) {
			t.Helper()
			if got := openCount(t, r.fixture, r.c); got != 0 {
				t.Errorf("%s: carol's open_request_count = %d, want 0", when, got)
			}
			crC := r.prime(r.c)
			in, err := r.h.RequestsList(r.ctx, crC, hub.RequestsListInput{Direction: hub.DirectionIncoming})
			if err != nil || len(in.Requests) != 1 || in.Requests[0].Status != hub.StatusRecipientRemoved || in.Requests[0].Revision != 1 {
				t.Errorf("%s: carol's incoming = %+v, %v; want one recipient_removed request at revision 1", when, in, err)
			}
			open, err := r.h.RequestsList(r.ctx, crC, hub.RequestsListInput{Direction: hub.DirectionIncoming, Status: hub.StatusOpen})
			if err != nil || len(open.Requests) != 0 {
				t.Errorf("%s: carol's open incoming = %+v, %v; want none", when, open, err)
			}
			out, err := r.h.RequestsList(r.ctx, r.crA, hub.RequestsListInput{Direction: hub.DirectionOutgoing})
			if err != nil || len(out.Requests) != 2 {
				t.Fatalf("%s: alice's outgoing = %+v, %v; want two", when, out, err)
			}
			for _, q := range out.Requests {
				want := hub.StatusRecipientRemoved
				if q.RecipientAgentID == r.b.AgentID {
					want = hub.StatusAccepted
				}
				if q.Status != want {
					t.Errorf("%s: alice's outgoing request to %s is %s, want %s", when, q.RecipientAgentID, q.Status, want)
				}
			}
			for _, rev := range []hub.Revision{0, 1} {
				_, err := respond(r.fixture, crC, fmt.Sprintf("c-%s-%d", when, rev), sent.MessageID, rev, hub.StatusAccepted)
				wantCode(t, when+": RequestRespond(carol)", err, apperr.NotFoundOrForbidden)
			}
		}
		wantState("after removal")
		r.mustAdd(r.room, r.c)
		wantState("after re-add")
		// Nothing left to close: removing a non-member stays an error.
		if _, err := admin.RemoveMember(r.ctx, r.room, r.b.AgentID); apperr.Normalize(err).Code != apperr.NotFoundOrForbidden {
			t.Errorf("RemoveMember(bob, not a member) = %v, want NOT_FOUND_OR_FORBIDDEN", err)
		}
	})
}

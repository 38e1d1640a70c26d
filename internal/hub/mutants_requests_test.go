package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// Tests for requests_list mutants that survived make mutate: its scan
// budget and the size of each index read.

// TestRequestsListScanBudget: with a status filter, one requests_list
// reads at most 1,000 index entries; a page that found no match by then
// is empty and continues with next_cursor after the last entry it read.
// Bob has 1,000 open requests (written straight to the store: the state
// 1,000 request messages leave) and then one accepted request. Limits 1
// and 30 do not divide 1,000, so the budget's last read is a short one.
func TestRequestsListScanBudget(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		const open = 1000
		seedOpenRequests(r, open)
		sent := r.request("the one accepted", r.b)
		if _, err := respond(r.fixture, r.crB, "ok", sent.MessageID, 0, hub.StatusAccepted); err != nil {
			t.Fatalf("RequestRespond: %v", err)
		}
		for _, limit := range []int{1, 30} {
			in := hub.RequestsListInput{Direction: hub.DirectionIncoming, Status: hub.StatusAccepted, Limit: limit}
			page, err := r.h.RequestsList(r.ctx, r.crB, in)
			if err != nil {
				t.Fatalf("RequestsList(limit %d): %v", limit, err)
			}
			if len(page.Requests) != 0 || page.NextCursor == "" {
				t.Fatalf("RequestsList(accepted, limit %d) past %d open requests = %d requests, next cursor %t; want none and a next cursor (the scan budget)",
					limit, open, len(page.Requests), page.NextCursor != "")
			}
			in.Cursor = page.NextCursor
			next, err := r.h.RequestsList(r.ctx, r.crB, in)
			if err != nil {
				t.Fatalf("RequestsList(limit %d, next): %v", limit, err)
			}
			if len(next.Requests) != 1 || next.Requests[0].RequestMessageID != sent.MessageID || next.NextCursor != "" {
				t.Errorf("RequestsList(accepted, limit %d, next) = %+v; want the accepted request %s alone, at the end", limit, next, sent.MessageID)
			}
		}
	})
}

// seedOpenRequests writes n open requests from alice to bob in the room,
// sent before anything else of the fixture, as message_send stores them
// (requests.go: one record per recipient, on both requests indexes).
func seedOpenRequests(r *reqFixture, n int) {
	r.t.Helper()
	at := r.clock.Now().UTC().Add(-time.Hour)
	var ops []store.Op
	flush := func() {
		if err := r.raw.Write(r.ctx, ops); err != nil {
			r.t.Fatalf("seed requests: %v", err)
		}
		ops = ops[:0]
	}
	for i := range n {
		msg := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		sentAt := at.Add(time.Duration(i) * time.Millisecond)
		data, err := json.Marshal(map[string]any{"message_id": msg, "destination": r.roomDest, "stream_seq": i + 1,
			"author_id": r.a.AgentID, "recipient_id": r.b.AgentID, "sent_at": sentAt, "status": hub.StatusOpen})
		if err != nil {
			r.t.Fatalf("json.Marshal: %v", err)
		}
		sk := fmt.Sprintf("%020d#%s#%s", sentAt.UnixNano(), msg, r.b.AgentID)
		ops = append(ops, store.Put(&store.Item{PK: "req#" + msg, SK: "to#" + r.b.AgentID, Version: 1,
			GSI1PK: "rin#" + r.b.AgentID, GSI1SK: sk, GSI2PK: "rout#" + r.a.AgentID, GSI2SK: sk, Data: data}, store.Absent))
		if len(ops) == store.MaxWriteItems {
			flush()
		}
	}
	if len(ops) > 0 {
		flush()
	}
}

// queryLimits records the Limit of every query match selects.
type queryLimits struct {
	store.Store
	match  func(store.Query) bool
	mu     sync.Mutex
	limits []int
}

// recordLimits wraps a fixture's store in a queryLimits of match.
func recordLimits(ql **queryLimits, match func(store.Query) bool) func(store.Store) store.Store {
	return func(s store.Store) store.Store { *ql = &queryLimits{Store: s, match: match}; return *ql }
}

func (q *queryLimits) Query(ctx context.Context, in store.Query) ([]*store.Item, error) {
	if q.match(in) {
		q.mu.Lock()
		q.limits = append(q.limits, in.Limit)
		q.mu.Unlock()
	}
	return q.Store.Query(ctx, in)
}

func (q *queryLimits) take() []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.limits
	q.limits = nil
	return out
}

// TestRequestsListReadsWhatThePageNeeds: a filtered requests_list reads
// the index in chunks of what the page still needs, at least 16 entries:
// of 25 requests to bob the first 5 are accepted, so a page of 20
// accepted reads 20 entries (5 matches), then 16 (15 still needed), and
// never more than it can use.
func TestRequestsListReadsWhatThePageNeeds(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var ql *queryLimits
		r := setupReq(newFixture(t, ad, recordLimits(&ql, func(q store.Query) bool { return q.Index == store.GSI1 })))
		var accepted []string
		for i := range 25 {
			sent := r.request(fmt.Sprintf("task %d", i), r.b)
			r.clock.Advance(time.Millisecond)
			if i < 5 {
				if _, err := respond(r.fixture, r.crB, fmt.Sprintf("ok-%d", i), sent.MessageID, 0, hub.StatusAccepted); err != nil {
					t.Fatalf("RequestRespond: %v", err)
				}
				accepted = append(accepted, sent.MessageID)
			}
		}
		ql.take()
		out, err := r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: hub.DirectionIncoming, Status: hub.StatusAccepted, Limit: 20})
		if err != nil {
			t.Fatalf("RequestsList: %v", err)
		}
		var got []string
		for _, q := range out.Requests {
			got = append(got, q.RequestMessageID)
		}
		if !slices.Equal(got, accepted) {
			t.Errorf("RequestsList(accepted, limit 20) = %v, want %v", got, accepted)
		}
		if limits := ql.take(); !slices.Equal(limits, []int{20, 16}) {
			t.Errorf("RequestsList(accepted, limit 20) read the index with limits %v, want [20 16] (what the page still needs, at least 16)", limits)
		}
	})
}

// TestRequestsListFullPageReadsNoMore: a page that fills on an index
// read's last entry asks for no further read: 25 requests to bob, a page
// of 20 reads 20 entries once and continues with next_cursor.
func TestRequestsListFullPageReadsNoMore(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var ql *queryLimits
		r := setupReq(newFixture(t, ad, recordLimits(&ql, func(q store.Query) bool { return q.Index == store.GSI1 })))
		for i := range 25 {
			r.request(fmt.Sprintf("task %d", i), r.b)
			r.clock.Advance(time.Millisecond)
		}
		ql.take()
		out, err := r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: hub.DirectionIncoming, Limit: 20})
		if err != nil {
			t.Fatalf("RequestsList: %v", err)
		}
		if len(out.Requests) != 20 || out.NextCursor == "" {
			t.Fatalf("RequestsList(limit 20) of 25 = %d requests, next cursor %t; want 20 and a next cursor", len(out.Requests), out.NextCursor != "")
		}
		if limits := ql.take(); !slices.Equal(limits, []int{20}) {
			t.Errorf("RequestsList(limit 20) read the index with limits %v, want [20] (a full page reads no more)", limits)
		}
	})
}

// TestRequestsListStatusFilter: the status filter takes the five states
// and recipient_removed, and refuses anything else.
func TestRequestsListStatusFilter(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		r.request("one ask", r.b)
		for _, status := range []string{hub.StatusOpen, hub.StatusAccepted, hub.StatusNeedsContext, hub.StatusDeclined, hub.StatusResultReady, hub.StatusRecipientRemoved} {
			if _, err := r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: hub.DirectionIncoming, Status: status}); err != nil {
				t.Errorf("RequestsList(status %s): %v", status, err)
			}
		}
		for _, status := range []string{"bogus", "OPEN", "removed"} {
			_, err := r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: hub.DirectionIncoming, Status: status})
			wantCode(t, "RequestsList(status "+status+")", err, apperr.InvalidArgument)
		}
	})
}

// TestRequestRespondAmendsAttention: the attention summary a declaration
// returns counts the request it answered: bob has two open requests; his
// first declaration on one reports 1 open, a correction of it still 1.
func TestRequestRespondAmendsAttention(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		first := r.request("first ask", r.b)
		r.request("second ask", r.b)
		for _, tc := range []struct {
			name, key, status string
			rev               hub.Revision
		}{{"declaration", "d1", hub.StatusAccepted, 0}, {"correction", "d2", hub.StatusDeclined, 1}} {
			cr := r.crB
			cr.Info = &hub.CallInfo{}
			if _, err := respond(r.fixture, cr, tc.key, first.MessageID, tc.rev, tc.status); err != nil {
				t.Fatalf("RequestRespond(%s): %v", tc.name, err)
			}
			if a := cr.Info.Attention; a == nil || a.OpenRequestCount != 1 {
				t.Errorf("RequestRespond(%s): the call's attention summary = %+v, want open_request_count 1", tc.name, a)
			}
			if got := openCount(t, r.fixture, r.b); got != 1 {
				t.Errorf("after the %s: open_request_count %d, want 1", tc.name, got)
			}
		}
	})
}

// TestRequestRespondInDMEitherSide: a reply to a DM request goes back to
// the requester whichever side of the DM pair the respondent is on (the
// pair is stored sorted, and random agent ids would otherwise test one
// side or the other from run to run): alice asks bob, bob asks alice.
func TestRequestRespondInDMEitherSide(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA, crB := f.prime(f.a), f.prime(f.b)
		for _, tc := range []struct {
			name       string
			from, to   hub.Credentials
			fromA, toA *hub.AgentInfo
		}{{"alice asks bob", crA, crB, f.a, f.b}, {"bob asks alice", crB, crA, f.b, f.a}} {
			sent, err := f.h.MessageSend(f.ctx, tc.from, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "ask " + tc.name},
				Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: tc.toA.AgentID}, BodyMD: "can you?",
				Requests: []string{tc.toA.AgentID}})
			if err != nil {
				t.Fatalf("%s: MessageSend(DM request): %v", tc.name, err)
			}
			out, err := respond(f, tc.to, "answer "+tc.name, sent.MessageID, 0, hub.StatusAccepted)
			if err != nil {
				t.Fatalf("%s: RequestRespond: %v", tc.name, err)
			}
			got, err := f.h.MessageGet(f.ctx, tc.from, hub.MessageGetInput{MessageID: out.Reply.MessageID})
			if err != nil || got.Message.Destination.Kind != hub.KindDM || got.Message.Destination.RecipientAgentID != tc.fromA.AgentID {
				t.Errorf("%s: reply = %+v, %v; want a DM to the requester", tc.name, got, err)
			}
		}
	})
}

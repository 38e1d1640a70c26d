package hub_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// reqFixture is a room "work" with alice (author), bob and carol as
// members, and dave, a box agent outside the room.
type reqFixture struct {
	*fixture
	room         string
	c, d         *hub.AgentInfo
	crA, crB     hub.Credentials
	crC, crD     hub.Credentials
	crOther      hub.Credentials
	roomDest     hub.Destination
	sentRequests int
}

func newReqFixture(t *testing.T, ad teststores.Adapter) *reqFixture {
	t.Helper()
	return setupReq(newFixture(t, ad))
}

func setupReq(f *fixture) *reqFixture {
	r := &reqFixture{fixture: f}
	r.c, r.d = f.mustAgent(f.box, "carol"), f.mustAgent(f.box, "dave")
	room := f.mustRoom("work", "", f.a, f.b, r.c)
	r.room = room.RoomID
	r.crA, r.crB, r.crC, r.crD, r.crOther = f.prime(f.a), f.prime(f.b), f.prime(r.c), f.prime(r.d), f.prime(f.other)
	r.roomDest = hub.Destination{Kind: hub.KindRoom, RoomID: room.RoomID}
	return r
}

// request sends a room message from alice requesting the given agents.
func (r *reqFixture) request(body string, to ...*hub.AgentInfo) *hub.MessageSendOutput {
	r.t.Helper()
	var ids []string
	for _, ag := range to {
		ids = append(ids, ag.AgentID)
	}
	r.sentRequests++
	out, err := r.h.MessageSend(r.ctx, r.crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("req-%d", r.sentRequests)},
		Destination: r.roomDest, BodyMD: body, Mentions: ids, Requests: ids})
	if err != nil {
		r.t.Fatalf("MessageSend(request %q): %v", body, err)
	}
	return out
}

func respond(f *fixture, cr hub.Credentials, key, msg string, rev hub.Revision, status string, files ...hub.FileRefInput) (*hub.RequestRespondOutput, error) {
	return f.h.RequestRespond(f.ctx, cr, hub.RequestRespondInput{Mutation: hub.Mutation{IdempotencyKey: key},
		RequestMessageID: msg, ExpectedRevision: rev, Status: status, BodyMD: "re: " + status, Files: files})
}

// mustAnswer declares status on an open request (expected revision 0) as
// cr's agent.
func (r *reqFixture) mustAnswer(cr hub.Credentials, key, msg, status string) {
	r.t.Helper()
	if _, err := respond(r.fixture, cr, key, msg, 0, status); err != nil {
		r.t.Fatalf("RequestRespond(%s, %s): %v", key, status, err)
	}
}

func openCount(t *testing.T, f *fixture, ag *hub.AgentInfo) int64 {
	t.Helper()
	p, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
	if err != nil {
		t.Fatalf("Prime(%s): %v", ag.Name, err)
	}
	// The reading shows a miscount below zero as 0; the stored counter
	// does not.
	if raw := rawOpenRequests(f, ag.AgentID); raw != p.OpenRequestCount {
		t.Fatalf("Prime(%s): open_request_count %d, but the stored counter is %d", ag.Name, p.OpenRequestCount, raw)
	}
	return p.OpenRequestCount
}

// roomMessages reads the whole room as alice sees it.
func (r *reqFixture) roomMessages() []hub.MessageDTO {
	r.t.Helper()
	out, err := r.h.ConversationRead(r.ctx, r.crA, hub.ConversationReadInput{Conversation: r.roomDest, Limit: 100})
	if err != nil {
		r.t.Fatalf("ConversationRead: %v", err)
	}
	return out.Messages
}

func TestRequestRespond(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		sent := r.request("please review", r.b, r.c)
		if sent.RequestCount != 2 {
			t.Fatalf("MessageSend.RequestCount = %d, want 2", sent.RequestCount)
		}
		if got := openCount(t, r.fixture, r.b); got != 1 {
			t.Fatalf("bob's open_request_count after the request = %d, want 1", got)
		}

		t.Run("OnlyTheRequestedRecipient", func(t *testing.T) {
			_, unknown := respond(r.fixture, r.crB, "x0", "00000000-0000-4000-8000-000000000000", 0, hub.StatusAccepted)
			ref := envelope(t, unknown)
			for _, tc := range []struct {
				name string
				cr   hub.Credentials
			}{{"Author", r.crA}, {"OtherAgent", r.crD}, {"OtherBox", r.crOther}} {
				_, err := respond(r.fixture, tc.cr, "x-"+tc.name, sent.MessageID, 0, hub.StatusAccepted)
				wantSameError(t, "RequestRespond by "+tc.name, err, ref, sent.MessageID)
			}
		})

		t.Run("ResultReadyNeedsVersions", func(t *testing.T) {
			_, err := respond(r.fixture, r.crB, "rr0", sent.MessageID, 0, hub.StatusResultReady,
				hub.FileRefInput{URL: "https://example.com/out.txt", DisplayName: "out"})
			wantCode(t, "RequestRespond(result_ready, unversioned file)", err, apperr.InvalidArgument)
		})

		before := len(r.roomMessages())
		first, err := respond(r.fixture, r.crB, "b1", sent.MessageID, 0, hub.StatusAccepted)
		if err != nil || first.Request.Status != hub.StatusAccepted || first.Request.Revision != 1 || first.Reply.MessageID == "" {
			t.Fatalf("RequestRespond(accepted) = %+v, %v; want revision 1 with a reply", first, err)
		}
		if got := openCount(t, r.fixture, r.b); got != 0 {
			t.Errorf("bob's open_request_count after declaring = %d, want 0", got)
		}
		if got := openCount(t, r.fixture, r.c); got != 1 {
			t.Errorf("carol's open_request_count = %d, want 1 (only bob declared)", got)
		}
		msgs := r.roomMessages()
		if len(msgs) != before+1 {
			t.Fatalf("room after one declaration has %d messages, want %d", len(msgs), before+1)
		}
		reply := msgs[len(msgs)-1]
		if reply.MessageID != first.Reply.MessageID || reply.ReplyTo != sent.MessageID || len(reply.Requests) != 0 ||
			len(reply.Mentions) != 0 || reply.AuthorAgentID != r.b.AgentID {
			t.Errorf("reply = %+v; want bob's reply to the request carrying no request", reply)
		}
		// The author gets attention for the reply (reason 8).
		inbox, err := r.h.InboxList(r.ctx, r.crA, hub.InboxListInput{})
		if err != nil || len(inbox.Rows) != 1 || inbox.Rows[0].Message == nil || inbox.Rows[0].Message.MessageID != reply.MessageID || inbox.Rows[0].Reasons&hub.ReasonReply == 0 {
			t.Errorf("alice's inbox = %+v, %v; want the reply with reason 8", inbox, err)
		}

		t.Run("Replay", func(t *testing.T) {
			again, err := respond(r.fixture, r.crB, "b1", sent.MessageID, 0, hub.StatusAccepted)
			if err != nil || !again.Replayed || again.Reply.MessageID != first.Reply.MessageID || again.Request.Revision != 1 {
				t.Errorf("RequestRespond replay = %+v, %v; want the original receipt, replayed", again, err)
			}
			if n := len(r.roomMessages()); n != before+1 {
				t.Errorf("room after a replay has %d messages, want %d (no second reply)", n, before+1)
			}
		})

		t.Run("Correction", func(t *testing.T) {
			fix, err := respond(r.fixture, r.crB, "b2", sent.MessageID, 1, hub.StatusResultReady,
				hub.FileRefInput{URL: "https://example.com/out.txt", DisplayName: "out", SHA256: "ab0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd"})
			if err != nil || fix.Request.Status != hub.StatusResultReady || fix.Request.Revision != 2 {
				t.Fatalf("RequestRespond(correction) = %+v, %v; want result_ready at revision 2", fix, err)
			}
			_, err = respond(r.fixture, r.crB, "b3", sent.MessageID, 1, hub.StatusDeclined)
			if e := wantCode(t, "RequestRespond(stale revision)", err, apperr.RevisionConflict); e.CurrentRevision == nil || *e.CurrentRevision != 2 {
				t.Errorf("stale revision: current = %v, want 2", e.CurrentRevision)
			}
			if got := openCount(t, r.fixture, r.b); got != 0 {
				t.Errorf("open_request_count after a correction = %d, want 0", got)
			}
		})

		t.Run("RemovedMember", func(t *testing.T) {
			r.mustRemove(r.room, r.c)
			_, err := respond(r.fixture, r.crC, "c1", sent.MessageID, 0, hub.StatusAccepted)
			wantCode(t, "RequestRespond by a removed member", err, apperr.NotFoundOrForbidden)
		})
	})
}

func TestRequestRespondInDM(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA, crB := f.prime(f.a), f.prime(f.b)
		sent := f.mustSend(crA, "dm", hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "can you?", Requests: []string{f.b.AgentID}})
		out, err := respond(f, crB, "r1", sent.MessageID, 0, hub.StatusNeedsContext)
		if err != nil || out.Request.Destination.Kind != hub.KindDM {
			t.Fatalf("RequestRespond in a DM = %+v, %v", out, err)
		}
		got, err := f.h.MessageGet(f.ctx, crA, hub.MessageGetInput{MessageID: out.Reply.MessageID})
		if err != nil || got.Message.Destination.RecipientAgentID != f.a.AgentID || got.Message.ReplyTo != sent.MessageID {
			t.Errorf("reply = %+v, %v; want a DM to alice replying to the request", got, err)
		}
	})
}

// TestRequestRespondRace races four declarations on one open request: one
// wins, the others answer REVISION_CONFLICT with revision 1, one reply is
// posted and the open count drops exactly once.
func TestRequestRespondRace(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var b *writeBarrier
		r := setupReq(newFixture(t, ad, withBarrier(&b)))
		sent := r.request("race", r.b)
		before := len(r.roomMessages())
		const n = 4
		race(t, b, n, 1, func(i int) error {
			_, err := respond(r.fixture, r.crB, fmt.Sprintf("race-%d", i), sent.MessageID, 0, hub.StatusAccepted)
			return err
		})
		if got := len(r.roomMessages()); got != before+1 {
			t.Errorf("room after the race has %d messages, want %d (one reply)", got, before+1)
		}
		if got := openCount(t, r.fixture, r.b); got != 0 {
			t.Errorf("open_request_count after the race = %d, want 0", got)
		}
	})
}

// TestRequestsListKeyset pages through incoming and outgoing requests while
// new requests are sent concurrently: every request that existed before
// the browse is listed exactly once, nothing is listed twice, and the
// order is (message_seq, recipient).
func TestRequestsListKeyset(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		before := map[string]bool{}
		for i := range 12 {
			before[r.request(fmt.Sprintf("old %d", i), r.b, r.c).MessageID] = true
			r.clock.Advance(time.Millisecond)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				_, err := r.h.MessageSend(r.ctx, r.crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("new-%d", i)},
					Destination: r.roomDest, BodyMD: "new", Mentions: []string{r.b.AgentID, r.c.AgentID}, Requests: []string{r.b.AgentID, r.c.AgentID}})
				if err != nil {
					t.Errorf("concurrent MessageSend: %v", err)
				}
			}
		}()
		browse := func(cr hub.Credentials, dir string) []hub.RequestDTO {
			var all []hub.RequestDTO
			cur := ""
			for range 100 {
				page, err := r.h.RequestsList(r.ctx, cr, hub.RequestsListInput{Direction: dir, Cursor: cur, Limit: 5})
				if err != nil {
					t.Fatalf("RequestsList(%s): %v", dir, err)
				}
				all = append(all, page.Requests...)
				if cur = page.NextCursor; cur == "" {
					return all
				}
			}
			t.Fatalf("RequestsList(%s) never ended", dir)
			return nil
		}
		in, out := browse(r.crB, hub.DirectionIncoming), browse(r.crA, hub.DirectionOutgoing)
		wg.Wait()
		for _, tc := range []struct {
			dir  string
			got  []hub.RequestDTO
			per  int
			self string
		}{{"incoming", in, 1, r.b.AgentID}, {"outgoing", out, 2, r.a.AgentID}} {
			seen := map[string]int{}
			for i, q := range tc.got {
				k := q.RequestMessageID + "/" + q.RecipientAgentID
				if seen[k]++; seen[k] > 1 {
					t.Errorf("%s: %s listed twice", tc.dir, k)
				}
				if i > 0 {
					p := tc.got[i-1]
					if cmp := slices.Compare([]string{fmt.Sprintf("%020d", p.MessageSeq), p.RequestMessageID, p.RecipientAgentID},
						[]string{fmt.Sprintf("%020d", q.MessageSeq), q.RequestMessageID, q.RecipientAgentID}); cmp >= 0 {
						t.Errorf("%s: entry %d is not after entry %d in (message_seq, message, recipient) order", tc.dir, i, i-1)
					}
				}
				if q.Status != hub.StatusOpen || q.Revision != 0 || q.AuthorAgentID != r.a.AgentID {
					t.Errorf("%s: %+v, want an open request by alice", tc.dir, q)
				}
				if tc.dir == "incoming" && q.RecipientAgentID != tc.self {
					t.Errorf("incoming for bob lists a request to %s", q.RecipientAgentID)
				}
			}
			for id := range before {
				n := 0
				for k, c := range seen {
					if len(k) > len(id) && k[:len(id)] == id {
						n += c
					}
				}
				if n != tc.per {
					t.Errorf("%s: request %s listed %d times, want %d", tc.dir, id, n, tc.per)
				}
			}
		}
	})
}

// TestRequestsListStatus shows the author each recipient's current
// declaration and filters by status.
func TestRequestsListStatus(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		sent := r.request("two asks", r.b, r.c)
		r.mustAnswer(r.crC, "c1", sent.MessageID, hub.StatusDeclined)
		out, err := r.h.RequestsList(r.ctx, r.crA, hub.RequestsListInput{Direction: hub.DirectionOutgoing})
		if err != nil || len(out.Requests) != 2 || out.NextCursor != "" {
			t.Fatalf("RequestsList(outgoing) = %+v, %v; want two entries, complete", out, err)
		}
		got := map[string]string{}
		for _, q := range out.Requests {
			got[q.RecipientAgentID] = q.Status
		}
		if got[r.b.AgentID] != hub.StatusOpen || got[r.c.AgentID] != hub.StatusDeclined {
			t.Errorf("outgoing statuses = %v, want bob open and carol declined", got)
		}
		open, err := r.h.RequestsList(r.ctx, r.crA, hub.RequestsListInput{Direction: hub.DirectionOutgoing, Status: hub.StatusOpen})
		if err != nil || len(open.Requests) != 1 || open.Requests[0].RecipientAgentID != r.b.AgentID {
			t.Errorf("RequestsList(outgoing, open) = %+v, %v; want bob's only", open, err)
		}
		for _, tc := range []struct {
			name string
			cr   hub.Credentials
		}{{"OtherAgent", r.crD}, {"OtherBox", r.crOther}} {
			l, err := r.h.RequestsList(r.ctx, tc.cr, hub.RequestsListInput{Direction: hub.DirectionIncoming})
			if err != nil || len(l.Requests) != 0 {
				t.Errorf("RequestsList(incoming) by %s = %+v, %v; want nothing", tc.name, l, err)
			}
		}
		_, err = r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: hub.DirectionIncoming, Cursor: "bm90LWEtY3Vyc29y"})
		wantCode(t, "RequestsList(forged cursor)", err, apperr.CursorInvalid)
		_, err = r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: "sideways"})
		wantCode(t, "RequestsList(bad direction)", err, apperr.InvalidArgument)
	})
}

// TestRequestRespondUncertainRetry: a declaration whose write committed
// but whose answer was lost (a timeout) is retried with the same key: the
// original receipt, one reply, the count lowered once.
func TestRequestRespondUncertainRetry(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var fw *faultStore
		r := setupReq(newFixture(t, ad, withFaults(&fw)))
		sent := r.request("uncertain", r.b)
		before := len(r.roomMessages())
		fw.loseReply()
		if _, err := respond(r.fixture, r.crB, "u1", sent.MessageID, 0, hub.StatusAccepted); err == nil {
			t.Fatalf("RequestRespond with a lost answer: got success, want an uncertain failure")
		}
		again, err := respond(r.fixture, r.crB, "u1", sent.MessageID, 0, hub.StatusAccepted)
		if err != nil || !again.Replayed || again.Request.Revision != 1 {
			t.Fatalf("RequestRespond retried = %+v, %v; want the original receipt, replayed", again, err)
		}
		msgs := r.roomMessages()
		if len(msgs) != before+1 || msgs[len(msgs)-1].MessageID != again.Reply.MessageID {
			t.Errorf("room after the retry has %d messages, want %d ending with the receipt's reply", len(msgs), before+1)
		}
		if got := openCount(t, r.fixture, r.b); got != 0 {
			t.Errorf("open_request_count after the retry = %d, want 0", got)
		}
	})
}

// TestOpenRequestCountUnderRaces: two authors send requests to bob while
// bob declares on them as they appear; at the end bob's count equals the
// requests still open, exactly.
func TestOpenRequestCountUnderRaces(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		const each = 6
		var wg sync.WaitGroup
		for _, author := range []hub.Credentials{r.crA, r.crC} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					err := untilSettled(func() error {
						_, err := r.h.MessageSend(r.ctx, author, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("race-send-%d", i)},
							Destination: r.roomDest, BodyMD: "ask", Mentions: []string{r.b.AgentID}, Requests: []string{r.b.AgentID}})
						return err
					})
					if err != nil {
						t.Errorf("MessageSend: %v", err)
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		declared := map[string]bool{}
		for finished := false; !finished; {
			select {
			case <-done:
				finished = true
			default:
			}
			page, err := r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: hub.DirectionIncoming, Status: hub.StatusOpen})
			if err != nil {
				t.Fatalf("RequestsList: %v", err)
			}
			for i, q := range page.Requests {
				if i%2 == 0 && !declared[q.RequestMessageID] {
					if err := untilSettled(func() error {
						_, err := respond(r.fixture, r.crB, "d-"+q.RequestMessageID, q.RequestMessageID, 0, hub.StatusAccepted)
						return err
					}); err != nil {
						t.Errorf("RequestRespond: %v", err)
					}
					declared[q.RequestMessageID] = true
				}
			}
		}
		all, err := r.h.RequestsList(r.ctx, r.crB, hub.RequestsListInput{Direction: hub.DirectionIncoming, Limit: 100})
		if err != nil || len(all.Requests) != 2*each {
			t.Fatalf("RequestsList(all) = %d requests, %v; want %d", len(all.Requests), err, 2*each)
		}
		open := 0
		for _, q := range all.Requests {
			if q.Status == hub.StatusOpen {
				open++
			}
		}
		if got := openCount(t, r.fixture, r.b); got != int64(open) || open != 2*each-len(declared) {
			t.Errorf("open_request_count = %d with %d open requests and %d declared of %d; want them to agree", got, open, len(declared), 2*each)
		}
	})
}

// TestRequestsInALargeRoom: twenty requests in a room where thirty
// members get attention — forty request items in the first write, the
// sixty fan-out items continuing as an intent — all land, each counted
// once.
func TestRequestsInALargeRoom(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		var asked []*hub.AgentInfo
		var ids []string
		for i := range 30 {
			ag := r.mustAgent(r.box, fmt.Sprintf("member-%02d", i))
			m := r.mustAdd(r.room, ag)
			if i < 20 {
				asked = append(asked, ag)
				ids = append(ids, ag.AgentID)
				continue
			}
			if _, err := follow(r.fixture, r.prime(ag), "all", r.room, m.FollowRevision, hub.FollowAll); err != nil {
				t.Fatalf("RoomFollow(all): %v", err)
			}
		}
		sent, err := r.h.MessageSend(r.ctx, r.crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "big"},
			Destination: r.roomDest, BodyMD: "everyone, please", Mentions: ids, Requests: ids})
		if err != nil || sent.RequestCount != 20 || sent.AttentionCount != 30 {
			t.Fatalf("MessageSend(20 requests) = %+v, %v; want 20 requests and 30 attention rows", sent, err)
		}
		out, err := r.h.RequestsList(r.ctx, r.crA, hub.RequestsListInput{Direction: hub.DirectionOutgoing, Limit: 100})
		if err != nil || len(out.Requests) != 20 {
			t.Fatalf("RequestsList(outgoing) = %d entries, %v; want 20", len(out.Requests), err)
		}
		for _, ag := range asked[:3] {
			if got := openCount(t, r.fixture, ag); got != 1 {
				t.Errorf("%s's open_request_count = %d, want 1", ag.Name, got)
			}
		}
	})
}

// TestRequestsAfterRemoval: a removed member keeps its incoming request in
// requests_list (it was delivered; the entry carries ids only, no content)
// but can no longer respond.
func TestRequestsAfterRemoval(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReqFixture(t, ad)
		sent := r.request("before removal", r.c)
		r.mustRemove(r.room, r.c)
		in, err := r.h.RequestsList(r.ctx, r.crC, hub.RequestsListInput{Direction: hub.DirectionIncoming})
		if err != nil || len(in.Requests) != 1 || in.Requests[0].RequestMessageID != sent.MessageID {
			t.Fatalf("RequestsList after removal = %+v, %v; want the delivered request", in, err)
		}
		_, err = respond(r.fixture, r.crC, "late", sent.MessageID, 0, hub.StatusDeclined)
		wantCode(t, "RequestRespond after removal", err, apperr.NotFoundOrForbidden)
	})
}

// untilSettled retries call while it answers TEMPORARILY_UNAVAILABLE (one
// room stream contended by three writers can exhaust the hub's own
// retries, under -race especially), as a client does: with the same
// idempotency key, so each logical action still takes effect once. After
// 50 attempts it answers the last error.
func untilSettled(call func() error) error {
	for attempt := 1; ; attempt++ {
		err := call()
		if e, ok := apperr.As(err); !ok || e.Code != apperr.TemporarilyUnavailable || attempt == 50 {
			return err
		}
	}
}

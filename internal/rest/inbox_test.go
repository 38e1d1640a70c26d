package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// attentionOut is the attention summary every authenticated result carries.
type attentionOut struct {
	Attention *struct {
		UnreadCount      *int64 `json:"unread_count"`
		OpenRequestCount *int64 `json:"open_request_count"`
	} `json:"attention"`
}

// TestInboxCatchUpAndRespond is the workflow every agent runs: prime,
// list the inbox, read the thread, reply, acknowledge — five HTTP calls,
// each result carrying the attention summary, which ends at zero.
func TestInboxCatchUpAndRespond(t *testing.T) {
	hubtest.ForEachAdapterSerial(t, func(t *testing.T, a teststores.Adapter) {
		var calls atomic.Int64
		e := newEnv(t, a.Open(t, nil), func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); next.ServeHTTP(w, r) })
		})
		ctx := context.Background()
		crA := primeHub(t, e, e.alice)
		sent, err := e.h.MessageSend(ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "q"},
			Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: e.bob.AgentID}, BodyMD: "Can you review the parser?"})
		if err != nil {
			t.Fatalf("MessageSend: %v", err)
		}
		calls.Store(0)
		key := e.bob.BoxKey
		wantUnread := func(call string, r resp, n int64) {
			t.Helper()
			var att attentionOut
			r.wantOK(t, call, &att)
			if att.Attention == nil || att.Attention.UnreadCount == nil || *att.Attention.UnreadCount != n || att.Attention.OpenRequestCount == nil {
				t.Errorf("%s: attention = %s, want unread_count %d and open_request_count", call, r.body, n)
			}
		}

		r := e.do(t, req{method: "POST", path: "/v1/agent/prime", key: key})
		var primed struct {
			SessionID   string `json:"session_id"`
			UnreadCount int64  `json:"unread_count"`
		}
		r.wantOK(t, "prime", &primed)
		if primed.UnreadCount != 1 {
			t.Errorf("prime: unread_count = %d, want 1", primed.UnreadCount)
		}
		wantUnread("prime", r, 1)
		sid := primed.SessionID

		r = e.do(t, req{method: "POST", path: "/v1/inbox/list", key: key, session: sid, body: `{}`})
		var list struct {
			Rows []struct {
				InboxSeq string `json:"inbox_seq"`
				Message  struct {
					MessageID string `json:"message_id"`
				} `json:"message"`
			} `json:"rows"`
			ResumeCursor string `json:"resume_cursor"`
		}
		r.wantOK(t, "inbox_list", &list)
		wantUnread("inbox_list", r, 1)
		if len(list.Rows) != 1 || list.Rows[0].Message.MessageID != sent.MessageID || list.ResumeCursor == "" {
			t.Fatalf("inbox_list = %s; want the DM and a resume cursor", r.body)
		}

		r = e.do(t, req{method: "GET", path: "/v1/messages/" + sent.MessageID + "/thread", key: key, session: sid})
		wantUnread("thread_read", r, 1)

		r = e.do(t, req{method: "POST", path: "/v1/messages", key: key, session: sid, body: fmt.Sprintf(
			`{"idempotency_key":"re","destination":{"kind":"dm","recipient_agent_id":%q},"body_md":"Done.","reply_to":%q}`,
			e.alice.AgentID, sent.MessageID)})
		wantUnread("message_send", r, 1)

		r = e.do(t, req{method: "POST", path: "/v1/inbox/ack", key: key, session: sid,
			body: fmt.Sprintf(`{"idempotency_key":"ack","inbox_seqs":[%q]}`, list.Rows[0].InboxSeq)})
		var ack struct {
			Acked   int `json:"acked"`
			Results []struct {
				Status string `json:"status"`
			} `json:"results"`
		}
		r.wantOK(t, "inbox_ack", &ack)
		wantUnread("inbox_ack", r, 0)
		if ack.Acked != 1 || len(ack.Results) != 1 || ack.Results[0].Status != "acked" {
			t.Errorf("inbox_ack = %s; want one row acked", r.body)
		}
		if n := calls.Load(); n > 5 {
			t.Errorf("catch up and respond took %d HTTP calls, want at most 5", n)
		}
		// Alice sees the reply in her inbox.
		p, err := e.h.Prime(ctx, hub.Credentials{Bearer: e.alice.BoxKey}, hub.PrimeInput{})
		if err != nil || p.UnreadCount != 1 {
			t.Errorf("alice's unread after the reply = %+v, %v; want 1", p, err)
		}
	})
}

// TestInboxRESTArguments: the wire gates of the inbox tools.
func TestInboxRESTArguments(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	key := e.bob.BoxKey
	sid := e.prime(key)
	for _, tc := range []struct {
		name, path, body string
		status           int
		code             apperr.Code
	}{
		{"wait over 20", "/v1/inbox/list", `{"wait_seconds":21}`, http.StatusUnprocessableEntity, apperr.LimitExceeded},
		{"negative wait", "/v1/inbox/list", `{"wait_seconds":-1}`, http.StatusBadRequest, apperr.InvalidArgument},
		{"unknown filter", "/v1/inbox/list", `{"filter":"new"}`, http.StatusBadRequest, apperr.InvalidArgument},
		{"seq as a number", "/v1/inbox/ack", `{"idempotency_key":"k","inbox_seqs":[1]}`, http.StatusBadRequest, apperr.InvalidArgument},
		{"seq not decimal", "/v1/inbox/ack", `{"idempotency_key":"k","inbox_seqs":["01"]}`, http.StatusBadRequest, apperr.InvalidArgument},
		{"seq 0", "/v1/inbox/ack", `{"idempotency_key":"k","inbox_seqs":["0"]}`, http.StatusNotFound, apperr.NotFoundOrForbidden},
		{"no seqs", "/v1/inbox/ack", `{"idempotency_key":"k","inbox_seqs":[]}`, http.StatusBadRequest, apperr.InvalidArgument},
	} {
		e.do(t, req{method: "POST", path: tc.path, key: key, session: sid, body: tc.body}).
			wantError(t, tc.name, tc.status, tc.code)
	}
}

// primeHub opens a session for ag directly on the hub.
func primeHub(t *testing.T, e *env, ag *hub.AgentInfo) hub.Credentials {
	t.Helper()
	out, err := e.h.Prime(context.Background(), hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
	if err != nil {
		t.Fatalf("Prime(%s): %v", ag.Name, err)
	}
	return hub.Credentials{Bearer: ag.BoxKey, SessionID: out.SessionID, Transport: "rest"}
}

package mcpserver_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
)

// withAttention is a result's attention summary.
type withAttention struct {
	Attention *hub.AttentionSummary `json:"attention"`
}

// TestInboxCatchUpAndRespond is the workflow every agent runs, through the
// go-sdk client: agent_prime, inbox_list, thread_read, message_send (the
// reply), inbox_ack — five tool calls, every result carrying the
// attention summary in structuredContent, declared by each output schema.
func TestInboxCatchUpAndRespond(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p, err := e.hub.Prime(ctx, hub.Credentials{Bearer: e.alice.BoxKey}, hub.PrimeInput{})
		if err != nil {
			t.Fatalf("Prime(alice): %v", err)
		}
		crA := hub.Credentials{Bearer: e.alice.BoxKey, SessionID: p.SessionID, Transport: "rest"}
		sent, err := e.hub.MessageSend(ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "q"},
			Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: e.bob.AgentID}, BodyMD: "Can you review the parser?",
			Requests: []string{e.bob.AgentID}, Mentions: []string{e.bob.AgentID}})
		if err != nil {
			t.Fatalf("MessageSend: %v", err)
		}

		cs, rec := e.connect(t, e.bob.BoxKey)
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		for _, tool := range tools.Tools {
			switch tool.Name {
			case "agent_prime", "inbox_list", "thread_read", "message_send", "inbox_ack":
				b, _ := json.Marshal(tool.OutputSchema)
				// The success branch of anyOf [result, {error}].
				var s struct {
					AnyOf []struct {
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"anyOf"`
				}
				if json.Unmarshal(b, &s) != nil || len(s.AnyOf) == 0 || s.AnyOf[0].Properties["attention"] == nil {
					t.Errorf("%s: output schema %s does not declare attention", tool.Name, b)
				}
			}
		}
		before := len(rec.exchanges())
		wantUnread := func(tool string, raw any, n int64) {
			t.Helper()
			b, _ := json.Marshal(raw)
			var w withAttention
			if json.Unmarshal(b, &w) != nil || w.Attention == nil || w.Attention.UnreadCount != n {
				t.Errorf("%s: structuredContent %s, want attention.unread_count %d", tool, b, n)
			}
		}

		res := call(t, cs, "agent_prime", map[string]any{})
		prime := wantOK[hub.PrimeOutput](t, "agent_prime", res)
		wantUnread("agent_prime", res.StructuredContent, 1)
		if prime.UnreadCount != 1 {
			t.Errorf("agent_prime unread_count = %d, want 1", prime.UnreadCount)
		}

		res = call(t, cs, "inbox_list", map[string]any{})
		list := wantOK[hub.InboxListOutput](t, "inbox_list", res)
		wantUnread("inbox_list", res.StructuredContent, 1)
		if len(list.Rows) != 1 || list.Rows[0].Message == nil || list.Rows[0].Message.MessageID != sent.MessageID ||
			list.Rows[0].Reasons != hub.ReasonDM|hub.ReasonMention|hub.ReasonRequest {
			t.Fatalf("inbox_list = %+v; want the DM with its reasons", list)
		}

		res = call(t, cs, "thread_read", map[string]any{"message_id": sent.MessageID})
		wantOK[map[string]any](t, "thread_read", res)
		wantUnread("thread_read", res.StructuredContent, 1)

		res = call(t, cs, "message_send", map[string]any{"idempotency_key": "re", "body_md": "Reviewed: looks good.",
			"destination": map[string]any{"kind": "dm", "recipient_agent_id": e.alice.AgentID}, "reply_to": sent.MessageID})
		reply := wantOK[hub.MessageSendOutput](t, "message_send", res)
		wantUnread("message_send", res.StructuredContent, 1)
		if reply.ThreadRootID != sent.MessageID {
			t.Errorf("reply thread root = %s, want %s", reply.ThreadRootID, sent.MessageID)
		}

		res = call(t, cs, "inbox_ack", map[string]any{"idempotency_key": "ack",
			"inbox_seqs": []string{strconv.FormatUint(uint64(list.Rows[0].InboxSeq), 10)}})
		ack := wantOK[hub.InboxAckOutput](t, "inbox_ack", res)
		wantUnread("inbox_ack", res.StructuredContent, 0)
		if ack.Acked != 1 || ack.Results[0].Status != "acked" || ack.Results[0].AckedBySession != cs.ID() {
			t.Errorf("inbox_ack = %+v; want one row acked by this session", ack)
		}

		calls := 0
		for _, x := range rec.exchanges()[before:] {
			if x.rpcMethod == "tools/call" {
				calls++
			}
		}
		if calls > 5 {
			t.Errorf("catch up and respond took %d tool calls, want at most 5", calls)
		}
	})
}

package mcpserver_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestMessageTools is a smoke test of the four message tools over MCP on
// both storage adapters, through a real client: a room post with a mention
// and request, its replay, a reply, message_get with the inbox row,
// conversation_read paging to a resume cursor, thread_read, and the safe
// errors of another box's message and a DM to oneself.
func TestMessageTools(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		room := e.roomOfAliceAndBob("design")
		ca, _ := e.connect(t, e.alice.BoxKey)
		cb, _ := e.connect(t, e.bob.BoxKey)
		wantOK[hub.PrimeOutput](t, "agent_prime", call(t, ca, "agent_prime", map[string]any{}))
		wantOK[hub.PrimeOutput](t, "agent_prime", call(t, cb, "agent_prime", map[string]any{}))
		dest := map[string]any{"kind": "room", "room_id": room.RoomID}

		args := map[string]any{"destination": dest, "body_md": "Parser done; please review.",
			"mentions": []string{e.bob.AgentID}, "requests": []string{e.bob.AgentID}, "idempotency_key": "m-1"}
		post := wantOK[hub.MessageSendOutput](t, "message_send", call(t, ca, "message_send", args))
		if post.StreamSeq != 1 || post.AttentionCount != 1 || post.RequestCount != 1 || post.Replayed {
			t.Fatalf("message_send = %+v, want sequence 1 with one row and one request", post)
		}
		again := wantOK[hub.MessageSendOutput](t, "message_send replay", call(t, ca, "message_send", args))
		if !again.Replayed || again.MessageID != post.MessageID {
			t.Fatalf("replay = %+v, want %s replayed", again, post.MessageID)
		}
		reply := wantOK[hub.MessageSendOutput](t, "message_send reply", call(t, cb, "message_send", map[string]any{
			"destination": dest, "body_md": "On it.", "reply_to": post.MessageID, "idempotency_key": "r-1"}))
		if reply.ThreadRootID != post.MessageID || reply.StreamSeq != 2 {
			t.Fatalf("reply = %+v, want thread %s at sequence 2", reply, post.MessageID)
		}

		got := wantOK[hub.MessageGetOutput](t, "message_get", call(t, cb, "message_get", map[string]any{"message_id": post.MessageID}))
		if got.Message.BodyMD != "Parser done; please review." || got.InboxSeq == nil || *got.InboxSeq != 1 {
			t.Fatalf("message_get = %+v, want the post with bob's inbox row 1", got)
		}
		page := wantOK[hub.ConversationReadOutput](t, "conversation_read", call(t, cb, "conversation_read", map[string]any{"conversation": dest, "limit": 1}))
		if len(page.Messages) != 1 || page.NextCursor == "" {
			t.Fatalf("conversation_read(limit 1) = %+v, want one message and a next cursor", page)
		}
		page = wantOK[hub.ConversationReadOutput](t, "conversation_read next", call(t, cb, "conversation_read", map[string]any{"conversation": dest, "cursor": page.NextCursor}))
		if len(page.Messages) != 1 || page.Messages[0].MessageID != reply.MessageID || page.ResumeCursor == "" {
			t.Fatalf("conversation_read(next) = %+v, want the reply and a resume cursor", page)
		}
		th := wantOK[hub.ThreadReadOutput](t, "thread_read", call(t, ca, "thread_read", map[string]any{"message_id": reply.MessageID}))
		if th.ThreadRootID != post.MessageID || len(th.Entries) != 2 {
			t.Fatalf("thread_read = %+v, want the post and its reply", th)
		}

		wantCode(t, "message_send DM to yourself", call(t, ca, "message_send", map[string]any{
			"destination": map[string]any{"kind": "dm", "recipient_agent_id": e.alice.AgentID}, "body_md": "x", "idempotency_key": "d-1"}), apperr.InvalidArgument)
		other, _ := e.connect(t, e.mallory.BoxKey)
		wantOK[hub.PrimeOutput](t, "agent_prime", call(t, other, "agent_prime", map[string]any{}))
		wantCode(t, "message_get from another box", call(t, other, "message_get", map[string]any{"message_id": post.MessageID}), apperr.NotFoundOrForbidden)
		wantCode(t, "thread_read from another box", call(t, other, "thread_read", map[string]any{"message_id": post.MessageID}), apperr.NotFoundOrForbidden)
		wantCode(t, "conversation_read from another box", call(t, other, "conversation_read", map[string]any{"conversation": dest}), apperr.NotFoundOrForbidden)
	})
}

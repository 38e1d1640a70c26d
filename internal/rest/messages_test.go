package rest_test

import (
	"net/http"
	"testing"
)

// TestMessageRoutes is a smoke test of the four message routes through
// real HTTP: a room post with a mention, a DM, the receipt, message_get
// with its inbox row, a conversation page with its resume cursor, a thread,
// and the error mapping of NOT_FOUND_OR_FORBIDDEN, INVALID_ARGUMENT
// and CURSOR_INVALID.
func TestMessageRoutes(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	room := e.room("design", e.alice, e.bob)
	sa, sb := e.prime(e.alice.BoxKey), e.prime(e.bob.BoxKey)
	a, b := e.as(t, e.alice.BoxKey, sa), e.as(t, e.bob.BoxKey, sb)

	type receipt struct {
		MessageID      string `json:"message_id"`
		StreamSeq      string `json:"stream_seq"`
		ThreadRootID   string `json:"thread_root_id"`
		AttentionCount int    `json:"attention_count"`
		RequestCount   int    `json:"request_count"`
		Replayed       bool   `json:"replayed"`
	}
	var post, reply, dm, replay receipt
	postBody := `{"destination":{"kind":"room","room_id":"` + room.RoomID + `"},"body_md":"Parser done; please review.",` +
		`"mentions":["` + e.bob.AgentID + `"],"requests":["` + e.bob.AgentID + `"],"idempotency_key":"m1"}`
	a("POST", "/v1/messages", postBody).wantOK(t, "POST /v1/messages (room)", &post)
	if post.StreamSeq != "1" || post.AttentionCount != 1 || post.RequestCount != 1 || post.ThreadRootID != post.MessageID {
		t.Fatalf("POST /v1/messages = %+v, want sequence \"1\", one attention row and one request", post)
	}
	a("POST", "/v1/messages", postBody).wantOK(t, "POST /v1/messages (replay)", &replay)
	if !replay.Replayed || replay.MessageID != post.MessageID {
		t.Fatalf("replay = %+v, want the original receipt replayed", replay)
	}
	b("POST", "/v1/messages", `{"destination":{"kind":"room","room_id":"`+room.RoomID+`"},"body_md":"On it.","reply_to":"`+post.MessageID+`","idempotency_key":"r1"}`).
		wantOK(t, "POST /v1/messages (reply)", &reply)
	if reply.ThreadRootID != post.MessageID || reply.StreamSeq != "2" || reply.AttentionCount != 1 {
		t.Fatalf("reply = %+v, want thread %s at sequence \"2\" with a row for alice", reply, post.MessageID)
	}
	a("POST", "/v1/messages", `{"destination":{"kind":"dm","recipient_agent_id":"`+e.bob.AgentID+`"},"body_md":"psst","idempotency_key":"d1"}`).
		wantOK(t, "POST /v1/messages (dm)", &dm)

	var got struct {
		Message struct {
			BodyMD      string `json:"body_md"`
			StreamSeq   string `json:"stream_seq"`
			Destination struct {
				Kind   string `json:"kind"`
				RoomID string `json:"room_id"`
			} `json:"destination"`
		} `json:"message"`
		InboxSeq string `json:"inbox_seq"`
	}
	b("GET", "/v1/messages/"+post.MessageID, "").wantOK(t, "GET /v1/messages/{message_id}", &got)
	if got.Message.BodyMD != "Parser done; please review." || got.Message.StreamSeq != "1" || got.Message.Destination.RoomID != room.RoomID || got.InboxSeq != "1" {
		t.Fatalf("GET /v1/messages/{message_id} = %+v, want the post and bob's inbox row \"1\"", got)
	}

	var page struct {
		Messages []struct {
			MessageID string `json:"message_id"`
		} `json:"messages"`
		NextCursor   string `json:"next_cursor"`
		ResumeCursor string `json:"resume_cursor"`
	}
	b("POST", "/v1/conversations/read", `{"conversation":{"kind":"room","room_id":"`+room.RoomID+`"},"limit":1}`).
		wantOK(t, "POST /v1/conversations/read", &page)
	if len(page.Messages) != 1 || page.Messages[0].MessageID != post.MessageID || page.NextCursor == "" {
		t.Fatalf("first page = %+v, want the post and a next cursor", page)
	}
	b("POST", "/v1/conversations/read", `{"conversation":{"kind":"room","room_id":"`+room.RoomID+`"},"cursor":"`+page.NextCursor+`"}`).
		wantOK(t, "POST /v1/conversations/read (next)", &page)
	if len(page.Messages) != 1 || page.Messages[0].MessageID != reply.MessageID || page.ResumeCursor == "" {
		t.Fatalf("second page = %+v, want the reply and a resume cursor", page)
	}
	b("POST", "/v1/conversations/read", `{"conversation":{"kind":"dm","recipient_agent_id":"`+e.alice.AgentID+`"}}`).
		wantOK(t, "POST /v1/conversations/read (dm)", &page)
	if len(page.Messages) != 1 || page.Messages[0].MessageID != dm.MessageID {
		t.Fatalf("DM page = %+v, want the DM", page)
	}

	var thread struct {
		ThreadRootID string `json:"thread_root_id"`
		Entries      []struct {
			MessageID string `json:"message_id"`
		} `json:"entries"`
	}
	a("GET", "/v1/messages/"+reply.MessageID+"/thread", "").wantOK(t, "GET /v1/messages/{message_id}/thread", &thread)
	if thread.ThreadRootID != post.MessageID || len(thread.Entries) != 2 {
		t.Fatalf("thread = %+v, want the post and its reply", thread)
	}

	// Errors.
	carol := e.prime(e.carol.BoxKey)
	e.do(t, req{method: "GET", path: "/v1/messages/" + post.MessageID, key: e.carol.BoxKey, session: carol}).
		wantError(t, "GET a message of another box", http.StatusNotFound, "NOT_FOUND_OR_FORBIDDEN")
	e.do(t, req{method: "GET", path: "/v1/messages/" + post.MessageID + "/thread", key: e.carol.BoxKey, session: carol}).
		wantError(t, "GET a thread of another box", http.StatusNotFound, "NOT_FOUND_OR_FORBIDDEN")
	a("POST", "/v1/messages", `{"destination":{"kind":"dm","recipient_agent_id":"`+e.carol.AgentID+`"},"body_md":"x","idempotency_key":"d2"}`).
		wantError(t, "DM to another box", http.StatusNotFound, "NOT_FOUND_OR_FORBIDDEN")
	a("POST", "/v1/messages", `{"destination":{"kind":"dm","recipient_agent_id":"`+e.alice.AgentID+`"},"body_md":"x","idempotency_key":"d3"}`).
		wantError(t, "DM to yourself", http.StatusBadRequest, "INVALID_ARGUMENT")
	a("POST", "/v1/messages", `{"destination":{"kind":"dm","recipient_agent_id":"`+e.bob.AgentID+`"},"body_md":"x","payload":{"api_key":"v"},"idempotency_key":"d4"}`).
		wantError(t, "a credential-like payload key", http.StatusBadRequest, "INVALID_ARGUMENT")
	a("POST", "/v1/conversations/read", `{"conversation":{"kind":"room","room_id":"`+room.RoomID+`"},"cursor":"`+page.ResumeCursor+`"}`).
		wantError(t, "another agent's cursor", http.StatusBadRequest, "CURSOR_INVALID")
}

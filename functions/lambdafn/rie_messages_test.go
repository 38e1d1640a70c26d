//go:build unix

package lambdafn_test

import (
	"encoding/json"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
)

// TestMessageSendUnderRuntimeEmulator invokes message_send's real function
// binary under the Lambda runtime emulator, against the table this test
// prepared: a room post with a mention, its replay, and a DM to another
// box's agent; the hub then reads what the function stored.
func TestMessageSendUnderRuntimeEmulator(t *testing.T) {
	const fn = "message_send"

	tb := newEmulatorTable(t)
	h, ctx := tb.h, tb.Ctx
	alice, bob, mallory := tb.Alice, tb.Bob, tb.Mallory
	room := tb.MustRoom(tb.box, "design", alice, bob)
	prime := tb.Prime(alice)

	emu := tb.start(t, fn)
	headers := map[string]string{"authorization": "Bearer " + alice.BoxKey, "agentbox-session": prime.SessionID,
		"content-type": "application/json"}
	body := `{"destination":{"kind":"room","room_id":"` + room.RoomID + `"},"body_md":"Parser done.","mentions":["` + bob.AgentID + `"],"idempotency_key":"rie-1"}`
	var out struct {
		MessageID      string `json:"message_id"`
		StreamSeq      string `json:"stream_seq"`
		AttentionCount int    `json:"attention_count"`
		Replayed       bool   `json:"replayed"`
	}
	res := emu.invoke(t, "POST", "/v1/messages", headers, body)
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &out) != nil || out.StreamSeq != "1" || out.AttentionCount != 1 || out.Replayed {
		t.Fatalf("%s function: got %d %s, want 200 with stream_seq \"1\" and one attention row", fn, res.StatusCode, res.Body)
	}
	first := out.MessageID
	res = emu.invoke(t, "POST", "/v1/messages", headers, body)
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &out) != nil || !out.Replayed || out.MessageID != first {
		t.Fatalf("%s function replay: got %d %s, want the receipt of %s replayed", fn, res.StatusCode, res.Body, first)
	}
	res = emu.invoke(t, "POST", "/v1/messages", headers,
		`{"destination":{"kind":"dm","recipient_agent_id":"`+mallory.AgentID+`"},"body_md":"x","idempotency_key":"rie-2"}`)
	if res.StatusCode != 404 {
		t.Errorf("%s function, DM to another box: got %d %s, want 404 NOT_FOUND_OR_FORBIDDEN", fn, res.StatusCode, res.Body)
	}

	bobCr := tb.Prime(bob)
	got, err := h.MessageGet(ctx, bobCr, hub.MessageGetInput{MessageID: first})
	if err != nil || got.Message.BodyMD != "Parser done." || got.InboxSeq == nil || *got.InboxSeq != 1 {
		t.Errorf("MessageGet after the function ran = %+v, %v; want the message in bob's inbox at 1", got, err)
	}
}

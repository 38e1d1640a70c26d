//go:build unix

package lambdafn_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
)

// TestRoomFunctionUnderRuntimeEmulator invokes one room tool's real
// function binary (a mutation with a path parameter and a CAS body) under
// the Lambda runtime emulator, against the table this test prepared.
func TestRoomFunctionUnderRuntimeEmulator(t *testing.T) {
	const fn = "room_brief_update"

	tb := newEmulatorTable(t)
	h, ctx, adm := tb.h, context.Background(), tb.h.Admin()
	alice := tb.Alice
	room, err := adm.CreateRoom(ctx, tb.box, "design", "Welcome.")
	if err != nil {
		t.Fatalf("CreateRoom: %v", err)
	}
	if _, err := adm.AddMember(ctx, room.RoomID, alice.AgentID); err != nil {
		t.Fatalf("AddMember: %v", err)
	}
	prime := tb.Prime(alice)

	emu := tb.start(t, fn)
	headers := map[string]string{"authorization": "Bearer " + alice.BoxKey, "agentbox-session": prime.SessionID,
		"content-type": "application/json"}
	path := "/v1/rooms/" + room.RoomID + "/brief"
	res := emu.invoke(t, "POST", path, headers, `{"expected_revision":"1","append_md":"Decided.","idempotency_key":"rie-1"}`)
	var out struct {
		Brief struct {
			Revision string `json:"revision"`
			TextMD   string `json:"text_md"`
		} `json:"brief"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &out) != nil || out.Brief.Revision != "2" || out.Brief.TextMD != "Welcome.\n\nDecided." {
		t.Fatalf("%s function: got %d %s, want 200 with brief revision \"2\"", fn, res.StatusCode, res.Body)
	}
	res = emu.invoke(t, "POST", path, headers, `{"expected_revision":"1","append_md":"Again.","idempotency_key":"rie-2"}`)
	if res.StatusCode != 409 {
		t.Errorf("%s function with a stale revision: got %d %s, want 409 REVISION_CONFLICT", fn, res.StatusCode, res.Body)
	}
	got, err := h.RoomBriefGet(ctx, hub.Credentials{Bearer: alice.BoxKey, SessionID: prime.SessionID}, hub.RoomIDInput{RoomID: room.RoomID})
	if err != nil || got.Brief.Revision != 2 {
		t.Errorf("RoomBriefGet after the function ran = %+v, %v; want revision 2", got, err)
	}
}

//go:build unix

package lambdafn_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
)

// TestSeed002FunctionsUnderRuntimeEmulator runs update_space and
// save_memory through their real function binary under the Lambda
// runtime interface emulator, against DynamoDB (minidyn): the seed-002
// body sent directly, the id in the path, CAS and the wrapped-body rule.
// The session and the space are made through the hub on the same table.
func TestSeed002FunctionsUnderRuntimeEmulator(t *testing.T) {
	functions := []string{"update_space", "save_memory"}

	tb := newEmulatorTable(t)
	h, ctx := tb.h, context.Background()
	alice := tb.Alice
	cr := tb.Prime(alice)
	created, err := h.CreateSpace(ctx, cr, hub.CreateSpaceInput{Data: hub.CreateSpaceData{
		RequestID: "rie-1", Title: "PDF extraction checkpoint", Goal: "Verify.", Visibility: "private"}})
	if err != nil {
		t.Fatalf("CreateSpace: %v", err)
	}

	emu := map[string]*emulator{}
	for _, name := range functions {
		emu[name] = tb.start(t, name)
	}
	headers := map[string]string{"authorization": "Bearer " + alice.BoxKey, "agentbox-session": cr.SessionID,
		"content-type": "application/json"}

	path := "/v1/spaces/" + created.Space.ID
	body := `{"expected_version":1,"goal":"Verify document extraction quality.","status":"active","title":"Renamed"}`
	res := emu["update_space"].invoke(t, "POST", path, headers, body)
	var upd struct {
		Space struct {
			Version int64  `json:"version"`
			Title   string `json:"title"`
		} `json:"space"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &upd) != nil || upd.Space.Version != 2 || upd.Space.Title != "Renamed" {
		t.Fatalf("update_space function: got %d %s, want 200 with version 2", res.StatusCode, res.Body)
	}
	res = emu["update_space"].invoke(t, "POST", path, headers, body)
	if res.StatusCode != 409 {
		t.Errorf("update_space function, stale version: got %d %s, want 409 REVISION_CONFLICT", res.StatusCode, res.Body)
	}
	res = emu["update_space"].invoke(t, "POST", path, headers, `{"data":`+body+`}`)
	if res.StatusCode != 400 {
		t.Errorf("update_space function, wrapped body: got %d %s, want 400", res.StatusCode, res.Body)
	}

	res = emu["save_memory"].invoke(t, "PUT", "/v1/memory/working-context", headers, `{"expected_version":0,"content":"Parsing done."}`)
	var saved struct {
		Note struct {
			Version int64 `json:"version"`
		} `json:"note"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &saved) != nil || saved.Note.Version != 1 {
		t.Fatalf("save_memory function: got %d %s, want 200 with version 1", res.StatusCode, res.Body)
	}
	got, err := h.GetMemory(ctx, cr, hub.GetMemoryInput{NoteRef: hub.NoteRef{ID: "working-context"}})
	if err != nil || got.Note.Content != "Parsing done." {
		t.Fatalf("GetMemory after the function saved: %+v, %v", got, err)
	}
}

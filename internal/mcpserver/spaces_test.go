package mcpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
)

// TestSeed002ToolsOverMCP calls the spaces and memory tools through the
// go-sdk client with seed 002's {id, data} arguments, on both adapters.
func TestSeed002ToolsOverMCP(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cs, _ := e.connect(t, e.alice.BoxKey)
		wantOK[map[string]any](t, "agent_prime", call(t, cs, "agent_prime", map[string]any{}))

		type spaceResult struct {
			Space struct {
				ID      string `json:"id"`
				Version int64  `json:"version"`
				Title   string `json:"title"`
			} `json:"space"`
			Operation map[string]any `json:"operation"`
			Replayed  bool           `json:"replayed"`
		}
		created := wantOK[spaceResult](t, "create_space", call(t, cs, "create_space", map[string]any{
			"data": map[string]any{"request_id": "req-1", "title": "PDF extraction checkpoint",
				"goal": "Verify document extraction quality.", "visibility": "private"}}))
		id := created.Space.ID

		// update_space exactly as the seed's example_arguments.
		args := map[string]any{"id": id, "data": map[string]any{
			"expected_version": 1, "goal": "Verify document extraction quality. Scope: provided documents.",
			"status": "paused", "title": "Renamed", "operation_key": "rename-1"}}
		upd := wantOK[spaceResult](t, "update_space", call(t, cs, "update_space", args))
		if upd.Space.Version != 2 || upd.Space.Title != "Renamed" || upd.Replayed {
			t.Fatalf("update_space = %+v, want version 2 'Renamed'", upd)
		}
		replay := call(t, cs, "update_space", args)
		var raw map[string]json.RawMessage
		b, _ := json.Marshal(replay.StructuredContent)
		// Besides the attention summary every result carries, a replay is
		// only the compact receipt.
		delete(raw, "attention")
		if err := json.Unmarshal(b, &raw); err != nil || replay.IsError || string(raw["replayed"]) != "true" {
			t.Fatalf("update_space replay = %s, want {operation, replayed: true}", b)
		}
		delete(raw, "attention")
		if len(raw) != 2 {
			t.Fatalf("update_space replay = %s, want exactly {operation, replayed: true} besides attention", b)
		}

		// A stale version is a tool result whose envelope carries the
		// current version as an integer.
		stale := call(t, cs, "update_space", map[string]any{"id": id, "data": map[string]any{
			"expected_version": 1, "goal": "g", "status": "active", "title": "Stale"}})
		var conflict struct {
			Error struct {
				Code            apperr.Code `json:"code"`
				CurrentRevision any         `json:"current_revision"`
			} `json:"error"`
		}
		b, _ = json.Marshal(stale.StructuredContent)
		if err := json.Unmarshal(b, &conflict); err != nil || !stale.IsError ||
			conflict.Error.Code != apperr.RevisionConflict || conflict.Error.CurrentRevision != float64(2) {
			t.Fatalf("stale update_space = %s, want isError REVISION_CONFLICT with current_revision 2", b)
		}

		// Arguments outside {id, data} never reach the domain.
		for name, bad := range map[string]map[string]any{
			"FlatArguments": {"id": id, "expected_version": 2, "title": "t", "goal": "g", "status": "active"},
			"BoxKeyArgument": {"id": id, "box_key": e.alice.BoxKey, "data": map[string]any{
				"expected_version": 2, "title": "t", "goal": "g", "status": "active"}},
			"MissingID": {"data": map[string]any{"expected_version": 2, "title": "t", "goal": "g", "status": "active"}},
		} {
			wantCode(t, "update_space("+name+")", call(t, cs, "update_space", bad), apperr.InvalidArgument)
		}

		// Another agent gets the unknown-id answer.
		csB, _ := e.connect(t, e.bob.BoxKey)
		wantOK[map[string]any](t, "agent_prime bob", call(t, csB, "agent_prime", map[string]any{}))
		wantCode(t, "get_space(private) by bob", call(t, csB, "get_space", map[string]any{"id": id, "data": map[string]any{}}),
			apperr.NotFoundOrForbidden)

		type noteResult struct {
			Note struct {
				Version int64  `json:"version"`
				Content string `json:"content"`
			} `json:"note"`
		}
		saved := wantOK[noteResult](t, "save_memory", call(t, cs, "save_memory", map[string]any{
			"id": "working-context", "data": map[string]any{"expected_version": 0, "content": "Parsing done."}}))
		if saved.Note.Version != 1 {
			t.Fatalf("save_memory = %+v, want version 1", saved)
		}
		got := wantOK[noteResult](t, "get_memory", call(t, cs, "get_memory", map[string]any{"id": "working-context", "data": map[string]any{}}))
		if got.Note.Content != "Parsing done." {
			t.Errorf("get_memory = %+v", got)
		}
		wantCode(t, "get_memory by bob", call(t, csB, "get_memory", map[string]any{"id": "working-context", "data": map[string]any{}}),
			apperr.NotFoundOrForbidden)
		list := wantOK[struct {
			Items []struct{ Name string } `json:"items"`
		}](t, "list_memory", call(t, cs, "list_memory", map[string]any{"data": map[string]any{"limit": 5}}))
		if len(list.Items) != 1 {
			t.Errorf("list_memory = %+v, want one note", list)
		}
		wantOK[map[string]any](t, "delete_memory", call(t, cs, "delete_memory", map[string]any{
			"id": "working-context", "data": map[string]any{"expected_version": 1}}))
	})
}

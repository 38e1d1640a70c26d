package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
)

// htmlEscapes are encoding/json's default escapes of <, > and &.
var htmlEscapes = []string{`\u003c`, `\u003e`, `\u0026`}

// TestAnswersAreNotHTMLEscaped: a tool's text block and structuredContent,
// alone and inside a 2025-03-26 batch, carry "<" ">" "&" as themselves:
// a model reading the text block sees "<key>", not "\u003ckey\u003e".
func TestAnswersAreNotHTMLEscaped(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, "")
	headers := session(sid, e.alice.BoxKey)
	if r := e.post(t, toolCall("agent_prime", `{}`), headers); r.toolResult(t).IsError {
		t.Fatalf("agent_prime: %s", r.body)
	}
	const markup = "<key> & <b>bold</b>"
	save := toolCall("checkpoint_save", `{"idempotency_key":"markup-1","expected_revision":"0","body_md":"`+markup+`"}`)
	if r := e.post(t, save, headers); r.toolResult(t).IsError {
		t.Fatalf("checkpoint_save: %s", r.body)
	}
	batch := withHeader(headers, "Mcp-Protocol-Version", "2025-03-26")
	for _, tc := range []struct {
		name, body string
		headers    map[string]string
		want       string
	}{
		{"read", toolCall("checkpoint_get", `{}`), headers, markup},
		// AUTH_FAILED's next action spells out 'Bearer <key>'.
		{"error", toolCall("checkpoint_get", `{"box_key":"not-a-key"}`), headers, "Bearer <key>"},
		{"batch", "[" + toolCall("checkpoint_get", `{}`) + "]", batch, markup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(t, tc.body, tc.headers)
			body := string(r.body)
			for _, esc := range htmlEscapes {
				if strings.Contains(body, esc) {
					t.Errorf("tools/call %s: answer %s has the HTML escape %s", tc.name, body, esc)
				}
			}
			// Once in structuredContent and once in the text block (whose
			// quotes are escaped, its < and & not).
			if n := strings.Count(body, tc.want); n != 2 {
				t.Errorf("tools/call %s: answer %s has %q %d times, want 2 (structuredContent and text)", tc.name, body, tc.want, n)
			}
		})
	}
}

// TestToolErrorsSpeakForToolAndTransport: over MCP a read's
// INVALID_ARGUMENT names the unexpected property, says nothing of a
// mutation id and points at the tool's own get_help; a seed-002 mutation's
// stale expected_version speaks of versions and operation_key.
func TestToolErrorsSpeakForToolAndTransport(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(t, e.alice.BoxKey)
	call(t, cs, "agent_prime", map[string]any{})

	env := wantCode(t, "inbox_list", call(t, cs, "inbox_list", map[string]any{"sesion_id": "x"}), apperr.InvalidArgument)
	if !strings.Contains(env.Message, "sesion_id") || strings.Contains(env.Message, `"x"`) {
		t.Errorf("inbox_list {sesion_id}: message %q, want it to name the property sesion_id and not its value", env.Message)
	}
	if strings.Contains(env.NextAction, "mutation") || strings.Contains(env.NextAction, "_key") {
		t.Errorf("inbox_list {sesion_id}: next_action %q speaks of a mutation id; a read has none", env.NextAction)
	}
	if want := `get_help {"tool":"inbox_list"}`; !strings.Contains(env.Help, want) {
		t.Errorf("inbox_list {sesion_id}: help %q, want it to contain %s", env.Help, want)
	}

	saved := wantOK[json.RawMessage](t, "save_memory", call(t, cs, "save_memory", map[string]any{
		"id": "working-context", "data": map[string]any{"expected_version": 0, "content": "v1"}}))
	if len(saved) == 0 {
		t.Fatal("save_memory: empty result")
	}
	stale := call(t, cs, "save_memory", map[string]any{
		"id": "working-context", "data": map[string]any{"expected_version": 0, "content": "v2"}})
	// Seed 002's current_revision is an integer, which apperr.Envelope
	// (seed 000's string) cannot hold.
	var seed002 struct {
		Error struct {
			apperr.Envelope
			CurrentRevision uint64 `json:"current_revision"`
		} `json:"error"`
	}
	if b, err := json.Marshal(stale.StructuredContent); err != nil || json.Unmarshal(b, &seed002) != nil || !stale.IsError {
		t.Fatalf("save_memory stale: got %s, want an error result", text(stale))
	}
	env = seed002.Error.Envelope
	if env.Code != apperr.RevisionConflict || seed002.Error.CurrentRevision != 1 {
		t.Fatalf("save_memory stale: got %s, want REVISION_CONFLICT with current_revision 1", text(stale))
	}
	if strings.Contains(env.Message+env.NextAction, "revision you sent") || !strings.Contains(env.Message, "expected_version") {
		t.Errorf("save_memory stale: message %q, want it to speak of expected_version, not a revision", env.Message)
	}
	if strings.Contains(env.NextAction, "idempotency_key") || strings.Contains(env.NextAction, "mutation ID") || !strings.Contains(env.NextAction, "operation_key") {
		t.Errorf("save_memory stale: next_action %q, want seed 002's operation_key", env.NextAction)
	}
	if want := `get_help {"tool":"save_memory"}`; !strings.Contains(env.Help, want) {
		t.Errorf("save_memory stale: help %q, want it to contain %s", env.Help, want)
	}
}

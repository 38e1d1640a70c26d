package opview_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// flatWriteArgs are valid arguments of every seed-000 mutation; seed-002
// tools bring their own examples. A new mutation missing here fails
// TestReadOnlyKeyMatrix rather than going untested.
func flatWriteArgs(room string) map[string]map[string]any {
	return map[string]map[string]any{
		"checkpoint_save":       {"idempotency_key": "k", "expected_revision": "0", "body_md": "x"},
		"directory_update_self": {"idempotency_key": "k", "expected_revision": "0", "role": "r"},
		"room_follow":           {"idempotency_key": "k", "room_id": room, "expected_revision": "1", "follow": "all"},
		"room_brief_update":     {"idempotency_key": "k", "room_id": room, "expected_revision": "1", "append_md": "x"},
		"message_send":          {"idempotency_key": "k", "destination": map[string]any{"kind": "room", "room_id": room}, "body_md": "x"},
		"inbox_ack":             {"idempotency_key": "k", "inbox_seqs": []string{"1"}},
		// The requests issue's mutations (absent from the registry until
		// it merges; unused entries are harmless).
		"request_respond": {"idempotency_key": "k", "request_message_id": placeholder, "expected_revision": "0",
			"status": "accepted", "body_md": "x"},
		"file_access_report": {"idempotency_key": "k", "message_id": placeholder, "file_id": placeholder,
			"expected_revision": "0", "state": "accessible"},
	}
}

// placeholder is an id of valid shape that names nothing.
const placeholder = "00000000-0000-4000-8000-000000000001"

type call struct {
	tool         *registry.Tool
	method, path string
	body         any
	mcpArgs      json.RawMessage
}

// writeCalls is one valid REST request and MCP call per mutation.
func writeCalls(t *testing.T, room string) []call {
	flat := flatWriteArgs(room)
	var out []call
	for _, tl := range registry.New().Tools() {
		if tl.Scope != registry.ScopeWrite || tl.Name == "agent_prime" {
			continue
		}
		c := call{tool: tl, method: tl.Method, path: tl.Path}
		if tl.Shape == registry.IDData {
			mc := tl.Contract().MCPContract
			rc := tl.Contract().RESTContract.Requests[0]
			// The examples name a placeholder id; any UUID is a valid shape.
			c.path, c.body = strings.ReplaceAll(rc.Path, "REPLACE_WITH_RESOURCE_ID", placeholder), rc.ExampleBody
			c.mcpArgs = json.RawMessage(strings.ReplaceAll(string(mc.ExampleArguments), "REPLACE_WITH_RESOURCE_ID", placeholder))
		} else {
			args, ok := flat[tl.Name]
			if !ok {
				t.Fatalf("mutation %s has no arguments in flatWriteArgs", tl.Name)
			}
			c.mcpArgs, _ = json.Marshal(args)
			body := map[string]any{}
			for k, v := range args {
				body[k] = v
			}
			for _, p := range tl.PathParams() {
				c.path = strings.ReplaceAll(c.path, "{"+p+"}", args[p].(string))
				delete(body, p)
			}
			c.body = body
		}
		out = append(out, c)
	}
	return out
}

const wantChallenge = `Bearer error="insufficient_scope", scope="coordination:write"`

// TestReadOnlyKeyMatrix: a coordination:read key is refused every
// mutation over REST (403 + insufficient_scope) and MCP (isError with the
// envelope), while a write key is not; it still primes and reads.
func TestReadOnlyKeyMatrix(t *testing.T) {
	w := newWorld(t)
	calls := writeCalls(t, w.room.RoomID)
	for _, c := range calls {
		resp, body := w.do(w.rita.BoxKey, w.sess[w.rita.AgentID], c.method, c.path, c.body)
		var e struct {
			Error struct {
				Code       string `json:"code"`
				NextAction string `json:"next_action"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("WWW-Authenticate") != wantChallenge ||
			e.Error.Code != "AUTH_FAILED" || !strings.Contains(e.Error.NextAction, "coordination:write") {
			t.Errorf("%s %s (%s) with a read-only key = %d %q %s; want 403, %s, AUTH_FAILED naming the scope",
				c.method, c.path, c.tool.Name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, wantChallenge)
		}
		resp, body = w.do(w.alice.BoxKey, w.sess[w.alice.AgentID], c.method, c.path, c.body)
		if resp.StatusCode == http.StatusForbidden || strings.Contains(string(body), "read-only") {
			t.Errorf("%s %s (%s) with a write key = %d %s; want no scope refusal", c.method, c.path, c.tool.Name, resp.StatusCode, body)
		}
	}

	// Reads work with the read-only key.
	resp, body := w.do(w.rita.BoxKey, w.sess[w.rita.AgentID], "POST", "/v1/inbox/list", map[string]any{})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /v1/inbox/list with a read-only key = %d %s, want 200", resp.StatusCode, body)
	}

	// MCP: the same refusal as a tool result.
	cs := connect(t, w.srv.URL+"/mcp", w.rita.BoxKey)
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "agent_prime", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("MCP agent_prime with a read-only key: %v %+v, want success", err, res)
	}
	for _, c := range calls {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool.Name, Arguments: c.mcpArgs})
		if err != nil {
			t.Fatalf("MCP %s: protocol error %v, want a tool result", c.tool.Name, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if !res.IsError || !strings.Contains(string(b), `"code":"AUTH_FAILED"`) || !strings.Contains(string(b), "coordination:write") {
			t.Errorf("MCP %s with a read-only key = isError %t %s; want AUTH_FAILED naming coordination:write", c.tool.Name, res.IsError, b)
		}
	}

	// rotate-key --scope coordination:read turns a write key into a read one.
	info, err := w.admin.RotateKeyScoped(context.Background(), w.alice.AgentID, hub.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	sess := w.prime(info.BoxKey)
	resp, body = w.do(info.BoxKey, sess, "PUT", "/v1/checkpoint", flatWriteArgs("")["checkpoint_save"])
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("PUT /v1/checkpoint after rotate-key --scope coordination:read = %d %s, want 403", resp.StatusCode, body)
	}
}

func connect(t *testing.T, url, key string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "opview-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{key}}, MaxRetries: -1},
		// The MCP session is the tool's session: a 2025 revision (the
		// client's default, 2026-07-28, has none).
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type bearerRT struct{ key string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

package mcpserver_test

// Raw HTTP tests of the session layer: exact statuses and bodies, with no
// SDK client in between to retry, re-initialize or hide them.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/mcpserver"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// unknownSession has the shape of a session id but names none.
var unknownSession = "s_" + strings.Repeat("Q", 32)

func TestSessionLayer(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, e.alice.BoxKey)
	alice := "Bearer " + e.alice.BoxKey
	primed := e.initialize(t, "")
	if r := e.post(t, toolCall("agent_prime", `{}`), session(primed, e.alice.BoxKey)); r.toolResult(t).IsError {
		t.Fatalf("agent_prime: %s", r.body)
	}
	v0326 := func(h map[string]string) map[string]string { h["Mcp-Protocol-Version"] = "2025-03-26"; return h }
	with := func(h map[string]string, k, v string) map[string]string { h[k] = v; return h }

	for _, tc := range []struct {
		name       string
		method     string
		body       string
		headers    map[string]string
		wantStatus int
		wantCode   int64  // JSON-RPC error code; 0 when the body is not an error
		wantMsg    string // exact JSON-RPC error message, when not empty
	}{
		{"tools/list without Mcp-Session-Id", "POST", toolsListBody, map[string]string{"Authorization": alice}, 400, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id required; initialize first."},
		{"tools/call without Mcp-Session-Id", "POST", toolCall("checkpoint_get", `{}`), map[string]string{"Authorization": alice}, 400, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id required; initialize first."},
		{"ping without Mcp-Session-Id", "POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil, 400, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id required; initialize first."},
		{"notification without Mcp-Session-Id", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, 400, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id required; initialize first."},
		{"tools/list on an unknown session", "POST", toolsListBody, session(unknownSession, e.alice.BoxKey), 404, -32001, ""},
		{"tools/list on a malformed session id", "POST", toolsListBody, session("not-a-session", e.alice.BoxKey), 404, -32001, ""},
		{"ping on an unknown session", "POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, session(unknownSession, ""), 404, -32001, ""},
		{"tools/list in the session", "POST", toolsListBody, session(sid, e.alice.BoxKey), 200, 0, ""},
		{"ping in the session", "POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, session(sid, e.alice.BoxKey), 200, 0, ""},
		{"notification in the session", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session(sid, e.alice.BoxKey), 202, 0, ""},
		{"tools/list in an unbound session without a key", "POST", toolsListBody, session(sid, ""), 200, 0, ""},
		{"tools/list in a bound session without a key", "POST", toolsListBody, session(primed, ""), 401, -32000, ""},
		{"ping in a bound session without a key", "POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, session(primed, ""), 401, -32000, ""},
		{"notification in a bound session without a key", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session(primed, ""), 401, -32000, ""},
		{"tools/list in a bound session with another agent's key", "POST", toolsListBody, session(primed, e.bob.BoxKey), 404, -32001, ""},
		{"tools/call in a bound session with another agent's key", "POST", toolCall("checkpoint_get", `{}`), session(primed, e.bob.BoxKey), 404, -32001, ""},
		{"tools/call on an unknown session", "POST", toolCall("checkpoint_get", `{}`), session(unknownSession, e.alice.BoxKey), 404, -32001, ""},
		{"tools/call on a forged signed session", "POST", toolCall("checkpoint_get", `{}`), session("m_"+strings.Repeat("A", 54), e.alice.BoxKey), 404, -32001, ""},
		{"tools/list in a bound session with its key", "POST", toolsListBody, session(primed, e.alice.BoxKey), 200, 0, ""},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":4,"method":"foo/bar"}`, session(sid, e.alice.BoxKey), 200, jsonrpc.CodeMethodNotFound, "Method not found."},
		{"undeclared logging/setLevel", "POST", `{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"debug"}}`, session(sid, e.alice.BoxKey), 200, jsonrpc.CodeMethodNotFound, "Method not found."},
		{"undeclared resources/list", "POST", `{"jsonrpc":"2.0","id":4,"method":"resources/list"}`, session(sid, e.alice.BoxKey), 200, jsonrpc.CodeMethodNotFound, "Method not found."},
		{"undeclared resources/templates/list", "POST", `{"jsonrpc":"2.0","id":4,"method":"resources/templates/list"}`, session(sid, e.alice.BoxKey), 200, jsonrpc.CodeMethodNotFound, "Method not found."},
		{"undeclared prompts/list", "POST", `{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`, session(sid, e.alice.BoxKey), 200, jsonrpc.CodeMethodNotFound, "Method not found."},
		{"tasks/list", "POST", `{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`, session(sid, e.alice.BoxKey), 200, jsonrpc.CodeMethodNotFound, "Method not found."},
		{"unknown notification", "POST", `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, session(sid, e.alice.BoxKey), 202, 0, ""},
		{"unknown tool", "POST", toolCall("ZQXtool", `{}`), session(sid, e.alice.BoxKey), 200, jsonrpc.CodeInvalidParams, "Invalid params: unknown tool or malformed call; tools/list names the tools."},
		{"Accept application/json alone", "POST", toolsListBody, with(session(sid, e.alice.BoxKey), "Accept", "application/json"), 200, 0, ""},
		{"Accept without JSON", "POST", toolsListBody, with(session(sid, e.alice.BoxKey), "Accept", "text/event-stream"), 406, jsonrpc.CodeInvalidRequest, ""},
		{"wrong Content-Type", "POST", toolsListBody, with(session(sid, e.alice.BoxKey), "Content-Type", "text/plain"), 415, jsonrpc.CodeInvalidRequest, ""},
		{"unsupported protocol version", "POST", toolsListBody, with(session(sid, e.alice.BoxKey), "Mcp-Protocol-Version", "1999-01-01"), 400, jsonrpc.CodeInvalidRequest, ""},
		{"evil Origin", "POST", toolsListBody, with(session(sid, e.alice.BoxKey), "Origin", "http://evil.example.com"), 403, -32000, ""},
		{"null Origin", "POST", toolsListBody, with(session(sid, e.alice.BoxKey), "Origin", "null"), 403, -32000, ""},
		{"loopback Origin", "POST", toolsListBody, with(session(sid, e.alice.BoxKey), "Origin", "http://localhost:6274"), 200, 0, ""},
		{"duplicate key in the envelope", "POST", `{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}`, session(sid, e.alice.BoxKey), 400, jsonrpc.CodeParseError, ""},
		{"duplicate key in arguments", "POST", toolCall("checkpoint_get", `{"a":1,"a":2}`), session(sid, e.alice.BoxKey), 400, jsonrpc.CodeParseError, ""},
		{"2025-03-26 batch", "POST", "[" + toolsListBody + `,{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`, v0326(session(sid, e.alice.BoxKey)), 200, 0, ""},
		{"2025-03-26 batch with a bound session's key missing", "POST", "[" + toolsListBody + "]", v0326(session(primed, "")), 401, -32000, ""},
		{"GET", "GET", "", session(sid, e.alice.BoxKey), 405, -32000, ""},
		{"PUT", "PUT", toolsListBody, session(sid, e.alice.BoxKey), 405, -32000, ""},
		{"batch", "POST", "[" + toolsListBody + "]", session(sid, e.alice.BoxKey), 400, jsonrpc.CodeInvalidRequest, ""},
		{"batch after whitespace", "POST", " \n[" + toolsListBody + "]", session(sid, e.alice.BoxKey), 400, jsonrpc.CodeInvalidRequest, ""},
		{"batched initialize", "POST", "[" + initializeBody + "]", nil, 400, jsonrpc.CodeInvalidRequest, ""},
		{"empty batch", "POST", "[]", v0326(session(sid, e.alice.BoxKey)), 400, jsonrpc.CodeInvalidRequest, ""},
		{"not JSON", "POST", `{"jsonrpc":`, session(sid, e.alice.BoxKey), 400, jsonrpc.CodeParseError, ""},
		{"empty body", "POST", ``, session(sid, e.alice.BoxKey), 400, jsonrpc.CodeParseError, ""},
		{"Basic authorization", "POST", initializeBody, map[string]string{"Authorization": "Basic YWxpY2U6c2VjcmV0"}, 401, -32000, ""},
		{"empty bearer", "POST", initializeBody, map[string]string{"Authorization": "Bearer "}, 401, -32000, ""},
		{"initialize with an unknown key", "POST", initializeBody, map[string]string{"Authorization": "Bearer abk_" + strings.Repeat("A", 86)}, 401, -32000, ""},
		{"initialize with a garbage key", "POST", initializeBody, map[string]string{"Authorization": "Bearer hunter2"}, 401, -32000, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			r := e.do(t, tc.method, body, tc.headers)
			if r.status != tc.wantStatus {
				t.Fatalf("%s %s: got HTTP %d %s, want %d", tc.method, tc.name, r.status, r.body, tc.wantStatus)
			}
			if r.header.Get(mcpserver.SessionHeader) != "" {
				t.Errorf("response carries Mcp-Session-Id; only a successful initialize issues one")
			}
			if strings.Contains(string(r.body), "ZQX") || strings.Contains(string(r.body), "foo/bar") {
				t.Errorf("body %s echoes the rejected method or tool", r.body)
			}
			if tc.wantCode == 0 {
				return
			}
			werr := r.rpcError(t)
			if werr.Code != tc.wantCode {
				t.Errorf("JSON-RPC error code = %d (%s), want %d", werr.Code, werr.Message, tc.wantCode)
			}
			if tc.wantStatus == 401 {
				if werr.Message != "Authentication failed." {
					t.Errorf("401 message = %q, want exactly \"Authentication failed.\" (no detail)", werr.Message)
				}
				if r.header.Get("WWW-Authenticate") == "" {
					t.Errorf("401 without WWW-Authenticate")
				}
			}
			if tc.method != "POST" && !strings.Contains(r.header.Get("Allow"), "POST") {
				t.Errorf("405 Allow = %q, want it to list POST", r.header.Get("Allow"))
			}
			if tc.wantMsg != "" && werr.Message != tc.wantMsg {
				t.Errorf("JSON-RPC error message = %q, want %q", werr.Message, tc.wantMsg)
			}
		})
	}
}

func TestInitialize(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		bearer string
	}{
		{"bound to the bearer", e.alice.BoxKey},
		{"unbound without a bearer", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sid := e.initialize(t, tc.bearer)
			// The issued session is live for every method.
			if r := e.post(t, toolsListBody, session(sid, tc.bearer)); r.status != 200 {
				t.Errorf("tools/list in the new session: got HTTP %d %s, want 200", r.status, r.body)
			}
		})
	}
	for _, tc := range []struct {
		name    string
		body    string
		headers map[string]string
	}{
		{"missing params", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, nil},
		{"wrong Content-Type", initializeBody, map[string]string{"Content-Type": "text/plain"}},
		{"Accept without JSON", initializeBody, map[string]string{"Accept": "text/event-stream"}},
		{"evil Origin", initializeBody, map[string]string{"Origin": "http://evil.example.com"}},
		{"unsupported protocol header", initializeBody, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}},
	} {
		t.Run("failed initialize issues nothing/"+tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + e.alice.BoxKey}
			for k, v := range tc.headers {
				h[k] = v
			}
			e.counter.Reset()
			r := e.post(t, tc.body, h)
			if r.status == 200 && r.rpcErrorOrNil() == nil {
				t.Errorf("initialize: got HTTP 200 with a result %s, want a failure", r.body)
			}
			if sid := r.header.Get(mcpserver.SessionHeader); sid != "" {
				t.Errorf("initialize: got Mcp-Session-Id %q on a failure, want none", sid)
			}
			if n := e.counter.Reset(); n != 0 {
				t.Errorf("initialize: %d store round trips, want 0 (no session opened)", n)
			}
		})
	}
}

// rpcErrorOrNil is the JSON-RPC error in the body, or nil when the body is
// a result.
func (r rawResponse) rpcErrorOrNil() error {
	msg, err := jsonrpc.DecodeMessage(r.body)
	if err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		return resp.Error
	}
	return nil
}

func TestDeleteSession(t *testing.T) {
	e := newEnv(t)

	t.Run("ends the session", func(t *testing.T) {
		sid := e.initialize(t, e.alice.BoxKey)
		if r := e.post(t, toolCall("agent_prime", `{}`), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
			t.Fatalf("agent_prime: %s", r.body)
		}
		if r := e.do(t, "DELETE", nil, session(sid, e.alice.BoxKey)); r.status != 204 {
			t.Fatalf("DELETE: got HTTP %d %s, want 204", r.status, r.body)
		}
		if r := e.post(t, toolsListBody, session(sid, e.alice.BoxKey)); r.status != 404 {
			t.Errorf("tools/list after DELETE: got HTTP %d %s, want 404", r.status, r.body)
		}
		for tool, args := range map[string]string{"checkpoint_get": `{}`, "agent_prime": `{}`, "get_help": `{"tool":"inbox_list"}`} {
			// 404, the spec's signal to re-initialize, for tool calls too,
			// also those that need no session.
			if r := e.post(t, toolCall(tool, args), session(sid, e.alice.BoxKey)); r.status != 404 {
				t.Errorf("%s after DELETE: got HTTP %d %s, want 404", tool, r.status, r.body)
			}
		}
		// The agent's session the MCP session carried lives on as a handle
		// until it expires: on another connection, as the session_id
		// argument or the Agentbox-Session header.
		fresh := e.initialize(t, e.alice.BoxKey)
		if res := e.post(t, toolCall("checkpoint_get", `{"session_id":"`+sid+`"}`), session(fresh, e.alice.BoxKey)).toolResult(t); res.IsError {
			t.Errorf("checkpoint_get with the ended session as session_id: %s, want success", res.StructuredContent)
		}
		header := session(fresh, e.alice.BoxKey)
		header["Agentbox-Session"] = sid
		if res := e.post(t, toolCall("checkpoint_get", `{}`), header).toolResult(t); res.IsError {
			t.Errorf("checkpoint_get with the ended session as Agentbox-Session: %s, want success", res.StructuredContent)
		}
		if r := e.do(t, "DELETE", nil, session(sid, e.alice.BoxKey)); r.status != 204 {
			t.Errorf("second DELETE: got HTTP %d, want 204 (idempotent)", r.status)
		}
	})

	for _, tc := range []struct {
		name       string
		headers    func(sid string) map[string]string
		wantStatus int
	}{
		{"without Mcp-Session-Id", func(string) map[string]string { return session("", e.alice.BoxKey) }, 400},
		{"by another agent", func(sid string) map[string]string { return session(sid, e.bob.BoxKey) }, 404},
		{"without a key", func(sid string) map[string]string { return session(sid, "") }, 401},
		{"of an unknown session", func(string) map[string]string { return session(unknownSession, e.alice.BoxKey) }, 204},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sid := e.initialize(t, e.alice.BoxKey)
			if r := e.post(t, toolCall("agent_prime", `{}`), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
				t.Fatalf("agent_prime: %s", r.body)
			}
			h := tc.headers(sid)
			if h[mcpserver.SessionHeader] == "" {
				delete(h, mcpserver.SessionHeader)
			}
			if r := e.do(t, "DELETE", nil, h); r.status != tc.wantStatus {
				t.Fatalf("DELETE: got HTTP %d %s, want %d", r.status, r.body, tc.wantStatus)
			}
			if tc.wantStatus == 204 {
				return
			}
			if r := e.post(t, toolsListBody, session(sid, e.alice.BoxKey)); r.status != 200 {
				t.Errorf("tools/list after a refused DELETE: got HTTP %d, want 200 (session intact)", r.status)
			}
		})
	}
}

// TestDeleteUnboundSession: a session no agent has bound is ended only with
// a key, since ending it writes a tombstone; without one it is 405 and
// stays usable until it expires.
func TestDeleteUnboundSession(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, "")
	e.counter.Reset()
	if r := e.do(t, "DELETE", nil, session(sid, "")); r.status != 405 {
		t.Fatalf("DELETE without a key: got HTTP %d %s, want 405", r.status, r.body)
	}
	if r := e.post(t, toolsListBody, session(sid, "")); r.status != 200 {
		t.Fatalf("tools/list after a refused DELETE: got HTTP %d, want 200", r.status)
	}
	if r := e.do(t, "DELETE", nil, session(sid, e.bob.BoxKey)); r.status != 204 {
		t.Fatalf("DELETE with a key: got HTTP %d %s, want 204", r.status, r.body)
	}
	if r := e.post(t, toolsListBody, session(sid, "")); r.status != 404 {
		t.Errorf("tools/list after DELETE: got HTTP %d, want 404", r.status)
	}
}

func TestMaxRequestBodyBytes(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, e.alice.BoxKey)
	// padded returns a tools/list body of exactly n bytes.
	padded := func(n int) string {
		return toolsListBody + strings.Repeat(" ", n-len(toolsListBody))
	}
	for _, tc := range []struct {
		name       string
		body       func() io.Reader
		wantStatus int
	}{
		{"at the limit", func() io.Reader { return strings.NewReader(padded(hub.MaxRequestBytes)) }, 200},
		{"one byte over with Content-Length", func() io.Reader { return strings.NewReader(padded(hub.MaxRequestBytes + 1)) }, 413},
		{"far over with Content-Length", func() io.Reader { return strings.NewReader(padded(4 * hub.MaxRequestBytes)) }, 413},
		// Hiding the length makes the client send Transfer-Encoding: chunked.
		{"chunked encoding does not bypass limit", func() io.Reader {
			return struct{ io.Reader }{strings.NewReader(padded(hub.MaxRequestBytes + 1))}
		}, 413},
		{"chunked at the limit", func() io.Reader {
			return struct{ io.Reader }{strings.NewReader(padded(hub.MaxRequestBytes))}
		}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", tc.body(), session(sid, e.alice.BoxKey))
			if r.status != tc.wantStatus {
				t.Fatalf("POST: got HTTP %d %s, want %d", r.status, r.body, tc.wantStatus)
			}
			if tc.wantStatus == 413 {
				r.rpcError(t)
			}
		})
	}
	t.Run("over the limit before a session exists", func(t *testing.T) {
		body := initializeBody[:len(initializeBody)-1] + `,"pad":"` + strings.Repeat("x", hub.MaxRequestBytes) + `"}`
		r := e.post(t, body, map[string]string{"Authorization": "Bearer " + e.alice.BoxKey})
		if r.status != 413 || r.header.Get(mcpserver.SessionHeader) != "" {
			t.Errorf("initialize over the limit: got HTTP %d with session %q, want 413 and none", r.status, r.header.Get(mcpserver.SessionHeader))
		}
	})
}

// TestInvalidArguments: schema-invalid arguments are a tool result with
// INVALID_ARGUMENT, and nothing the caller sent is echoed or logged.
func TestInvalidArguments(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, e.alice.BoxKey)
	h := session(sid, e.alice.BoxKey)
	if r := e.post(t, toolCall("agent_prime", `{}`), h); r.toolResult(t).IsError {
		t.Fatalf("agent_prime: %s", r.body)
	}
	const valid = `"idempotency_key":"k-1","expected_revision":"0","body_md":"ok"`
	for _, tc := range []struct {
		name   string
		tool   string
		args   string
		secret string // a distinctive rejected value that must not come back
		want   apperr.Code
	}{
		{"unknown property", "checkpoint_save", `{` + valid + `,"surplus":"ZQX-unknown-value-4471"}`, "ZQX-unknown-value-4471", apperr.InvalidArgument},
		{"unknown property on a read tool", "checkpoint_get", `{"surplus":"ZQX-unknown-value-5510"}`, "ZQX-unknown-value-5510", apperr.InvalidArgument},
		{"unknown property name", "checkpoint_get", `{"ZQX_property_name_77":1}`, "ZQX_property_name_77", apperr.InvalidArgument},
		{"number for a string", "checkpoint_save", `{"idempotency_key":"k-1","expected_revision":"0","body_md":918273645}`, "918273645", apperr.InvalidArgument},
		{"number for a decimal string", "checkpoint_save", `{"idempotency_key":"k-1","expected_revision":5550123,"body_md":"x"}`, "5550123", apperr.InvalidArgument},
		{"pattern mismatch", "checkpoint_save", `{"idempotency_key":"ZQX key with spaces","expected_revision":"0","body_md":"x"}`, "ZQX key with spaces", apperr.InvalidArgument},
		{"arguments not an object", "checkpoint_get", `["ZQX-array-1"]`, "ZQX-array-1", apperr.InvalidArgument},
		{"missing required", "checkpoint_save", `{"idempotency_key":"k-1"}`, "", apperr.InvalidArgument},
		{"null arguments mean none", "checkpoint_get", `null`, "", ""},
		{"empty arguments", "checkpoint_get", `{}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(t, toolCall(tc.tool, tc.args), h)
			res := r.toolResult(t)
			if tc.want == "" {
				if res.IsError {
					t.Fatalf("%s(%s): got %s, want success", tc.tool, tc.args, res.StructuredContent)
				}
				return
			}
			if got := res.code(t); got != tc.want {
				t.Fatalf("%s(%s): got %s, want %s", tc.tool, tc.args, got, tc.want)
			}
			if tc.secret != "" && strings.Contains(string(r.body), tc.secret) {
				t.Errorf("%s(%s): response %s echoes the rejected value %q", tc.tool, tc.args, r.body, tc.secret)
			}
			if tc.secret != "" && strings.Contains(e.logs.String(), tc.secret) {
				t.Errorf("%s(%s): the log holds the rejected value %q", tc.tool, tc.args, tc.secret)
			}
		})
	}
}

// TestToolCallAddsNoRoundTrip: the session layer leaves tools/call's
// session check to the tool's own batched read, so a tool costs over MCP
// exactly what it costs in the domain.
func TestToolCallAddsNoRoundTrip(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, e.alice.BoxKey)
	if r := e.post(t, toolCall("agent_prime", `{}`), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
		t.Fatalf("agent_prime: %s", r.body)
	}
	tool, _ := e.reg.Tool("checkpoint_get")

	e.counter.Reset()
	if _, err := tool.Invoke(context.Background(), e.hub, hub.Credentials{Bearer: e.alice.BoxKey, SessionID: sid, Transport: "mcp"}, []byte(`{}`)); err != nil {
		t.Fatalf("checkpoint_get.Invoke: %v", err)
	}
	direct := e.counter.Reset()

	if r := e.post(t, toolCall("checkpoint_get", `{}`), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
		t.Fatalf("checkpoint_get: %s", r.body)
	}
	if got := e.counter.Reset(); got != direct {
		t.Errorf("checkpoint_get over MCP: %d store round trips, want %d as in the domain", got, direct)
	}

	if r := e.post(t, toolsListBody, session(sid, e.alice.BoxKey)); r.status != 200 {
		t.Fatalf("tools/list: HTTP %d", r.status)
	}
	if got := e.counter.Reset(); got != 1 {
		t.Errorf("tools/list: %d store round trips, want 1 (the session check)", got)
	}
}

func TestRequestIDAndLog(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, e.alice.BoxKey)
	const body = "ZQX-checkpoint-text-3141"
	for _, tc := range []struct {
		name, sent string
		keep       bool
	}{
		{"upstream id kept", "trace-42.a", true},
		{"hostile id replaced", "bad id with spaces; and <markup>", false},
		{"absent id minted", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := session(sid, e.alice.BoxKey)
			if tc.sent != "" {
				h[mcpserver.RequestIDHeader] = tc.sent
			}
			r := e.post(t, toolCall("agent_prime", `{}`), h)
			got := r.header.Get(mcpserver.RequestIDHeader)
			if tc.keep && got != tc.sent {
				t.Errorf("X-Request-Id = %q, want the upstream %q", got, tc.sent)
			}
			if !tc.keep && (got == "" || got == tc.sent) {
				t.Errorf("X-Request-Id = %q, want a freshly minted id", got)
			}
			if !hasLine(e.logs.Lines(t), map[string]any{"msg": "mcp tool call", "request_id": got, "tool": "agent_prime", "code": "OK"}) {
				t.Errorf("no tool-call log line with request_id %q; log:\n%s", got, e.logs.String())
			}
		})
	}

	save := `{"idempotency_key":"k-1","expected_revision":"0","body_md":"` + body + `"}`
	if r := e.post(t, toolCall("checkpoint_save", save), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
		t.Fatalf("checkpoint_save: %s", r.body)
	}
	if r := e.post(t, toolCall("checkpoint_save", strings.Replace(save, `"k-1"`, `"k-2"`, 1)), session(sid, e.alice.BoxKey)); r.toolResult(t).code(t) != apperr.RevisionConflict {
		t.Fatalf("stale checkpoint_save: %s, want REVISION_CONFLICT", r.body)
	}
	if !hasLine(e.logs.Lines(t), map[string]any{"msg": "mcp tool call", "tool": "checkpoint_save", "code": "REVISION_CONFLICT"}) {
		t.Errorf("no log line for the REVISION_CONFLICT; log:\n%s", e.logs.String())
	}
	for _, l := range e.logs.Lines(t) {
		if l["msg"] != "mcp tool call" {
			continue
		}
		for _, k := range []string{"request_id", "tool", "code", "duration_ms"} {
			if _, ok := l[k]; !ok {
				t.Errorf("tool-call log line %v lacks %q", l, k)
			}
		}
	}
	log := e.logs.String()
	for _, s := range append(e.secrets(), sid, body) {
		if strings.Contains(log, s) {
			t.Errorf("the log holds a secret, session id or argument value (%.12s...)", s)
		}
	}
}

func hasLine(lines []map[string]any, want map[string]any) bool {
	for _, l := range lines {
		match := true
		for k, v := range want {
			if l[k] != v {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

var errInjected = errors.New("injected engine fault on table agentbox-test")

// TestStorageFailure: an engine failure reaches the caller without its
// cause, which reaches only the log; a read that failed changed nothing,
// so it is TEMPORARILY_UNAVAILABLE, retryable.
func TestStorageFailure(t *testing.T) {
	bolt := adapter(t, "bolt")
	var faulty *teststores.Faults
	e := newEnvOn(t, teststores.Adapter{Name: "faulty", Open: func(t testing.TB, now func() time.Time) store.Store {
		faulty = teststores.NewFaults(bolt.Open(t, now))
		return faulty
	}})
	sid := e.initialize(t, e.alice.BoxKey)
	if r := e.post(t, toolCall("agent_prime", `{}`), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
		t.Fatalf("agent_prime: %s", r.body)
	}
	faulty.FailReads(errInjected)

	r := e.post(t, toolCall("checkpoint_get", `{}`), session(sid, e.alice.BoxKey))
	if got := r.toolResult(t).code(t); got != apperr.TemporarilyUnavailable {
		t.Fatalf("checkpoint_get during an outage: got %s, want TEMPORARILY_UNAVAILABLE", got)
	}
	if strings.Contains(string(r.body), "injected") {
		t.Errorf("response %s carries the internal cause", r.body)
	}
	if !hasLine(e.logs.Lines(t), map[string]any{"msg": "mcp tool call", "tool": "checkpoint_get", "code": "TEMPORARILY_UNAVAILABLE", "level": "ERROR", "err": errInjected.Error()}) {
		t.Errorf("no ERROR tool-call line with the cause; log:\n%s", e.logs.String())
	}

	r = e.post(t, toolsListBody, session(sid, e.alice.BoxKey))
	if r.status != 503 || strings.Contains(string(r.body), "injected") {
		t.Errorf("tools/list during an outage: got HTTP %d %s, want 503 without the cause", r.status, r.body)
	}
	if !strings.Contains(e.logs.String(), "mcp request failed") {
		t.Errorf("session-check failure not logged; log:\n%s", e.logs.String())
	}
}

// TestDNSRebindingProtection: a browser tricked into sending a loopback
// request under a foreign Host gets nothing, not even a session write.
func TestDNSRebindingProtection(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, e.alice.BoxKey)
	evil := func(h map[string]string) map[string]string { h["Host"] = "evil.example"; return h }
	for _, tc := range []struct {
		name, method, body string
		headers            map[string]string
	}{
		{"initialize", "POST", initializeBody, evil(map[string]string{"Authorization": "Bearer " + e.alice.BoxKey})},
		{"tools/list", "POST", toolsListBody, evil(session(sid, e.alice.BoxKey))},
		{"tools/call", "POST", toolCall("agent_prime", `{}`), evil(session(sid, e.alice.BoxKey))},
		{"DELETE", "DELETE", "", evil(session(sid, e.alice.BoxKey))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.counter.Reset()
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			r := e.do(t, tc.method, body, tc.headers)
			if r.status != http.StatusForbidden || r.header.Get(mcpserver.SessionHeader) != "" {
				t.Errorf("%s with Host evil.example: got HTTP %d, session %q; want 403 and none", tc.method, r.status, r.header.Get(mcpserver.SessionHeader))
			}
			if n := e.counter.Reset(); n != 0 {
				t.Errorf("%s with Host evil.example: %d store round trips, want 0", tc.method, n)
			}
		})
	}
	if r := e.post(t, toolsListBody, session(sid, e.alice.BoxKey)); r.status != 200 {
		t.Errorf("tools/list after the attempts: got HTTP %d, want 200 (session not deleted)", r.status)
	}
}

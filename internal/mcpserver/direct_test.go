package mcpserver_test

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/mcpserver"
)

// TestDirectCallMatchesSDK sends the same tools/call requests to this
// layer's own tools/call path and to the SDK's, on one hub, and wants the
// same status, content type and JSON answer from both: direct.go promises
// to answer exactly as the SDK would.
func TestDirectCallMatchesSDK(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(mcpserver.NewThroughSDK(e.hub, e.reg, nil))
	t.Cleanup(srv.Close)
	viaSDK := *e
	viaSDK.url = srv.URL

	sid := e.initialize(t, "")
	headers := session(sid, e.alice.BoxKey)
	if r := e.post(t, toolCall("agent_prime", `{}`), headers); r.status != 200 || r.toolResult(t).IsError {
		t.Fatalf("agent_prime: HTTP %d %s", r.status, r.body)
	}
	// Markup in the checkpoint reaches every read below: the SDK's text
	// block escapes it (\u003c), this layer's does not; the two answers
	// must still be the same JSON.
	save := toolCall("checkpoint_save", `{"idempotency_key":"direct-vs-sdk","expected_revision":"0","body_md":"step 1: <key> & more"}`)
	if r := e.post(t, save, headers); r.status != 200 || r.toolResult(t).IsError {
		t.Fatalf("checkpoint_save: HTTP %d %s", r.status, r.body)
	}

	batch := withHeader(headers, "Mcp-Protocol-Version", "2025-03-26")
	for _, tc := range []struct {
		name, body string
		headers    map[string]string
	}{
		{"2025-03-26 batch", "[" + toolCall("profile_get", `{}`) + "," + toolCall("no_such_tool", `{}`) + "," +
			`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"checkpoint_get"}}]`, batch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct, sdk := e.post(t, tc.body, tc.headers), viaSDK.post(t, tc.body, tc.headers)
			var got, want any
			if direct.status != sdk.status || json.Unmarshal(direct.body, &got) != nil || json.Unmarshal(sdk.body, &want) != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("answers differ:\ndirect %d %s\nSDK    %d %s", direct.status, direct.body, sdk.status, sdk.body)
			}
			if answers, ok := got.([]any); direct.status != 200 || !ok || len(answers) != 3 {
				t.Errorf("batch answer: HTTP %d %s; want 200 with three answers", direct.status, direct.body)
			}
		})
	}

	for _, tc := range []struct{ name, body string }{
		{"read", toolCall("profile_get", `{}`)},
		{"read with a body", toolCall("checkpoint_get", `{}`)},
		{"replayed mutation", save},
		{"arguments null", toolCall("checkpoint_get", `null`)},
		{"arguments absent", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"checkpoint_get"}}`},
		{"arguments not an object", toolCall("checkpoint_get", `[1]`)},
		{"unknown argument", toolCall("checkpoint_get", `{"nope":1}`)},
		{"domain failure", toolCall("message_get", `{"message_id":"m_unknown"}`)},
		{"string id", `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"profile_get","arguments":{}}}`},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"profile_get","arguments":{}}}`},
		{"_meta", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"profile_get","arguments":{}}}`},
		{"unknown params key", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"profile_get","arguments":{},"extra":true}}`},
		{"unknown envelope key", `{"jsonrpc":"2.0","id":8,"method":"tools/call","extra":1,"params":{"name":"profile_get","arguments":{}}}`},
		{"unknown tool", toolCall("no_such_tool", `{}`)},
		{"empty name", toolCall("", `{}`)},
		{"name not a string", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":3,"arguments":{}}}`},
		{"name in another case", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"NAME":"profile_get","arguments":{}}}`},
		{"escaped key", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"n\u0061me":"profile_get","arguments":{}}}`},
		{"escaped name", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"profile\u005fget","arguments":{}}}`},
		{"params absent", `{"jsonrpc":"2.0","id":9,"method":"tools/call"}`},
		{"params null", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":null}`},
		{"params an array", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}`},
		{"_meta not an object", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":"x","name":"profile_get"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct := e.post(t, tc.body, headers)
			sdk := viaSDK.post(t, tc.body, headers)
			if direct.status != sdk.status {
				t.Fatalf("HTTP status: direct %d %s, SDK %d %s", direct.status, direct.body, sdk.status, sdk.body)
			}
			if got, want := direct.header.Get("Content-Type"), sdk.header.Get("Content-Type"); got != want {
				t.Errorf("Content-Type: direct %q, SDK %q", got, want)
			}
			var got, want any
			if err := json.Unmarshal(direct.body, &got); err != nil {
				t.Fatalf("direct answer %s: %v", direct.body, err)
			}
			if err := json.Unmarshal(sdk.body, &want); err != nil {
				t.Fatalf("SDK answer %s: %v", sdk.body, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("answers differ:\ndirect %s\nSDK    %s", direct.body, sdk.body)
			}
			if strings.Contains(string(direct.body), "no_such_tool") {
				t.Errorf("answer %s echoes the rejected tool name", direct.body)
			}
			for _, esc := range htmlEscapes {
				if strings.Contains(string(direct.body), esc) {
					t.Errorf("direct answer %s has the HTML escape %s", direct.body, esc)
				}
			}
		})
	}
}

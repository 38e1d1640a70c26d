//go:build unix

package lambdafn_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
)

// TestRequestFunctionsUnderRuntimeEmulator invokes the real function
// binaries of the five request, file-report and export tools under the
// Lambda runtime emulator, against one table: a request answered by CAS,
// both listings, a file report and an export.
func TestRequestFunctionsUnderRuntimeEmulator(t *testing.T) {
	names := []string{"requests_list", "request_respond", "file_access_report", "file_reports_list", "thread_export"}

	tb := newEmulatorTable(t)
	h, ctx := tb.h, context.Background()
	alice, bob := tb.Alice, tb.Bob
	sessions := map[string]string{}
	for _, ag := range []*hub.AgentInfo{alice, bob} {
		sessions[ag.AgentID] = tb.Prime(ag).SessionID
	}
	crA := hub.Credentials{Bearer: alice.BoxKey, SessionID: sessions[alice.AgentID]}
	sent, err := h.MessageSend(ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "s1"},
		Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: bob.AgentID}, BodyMD: "please",
		Requests: []string{bob.AgentID}, Files: []hub.FileRefInput{{URL: "https://example.com/x.md", DisplayName: "x"}}})
	if err != nil {
		t.Fatalf("MessageSend: %v", err)
	}
	got, err := h.MessageGet(ctx, crA, hub.MessageGetInput{MessageID: sent.MessageID})
	if err != nil {
		t.Fatalf("MessageGet: %v", err)
	}
	fileID := got.Message.Files[0].FileID

	emus := map[string]*emulator{}
	for _, name := range names {
		emus[name] = tb.start(t, name)
	}
	as := func(ag *hub.AgentInfo) map[string]string {
		return map[string]string{"authorization": "Bearer " + ag.BoxKey, "agentbox-session": sessions[ag.AgentID],
			"content-type": "application/json"}
	}
	for _, tc := range []struct {
		fn, method, path string
		who              *hub.AgentInfo
		body             string
		status           int
		want             string
	}{
		{"requests_list", "GET", "/v1/requests?direction=incoming", bob, "", 200, `"status":"open"`},
		{"request_respond", "POST", "/v1/requests/" + sent.MessageID + "/respond", bob,
			`{"expected_revision":"0","status":"accepted","body_md":"on it","idempotency_key":"r1"}`, 200, `"revision":"1"`},
		{"request_respond", "POST", "/v1/requests/" + sent.MessageID + "/respond", bob,
			`{"expected_revision":"0","status":"declined","body_md":"no","idempotency_key":"r2"}`, 409, `"current_revision":"1"`},
		{"requests_list", "GET", "/v1/requests?direction=outgoing&status=accepted", alice, "", 200, `"status":"accepted"`},
		{"file_access_report", "PUT", "/v1/messages/" + sent.MessageID + "/files/" + fileID + "/report", bob,
			`{"expected_revision":"0","state":"not_found","idempotency_key":"f1"}`, 200, `"state":"not_found"`},
		{"file_reports_list", "GET", "/v1/messages/" + sent.MessageID + "/file-reports", alice, "", 200, `"scope":"all"`},
		{"thread_export", "GET", "/v1/messages/" + sent.MessageID + "/export?format=markdown", alice, "", 200, `"partial":false`},
	} {
		res := emus[tc.fn].invoke(t, tc.method, tc.path, as(tc.who), tc.body)
		if res.StatusCode != tc.status || !strings.Contains(res.Body, tc.want) {
			t.Errorf("%s function (%s %s): got %d %s, want %d with %s", tc.fn, tc.method, tc.path, res.StatusCode, res.Body, tc.status, tc.want)
		}
		if tc.fn == "thread_export" {
			var out hub.ThreadExportOutput
			if err := json.Unmarshal([]byte(res.Body), &out); err != nil || out.EntryCount != 2 {
				t.Errorf("thread_export function: %+v, %v; want the request and its reply", out, err)
			}
		}
	}
}

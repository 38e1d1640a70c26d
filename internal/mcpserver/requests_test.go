package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestRequestAndFileTools drives the five request, file-report and export
// tools over MCP with the go-sdk client on both storage adapters: a DM
// request answered by CAS (decimal-string revisions, REVISION_CONFLICT with
// current_revision), both directions of requests_list, a file report and
// its listing, a markdown export, and the safe error for another box.
func TestRequestAndFileTools(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ca, _ := e.connect(t, e.alice.BoxKey)
		cb, _ := e.connect(t, e.bob.BoxKey)
		cm, _ := e.connect(t, e.mallory.BoxKey)
		wantOK[hub.PrimeOutput](t, "agent_prime", call(t, ca, "agent_prime", map[string]any{}))
		wantOK[hub.PrimeOutput](t, "agent_prime", call(t, cb, "agent_prime", map[string]any{}))
		wantOK[hub.PrimeOutput](t, "agent_prime", call(t, cm, "agent_prime", map[string]any{}))

		sent := wantOK[hub.MessageSendOutput](t, "message_send", call(t, ca, "message_send", map[string]any{
			"destination": map[string]any{"kind": "dm", "recipient_agent_id": e.bob.AgentID},
			"body_md":     "review please", "requests": []string{e.bob.AgentID}, "idempotency_key": "s-1",
			"files": []map[string]any{{"url": "https://example.com/spec.md", "display_name": "spec", "version_label": "v1"}}}))
		in := wantOK[hub.RequestsListOutput](t, "requests_list", call(t, cb, "requests_list", map[string]any{"direction": "incoming"}))
		if len(in.Requests) != 1 || in.Requests[0].Status != "open" || in.Requests[0].RequestMessageID != sent.MessageID {
			t.Fatalf("requests_list incoming = %+v, want the open request", in)
		}
		resp := wantOK[hub.RequestRespondOutput](t, "request_respond", call(t, cb, "request_respond", map[string]any{
			"request_message_id": sent.MessageID, "expected_revision": "0", "status": "accepted",
			"body_md": "on it", "idempotency_key": "r-1"}))
		if resp.Request.Revision != 1 || resp.Reply.MessageID == "" {
			t.Fatalf("request_respond = %+v, want revision 1 and a reply", resp)
		}
		env := wantCode(t, "request_respond stale", call(t, cb, "request_respond", map[string]any{
			"request_message_id": sent.MessageID, "expected_revision": "0", "status": "declined",
			"body_md": "no", "idempotency_key": "r-2"}), apperr.RevisionConflict)
		if env.CurrentRevision == nil || *env.CurrentRevision != "1" {
			t.Errorf("REVISION_CONFLICT current_revision = %v, want \"1\"", env.CurrentRevision)
		}
		out := wantOK[hub.RequestsListOutput](t, "requests_list", call(t, ca, "requests_list", map[string]any{"direction": "outgoing", "status": "accepted"}))
		if len(out.Requests) != 1 || out.Requests[0].RecipientAgentID != e.bob.AgentID {
			t.Errorf("requests_list outgoing accepted = %+v, want bob's", out)
		}

		msg := wantOK[hub.MessageGetOutput](t, "message_get", call(t, cb, "message_get", map[string]any{"message_id": sent.MessageID}))
		rep := wantOK[hub.FileAccessReportOutput](t, "file_access_report", call(t, cb, "file_access_report", map[string]any{
			"message_id": sent.MessageID, "file_id": msg.Message.Files[0].FileID, "expected_revision": "0",
			"state": "denied", "idempotency_key": "f-1"}))
		if rep.Report.State != "denied" {
			t.Errorf("file_access_report = %+v", rep)
		}
		reps := wantOK[hub.FileReportsListOutput](t, "file_reports_list", call(t, ca, "file_reports_list", map[string]any{"message_id": sent.MessageID}))
		if reps.Scope != "all" || len(reps.Reports) != 1 {
			t.Errorf("file_reports_list (author) = %+v, want bob's report", reps)
		}
		exp := wantOK[hub.ThreadExportOutput](t, "thread_export", call(t, ca, "thread_export", map[string]any{"message_id": sent.MessageID, "format": "markdown"}))
		if exp.Partial || exp.EntryCount != 2 || !strings.Contains(exp.Chunk, "review please") || !strings.Contains(exp.Chunk, "on it") {
			t.Errorf("thread_export = %+v, want the request and its reply, complete", exp)
		}

		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"request_respond", map[string]any{"request_message_id": sent.MessageID, "expected_revision": "1", "status": "declined", "body_md": "x", "idempotency_key": "m-1"}},
			{"file_access_report", map[string]any{"message_id": sent.MessageID, "file_id": msg.Message.Files[0].FileID, "expected_revision": "0", "state": "accessible", "idempotency_key": "m-2"}},
			{"file_reports_list", map[string]any{"message_id": sent.MessageID}},
			{"thread_export", map[string]any{"message_id": sent.MessageID, "format": "json"}},
		} {
			env := wantCode(t, tc.tool+" by another box", call(t, cm, tc.tool, tc.args), apperr.NotFoundOrForbidden)
			if strings.Contains(env.Message, sent.MessageID) {
				t.Errorf("%s: error %+v names the message", tc.tool, env)
			}
		}
	})
}

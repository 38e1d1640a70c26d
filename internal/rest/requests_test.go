package rest_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestRequestAndFileRoutes is a smoke test of the request, file-report and
// export routes through real HTTP: path parameters, GET query parameters,
// CAS bodies with decimal-string revisions, and the error mapping of
// REVISION_CONFLICT, NOT_FOUND_OR_FORBIDDEN and CURSOR_INVALID.
func TestRequestAndFileRoutes(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	sa, sb, sc := e.prime(e.alice.BoxKey), e.prime(e.bob.BoxKey), e.prime(e.carol.BoxKey)
	a, b, c := e.as(t, e.alice.BoxKey, sa), e.as(t, e.bob.BoxKey, sb), e.as(t, e.carol.BoxKey, sc)

	var sent struct {
		MessageID    string `json:"message_id"`
		RequestCount int    `json:"request_count"`
	}
	a("POST", "/v1/messages", `{"destination":{"kind":"dm","recipient_agent_id":"`+e.bob.AgentID+`"},"body_md":"please",`+
		`"requests":["`+e.bob.AgentID+`"],"files":[{"url":"https://example.com/x.md","display_name":"x","commit":"abcdef1"}],"idempotency_key":"s1"}`).
		wantOK(t, "POST /v1/messages", &sent)
	if sent.RequestCount != 1 {
		t.Fatalf("POST /v1/messages = %+v, want one request", sent)
	}

	var list struct {
		Requests []struct {
			RequestMessageID string `json:"request_message_id"`
			Status           string `json:"status"`
			Revision         string `json:"revision"`
			MessageSeq       string `json:"message_seq"`
		} `json:"requests"`
		NextCursor string `json:"next_cursor"`
	}
	b("GET", "/v1/requests?direction=incoming&limit=10", "").wantOK(t, "GET /v1/requests", &list)
	if len(list.Requests) != 1 || list.Requests[0].Status != "open" || list.Requests[0].Revision != "0" || list.Requests[0].MessageSeq == "" {
		t.Fatalf("GET /v1/requests = %+v, want one open request with decimal strings", list)
	}
	b("GET", "/v1/requests?direction=incoming&cursor=AAAA", "").wantError(t, "GET /v1/requests with a bad cursor", http.StatusBadRequest, "CURSOR_INVALID")

	var resp struct {
		Request struct {
			Revision string `json:"revision"`
			Status   string `json:"status"`
		} `json:"request"`
	}
	path := "/v1/requests/" + sent.MessageID + "/respond"
	b("POST", path, `{"expected_revision":"0","status":"needs_context","body_md":"which branch?","idempotency_key":"r1"}`).
		wantOK(t, "POST /v1/requests/{id}/respond", &resp)
	if resp.Request.Revision != "1" || resp.Request.Status != "needs_context" {
		t.Fatalf("POST respond = %+v, want revision \"1\"", resp)
	}
	env := b("POST", path, `{"expected_revision":"0","status":"declined","body_md":"no","idempotency_key":"r2"}`).
		wantError(t, "POST respond stale", http.StatusConflict, "REVISION_CONFLICT")
	if env.CurrentRevision == nil || *env.CurrentRevision != "1" {
		t.Errorf("REVISION_CONFLICT current_revision = %v, want \"1\"", env.CurrentRevision)
	}
	a("POST", path, `{"expected_revision":"1","status":"declined","body_md":"no","idempotency_key":"r3"}`).
		wantError(t, "POST respond by the author", http.StatusNotFound, "NOT_FOUND_OR_FORBIDDEN")

	var msg struct {
		Message struct {
			Files []struct {
				FileID string `json:"file_id"`
			} `json:"files"`
		} `json:"message"`
	}
	b("GET", "/v1/messages/"+sent.MessageID, "").wantOK(t, "GET /v1/messages/{id}", &msg)
	report := "/v1/messages/" + sent.MessageID + "/files/" + msg.Message.Files[0].FileID + "/report"
	b("PUT", report, `{"expected_revision":"0","state":"accessible","note":"opened it","idempotency_key":"f1"}`).
		wantOK(t, "PUT file report", nil)
	c("PUT", report, `{"expected_revision":"0","state":"accessible","idempotency_key":"f1"}`).
		wantError(t, "PUT file report from another box", http.StatusNotFound, "NOT_FOUND_OR_FORBIDDEN")

	var reps struct {
		Scope   string `json:"scope"`
		Reports []struct {
			State string `json:"state"`
		} `json:"reports"`
	}
	a("GET", "/v1/messages/"+sent.MessageID+"/file-reports?limit=5", "").wantOK(t, "GET file-reports", &reps)
	if reps.Scope != "all" || len(reps.Reports) != 1 || reps.Reports[0].State != "accessible" {
		t.Errorf("GET file-reports = %+v, want bob's report", reps)
	}

	var exp struct {
		Chunk   string `json:"chunk"`
		Partial bool   `json:"partial"`
	}
	a("GET", "/v1/messages/"+sent.MessageID+"/export?format=json", "").wantOK(t, "GET export", &exp)
	if exp.Partial || strings.Count(exp.Chunk, "\n") != 2 {
		t.Errorf("GET export = %+v, want two JSON lines, complete", exp)
	}
	c("GET", "/v1/messages/"+sent.MessageID+"/export?format=json", "").
		wantError(t, "GET export from another box", http.StatusNotFound, "NOT_FOUND_OR_FORBIDDEN")
}

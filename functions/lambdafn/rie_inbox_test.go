//go:build unix

package lambdafn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
)

// TestInboxFunctionsUnderRuntimeEmulator invokes inbox_list and inbox_ack's
// real function binaries under the Lambda runtime emulator against the
// table this test prepared: a DM is listed (with the attention summary),
// acknowledged by the session it was returned to, and a listing with
// wait_seconds and nothing new answers empty at its limit (the function's
// bounded poll of the inbox head).
func TestInboxFunctionsUnderRuntimeEmulator(t *testing.T) {
	tb := newEmulatorTable(t)
	h, ctx := tb.h, context.Background()
	alice, bob := tb.Alice, tb.Bob
	pa := tb.Prime(alice)
	sent := tb.DM(pa, bob, "dm", "ping")
	pb := tb.Prime(bob)
	headers := map[string]string{"authorization": "Bearer " + bob.BoxKey, "agentbox-session": pb.SessionID,
		"content-type": "application/json"}

	list := tb.start(t, "inbox_list")
	res := list.invoke(t, "POST", "/v1/inbox/list", headers, `{}`)
	var page struct {
		Rows []struct {
			InboxSeq string `json:"inbox_seq"`
			Message  struct {
				MessageID string `json:"message_id"`
			} `json:"message"`
		} `json:"rows"`
		ResumeCursor string                `json:"resume_cursor"`
		Attention    *hub.AttentionSummary `json:"attention"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &page) != nil || len(page.Rows) != 1 ||
		page.Rows[0].Message.MessageID != sent.MessageID || page.Attention == nil || page.Attention.UnreadCount != 1 {
		t.Fatalf("inbox_list function: got %d %s, want the DM with attention.unread_count 1", res.StatusCode, res.Body)
	}

	ack := tb.start(t, "inbox_ack")
	res = ack.invoke(t, "POST", "/v1/inbox/ack", headers, fmt.Sprintf(`{"idempotency_key":"ack","inbox_seqs":[%q]}`, page.Rows[0].InboxSeq))
	var acked struct {
		Acked     int                   `json:"acked"`
		Attention *hub.AttentionSummary `json:"attention"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &acked) != nil || acked.Acked != 1 ||
		acked.Attention == nil || acked.Attention.UnreadCount != 0 {
		t.Fatalf("inbox_ack function: got %d %s, want one row acked and unread 0", res.StatusCode, res.Body)
	}
	res = ack.invoke(t, "POST", "/v1/inbox/ack", headers, `{"idempotency_key":"bad","inbox_seqs":["7"]}`)
	if res.StatusCode != 404 {
		t.Errorf("inbox_ack function with an unknown row: got %d %s, want 404 NOT_FOUND_OR_FORBIDDEN", res.StatusCode, res.Body)
	}

	res = list.invoke(t, "POST", "/v1/inbox/list", headers, fmt.Sprintf(`{"cursor":%q,"wait_seconds":1}`, page.ResumeCursor))
	var empty struct {
		Rows         []json.RawMessage `json:"rows"`
		ResumeCursor string            `json:"resume_cursor"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &empty) != nil || len(empty.Rows) != 0 || empty.ResumeCursor == "" {
		t.Errorf("inbox_list function waiting 1 s for nothing: got %d %s, want no rows and a resume cursor", res.StatusCode, res.Body)
	}

	// A function of 4 s asked to wait 20 s grants what its deadline
	// leaves (4 s less a second for the request, less a second to
	// answer) and says so, instead of being cut off.
	short := tb.start(t, "inbox_list", "AWS_LAMBDA_FUNCTION_TIMEOUT=4")
	res = short.invoke(t, "POST", "/v1/inbox/list", headers, fmt.Sprintf(`{"cursor":%q,"wait_seconds":20}`, page.ResumeCursor))
	var waited struct {
		Granted *float64 `json:"wait_granted_seconds"`
		Waited  *float64 `json:"waited_seconds"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &waited) != nil || waited.Granted == nil || waited.Waited == nil ||
		*waited.Granted < 1 || *waited.Granted > 2 || *waited.Waited < *waited.Granted-0.2 {
		t.Errorf("inbox_list function of 4 s waiting 20 s: got %d %s; want about 2 s granted and waited", res.StatusCode, res.Body)
	}
	if p, err := h.Prime(ctx, hub.Credentials{Bearer: bob.BoxKey}, hub.PrimeInput{}); err != nil || p.UnreadCount != 0 {
		t.Errorf("bob's unread after the functions ran = %+v, %v; want 0", p, err)
	}
}

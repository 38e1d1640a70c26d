package hub_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// sentEnvelope is the README's measure of the 64 KiB envelope: the
// message's arguments as the agent sent them, compact JSON, characters
// unescaped, without box_key and idempotency_key.
func sentEnvelope(t *testing.T, in hub.MessageSendInput) int {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Destination hub.Destination    `json:"destination"`
		BodyMD      string             `json:"body_md"`
		Payload     hub.Object         `json:"payload,omitempty"`
		Files       []hub.FileRefInput `json:"files,omitempty"`
		Mentions    []string           `json:"mentions,omitempty"`
		Requests    []string           `json:"requests,omitempty"`
		ReplyTo     string             `json:"reply_to,omitempty"`
	}{in.Destination, in.BodyMD, in.Payload, in.Files, in.Mentions, in.Requests, in.ReplyTo})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Len() - 1
}

// TestEnvelopeMeasuredOnWhatWasSent: a message of exactly 64 KiB as sent
// is stored, whatever its characters (a body of "<", which an HTML-escaping
// encoding would make six times longer); one byte more is LIMIT_EXCEEDED.
func TestEnvelopeMeasuredOnWhatWasSent(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		dest := hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.b.AgentID}
		build := func(pad int) hub.MessageSendInput {
			in := hub.MessageSendInput{Destination: dest, BodyMD: strings.Repeat("<", hub.MaxBodyMDBytes),
				Payload: hub.Object(`{"s":"` + strings.Repeat("&", 8192-8) + `"}`)}
			for i := range 20 {
				seg := strings.Repeat("u", 1700)
				if i == 0 {
					seg = strings.Repeat("u", pad)
				}
				in.Files = append(in.Files, hub.FileRefInput{URL: fmt.Sprintf("https://github.com/%02d/%s", i, seg),
					DisplayName: strings.Repeat(">", 200), MediaType: "text/markdown", SHA256: strings.Repeat("a", 64)})
			}
			return in
		}
		pad := 1 + hub.MaxEnvelopeBytes - sentEnvelope(t, build(1))
		at := build(pad)
		if n := sentEnvelope(t, at); n != hub.MaxEnvelopeBytes {
			t.Fatalf("test setup: envelope %d bytes, want %d", n, hub.MaxEnvelopeBytes)
		}
		if _, err := send(f, cr, "at-limit", at); err != nil {
			t.Errorf("MessageSend of exactly %d bytes as sent: %v, want stored", hub.MaxEnvelopeBytes, err)
		}
		_, err := send(f, cr, "over-limit", build(pad+1))
		wantCode(t, "MessageSend one byte over the envelope", err, apperr.LimitExceeded)
	})
}

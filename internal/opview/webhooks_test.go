package opview_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
)

// TestWebhookPanel: the box page lists the box's endpoints with their
// scope and state — a failing one says so, with its last status — shows
// an endpoint's scheme and host but not its path or query (they may hold
// a token), and never a secret; another box's endpoints stay off it.
func TestWebhookPanel(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	agentHook, err := w.admin.AddWebhook(ctx, w.bob.AgentID, "https://hooks.example.com/t/sekrit-token?k=v")
	if err != nil {
		t.Fatal(err)
	}
	boxHook, err := w.admin.AddBoxWebhook(ctx, w.bob.BoxID, "https://ops.example.net/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.admin.AddWebhook(ctx, w.carol.AgentID, "https://other-box.example.org/x"); err != nil {
		t.Fatal(err)
	}
	if err := w.h.WebhookRecord(ctx, agentHook.WebhookID, hub.WebhookOutcome{Status: 503, Failing: true}); err != nil {
		t.Fatal(err)
	}
	_, body := w.do(w.owner, "", "GET", "/ui/api/box", nil)
	page := string(body)
	i := strings.Index(page, `class="webhooks"`)
	if i < 0 {
		t.Fatalf("box page has no webhook panel:\n%s", page)
	}
	panel := page[i:]
	panel = panel[:strings.Index(panel, "</table>")]
	for _, want := range []string{"https://hooks.example.com/…", "https://ops.example.net", "whole box", "bob", "failing", "HTTP 503", "none yet"} {
		if !strings.Contains(panel, want) {
			t.Errorf("webhook panel lacks %q:\n%s", want, panel)
		}
	}
	for _, never := range []string{"sekrit-token", "k=v", agentHook.Secret, boxHook.Secret, "whsec_", "other-box.example.org"} {
		if strings.Contains(page, never) {
			t.Errorf("box page shows %q", never)
		}
	}
}

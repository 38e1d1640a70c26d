package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestWebhookAdmin: the owner's endpoint commands validate, list per box,
// rotate with an overlap that ends, disable, enable and remove; the wake
// state is thin.
func TestWebhookAdmin(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		a := f.h.Admin()
		for _, u := range []string{"http://example.com/", "https://", "https://u:p@example.com/", "https://example.com/#x",
			"ftp://example.com/", "https://example.com/" + strings.Repeat("a", hub.MaxWebhookURL)} {
			_, err := a.AddWebhook(f.ctx, f.b.AgentID, u)
			if e := wantCode(t, "AddWebhook", err, apperr.InvalidArgument); e != nil && strings.Contains(e.Message, "example.com") {
				t.Errorf("AddWebhook: message %q echoes the URL", e.Message)
			}
		}
		_, err := a.AddWebhook(f.ctx, "0f0f0f0f-0000-4000-8000-000000000000", "https://example.com/")
		wantCode(t, "AddWebhook unknown agent", err, apperr.NotFoundOrForbidden)

		w, err := a.AddWebhook(f.ctx, f.b.AgentID, "https://hooks.example.com/wake")
		if err != nil || !strings.HasPrefix(w.Secret, "whsec_") || w.Status != hub.WebhookActive || w.BoxID != f.box {
			t.Fatalf("AddWebhook = %+v, %v", w, err)
		}
		if l, err := a.ListWebhooks(f.ctx, f.box); err != nil || len(l) != 1 || l[0].Secret != "" || l[0].WebhookID != w.WebhookID {
			t.Errorf("ListWebhooks = %+v, %v; want the one endpoint without its secret", l, err)
		}
		if l, err := a.ListWebhooks(f.ctx, f.other.BoxID); err != nil || len(l) != 0 {
			t.Errorf("ListWebhooks of another box = %+v, %v; want none", l, err)
		}
		rot, err := a.RotateWebhookSecret(f.ctx, w.WebhookID, time.Hour)
		if err != nil || rot.Secrets != 2 || rot.Secret == w.Secret {
			t.Fatalf("RotateWebhookSecret = %+v, %v", rot, err)
		}
		targets, _ := f.h.WebhookTargets(f.ctx)
		if len(targets) != 1 || len(targets[0].Secrets) != 2 || targets[0].Secrets[0] != rot.Secret || targets[0].Secrets[1] != w.Secret {
			t.Errorf("during the overlap targets = %+v, want the new then the old secret", targets)
		}
		f.clock.Advance(time.Hour + time.Second)
		if targets, _ = f.h.WebhookTargets(f.ctx); len(targets[0].Secrets) != 1 || targets[0].Secrets[0] != rot.Secret {
			t.Errorf("after the overlap targets sign with %d secrets, want the new one only", len(targets[0].Secrets))
		}
		if d, err := a.SetWebhookEnabled(f.ctx, w.WebhookID, false); err != nil || d.Status != hub.WebhookDisabled {
			t.Errorf("disable = %+v, %v", d, err)
		}
		if e, err := a.SetWebhookEnabled(f.ctx, w.WebhookID, true); err != nil || e.Status != hub.WebhookActive {
			t.Errorf("enable = %+v, %v", e, err)
		}
		st, err := f.h.WakeState(f.ctx, f.box, f.b.AgentID)
		if err != nil || st.InboxSeq != 0 || st.UnreadCount != 0 || st.MessageID != "" {
			t.Errorf("WakeState of an empty inbox = %+v, %v", st, err)
		}
		if err := a.RemoveWebhook(f.ctx, w.WebhookID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "RemoveWebhook twice", a.RemoveWebhook(f.ctx, w.WebhookID), apperr.NotFoundOrForbidden)
		_, err = a.SetWebhookEnabled(f.ctx, w.WebhookID, true)
		wantCode(t, "enable a removed endpoint", err, apperr.NotFoundOrForbidden)
	})
}

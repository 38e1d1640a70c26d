package opview

import (
	"context"
	"net/url"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
)

// The box page's webhook panel: the owner's endpoints with their state,
// so a failing endpoint shows where the lead looks. An endpoint's URL may
// carry a token in its path or query, so the panel shows only its scheme
// and host; secrets never reach the view (hub.WebhookInfo has none past
// add and rotate).

// ViewWebhook is one endpoint on the box page.
type ViewWebhook struct {
	ID string
	// Target is scheme://host, with "/…" when the URL has more.
	Target string
	// AgentID and AgentName name an agent endpoint's agent; Box is set
	// for a box endpoint (every agent of the box).
	AgentID, AgentName string
	Box                bool
	Status             string
	// Delivered is an agent endpoint's delivered inbox seq.
	Delivered                 string
	FailingSince, LastAttempt time.Time
	LastStatus                int
}

// webhooks reads the box's endpoints; names maps agent ids to names where
// the page knows them (others show as ids).
func (v *Model) webhooks(ctx context.Context, names map[string]string) ([]ViewWebhook, error) {
	list, err := v.s.Webhooks(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ViewWebhook, 0, len(list))
	for _, w := range list {
		vw := ViewWebhook{ID: w.WebhookID, Target: webhookTarget(w.URL), AgentID: w.AgentID,
			AgentName: names[w.AgentID], Box: w.Scope == hub.WebhookScopeBox, Status: w.Status,
			Delivered: w.DeliveredSeq, LastStatus: w.LastStatus,
			FailingSince: parseTime(w.FailingSince), LastAttempt: parseTime(w.LastAttempt)}
		if vw.AgentName == "" {
			vw.AgentName = w.AgentID
		}
		out = append(out, vw)
	}
	return out, nil
}

// webhookTarget is what the panel shows of an endpoint URL.
func webhookTarget(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	t := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		t += "/…"
	}
	return t
}

// parseTime reads the admin API's RFC 3339 times (zero when empty).
func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

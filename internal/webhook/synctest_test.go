package webhook_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/webhook"
)

// memSource is the hub's port in memory, for the fake clock of synctest
// (the real store's background goroutines do not belong in a bubble).
type memSource struct {
	mu      sync.Mutex
	target  hub.WebhookTarget
	seq     uint64
	records []hub.WebhookOutcome
}

func (m *memSource) WebhookTargets(context.Context) ([]hub.WebhookTarget, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return []hub.WebhookTarget{m.target}, nil
}

func (m *memSource) WakeState(_ context.Context, box, agent string) (*hub.WakeState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &hub.WakeState{AgentID: agent, BoxID: box, InboxSeq: hub.Revision(m.seq), Reasons: []string{"dm"}}, nil
}

func (m *memSource) WebhookRecord(_ context.Context, _ string, o hub.WebhookOutcome) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, o)
	if o.Delivered {
		m.target.DeliveredSeq, m.target.FailingSince = max(m.target.DeliveredSeq, o.Seq), time.Time{}
	} else if m.target.FailingSince.IsZero() {
		m.target.FailingSince = time.Now()
	}
	if o.Failing {
		m.target.Status = hub.WebhookFailing
	}
	return nil
}

// TestRetriesBoundedInTime: with the service's own policy, an endpoint
// that always answers 500 is retried with growing, jittered waits, never
// closer than BaseBackoff/2 nor further than MaxBackoff+BaseBackoff/2
// apart, and marked failing once RetryFor has passed since the first
// failure; then nothing more is sent.
func TestRetriesBoundedInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &memSource{seq: 1, target: hub.WebhookTarget{ID: "w", BoxID: "b", AgentID: "a", URL: "https://example.com/",
			Secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, Status: hub.WebhookActive}}
		var mu sync.Mutex
		var attempts []time.Time
		d := webhook.NewFaulty(src, func(context.Context, string, http.Header, []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, time.Now())
			return http.StatusInternalServerError, nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		start := time.Now()
		go func() { d.Run(ctx); close(done) }()
		time.Sleep(webhook.RetryFor + 2*webhook.MaxBackoff)
		synctest.Wait()
		mu.Lock()
		n := len(attempts)
		mu.Unlock()
		time.Sleep(24 * time.Hour) // a failing endpoint gets nothing more
		synctest.Wait()
		cancel()
		<-done

		mu.Lock()
		defer mu.Unlock()
		if len(attempts) != n {
			t.Errorf("%d attempts after the endpoint was failing, want none", len(attempts)-n)
		}
		if src.target.Status != hub.WebhookFailing {
			t.Fatalf("after %v of 500s the endpoint is %s, want failing", webhook.RetryFor+2*webhook.MaxBackoff, src.target.Status)
		}
		if n < 10 || n > 100 {
			t.Errorf("%d attempts in the retry window, want exponential backoff's 10-100", n)
		}
		for i := 1; i < n; i++ {
			gap := attempts[i].Sub(attempts[i-1])
			if gap < webhook.BaseBackoff/2 || gap > webhook.MaxBackoff+webhook.BaseBackoff/2+webhook.Poll {
				t.Errorf("gap %d = %v, want within [%v, %v]", i, gap, webhook.BaseBackoff/2, webhook.MaxBackoff+webhook.BaseBackoff/2+webhook.Poll)
			}
		}
		last := attempts[n-1].Sub(start)
		if last < webhook.RetryFor || last > webhook.RetryFor+webhook.MaxBackoff+webhook.BaseBackoff+webhook.Poll {
			t.Errorf("the last attempt came %v after the first, want just past RetryFor %v", last, webhook.RetryFor)
		}
		failing := 0
		for _, r := range src.records {
			if r.Failing {
				failing++
			}
		}
		if failing != 1 || !src.records[len(src.records)-1].Failing {
			t.Errorf("records %+v: want exactly the last one to mark the endpoint failing", src.records)
		}
	})
}

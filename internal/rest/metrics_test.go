package rest_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/metrics/metricstest"
)

func lastCall(t *testing.T, rec *metricstest.Recorder) metrics.Call {
	t.Helper()
	got := rec.Calls()
	if len(got) == 0 {
		t.Fatal("no call recorded")
	}
	return got[len(got)-1]
}

// TestCallsReachTheMetricsPort: every REST request reports its tool and
// outcome code to the hub's recorder, an unrouted one with no tool.
func TestCallsReachTheMetricsPort(t *testing.T) {
	t.Parallel()
	rec := &metricstest.Recorder{}
	e := newEnvOpts(t, boltStore(t), hub.Options{Metrics: rec}, nil)
	e.prime(e.alice.BoxKey)
	if c := lastCall(t, rec); c.Tool != "agent_prime" || c.Code != "OK" || c.Duration <= 0 {
		t.Errorf("prime recorded %+v", c)
	}
	e.do(t, req{method: "POST", path: "/v1/agent/prime", key: "not-a-key"})
	if c := lastCall(t, rec); c.Tool != "agent_prime" || c.Code == "OK" {
		t.Errorf("refused prime recorded %+v", c)
	}
	e.do(t, req{method: "GET", path: "/v1/no-such-route"})
	if c := lastCall(t, rec); c.Tool != "" || c.Code == "OK" {
		t.Errorf("unrouted request recorded %+v", c)
	}
}

package mcpserver_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/metrics"
)

// TestToolCallsReachTheMetricsPort: every MCP tool call reports its tool
// and outcome code to the hub's recorder, a refused one with its code.
func TestToolCallsReachTheMetricsPort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs, _ := e.connect(t, e.alice.BoxKey)
	last := func() metrics.Call {
		t.Helper()
		got := e.metrics.Calls()
		if len(got) == 0 {
			t.Fatal("no call recorded")
		}
		return got[len(got)-1]
	}
	call(t, cs, "agent_prime", map[string]any{})
	if c := last(); c.Tool != "agent_prime" || c.Code != "OK" || c.Duration <= 0 {
		t.Errorf("agent_prime recorded %+v", c)
	}
	call(t, cs, "get_help", map[string]any{"tool": "no_such_tool"})
	if c := last(); c.Tool != "get_help" || c.Code == "OK" {
		t.Errorf("refused get_help recorded %+v", c)
	}
}

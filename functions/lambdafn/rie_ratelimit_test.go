//go:build unix

package lambdafn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/functions/lambdafn"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestRateLimitSharedByInstances: two instances of checkpoint_save (two
// emulator processes on one table) and the agent_prime and MCP functions
// share one agent's write limit, configured through the functions'
// environment: the fifth write after a burst of four is refused wherever it
// lands, as REST 429 with Retry-After and as an MCP isError envelope.
func TestRateLimitSharedByInstances(t *testing.T) {
	rie, bootstrap := binaries(t)
	tb := newEmulatorTable(t)
	h, table, endpoint, ctx := tb.h, tb.table, tb.endpoint, context.Background()
	alice := tb.Alice
	// A burst of four writes refilled once a minute: the test never waits
	// for it, so wall-clock speed cannot change the outcome.
	limit := "AGENTBOX_LIMIT_AGENT_MUTATIONS=0.016,4"
	// One binary serves every function; the environment names which.
	saveBin, primeBin, mcpBin := bootstrap, bootstrap, bootstrap
	instances := []*emulator{
		startEmulator(t, rie, "checkpoint_save#1", saveBin, append(functionEnv(table, endpoint, "checkpoint_save"), limit)),
		startEmulator(t, rie, "checkpoint_save#2", saveBin, append(functionEnv(table, endpoint, "checkpoint_save"), limit)),
	}
	primeFn := startEmulator(t, rie, "agent_prime", primeBin, append(functionEnv(table, endpoint, "agent_prime"), limit))
	mcp := startEmulator(t, rie, lambdafn.MCPFunction, mcpBin, append(functionEnv(table, endpoint, lambdafn.MCPFunction), limit))

	bearer := "Bearer " + alice.BoxKey
	// MCP initialize with a key opens a bound session: the first write.
	mcpHeaders := map[string]string{"authorization": bearer, "content-type": "application/json",
		"accept": "application/json, text/event-stream"}
	res := mcp.invoke(t, "POST", lambdafn.MCPPath, mcpHeaders,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rie-test","version":"1"}}}`)
	sid := header(res, "Mcp-Session-Id")
	if res.StatusCode != 200 || sid == "" {
		t.Fatalf("MCP initialize: got %d %s, want 200 with a session", res.StatusCode, res.Body)
	}
	mcpHeaders["mcp-session-id"] = sid
	mcpHeaders["mcp-protocol-version"] = "2025-06-18"
	res = primeFn.invoke(t, "POST", "/v1/agent/prime", map[string]string{"authorization": bearer}, "")
	var prime struct {
		SessionID string `json:"session_id"`
		Limits    struct {
			Rates hub.RateLimits `json:"rates"`
		} `json:"limits"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &prime) != nil {
		t.Fatalf("agent_prime: got %d %s, want 200", res.StatusCode, res.Body)
	}
	if got := prime.Limits.Rates.AgentMutations; got.PerSecond != 0.016 || got.Burst != 4 {
		t.Errorf("agent_prime reports agent_mutations %+v, want the environment's 0.016,4", got)
	}
	headers := map[string]string{"authorization": bearer, "agentbox-session": prime.SessionID, "content-type": "application/json"}

	// initialize wrote nothing (its session id is signed) and prime took
	// one write; three saves alternate between the instances.
	for i := range 3 {
		body := fmt.Sprintf(`{"expected_revision":"%d","idempotency_key":"rl-%d","body_md":"save %d"}`, i, i, i)
		res := instances[i%2].invoke(t, "PUT", "/v1/checkpoint", headers, body)
		if res.StatusCode != 200 {
			t.Fatalf("save %d on instance %d: got %d %s, want 200", i, i%2+1, res.StatusCode, res.Body)
		}
	}
	for i, inst := range instances {
		res := inst.invoke(t, "PUT", "/v1/checkpoint", headers, `{"expected_revision":"3","idempotency_key":"rl-3","body_md":"one too many"}`)
		var env struct {
			Error struct {
				Code       string `json:"code"`
				RetryAfter int    `json:"retry_after_seconds"`
			} `json:"error"`
		}
		if res.StatusCode != 429 || json.Unmarshal([]byte(res.Body), &env) != nil || env.Error.Code != "RATE_LIMITED" ||
			env.Error.RetryAfter < 1 || header(res, "Retry-After") != fmt.Sprint(env.Error.RetryAfter) {
			t.Errorf("fifth write on instance %d: got %d %s (Retry-After %q), want 429 RATE_LIMITED with a matching Retry-After",
				i+1, res.StatusCode, res.Body, header(res, "Retry-After"))
		}
	}

	var call struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct {
					Code       string `json:"code"`
					RetryAfter int    `json:"retry_after_seconds"`
				} `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	// The MCP function shares the limit: priming there is a write.
	rpc(t, mcp, mcpHeaders, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_prime","arguments":{}}}`, &call)
	if !call.Result.IsError || call.Result.StructuredContent.Error.Code != "RATE_LIMITED" || call.Result.StructuredContent.Error.RetryAfter < 1 {
		t.Errorf("MCP agent_prime past the shared limit: %+v, want isError with RATE_LIMITED and retry_after_seconds", call.Result)
	}

	got, err := h.CheckpointGet(ctx, hub.Credentials{Bearer: alice.BoxKey, SessionID: prime.SessionID}, hub.CheckpointGetInput{})
	if err != nil {
		t.Fatalf("CheckpointGet: %v", err)
	}
	if got.Checkpoint.Revision != 3 {
		t.Errorf("checkpoint at revision %d, want 3: a refused write changed it", got.Checkpoint.Revision)
	}
}

package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// limitedWorld is the hubtest world with cfg's limits enforced.
func limitedWorld(t *testing.T, cfg limits.Config) *hubtest.World {
	t.Helper()
	return hubtest.New(t, teststores.All()[0], hubtest.Config{Options: hub.Options{Limits: &cfg}})
}

// initialize posts an MCP initialize from the address from with key as
// its bearer to handler.
func initialize(handler http.Handler, from, key string) *httptest.ResponseRecorder {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	r.RemoteAddr = from
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, r)
	return w
}

// bearerTransport adds the agent key to every request.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPProbeAndRateLimit drives the served handler with the go-sdk MCP
// client: every control class in a space title is an isError
// INVALID_ARGUMENT that echoes nothing, and past the write limit a call is
// an isError RATE_LIMITED envelope with retry_after_seconds.
func TestMCPProbeAndRateLimit(t *testing.T) {
	w := limitedWorld(t, limits.Config{AgentMutations: limits.Rate{PerSecond: 0.01, Burst: 3}})
	srv := httptest.NewServer(server.Handler(w.Hub, registry.New(registrytest.Guard(t)), nil))
	t.Cleanup(srv.Close)
	ctx, ag := w.Ctx, w.Alice
	client := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{ag.BoxKey}}, MaxRetries: -1},
		// The MCP session is the tool's session: a 2025 revision (the
		// client's default, 2026-07-28, has none).
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	callTool := func(name string, args any) (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("CallTool(%s): %v", name, err)
		}
		b, _ := json.Marshal(res)
		return res, string(b)
	}
	code := func(res *mcp.CallToolResult) (string, int) {
		b, _ := json.Marshal(res.StructuredContent)
		var env struct {
			Error struct {
				Code       string `json:"code"`
				RetryAfter int    `json:"retry_after_seconds"`
			} `json:"error"`
		}
		_ = json.Unmarshal(b, &env)
		return env.Error.Code, env.Error.RetryAfter
	}
	if res, raw := callTool("agent_prime", map[string]any{}); res.IsError {
		t.Fatalf("agent_prime: %s", raw)
	}
	space := func(title, req string) map[string]any {
		return map[string]any{"data": map[string]any{"request_id": req, "title": title, "goal": "g", "visibility": "public"}}
	}
	const marker = "zzprobe"
	for _, ch := range "\x01\x1b\x7f\u0085\u009b\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" {
		res, raw := callTool("create_space", space("ok"+string(ch)+marker, "r"))
		if c, _ := code(res); !res.IsError || c != "INVALID_ARGUMENT" {
			t.Errorf("title with U+%04X: %s, want isError INVALID_ARGUMENT", ch, raw)
		}
		if strings.Contains(raw, marker) {
			t.Errorf("title with U+%04X: result %s echoes the rejected value", ch, raw)
		}
	}
	// initialize wrote nothing (a signed id) and agent_prime spent one
	// write of three; two creations fit, the next does not.
	for i := range 3 {
		res, raw := callTool("create_space", space("fine", fmt.Sprint("r", i)))
		c, retry := code(res)
		switch {
		case i < 2 && res.IsError:
			t.Fatalf("create %d within the burst: %s", i, raw)
		case i == 2 && (!res.IsError || c != "RATE_LIMITED" || retry < 1):
			t.Fatalf("create past the burst: %s, want isError RATE_LIMITED with retry_after_seconds", raw)
		}
	}
}

// TestMCPAuthFailuresLimitedPerSource: over MCP as over REST, failed
// authentications are counted per source in memory; past the burst a
// source is answered 429 with Retry-After before anything is read, and a
// good key from another source is not affected.
func TestMCPAuthFailuresLimitedPerSource(t *testing.T) {
	wd := limitedWorld(t, limits.Config{AuthFailures: limits.Rate{PerSecond: 0.01, Burst: 3}})
	handler, ag := server.Handler(wd.Hub, registry.New(registrytest.Guard(t)), nil), wd.Alice
	const attacker, agent = "192.0.2.7:40000", "192.0.2.8:40000"
	for i := range 3 {
		if w := initialize(handler, attacker, "abk_not-a-key"); w.Code != http.StatusUnauthorized {
			t.Fatalf("bad key %d: HTTP %d %s, want 401", i, w.Code, w.Body)
		}
	}
	w := initialize(handler, attacker, "abk_not-a-key")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || strings.Contains(w.Body.String(), "not-a-key") {
		t.Fatalf("bad key past the burst: HTTP %d (Retry-After %q) %s, want 429 with Retry-After and no echo",
			w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if w := initialize(handler, agent, ag.BoxKey); w.Code != http.StatusOK {
		t.Errorf("good key from another source: HTTP %d %s, want 200", w.Code, w.Body)
	}
}

// TestMCPAuthFailuresSpareValidKeys: over MCP, clients retrying a
// rotated-out key and a malformed one from the address a valid agent
// shares are stopped, and the valid agent is never refused.
func TestMCPAuthFailuresSpareValidKeys(t *testing.T) {
	w := limitedWorld(t, limits.Config{AuthFailures: limits.Rate{PerSecond: 0.01, Burst: 3}})
	handler, alice, bob := server.Handler(w.Hub, registry.New(registrytest.Guard(t)), nil), w.Alice, w.Bob
	if _, err := w.Admin.RotateKey(w.Ctx, bob.AgentID); err != nil {
		t.Fatal(err)
	}
	const shared = "127.0.0.1:40000"
	call := func(key string) int { return initialize(handler, shared, key).Code }
	for i := range 12 {
		for _, failing := range []string{bob.BoxKey, "abk_not-a-key"} {
			want := http.StatusUnauthorized
			if i >= 3 {
				want = http.StatusTooManyRequests
			}
			if got := call(failing); got != want {
				t.Fatalf("failing client, call %d: HTTP %d, want %d", i, got, want)
			}
		}
		if got := call(alice.BoxKey); got != http.StatusOK {
			t.Fatalf("valid agent on the same address, call %d: HTTP %d, want 200", i, got)
		}
	}
}

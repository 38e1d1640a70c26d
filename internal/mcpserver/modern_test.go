package mcpserver_test

// Protocol 2026-07-28 beside the 2025 revisions (modern.go): the TS 2.x
// client in both eras, the Inspector in modern mode, a per-call host with
// no initialize at all, the transport page's failures, server/discover,
// and cancellation of a waiting inbox_list in both eras.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/mcpserver"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/version"
)

const modernVersion = "2026-07-28"

// modernMeta is the per-request _meta of 2026-07-28.
func modernMeta(version string) map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    version,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "agentbox-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

// modernCall is one raw 2026-07-28 HTTP exchange.
type modernCall struct {
	method string
	params map[string]any // _meta is added unless noMeta
	noMeta bool
	meta   map[string]any // replaces the default _meta
	header map[string]string
	drop   []string // headers not to send
	id     any      // nil: a notification
}

type rpcReply struct {
	status int
	header http.Header
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// post sends c as a fresh HTTP client would: no initialize, no session, the
// standard headers derived from the body unless c overrides them.
func (e *env) postModern(t *testing.T, ctx context.Context, key string, c modernCall) rpcReply {
	t.Helper()
	params := map[string]any{}
	for k, v := range c.params {
		params[k] = v
	}
	if !c.noMeta {
		params["_meta"] = modernMeta(modernVersion)
		if c.meta != nil {
			params["_meta"] = c.meta
		}
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": c.method, "params": params}
	if c.id != nil {
		msg["id"] = c.id
	}
	body, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": modernVersion, "Mcp-Method": c.method}
	if key != "" {
		h["Authorization"] = "Bearer " + key
	}
	if name, ok := c.params["name"].(string); ok {
		h["Mcp-Name"] = name
	}
	for k, v := range c.header {
		h[k] = v
	}
	for _, k := range c.drop {
		delete(h, k)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{}).Do(req) // a new client, a new connection: nothing carries over
	if err != nil {
		t.Fatalf("POST %s: %v", c.method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := rpcReply{status: resp.StatusCode, header: resp.Header}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("POST %s: HTTP %d body %q is not JSON-RPC", c.method, resp.StatusCode, raw)
		}
	}
	return r
}

// tool runs a tools/call in the 2026-07-28 form and returns its result.
func (e *env) modernTool(t *testing.T, key, name string, args map[string]any) map[string]any {
	t.Helper()
	r := e.postModern(t, context.Background(), key, modernCall{method: "tools/call", id: 1, params: map[string]any{"name": name, "arguments": args}})
	if r.status != 200 || r.Error != nil {
		t.Fatalf("tools/call %s: HTTP %d, error %+v", name, r.status, r.Error)
	}
	var res map[string]any
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res["resultType"] != "complete" {
		t.Errorf("tools/call %s: resultType %v, want complete (2026-07-28 requires it)", name, res["resultType"])
	}
	if r.header.Get(mcpserver.SessionHeader) != "" {
		t.Errorf("tools/call %s: the response carries Mcp-Session-Id; 2026-07-28 has none", name)
	}
	return res
}

func structuredOf(res map[string]any) map[string]any {
	sc, _ := res["structuredContent"].(map[string]any)
	return sc
}

func errCode(res map[string]any) string {
	env, _ := structuredOf(res)["error"].(map[string]any)
	code, _ := env["code"].(string)
	return code
}

// TestModernDiscover: server/discover answers the DiscoverResult of the
// 2026-07-28 schema (required supportedVersions, capabilities, resultType,
// ttlMs, cacheScope; serverInfo in _meta; instructions), without a key.
func TestModernDiscover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.postModern(t, context.Background(), "", modernCall{method: "server/discover", id: "d-1"})
	if r.status != 200 || r.Error != nil || r.ID != "d-1" {
		t.Fatalf("server/discover: HTTP %d, id %v, error %+v", r.status, r.ID, r.Error)
	}
	var res struct {
		ResultType        string          `json:"resultType"`
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      map[string]any  `json:"capabilities"`
		Meta              map[string]any  `json:"_meta"`
		Instructions      string          `json:"instructions"`
		TTLMs             *int            `json:"ttlMs"`
		CacheScope        string          `json:"cacheScope"`
		Extra             json.RawMessage `json:"-"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}
	for _, v := range want {
		if !slices.Contains(res.SupportedVersions, v) {
			t.Errorf("supportedVersions %v lacks %s", res.SupportedVersions, v)
		}
	}
	if len(res.SupportedVersions) == 0 || res.SupportedVersions[0] != modernVersion {
		t.Errorf("supportedVersions %v: want the newest, 2026-07-28, first", res.SupportedVersions)
	}
	if _, ok := res.Capabilities["tools"]; !ok || len(res.Capabilities) != 1 {
		t.Errorf("capabilities %v, want tools only", res.Capabilities)
	}
	info, _ := res.Meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != "agentbox" || info["version"] != version.Version {
		t.Errorf("_meta serverInfo %v, want agentbox %s", info, version.Version)
	}
	if res.ResultType != "complete" || res.TTLMs == nil || *res.TTLMs < 0 || res.CacheScope != "public" {
		t.Errorf("resultType %q, ttlMs %v, cacheScope %q: want complete, >= 0, public", res.ResultType, res.TTLMs, res.CacheScope)
	}
	if !strings.Contains(res.Instructions, "session_id") || strings.Contains(res.Instructions, "Mcp-Session") {
		t.Errorf("instructions %q: want the session_id rule, not the MCP session", res.Instructions)
	}
	if r.header.Get(mcpserver.SessionHeader) != "" {
		t.Errorf("server/discover issued Mcp-Session-Id")
	}
}

// TestModernToolsList: tools/list carries the caching hints (caching.mdx)
// and lists what the 2025 tools/list lists.
func TestModernToolsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.postModern(t, context.Background(), e.alice.BoxKey, modernCall{method: "tools/list", id: 7})
	if r.status != 200 || r.Error != nil {
		t.Fatalf("tools/list: HTTP %d, error %+v", r.status, r.Error)
	}
	var res struct {
		Tools      []mcp.Tool `json:"tools"`
		ResultType string     `json:"resultType"`
		TTLMs      *int       `json:"ttlMs"`
		CacheScope string     `json:"cacheScope"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(e.reg.Tools()) {
		t.Errorf("tools/list: %d tools, want %d", len(res.Tools), len(e.reg.Tools()))
	}
	if res.ResultType != "complete" || res.TTLMs == nil || *res.TTLMs < 0 || res.CacheScope != "public" {
		t.Errorf("resultType %q, ttlMs %v, cacheScope %q: want complete, >= 0, public", res.ResultType, res.TTLMs, res.CacheScope)
	}
	cs, _ := e.connect(t, e.alice.BoxKey)
	legacy, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := registrytest.AsJSON[any](t, res.Tools), registrytest.AsJSON[any](t, legacy.Tools); !jsonEqual(got, want) {
		t.Errorf("the 2026-07-28 tools/list differs from the 2025 one")
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestModernTransportFailures: each failure of the 2026-07-28 transport
// page (and the schema's RequestMetaObject) answers its status and code.
func TestModernTransportFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	call := map[string]any{"name": "get_help", "arguments": map[string]any{}}
	cases := []struct {
		name   string
		c      modernCall
		status int
		code   int64
	}{
		{"Mcp-Method is not the body's method", modernCall{method: "tools/list", header: map[string]string{"Mcp-Method": "tools/call"}}, 400, -32020},
		{"Mcp-Method missing", modernCall{method: "tools/list", drop: []string{"Mcp-Method"}}, 400, -32020},
		{"Mcp-Name is not params.name", modernCall{method: "tools/call", params: call, header: map[string]string{"Mcp-Name": "agent_prime"}}, 400, -32020},
		{"Mcp-Name missing", modernCall{method: "tools/call", params: call, drop: []string{"Mcp-Name"}}, 400, -32020},
		{"Mcp-Name badly encoded", modernCall{method: "tools/call", params: call, header: map[string]string{"Mcp-Name": "=?base64?***?="}}, 400, -32020},
		{"header and _meta versions differ", modernCall{method: "tools/list", meta: modernMeta("2025-11-25")}, 400, -32020},
		{"MCP-Protocol-Version missing", modernCall{method: "tools/list", drop: []string{"MCP-Protocol-Version"}}, 400, -32020},
		{"_meta lacks the protocol version", modernCall{method: "tools/list", meta: map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{}}}, 400, -32602},
		{"no _meta at all", modernCall{method: "tools/list", noMeta: true}, 400, -32602},
		{"_meta lacks the client capabilities", modernCall{method: "tools/list", meta: map[string]any{"io.modelcontextprotocol/protocolVersion": modernVersion}}, 400, -32602},
		{"unsupported version", modernCall{method: "tools/list", meta: modernMeta("2099-01-01"), header: map[string]string{"MCP-Protocol-Version": "2099-01-01"}}, 400, -32022},
		{"unsupported version in the header only", modernCall{method: "tools/list", noMeta: true, header: map[string]string{"MCP-Protocol-Version": "2099-01-01"}}, 400, -32022},
		{"initialize is not a 2026-07-28 method", modernCall{method: "initialize"}, 404, -32601},
		{"ping is not a 2026-07-28 method", modernCall{method: "ping"}, 404, -32601},
		{"resources/list is not served", modernCall{method: "resources/list"}, 404, -32601},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.id = i + 1
			r := e.postModern(t, context.Background(), e.alice.BoxKey, tc.c)
			if r.status != tc.status || r.Error == nil || r.Error.Code != tc.code {
				t.Fatalf("HTTP %d, error %+v; want HTTP %d with code %d", r.status, r.Error, tc.status, tc.code)
			}
			if id, _ := r.ID.(float64); int(id) != i+1 {
				t.Errorf("id %v, want the request's %d", r.ID, i+1)
			}
			if tc.code == -32022 {
				var data struct {
					Supported []string `json:"supported"`
					Requested *string  `json:"requested"`
				}
				if err := json.Unmarshal(r.Error.Data, &data); err != nil || !slices.Contains(data.Supported, modernVersion) ||
					data.Requested == nil || *data.Requested != "2099-01-01" {
					t.Errorf("data %s: want supported (with 2026-07-28) and requested 2099-01-01", r.Error.Data)
				}
			}
		})
	}
	// The Base64 sentinel is decoded before the comparison.
	r := e.postModern(t, context.Background(), e.alice.BoxKey, modernCall{method: "tools/call", id: 99, params: call,
		header: map[string]string{"Mcp-Name": "=?base64?" + base64.StdEncoding.EncodeToString([]byte("get_help")) + "?="}})
	if r.status != 200 || r.Error != nil {
		t.Errorf("tools/call with a Base64 Mcp-Name: HTTP %d, error %+v; want the result", r.status, r.Error)
	}
	// A rejected value is never echoed: not the forged version, not the name.
	r = e.postModern(t, context.Background(), e.alice.BoxKey, modernCall{method: "tools/call", id: 100, params: call,
		header: map[string]string{"Mcp-Name": "forged-name-xyz"}})
	if r.Error == nil || strings.Contains(r.Error.Message, "forged-name-xyz") {
		t.Errorf("mismatch error %+v echoes the header", r.Error)
	}
}

// TestModernInitializeOffering2026 decides what a legacy handshake that
// offers 2026-07-28 gets: initialize selects the session-based era
// (versioning.mdx), so the answer is 2025-11-25 with an Mcp-Session-Id.
func TestModernInitializeOffering2026(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	resp, raw := rawPost(t, e.url, map[string]string{"Authorization": "Bearer " + e.alice.BoxKey}, body)
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || resp.StatusCode != 200 || r.Result.ProtocolVersion != "2025-11-25" ||
		resp.Header.Get(mcpserver.SessionHeader) == "" {
		t.Errorf("initialize offering 2026-07-28: HTTP %d %s, session %q; want 2025-11-25 with a session", resp.StatusCode, raw, resp.Header.Get(mcpserver.SessionHeader))
	}
}

func rawPost(t *testing.T, url string, headers map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	resp, raw, err := rawPostNoFatal(url, headers, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// TestModernPerCallHost is a host of the 2026-07-28 form: every call a new
// HTTP client, no initialize, no session; the loop runs on session_id.
func TestModernPerCallHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := e.interopCtx(t)
	alice, bob := e.alice.BoxKey, e.bob.BoxKey

	prime := e.modernTool(t, alice, "agent_prime", map[string]any{})
	a, _ := structuredOf(prime)["session_id"].(string)
	b, _ := structuredOf(e.modernTool(t, bob, "agent_prime", map[string]any{}))["session_id"].(string)
	if a == "" || b == "" {
		t.Fatalf("agent_prime: %v, want a session_id", prime)
	}
	// Without the handle there is no session: a tool error that says so.
	if res := e.modernTool(t, alice, "checkpoint_get", map[string]any{}); res["isError"] != true || errCode(res) != "NOT_PRIMED" {
		t.Errorf("checkpoint_get without session_id: %v, want NOT_PRIMED", res)
	}
	// An Mcp-Session-Id is ignored (the spec), never taken as the session.
	cs, _ := e.connect(t, alice)
	call(t, cs, "agent_prime", map[string]any{})
	r := e.postModern(t, context.Background(), alice, modernCall{method: "tools/call", id: 2,
		params: map[string]any{"name": "checkpoint_get", "arguments": map[string]any{}}, header: map[string]string{mcpserver.SessionHeader: cs.ID()}})
	var ignored map[string]any
	_ = json.Unmarshal(r.Result, &ignored)
	if errCode(ignored) != "NOT_PRIMED" {
		t.Errorf("checkpoint_get with only a bound Mcp-Session-Id: %s, want NOT_PRIMED", r.Result)
	}

	ok := func(key, tool string, args map[string]any) map[string]any {
		t.Helper()
		res := e.modernTool(t, key, tool, args)
		if res["isError"] == true {
			t.Fatalf("%s: %v", tool, structuredOf(res)["error"])
		}
		return structuredOf(res)
	}
	ok(alice, "message_send", map[string]any{"session_id": a, "idempotency_key": "pc-dm",
		"destination": map[string]any{"kind": "dm", "recipient_agent_id": e.bob.AgentID}, "body_md": "Hello Bob."})
	ask := ok(alice, "message_send", map[string]any{"session_id": a, "idempotency_key": "pc-room",
		"destination": map[string]any{"kind": "room", "room_id": ctx["room_id"]}, "body_md": "Bob, please review.",
		"mentions": []string{e.bob.AgentID}, "requests": []string{e.bob.AgentID}})
	rows, _ := ok(bob, "inbox_list", map[string]any{"session_id": b})["rows"].([]any)
	if len(rows) < 2 {
		t.Fatalf("inbox_list: %d rows, want the DM and the request", len(rows))
	}
	if entries, _ := ok(bob, "thread_read", map[string]any{"session_id": b, "message_id": ask["message_id"]})["entries"].([]any); len(entries) == 0 {
		t.Errorf("thread_read: no entries")
	}
	ok(bob, "request_respond", map[string]any{"session_id": b, "idempotency_key": "pc-resp", "request_message_id": ask["message_id"],
		"expected_revision": "0", "status": "accepted", "body_md": "On it."})
	var seqs []any
	for _, row := range rows {
		seqs = append(seqs, row.(map[string]any)["inbox_seq"])
	}
	ok(bob, "inbox_ack", map[string]any{"session_id": b, "idempotency_key": "pc-ack", "inbox_seqs": seqs})
	reqs, _ := ok(alice, "requests_list", map[string]any{"session_id": a, "direction": "outgoing"})["requests"].([]any)
	found := false
	for _, q := range reqs {
		if m := q.(map[string]any); m["request_message_id"] == ask["message_id"] && m["status"] == "accepted" {
			found = true
		}
	}
	if !found {
		t.Errorf("requests_list outgoing %v: want the request, accepted", reqs)
	}
	if in, _ := ok(bob, "requests_list", map[string]any{"session_id": b, "direction": "incoming"})["requests"].([]any); len(in) == 0 {
		t.Errorf("requests_list incoming: empty")
	}
}

// TestTypeScript2Loop runs the whole loop through the TS 2.4.0 client,
// pinned to 2026-07-28 and in its legacy (2025) mode (testdata/tsclient/loop.mjs).
func TestTypeScript2Loop(t *testing.T) {
	t.Parallel() // its own server and client processes
	dir := tsClientDir(t)
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ctx := e.interopCtx(t)
			c, err := json.Marshal(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out, err := runNode(t, dir, []string{"AGENTBOX_URL=" + e.url, "AGENTBOX_CTX=" + string(c), "AGENTBOX_ERA=" + era}, "node", "loop.mjs")
			var report struct {
				Negotiated struct {
					Era, Version, Server, Instructions string
					Session                            *string
				}
				Steps    []string
				Problems []string
			}
			if jerr := json.Unmarshal([]byte(lastLine(out)), &report); jerr != nil {
				t.Fatalf("node loop.mjs (%s): %v; output %q", era, err, out)
			}
			for _, p := range report.Problems {
				t.Error(p)
			}
			n := report.Negotiated
			switch era {
			case "modern":
				if n.Era != "modern" || n.Version != modernVersion || n.Session != nil {
					t.Errorf("modern: era %q, version %q, session %v; want modern 2026-07-28 without an MCP session", n.Era, n.Version, n.Session)
				}
				if !strings.Contains(n.Instructions, "session_id") {
					t.Errorf("modern: instructions %q do not name session_id", n.Instructions)
				}
			case "legacy":
				if n.Era != "legacy" || n.Version != "2025-11-25" || n.Session == nil {
					t.Errorf("legacy: era %q, version %q, session %v; want legacy 2025-11-25 with an MCP session", n.Era, n.Version, n.Session)
				}
			}
			if n.Server != "agentbox" || len(report.Steps) < 10 {
				t.Errorf("%s: server %q, %d steps %v", era, n.Server, len(report.Steps), report.Steps)
			}
			t.Logf("TS client 2.4.0 %s (%s): %s", era, n.Version, strings.Join(report.Steps, ", "))
		})
	}
}

// TestInspectorCLIModern: the Inspector CLI in --protocol-era modern primes
// in one process and calls a tool in the next, passing the handle.
func TestInspectorCLIModern(t *testing.T) {
	t.Parallel() // its own server and client processes
	inspectorResumes(t, "inspector --protocol-era modern", []string{"--protocol-era", "modern"},
		func(sid string) []string { return []string{"--tool-arg", "session_id=" + sid} })
}

// TestModernDisconnectStopsWait: in 2026-07-28 a client cancels by closing
// its request; the request's context reaches inbox_list's wait, which ends
// at once instead of at its 20 s bound. The tool's log line records when
// the call ended.
func TestModernDisconnectStopsWait(t *testing.T) {
	t.Parallel()
	e, waiting := newWaitEnv(t)
	b, _ := structuredOf(e.modernTool(t, e.bob.BoxKey, "agent_prime", map[string]any{}))["session_id"].(string)
	// A first listing fixes the resume cursor; the wait is on the next.
	resume, _ := structuredOf(e.modernTool(t, e.bob.BoxKey, "inbox_list", map[string]any{"session_id": b}))["resume_cursor"].(string)
	if resume == "" {
		t.Fatalf("inbox_list: no resume_cursor")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": map[string]any{
			"name": "inbox_list", "arguments": map[string]any{"session_id": b, "cursor": resume, "wait_seconds": 20},
			"_meta": modernMeta(modernVersion)}})
		hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(req))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": modernVersion, "Mcp-Method": "tools/call", "Mcp-Name": "inbox_list", "Authorization": "Bearer " + e.bob.BoxKey} {
			hr.Header.Set(k, v)
		}
		if resp, err := http.DefaultClient.Do(hr); err == nil {
			resp.Body.Close()
		}
	}()
	waitBegan(t, waiting)
	start := time.Now()
	cancel()
	<-done
	// The tool's log line is written when the call returns.
	for toolCalls(t, e, "inbox_list") < 2 {
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("inbox_list still waits %v after the client closed its request (its bound is 20 s)", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the wait ended %v after the disconnect", time.Since(start).Round(time.Millisecond))
}

// headWatch signals each read of an inbox head by Get, which only
// inbox_list's wait makes (hub.waitInbox): a test knows the wait began.
type headWatch struct {
	store.Store
	began chan struct{}
}

func (w *headWatch) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	if k.SK == "inbox" {
		select {
		case w.began <- struct{}{}:
		default:
		}
	}
	return w.Store.Get(ctx, k)
}

func newWaitEnv(t *testing.T) (*env, chan struct{}) {
	began := make(chan struct{}, 1)
	e := newEnvWrapped(t, adapter(t, "bolt"), func(s store.Store) store.Store { return &headWatch{Store: s, began: began} })
	return e, began
}

func waitBegan(t *testing.T, began chan struct{}) {
	t.Helper()
	select {
	case <-began:
	case <-time.After(10 * time.Second):
		t.Fatalf("inbox_list never began its wait")
	}
}

// toolCalls counts the tool's log lines (one per finished call).
func toolCalls(t *testing.T, e *env, tool string) int {
	n := 0
	for _, l := range e.logs.Lines(t) {
		if l["msg"] == "mcp tool call" && l["tool"] == tool {
			n++
		}
	}
	return n
}

// TestLegacyCancelStopsWait: in the 2025 revisions notifications/cancelled
// names the request by its JSON-RPC id in the session; the waiting
// inbox_list returns promptly, and a cancel from another session does not
// touch it.
func TestLegacyCancelStopsWait(t *testing.T) {
	t.Parallel()
	e, waiting := newWaitEnv(t)
	cs, _ := e.connect(t, e.bob.BoxKey)
	call(t, cs, "agent_prime", map[string]any{})
	sid := cs.ID()
	var first struct {
		ResumeCursor string `json:"resume_cursor"`
	}
	res := call(t, cs, "inbox_list", map[string]any{})
	if err := json.Unmarshal(mustMarshal(t, res.StructuredContent), &first); err != nil || first.ResumeCursor == "" {
		t.Fatalf("inbox_list: %v, want a resume_cursor", res.StructuredContent)
	}
	headers := map[string]string{mcpserver.SessionHeader: sid, "Mcp-Protocol-Version": "2025-11-25", "Authorization": "Bearer " + e.bob.BoxKey}
	type outcome struct {
		status int
		took   time.Duration
	}
	got := make(chan outcome, 1)
	start := time.Now()
	go func() {
		body := `{"jsonrpc":"2.0","id":"wait-1","method":"tools/call","params":{"name":"inbox_list","arguments":{"cursor":"` + first.ResumeCursor + `","wait_seconds":20}}}`
		status := 0
		if resp, _, err := rawPostNoFatal(e.url, headers, body); err == nil {
			status = resp.StatusCode
		}
		got <- outcome{status, time.Since(start)}
	}()
	waitBegan(t, waiting)
	// Another agent's session with its own key: the same id names nothing there.
	other, _ := e.connect(t, e.alice.BoxKey)
	cancelBody := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"wait-1","reason":"test"}}`
	if resp, _ := rawPost(t, e.url, map[string]string{mcpserver.SessionHeader: other.ID(), "Mcp-Protocol-Version": "2025-11-25",
		"Authorization": "Bearer " + e.alice.BoxKey}, cancelBody); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled from another session: HTTP %d, want 202", resp.StatusCode)
	}
	select {
	case o := <-got:
		t.Fatalf("the wait ended (HTTP %d after %v) on another session's cancel", o.status, o.took)
	case <-time.After(300 * time.Millisecond):
	}
	cancelled := time.Now()
	if resp, _ := rawPost(t, e.url, headers, cancelBody); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: HTTP %d, want 202", resp.StatusCode)
	}
	select {
	case o := <-got:
		if o.status != 200 {
			t.Errorf("the cancelled inbox_list answered HTTP %d, want 200", o.status)
		}
		if d := time.Since(cancelled); d > 5*time.Second {
			t.Errorf("the wait ended %v after the cancel, want well under its 20 s", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the inbox_list still waits 15 s after notifications/cancelled")
	}
}

// rawPostNoFatal is one POST of body, for a goroutine of a test.
func rawPostNoFatal(url string, headers map[string]string, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp, raw, err
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoSDKModern: the go-sdk v1.8 client, unpinned, probes server/discover,
// speaks 2026-07-28 (no initialize, no Mcp-Session-Id) and works on the
// session_id handle; with a bad key its connect fails with 401.
func TestGoSDKModern(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := &recorder{bearer: e.alice.BoxKey, base: http.DefaultTransport}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentbox-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.url, HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != modernVersion || cs.ID() != "" {
		t.Errorf("negotiated %s with session %q, want 2026-07-28 and none", got, cs.ID())
	}
	if si := cs.InitializeResult().ServerInfo; si == nil || si.Name != "agentbox" {
		t.Errorf("server info %+v, want agentbox", si)
	}
	prime := call(t, cs, "agent_prime", map[string]any{})
	var out struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(mustMarshal(t, prime.StructuredContent), &out); err != nil || out.SessionID == "" {
		t.Fatalf("agent_prime: %v", prime.StructuredContent)
	}
	if res := call(t, cs, "checkpoint_get", map[string]any{"session_id": out.SessionID}); res.IsError {
		t.Errorf("checkpoint_get with session_id: %v", res.StructuredContent)
	}
	if res := call(t, cs, "checkpoint_get", map[string]any{}); !res.IsError {
		t.Errorf("checkpoint_get without session_id: %v, want NOT_PRIMED", res.StructuredContent)
	}
	for _, x := range rec.exchanges() {
		if x.rpcMethod == "initialize" || x.gotSession != "" || x.sentSession != "" {
			t.Errorf("exchange %+v: an initialize or an Mcp-Session-Id in 2026-07-28", x)
		}
	}

	bad := &recorder{bearer: "abk_" + strings.Repeat("A", 86), base: http.DefaultTransport}
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "agentbox-test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: bad}, MaxRetries: -1}, nil); err == nil {
		t.Errorf("Connect with a bad key: got a session, want an error")
	}
	for _, x := range bad.exchanges() {
		if x.rpcMethod == "server/discover" && x.status != http.StatusUnauthorized {
			t.Errorf("server/discover with a bad key: HTTP %d, want 401", x.status)
		}
	}
}

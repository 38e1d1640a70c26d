package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/mcpserver"
	"github.com/agentbox/agentbox/internal/metrics/metricstest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/reqlog/reqlogtest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// env is one agentbox MCP endpoint on a real HTTP server, with a box holding
// two agents (alice, bob) and a second box holding a third (mallory).
type env struct {
	w       *hubtest.World
	hub     *hub.Hub
	reg     *registry.Registry
	url     string
	logs    *reqlogtest.Buffer
	clock   *teststores.Clock
	counter *teststores.Counting
	// metrics records what the transport reports on the metrics port.
	metrics *metricstest.Recorder

	alice, bob, mallory *hub.AgentInfo
}

// adapter returns the named storage adapter.
func adapter(t *testing.T, name string) teststores.Adapter { return hubtest.Adapter(t, name) }

// newEnv starts an endpoint on the bolt store.
func newEnv(t *testing.T) *env { return newEnvOn(t, adapter(t, "bolt")) }

func newEnvOn(t *testing.T, a teststores.Adapter) *env { return newEnvWrapped(t, a, nil) }

// eachEnv runs fn on an endpoint of each storage adapter, one subtest each.
func eachEnv(t *testing.T, fn func(t *testing.T, e *env)) {
	hubtest.ForEachAdapterSerial(t, func(t *testing.T, a teststores.Adapter) { fn(t, newEnvOn(t, a)) })
}

// roomOfAliceAndBob creates a room of box main with alice and bob as
// members.
func (e *env) roomOfAliceAndBob(name string) *hub.RoomInfo {
	return e.w.MustRoom(e.w.Box, name, e.alice, e.bob)
}

// newEnvWrapped is newEnvOn with the store wrapped by wrap (when not nil),
// for a test that observes the store; opts change the hub's options.
func newEnvWrapped(t *testing.T, a teststores.Adapter, wrap func(store.Store) store.Store, opts ...func(*hub.Options)) *env {
	t.Helper()
	logs := &reqlogtest.Buffer{}
	log := reqlog.NewLogger(logs, slog.LevelDebug) // every level, to prove none logs a secret
	metrics := &metricstest.Recorder{}
	cfg := hubtest.Config{Options: hub.Options{Logger: log, Metrics: metrics}}
	for _, o := range opts {
		o(&cfg.Options)
	}
	if wrap != nil {
		cfg.Wrap = []func(store.Store) store.Store{wrap}
	}
	// OrderedWrites off, as these tests have always run: the round trips
	// they count do not depend on bbolt's shared commits.
	a.OrderedWrites = false
	w := hubtest.New(t, a, cfg)
	reg := registry.New(registrytest.Guard(t))
	srv := httptest.NewServer(mcpserver.New(w.Hub, reg, log))
	t.Cleanup(srv.Close)
	return &env{w: w, hub: w.Hub, reg: reg, url: srv.URL, logs: logs, clock: w.Clock, counter: w.Store, metrics: metrics,
		alice: w.Alice, bob: w.Bob, mallory: w.Mallory}
}

// secrets are strings that must never appear in a log line.
func (e *env) secrets() []string {
	return []string{e.alice.BoxKey, e.bob.BoxKey, e.mallory.BoxKey}
}

// exchange is one HTTP round trip as the recorder saw it.
type exchange struct {
	httpMethod  string
	rpcMethod   string // "" for DELETE/GET and for responses
	status      int
	sentSession string // Mcp-Session-Id on the request
	gotSession  string // Mcp-Session-Id on the response
}

// recorder is the SDK client's RoundTripper: it adds the Authorization
// header (when bearer is set) and records every exchange.
type recorder struct {
	bearer string
	base   http.RoundTripper

	mu   sync.Mutex
	seen []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if r.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.bearer)
	}
	x := exchange{httpMethod: req.Method, sentSession: req.Header.Get(mcpserver.SessionHeader)}
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(body)
			if msg, err := jsonrpc.DecodeMessage(b); err == nil {
				if m, ok := msg.(*jsonrpc.Request); ok {
					x.rpcMethod = m.Method
				}
			}
		}
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	x.status, x.gotSession = resp.StatusCode, resp.Header.Get(mcpserver.SessionHeader)
	r.mu.Lock()
	r.seen = append(r.seen, x)
	r.mu.Unlock()
	return resp, nil
}

func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.seen...)
}

// legacyProtocol is the session-based revision the go-sdk client is
// pinned to by connect. Unpinned, the v1.8 client speaks 2026-07-28, which
// this server also serves (TestGoSDKModern), and has no MCP session.
const legacyProtocol = "2025-11-25"

// connect runs the go-sdk client's initialize (protocol 2025-11-25)
// against the endpoint, authenticating with bearer when it is not empty.
func (e *env) connect(t *testing.T, bearer string) (*mcp.ClientSession, *recorder) {
	t.Helper()
	rec := &recorder{bearer: bearer, base: http.DefaultTransport}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentbox-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   e.url,
		HTTPClient: &http.Client{Transport: rec},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		t.Fatalf("Connect(bearer=%t): %v", bearer != "", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, rec
}

// call runs a tool and fails the test on a protocol error: every domain
// outcome must be a tool result.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): protocol error %v, want a tool result", tool, err)
	}
	return res
}

// structured decodes a result's structuredContent into T.
func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	return registrytest.AsJSON[T](t, res.StructuredContent)
}

// toolError is the structuredContent of a failed tool call.
type toolError struct {
	Error apperr.Envelope `json:"error"`
}

// wantOK fails the test unless res is a success, and decodes it.
func wantOK[T any](t *testing.T, tool string, res *mcp.CallToolResult) T {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: got error result %s, want success", tool, text(res))
	}
	return structured[T](t, res)
}

// wantCode fails the test unless res is an error result with code, and its
// text block is the same whole envelope as structuredContent (hosts that
// show the model only text must lose nothing).
func wantCode(t *testing.T, tool string, res *mcp.CallToolResult, code apperr.Code) apperr.Envelope {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: got success %s, want isError with %s", tool, text(res), code)
	}
	env := structured[toolError](t, res).Error
	if env.Code != code {
		t.Fatalf("%s: got structuredContent.error.code %s (%s), want %s", tool, env.Code, env.Message, code)
	}
	var fromText toolError
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || !reflect.DeepEqual(fromText.Error, env) {
		t.Errorf("%s: text content %q, want the structuredContent envelope %+v", tool, text(res), env)
	}
	return env
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// rawResponse is one raw HTTP exchange with the endpoint.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// rpcError decodes the body as a JSON-RPC error response, whose id may be
// null (the server could not read one).
func (r rawResponse) rpcError(t *testing.T) *jsonrpc.Error {
	t.Helper()
	var wire map[string]json.RawMessage
	var werr *jsonrpc.Error
	if err := json.Unmarshal(r.body, &wire); err != nil {
		t.Fatalf("body %q is not JSON: %v", r.body, err)
	}
	_, hasID := wire["id"]
	if string(wire["jsonrpc"]) != `"2.0"` || !hasID || json.Unmarshal(wire["error"], &werr) != nil || werr == nil {
		t.Fatalf("body %q is not a JSON-RPC error response with an id member", r.body)
	}
	return werr
}

// rawToolResult is the wire form of a tools/call result.
type rawToolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// toolResult decodes the body as a successful JSON-RPC response carrying a
// tools/call result.
func (r rawResponse) toolResult(t *testing.T) rawToolResult {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("tools/call: got HTTP %d %s, want 200", r.status, r.body)
	}
	var wire struct {
		Result *rawToolResult   `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(r.body, &wire); err != nil || wire.Result == nil {
		t.Fatalf("tools/call: body %s is not a result (err %v)", r.body, err)
	}
	return *wire.Result
}

func (r rawToolResult) code(t *testing.T) apperr.Code {
	t.Helper()
	if !r.IsError {
		t.Fatalf("tool result %s: isError false, want true", r.StructuredContent)
	}
	var te toolError
	if err := json.Unmarshal(r.StructuredContent, &te); err != nil {
		t.Fatalf("structuredContent %s: %v", r.StructuredContent, err)
	}
	return te.Error.Code
}

// do sends one raw request. headers are added after the MCP defaults
// (Content-Type and Accept); an empty value deletes a default.
func (e *env) do(t *testing.T, method string, body io.Reader, headers map[string]string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, e.url, body)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", method, e.url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

func (e *env) post(t *testing.T, body string, headers map[string]string) rawResponse {
	t.Helper()
	return e.do(t, http.MethodPost, strings.NewReader(body), headers)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// initialize opens a session over raw HTTP and returns its id.
func (e *env) initialize(t *testing.T, bearer string) string {
	t.Helper()
	h := map[string]string{}
	if bearer != "" {
		h["Authorization"] = "Bearer " + bearer
	}
	r := e.post(t, initializeBody, h)
	sid := r.header.Get(mcpserver.SessionHeader)
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: got HTTP %d, Mcp-Session-Id %q, body %s; want 200 with a session", r.status, sid, r.body)
	}
	return sid
}

// toolCall is a raw tools/call body.
func toolCall(tool, args string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

const toolsListBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`

// session returns the headers of a raw request in a session.
func session(sid, bearer string) map[string]string {
	h := map[string]string{mcpserver.SessionHeader: sid, "Mcp-Protocol-Version": "2025-06-18"}
	if bearer != "" {
		h["Authorization"] = "Bearer " + bearer
	}
	return h
}

// withHeader returns a copy of headers with k set to v.
func withHeader(headers map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for hk, hv := range headers {
		if hk != k {
			out[hk] = hv
		}
	}
	return out
}

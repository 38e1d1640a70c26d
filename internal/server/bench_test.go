package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/mcpserver"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

// benchServer is the agent plane on a fresh bbolt store with w agents.
type benchServer struct {
	handler http.Handler
	keys    []string
	store   *bolt.Store
}

func newBenchServer(b *testing.B, w int, opts bolt.Options) *benchServer {
	b.Helper()
	st, err := bolt.Open(filepath.Join(b.TempDir(), "agentbox.db"), opts)
	if err != nil {
		b.Fatalf("bolt.Open: %v", err)
	}
	b.Cleanup(func() { st.Close() })
	h := hub.New(st, hub.Options{})
	ctx := context.Background()
	box, err := h.Admin().CreateBox(ctx, "bench")
	if err != nil {
		b.Fatalf("CreateBox: %v", err)
	}
	s := &benchServer{handler: server.Handler(h, registry.New(), slog.New(slog.DiscardHandler)), store: st}
	for i := range w {
		ag, err := h.Admin().CreateAgent(ctx, box.BoxID, fmt.Sprintf("agent-%d", i), "")
		if err != nil {
			b.Fatalf("CreateAgent: %v", err)
		}
		s.keys = append(s.keys, ag.BoxKey)
	}
	return s
}

// caller sends one agent's requests, over REST or MCP, either through a
// real HTTP client (base set) or straight into the handler.
type caller struct {
	b       *testing.B
	srv     *benchServer
	base    string
	client  *http.Client
	key     string
	mcp     bool
	session string // REST: agent_prime's session; MCP: Mcp-Session-Id
	rev     string
	n       int
}

func (c *caller) do(method, path, body string, hdr map[string]string) (http.Header, []byte) {
	var req *http.Request
	if c.base != "" {
		req, _ = http.NewRequest(method, c.base+path, strings.NewReader(body))
	} else {
		req = httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		req.RemoteAddr = "127.0.0.1:1234"
	}
	req.Host = "127.0.0.1"
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if c.base == "" {
		rec := httptest.NewRecorder()
		c.srv.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusAccepted {
			c.b.Fatalf("%s %s = %d %s", method, path, rec.Code, rec.Body.Bytes())
		}
		return rec.Header(), rec.Body.Bytes()
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.b.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		c.b.Fatalf("%s %s = %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.Header, raw
}

func (c *caller) mcpHeaders() map[string]string {
	return map[string]string{
		"Accept":                "application/json, text/event-stream",
		mcpserver.SessionHeader: c.session,
		"Mcp-Protocol-Version":  "2025-06-18",
	}
}

// tool calls one tool and returns its structured result.
func (c *caller) tool(name, method, path, args string) []byte {
	if !c.mcp {
		hdr := map[string]string{}
		if c.session != "" {
			hdr[rest.SessionHeader] = c.session
		}
		if method == "GET" {
			args = ""
		}
		_, raw := c.do(method, path, args, hdr)
		return raw
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	_, raw := c.do("POST", "/mcp", body, c.mcpHeaders())
	var rpc struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil || rpc.Result.IsError {
		c.b.Fatalf("tools/call %s = %s (%v)", name, raw, err)
	}
	return rpc.Result.StructuredContent
}

// start opens the agent's session (MCP initialize, then agent_prime).
func (c *caller) start() {
	if c.mcp {
		hdr, _ := c.do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
			map[string]string{"Accept": "application/json, text/event-stream"})
		c.session = hdr.Get(mcpserver.SessionHeader)
		c.do("POST", "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, c.mcpHeaders())
		c.tool("agent_prime", "POST", "/v1/agent/prime", "{}")
	} else {
		var primed struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal(c.tool("agent_prime", "POST", "/v1/agent/prime", "{}"), &primed); err != nil || primed.SessionID == "" {
			c.b.Fatalf("agent_prime: no session (%v)", err)
		}
		c.session = primed.SessionID
	}
	c.rev = "0"
}

// save is one checkpoint_save at the current revision.
func (c *caller) save() {
	c.n++
	args := fmt.Sprintf(`{"expected_revision":%q,"idempotency_key":"k-%d","body_md":"checkpoint body %d"}`, c.rev, c.n, c.n)
	var out struct {
		Checkpoint struct {
			Revision string `json:"revision"`
		} `json:"checkpoint"`
	}
	raw := c.tool("checkpoint_save", "PUT", "/v1/checkpoint", args)
	if err := json.Unmarshal(raw, &out); err != nil || out.Checkpoint.Revision == "" {
		c.b.Fatalf("checkpoint_save = %s (%v)", bytes.TrimSpace(raw), err)
	}
	c.rev = out.Checkpoint.Revision
}

// BenchmarkServerCheckpointSave drives checkpoint_save from W agents at
// once through real HTTP on loopback, with commits grouped (the default)
// and one commit per write, and reports ops/s.
func BenchmarkServerCheckpointSave(b *testing.B) {
	for _, transport := range []string{"rest", "mcp"} {
		for _, commit := range []string{"group", "serial"} {
			for _, w := range []int{1, 4, 16} {
				b.Run(fmt.Sprintf("%s/%s/W=%d", transport, commit, w), func(b *testing.B) {
					srv := newBenchServer(b, w, bolt.Options{SerialCommit: commit == "serial"})
					ts := httptest.NewServer(srv.handler)
					defer ts.Close()
					client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
					callers := make([]*caller, w)
					for i := range callers {
						callers[i] = &caller{b: b, srv: srv, base: ts.URL, client: client, key: srv.keys[i], mcp: transport == "mcp"}
						callers[i].start()
					}
					var next atomic.Int64
					syncs := srv.store.Syncs()
					b.ResetTimer()
					start := time.Now()
					var wg sync.WaitGroup
					for _, c := range callers {
						wg.Go(func() {
							for next.Add(1) <= int64(b.N) {
								c.save()
							}
						})
					}
					wg.Wait()
					b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
					b.ReportMetric(float64(srv.store.Syncs()-syncs)/float64(b.N), "fdatasync/op")
				})
			}
		}
	}
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCalls are the calls the per-call benchmarks time: a read and a
// mutation.
var benchCalls = []struct {
	name string
	call func(c *caller)
}{
	{"profile_get", func(c *caller) { c.tool("profile_get", "GET", "/v1/profile", "{}") }},
	{"checkpoint_save", (*caller).save},
}

// BenchmarkHandlerCall measures one call straight into the handler (no
// network, one caller), for CPU and allocations per call over REST and
// MCP. cpu-ns/op is process CPU time (garbage collection included), which
// unlike ns/op does not count waiting for fdatasync or for a busy machine.
// Run with -cpuprofile and -memprofile to see where the cost is.
func BenchmarkHandlerCall(b *testing.B) {
	for _, transport := range []string{"rest", "mcp"} {
		for _, tc := range benchCalls {
			b.Run(transport+"/"+tc.name, func(b *testing.B) {
				srv := newBenchServer(b, 1, bolt.Options{})
				c := &caller{b: b, srv: srv, key: srv.keys[0], mcp: transport == "mcp"}
				c.start()
				b.ReportAllocs()
				cpu := cpuTime(b)
				for b.Loop() {
					tc.call(c)
				}
				b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkCallLatency is one agent calling over real HTTP on loopback, one
// call at a time, for the latency of a single call on an otherwise idle
// server: p50 and p99 of the client-observed round trip, for a read and a
// mutation, over REST and MCP.
func BenchmarkCallLatency(b *testing.B) {
	for _, transport := range []string{"rest", "mcp"} {
		for _, tc := range benchCalls {
			b.Run(transport+"/"+tc.name, func(b *testing.B) {
				srv := newBenchServer(b, 1, bolt.Options{})
				ts := httptest.NewServer(srv.handler)
				defer ts.Close()
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: time.Minute}
				c := &caller{b: b, srv: srv, base: ts.URL, client: client, key: srv.keys[0], mcp: transport == "mcp"}
				c.start()
				lat := make([]time.Duration, 0, b.N)
				for b.Loop() {
					t0 := time.Now()
					tc.call(c)
					lat = append(lat, time.Since(t0))
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}
}

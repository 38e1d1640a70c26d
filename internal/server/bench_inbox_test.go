package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// The inbox loop, end to end: W agents send DMs to one receiver through the
// MCP client over HTTP against agentbox serve's handler on bbolt, while the
// receiver polls inbox_list with resume cursors (waiting up to 1 s when
// nothing is new) and batch-ACKs every page. b.N is the number of DMs.
//
// Reported: sends/s; end-to-end latency from the send call's start to the
// receiver's page that shows it (p50, p99); lost and duplicated rows (must
// be 0, checked); order violations (a row served before an older unread
// one: 0, checked — the oldest unread is always served first, so no sender
// starves at W = 16); send retries after TEMPORARILY_UNAVAILABLE per send
// (contention on the receiver's inbox head); and the store round trips of
// one send, one list and one ACK (teststores.Counting). TestInboxLoopMCP
// runs the same loop with 40 DMs from 4 senders, so make test checks the
// property too.

// benchEnv is the served handler and its hub.
type benchEnv struct {
	url     string
	h       *hub.Hub
	counter *teststores.Counting
	box     string
}

func newBenchEnv(b testing.TB) *benchEnv {
	b.Helper()
	st, err := bolt.Open(filepath.Join(b.TempDir(), "agentbox.db"), bolt.Options{})
	if err != nil {
		b.Fatalf("bolt.Open: %v", err)
	}
	b.Cleanup(func() { _ = st.Close() })
	counter := teststores.NewCounting(st)
	h := hub.New(counter, hub.Options{OrderedWrites: true})
	srv := httptest.NewServer(server.Handler(h, registry.New(), slog.New(slog.DiscardHandler)))
	b.Cleanup(srv.Close)
	box, err := h.Admin().CreateBox(context.Background(), "bench")
	if err != nil {
		b.Fatalf("CreateBox: %v", err)
	}
	return &benchEnv{url: srv.URL + "/mcp", h: h, counter: counter, box: box.BoxID}
}

// bearer adds the agent's key to every request.
type bearer struct{ key string }

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.key)
	return http.DefaultTransport.RoundTrip(r)
}

// agentSession creates an agent and connects and primes an MCP session.
func (e *benchEnv) agentSession(b testing.TB, name string) (*hub.AgentInfo, *mcp.ClientSession) {
	b.Helper()
	ag, err := e.h.Admin().CreateAgent(context.Background(), e.box, name, "")
	if err != nil {
		b.Fatalf("CreateAgent: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.url,
		HTTPClient: &http.Client{Transport: bearer{ag.BoxKey}}, MaxRetries: -1},
		// The MCP session is the tool's session: a 2025 revision (the
		// client's default, 2026-07-28, has none).
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatalf("Connect: %v", err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	if _, err := callTool[hub.PrimeOutput](cs, "agent_prime", map[string]any{}); err != nil {
		b.Fatalf("agent_prime: %v", err)
	}
	return ag, cs
}

// toolErr is a tool's error result.
type toolErr struct{ Code, Text string }

func (e *toolErr) Error() string { return e.Text }

// callTool calls a tool and decodes its structuredContent.
func callTool[T any](cs *mcp.ClientSession, tool string, args any) (*T, error) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &env)
		return nil, &toolErr{Code: env.Error.Code, Text: tool + ": " + string(raw)}
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func BenchmarkInboxLoop(b *testing.B) {
	for _, w := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("W=%d", w), func(b *testing.B) { benchInboxLoop(b, w) })
	}
}

// TestInboxLoopMCP is the benchmark's loop as a test, with small counts: over
// MCP, nothing sent is lost, served twice or served before an older unread
// row, and once every page is ACKed the receiver has nothing unread.
func TestInboxLoopMCP(t *testing.T) {
	e := newBenchEnv(t)
	recv, rcs := e.agentSession(t, "receiver")
	senders := make([]*mcp.ClientSession, 4)
	for i := range senders {
		_, senders[i] = e.agentSession(t, fmt.Sprintf("sender-%d", i))
	}
	const total = 40
	inboxLoop(t, recv, rcs, senders, total, func() {})
	p, err := callTool[hub.PrimeOutput](rcs, "agent_prime", map[string]any{})
	if err != nil || p.UnreadCount != 0 {
		t.Errorf("agent_prime after ACKing every page = %+v, %v; want unread_count 0", p, err)
	}
}

func benchInboxLoop(b *testing.B, w int) {
	e := newBenchEnv(b)
	recv, rcs := e.agentSession(b, "receiver")
	senders := make([]*mcp.ClientSession, w)
	for i := range senders {
		_, senders[i] = e.agentSession(b, fmt.Sprintf("sender-%d", i))
	}
	r := inboxLoop(b, recv, rcs, senders, b.N, b.ResetTimer)
	b.StopTimer()
	total, latencies := b.N, r.latencies
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(total)/r.sendElapsed.Seconds(), "sends/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(r.lost), "lost")
	b.ReportMetric(float64(r.dups), "dup")
	b.ReportMetric(float64(r.violations), "out-of-order")
	b.ReportMetric(float64(r.retries)/float64(total), "retries/send")

	// Round trips of one call of each tool of the loop, alone.
	e.counter.Reset()
	if _, err := callTool[hub.MessageSendOutput](senders[0], "message_send", map[string]any{"idempotency_key": "rt",
		"body_md": "rt", "destination": map[string]any{"kind": "dm", "recipient_agent_id": recv.AgentID}}); err != nil {
		b.Fatalf("message_send: %v", err)
	}
	b.ReportMetric(float64(e.counter.Reset()), "rt/send")
	page, err := callTool[hub.InboxListOutput](rcs, "inbox_list", map[string]any{"cursor": r.cursor})
	if err != nil || len(page.Rows) != 1 {
		b.Fatalf("inbox_list = %+v, %v; want the one new row", page, err)
	}
	b.ReportMetric(float64(e.counter.Reset()), "rt/list")
	if _, err := callTool[hub.InboxAckOutput](rcs, "inbox_ack", map[string]any{"idempotency_key": "rt",
		"inbox_seqs": []string{strconv.FormatUint(uint64(page.Rows[0].InboxSeq), 10)}}); err != nil {
		b.Fatalf("inbox_ack: %v", err)
	}
	b.ReportMetric(float64(e.counter.Reset()), "rt/ack")
}

// loopResult is what one run of the inbox loop observed.
type loopResult struct {
	lost, dups, violations, retries int
	latencies                       []time.Duration
	sendElapsed                     time.Duration
	cursor                          string // the receiver's last cursor
}

// inboxLoop sends total DMs from senders to recv while recv's session rcs
// pages its inbox with resume cursors and ACKs every page; started is
// called as the sends begin. It fails unless every DM was seen exactly
// once and in inbox order.
func inboxLoop(b testing.TB, recv *hub.AgentInfo, rcs *mcp.ClientSession, senders []*mcp.ClientSession, total int, started func()) loopResult {
	b.Helper()
	w := len(senders)
	var mu sync.Mutex
	sentAt := make(map[string]time.Time, total)
	var retries int
	var sendErr error
	var wg sync.WaitGroup
	start := time.Now()
	started()
	for i, cs := range senders {
		n := total/w + min(1, max(0, total%w-i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				body := fmt.Sprintf("%d-%d", i, j)
				mu.Lock()
				sentAt[body] = time.Now()
				mu.Unlock()
				args := map[string]any{"idempotency_key": "k" + body, "body_md": body,
					"destination": map[string]any{"kind": "dm", "recipient_agent_id": recv.AgentID}}
				for attempt := 1; ; attempt++ {
					_, err := callTool[hub.MessageSendOutput](cs, "message_send", args)
					if te, ok := err.(*toolErr); ok && te.Code == "TEMPORARILY_UNAVAILABLE" && attempt < 50 {
						mu.Lock()
						retries++
						mu.Unlock()
						continue
					}
					if err != nil {
						mu.Lock()
						sendErr = err
						mu.Unlock()
						return
					}
					break
				}
			}
		}()
	}
	sendsDone := make(chan struct{})
	var sendElapsed time.Duration
	go func() { wg.Wait(); sendElapsed = time.Since(start); close(sendsDone) }()

	seen := make(map[string]int, total)
	var latencies []time.Duration
	var lastSeq uint64
	violations, acks := 0, 0
	cursor, idle, finished := "", 0, false
	// Bounded: a page shows at least one row unless a 1 s wait found
	// none, so a loop that does not end is a failure to report.
	deadline := time.Now().Add(time.Minute + time.Duration(total)*10*time.Millisecond)
	for round := 0; len(seen) < total; round++ {
		if round > 4*total+100 || time.Now().After(deadline) {
			b.Fatalf("inbox loop: %d of %d messages seen after %d pages", len(seen), total, round)
		}
		select {
		case <-sendsDone:
			mu.Lock()
			err := sendErr
			mu.Unlock()
			if err != nil {
				b.Fatalf("send: %v", err)
			}
			// Every send has committed: pages waiting for more
			// that find nothing mean rows were lost.
			finished = true
			if idle > 2 {
				b.Fatalf("inbox loop: %d of %d messages seen, and %d waits after the last send found nothing", len(seen), total, idle)
			}
		default:
		}
		args := map[string]any{"limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
			args["wait_seconds"] = 1
		}
		page, err := callTool[hub.InboxListOutput](rcs, "inbox_list", args)
		if err != nil {
			b.Fatalf("inbox_list: %v", err)
		}
		if finished {
			idle++
		}
		if len(page.Rows) > 0 {
			idle = 0
		}
		now := time.Now()
		var seqs []string
		mu.Lock()
		for _, r := range page.Rows {
			seq := uint64(r.InboxSeq)
			if seq <= lastSeq {
				violations++
			}
			lastSeq = seq
			seqs = append(seqs, strconv.FormatUint(seq, 10))
			if r.Message == nil {
				b.Fatalf("row %d without its message", seq)
			}
			body := r.Message.BodyMD
			seen[body]++
			if seen[body] == 1 {
				latencies = append(latencies, now.Sub(sentAt[body]))
			}
		}
		mu.Unlock()
		if len(seqs) > 0 {
			acks++
			if _, err := callTool[hub.InboxAckOutput](rcs, "inbox_ack", map[string]any{
				"idempotency_key": fmt.Sprintf("ack-%d", acks), "inbox_seqs": seqs}); err != nil {
				b.Fatalf("inbox_ack: %v", err)
			}
		}
		cursor = page.NextCursor
		if cursor == "" {
			cursor = page.ResumeCursor
		}
	}
	<-sendsDone

	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	lost := total - len(seen)
	if lost != 0 || dups != 0 || violations != 0 {
		b.Fatalf("lost %d, duplicated %d, served out of order %d; want 0", lost, dups, violations)
	}
	return loopResult{lost: lost, dups: dups, violations: violations, retries: retries,
		latencies: latencies, sendElapsed: sendElapsed, cursor: cursor}
}

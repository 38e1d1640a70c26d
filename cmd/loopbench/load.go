package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/hub"
)

// bodySize is the size of every DM body, in bytes.
const bodySize = 256

// pollPause is the receiver's sleep after a poll that brought nothing new.
const pollPause = 10 * time.Millisecond

// ackBatch is the most rows one inbox_ack acknowledges.
const ackBatch = 100

// agent is one agent's primed MCP session.
type agent struct {
	id, key string
	cs      *mcp.ClientSession
}

// bearer adds the agent's key to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.key)
	return t.next.RoundTrip(r)
}

// newAgent creates an agent in box with the admin CLI and connects and
// primes one MCP session for it.
func newAgent(ctx context.Context, s *server, box, name string) (*agent, error) {
	var ag struct {
		AgentID string `json:"agent_id"`
		BoxKey  string `json:"box_key"`
	}
	if err := s.admin(&ag, "create-agent", "--box", box, "--name", name); err != nil {
		return nil, err
	}
	a, err := connect(ctx, s, ag.BoxKey)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a.id, a.key = ag.AgentID, ag.BoxKey
	return a, nil
}

// connect connects and primes one MCP session with an agent's key.
func connect(ctx context.Context, s *server, key string) (*agent, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4
	client := mcp.NewClient(&mcp.Implementation{Name: "loopbench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.mcpURL,
		HTTPClient: &http.Client{Transport: bearer{key, tr}}, MaxRetries: -1},
		// The MCP session is the tool's session: a 2025 revision.
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	a := &agent{cs: cs}
	if _, err := call[hub.PrimeOutput](ctx, a, "agent_prime", map[string]any{}); err != nil {
		_ = cs.Close()
		return nil, err
	}
	return a, nil
}

// toolError is a tool's error result.
type toolError struct{ code, text string }

func (e *toolError) Error() string { return e.text }

// call calls a tool and decodes its structured result.
func call[T any](ctx context.Context, a *agent, tool string, args any) (*T, error) {
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
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
		return nil, &toolError{code: env.Error.Code, text: tool + ": " + string(raw)}
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return &out, nil
}

// body is the 256-byte body of sender s's DM i.
func body(s, i int) string {
	id := bodyID(s, i)
	return id + strings.Repeat("x", bodySize-len(id))
}

// sendAttempts bounds the retries of one send answered
// TEMPORARILY_UNAVAILABLE (contention on the receiver's inbox head).
const sendAttempts = 50

// send sends sender s's DM i to recv and returns how many retries it took.
func send(ctx context.Context, from *agent, recv string, s, i int) (retries int, err error) {
	args := map[string]any{"idempotency_key": fmt.Sprintf("k%d-%d", s, i), "body_md": body(s, i),
		"destination": map[string]any{"kind": "dm", "recipient_agent_id": recv}}
	for attempt := 1; ; attempt++ {
		_, err := call[hub.MessageSendOutput](ctx, from, "message_send", args)
		if te, ok := err.(*toolError); ok && te.code == "TEMPORARILY_UNAVAILABLE" && attempt < sendAttempts {
			retries++
			continue
		}
		return retries, err
	}
}

// receiver pages one inbox with next/resume cursors and batch-ACKs what
// it was shown.
type receiver struct {
	a          *agent
	cursor     string
	acks       int
	deliveries []delivery
}

// poll lists one page and ACKs its rows (up to ackBatch per call); it
// returns how many rows the page showed.
func (r *receiver) poll(ctx context.Context) (int, error) {
	args := map[string]any{"limit": ackBatch}
	if r.cursor != "" {
		args["cursor"] = r.cursor
	}
	page, err := call[hub.InboxListOutput](ctx, r.a, "inbox_list", args)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	var seqs []string
	for _, row := range page.Rows {
		b := ""
		if row.Message != nil {
			b = row.Message.BodyMD
		}
		r.deliveries = append(r.deliveries, delivery{body: b, seq: uint64(row.InboxSeq), at: now})
		seqs = append(seqs, strconv.FormatUint(uint64(row.InboxSeq), 10))
	}
	for len(seqs) > 0 {
		n := min(len(seqs), ackBatch)
		r.acks++
		if _, err := call[hub.InboxAckOutput](ctx, r.a, "inbox_ack", map[string]any{
			"idempotency_key": fmt.Sprintf("ack-%d", r.acks), "inbox_seqs": seqs[:n]}); err != nil {
			return 0, err
		}
		seqs = seqs[n:]
	}
	r.cursor = page.NextCursor
	if r.cursor == "" {
		r.cursor = page.ResumeCursor
	}
	return len(page.Rows), nil
}

// outcome is what one workload observed on the client's side.
type outcome struct {
	sends             []sent
	deliveries        []delivery
	retries           int
	sendTime, deliver time.Duration // from the start to the last send answered / row shown
}

// roundTrips sends n DMs one at a time: each is sent, polled for until
// the receiver is shown it, and ACKed before the next.
func roundTrips(ctx context.Context, from *agent, r *receiver, n int) (outcome, error) {
	var o outcome
	start := time.Now()
	for i := range n {
		t0 := time.Now()
		retries, err := send(ctx, from, r.a.id, 0, i)
		o.retries += retries
		if err != nil {
			return o, err
		}
		o.sends = append(o.sends, sent{sender: 0, index: i, start: t0})
		if err := r.until(ctx, len(o.sends), time.Minute); err != nil {
			return o, err
		}
	}
	o.sendTime = time.Since(start)
	o.deliver = o.sendTime
	o.deliveries = r.deliveries
	return o, nil
}

// until polls until the receiver has been shown want rows, pausing after a
// poll that brought nothing; it gives up after limit.
func (r *receiver) until(ctx context.Context, want int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for len(r.deliveries) < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("receiver shown %d rows of %d after %v", len(r.deliveries), want, limit)
		}
		got, err := r.poll(ctx)
		if err != nil {
			return err
		}
		if got == 0 {
			time.Sleep(pollPause)
		}
	}
	return nil
}

// fanIn runs len(senders) senders, each sending n DMs to r one after the
// other, while r polls and ACKs until it has been shown every one. The
// receiver stops waiting 30 s after the last send was answered.
func fanIn(ctx context.Context, senders []*agent, r *receiver, n int) (outcome, error) {
	var o outcome
	var mu sync.Mutex
	var sendErr error
	var wg sync.WaitGroup
	start := time.Now()
	for s, a := range senders {
		wg.Go(func() {
			for i := range n {
				t0 := time.Now()
				retries, err := send(ctx, a, r.a.id, s, i)
				mu.Lock()
				o.retries += retries
				if err != nil {
					sendErr = err
					mu.Unlock()
					return
				}
				o.sends = append(o.sends, sent{sender: s, index: i, start: t0})
				mu.Unlock()
			}
		})
	}
	sendsDone := make(chan struct{})
	go func() { wg.Wait(); o.sendTime = time.Since(start); close(sendsDone) }()

	total := len(senders) * n
	var idleSince time.Time
	for len(r.deliveries) < total {
		select {
		case <-sendsDone:
			if sendErr != nil {
				return o, sendErr
			}
			if idleSince.IsZero() {
				idleSince = time.Now()
			}
			if time.Since(idleSince) > 30*time.Second {
				<-sendsDone
				o.deliveries = r.deliveries
				o.deliver = time.Since(start)
				return o, nil // tally reports what is missing
			}
		default:
		}
		got, err := r.poll(ctx)
		if err != nil {
			return o, err
		}
		if got > 0 && !idleSince.IsZero() {
			idleSince = time.Now()
		}
		if got == 0 {
			time.Sleep(pollPause)
		}
	}
	o.deliver = time.Since(start)
	<-sendsDone
	o.deliveries = r.deliveries
	if sendErr != nil {
		return o, sendErr
	}
	return o, nil
}

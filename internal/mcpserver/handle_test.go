package mcpserver_test

// The session as an explicit handle over MCP (brief §11): hosts that open a
// brand-new MCP connection for every tool call, and the ACK rule with
// handles.

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// perCallHost is a host that opens a brand-new 2025-era MCP connection for
// every tool call: initialize, one tools/call, close (the go-sdk client's
// Close ends the MCP session with DELETE), as SEP-2567 records of some
// hosts. The model's only memory between calls is what results told it.
type perCallHost struct {
	t      *testing.T
	e      *env
	bearer string
	// seen are the Mcp-Session-Ids the host was given, one per call.
	seen map[string]bool
}

func (e *env) perCallHost(t *testing.T, bearer string) *perCallHost {
	return &perCallHost{t: t, e: e, bearer: bearer, seen: map[string]bool{}}
}

// call runs one tool on a connection of its own and fails the test on a
// protocol error: every outcome must be a tool result.
func (h *perCallHost) call(tool string, args map[string]any) *mcp.CallToolResult {
	h.t.Helper()
	rec := &recorder{bearer: h.bearer, base: http.DefaultTransport}
	client := mcp.NewClient(&mcp.Implementation{Name: "per-call-host", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: h.e.url, HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1},
		// The 2025 form of a per-call host: initialize, one call, DELETE
		// (TestModernPerCallHost is the 2026-07-28 form).
		&mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		h.t.Fatalf("%s: Connect: %v", tool, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if cerr := cs.Close(); cerr != nil {
		h.t.Errorf("%s: Close: %v", tool, cerr)
	}
	if err != nil {
		h.t.Fatalf("%s: protocol error %v, want a tool result", tool, err)
	}
	if h.seen[cs.ID()] {
		h.t.Fatalf("%s: Mcp-Session-Id reused, want a new MCP session per call", tool)
	}
	h.seen[cs.ID()] = true
	var deleted bool
	for _, x := range rec.exchanges() {
		deleted = deleted || (x.httpMethod == http.MethodDelete && x.status == http.StatusNoContent)
	}
	if !deleted {
		h.t.Errorf("%s: the connection was not ended with DELETE (204)", tool)
	}
	return res
}

// TestPerCallHost: on a host that opens a new MCP connection for every
// call, the whole coordination loop works by passing agent_prime's
// session_id as an argument — prime, DM, a room post with a request,
// inbox_list, thread_read, request_respond, inbox_ack, requests_list — and
// a call without the handle answers NOT_PRIMED saying what to do. The
// handle survives the DELETE that ends the connection agent_prime ran on.
func TestPerCallHost(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		room := e.roomOfAliceAndBob("per-call")
		alice, bob := e.perCallHost(t, e.alice.BoxKey), e.perCallHost(t, e.bob.BoxKey)
		hA := wantOK[hub.PrimeOutput](t, "agent_prime alice", alice.call("agent_prime", nil)).SessionID
		hB := wantOK[hub.PrimeOutput](t, "agent_prime bob", bob.call("agent_prime", nil)).SessionID
		with := func(handle string, args map[string]any) map[string]any {
			args["session_id"] = handle
			return args
		}

		// Without the handle, a new connection is a session never
		// primed, and the error says how to leave it.
		env := wantCode(t, "inbox_list without session_id", bob.call("inbox_list", map[string]any{}), apperr.NotPrimed)
		if !strings.Contains(env.Message, "missing") || env.NextAction != "Call agent_prime, then pass its session_id argument on every call." {
			t.Errorf("NOT_PRIMED = %q / %q, want the missing session and the way out", env.Message, env.NextAction)
		}

		dm := wantOK[hub.MessageSendOutput](t, "message_send DM", alice.call("message_send", with(hA, map[string]any{
			"idempotency_key": "pc-dm", "body_md": "Hello bob.",
			"destination": map[string]any{"kind": "dm", "recipient_agent_id": e.bob.AgentID}})))
		post := wantOK[hub.MessageSendOutput](t, "message_send room", alice.call("message_send", with(hA, map[string]any{
			"idempotency_key": "pc-post", "body_md": "Bob, please review the parser.", "requests": []string{e.bob.AgentID}, "mentions": []string{e.bob.AgentID},
			"destination": map[string]any{"kind": "room", "room_id": room.RoomID}})))

		list := wantOK[hub.InboxListOutput](t, "inbox_list", bob.call("inbox_list", with(hB, map[string]any{})))
		var seqs []string
		got := map[string]bool{}
		for _, r := range list.Rows {
			seqs = append(seqs, strconv.FormatUint(uint64(r.InboxSeq), 10))
			if r.Message != nil {
				got[r.Message.MessageID] = true
			}
		}
		if len(list.Rows) != 2 || !got[dm.MessageID] || !got[post.MessageID] {
			t.Fatalf("inbox_list = %+v, want the DM and the room request", list)
		}
		wantOK[map[string]any](t, "thread_read", bob.call("thread_read", with(hB, map[string]any{"message_id": post.MessageID})))
		resp := wantOK[hub.RequestRespondOutput](t, "request_respond", bob.call("request_respond", with(hB, map[string]any{
			"request_message_id": post.MessageID, "expected_revision": "0", "status": "accepted",
			"body_md": "On it.", "idempotency_key": "pc-resp"})))
		if resp.Request.Revision != 1 {
			t.Errorf("request_respond = %+v, want revision 1", resp)
		}
		ack := wantOK[hub.InboxAckOutput](t, "inbox_ack", bob.call("inbox_ack", with(hB, map[string]any{
			"idempotency_key": "pc-ack", "inbox_seqs": seqs})))
		if ack.Acked != 2 {
			t.Errorf("inbox_ack = %+v, want both rows acked", ack)
		}
		for _, r := range ack.Results {
			if r.AckedBySession != hB {
				t.Errorf("inbox_ack row %d acked by session %q, want the handle %q", r.InboxSeq, r.AckedBySession, hB)
			}
		}
		out := wantOK[hub.RequestsListOutput](t, "requests_list", alice.call("requests_list", with(hA, map[string]any{"direction": "outgoing"})))
		if len(out.Requests) != 1 || out.Requests[0].Status != "accepted" || out.Requests[0].RequestMessageID != post.MessageID {
			t.Errorf("requests_list outgoing = %+v, want bob's accepted request", out)
		}
		if n := len(alice.seen) + len(bob.seen); n != 10 {
			t.Errorf("%d MCP sessions for 10 calls, want one each", n)
		}
	})
}

// TestAckRuleWithHandles: "returned to this session" holds with handles as
// with headers: rows returned under one handle of an agent cannot be ACKed
// under another live handle of the same agent, and another agent's handle
// with your key is AUTH_FAILED.
func TestAckRuleWithHandles(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		pb, err := e.hub.Prime(ctx, hub.Credentials{Bearer: e.bob.BoxKey}, hub.PrimeInput{})
		if err != nil {
			t.Fatalf("Prime(bob): %v", err)
		}
		if _, err := e.hub.MessageSend(ctx, hub.Credentials{Bearer: e.bob.BoxKey, SessionID: pb.SessionID}, hub.MessageSendInput{
			Mutation:    hub.Mutation{IdempotencyKey: "ask"},
			Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: e.alice.AgentID}, BodyMD: "Ping."}); err != nil {
			t.Fatalf("MessageSend: %v", err)
		}
		cs, _ := e.connect(t, e.alice.BoxKey)
		h1 := wantOK[hub.PrimeOutput](t, "agent_prime (handle 1)", call(t, cs, "agent_prime", map[string]any{})).SessionID
		cs2, _ := e.connect(t, e.alice.BoxKey) // a second live session of alice's
		h2 := wantOK[hub.PrimeOutput](t, "agent_prime (handle 2)", call(t, cs2, "agent_prime", map[string]any{})).SessionID
		if h1 == h2 {
			t.Fatalf("two primes on two connections gave one handle %q", h1)
		}
		list := wantOK[hub.InboxListOutput](t, "inbox_list under handle 1", call(t, cs, "inbox_list", map[string]any{"session_id": h1}))
		if len(list.Rows) != 1 {
			t.Fatalf("inbox_list = %+v, want bob's DM", list)
		}
		seq := strconv.FormatUint(uint64(list.Rows[0].InboxSeq), 10)
		wantCode(t, "inbox_ack under handle 2", call(t, cs, "inbox_ack", map[string]any{
			"session_id": h2, "idempotency_key": "ack-2", "inbox_seqs": []string{seq}}), apperr.InvalidArgument)
		wantCode(t, "inbox_list under bob's handle with alice's key", call(t, cs, "inbox_list", map[string]any{"session_id": pb.SessionID}), apperr.AuthFailed)
		wantCode(t, "inbox_ack under bob's handle with alice's key", call(t, cs, "inbox_ack", map[string]any{
			"session_id": pb.SessionID, "idempotency_key": "ack-b", "inbox_seqs": []string{seq}}), apperr.AuthFailed)
		ack := wantOK[hub.InboxAckOutput](t, "inbox_ack under handle 1", call(t, cs, "inbox_ack", map[string]any{
			"session_id": h1, "idempotency_key": "ack-1", "inbox_seqs": []string{seq}}))
		if ack.Acked != 1 || ack.Results[0].AckedBySession != h1 {
			t.Errorf("inbox_ack = %+v, want the row acked by handle 1", ack)
		}
	})
}

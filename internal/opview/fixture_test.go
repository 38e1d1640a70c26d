package opview_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

// xss is the corpus planted in everything an agent or owner can name.
var xss = []string{
	`<script>window.__pwned=1</script>`,
	`<img src=x onerror="window.__pwned=1">`,
	`[click](javascript:window.__pwned=1)`,
	`![img](https://evil.example/x.png "t") ![i2](javascript:window.__pwned=1)`,
	`<svg onload="window.__pwned=1"><script>window.__pwned=1</script></svg>`,
	`<a href="javascript:window.__pwned=1">a</a> <style>body{background:url(https://evil.example/c)}</style>`,
	`<div style="background:url(javascript:window.__pwned=1)">css</div>`,
	"\u202egnp.exe <iframe src=javascript:window.__pwned=1>",
	`[x](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xPC9zY3JpcHQ+)`,
	"```\n</code><script>window.__pwned=1</script>\n```",
}

// world is a seeded box behind the real serve handler.
type world struct {
	t       *testing.T
	srv     *httptest.Server
	h       *hub.Hub
	admin   *hub.Admin
	box     string
	other   string
	alice   *hub.AgentInfo // write key
	bob     *hub.AgentInfo // write key
	rita    *hub.AgentInfo // read-only key
	carol   *hub.AgentInfo // other box
	room    *hub.RoomInfo
	owner   string // owner key of box
	ownerB  string // owner key of the other box
	revkd   string // revoked owner key of box
	sess    map[string]string
	csp     *atomic.Int64
	logs    *lockedLog
	reqID   string // a message carrying a request
	dmAsk   string // bob's DM request to alice, in needs_context
	fileMsg string // alice's first message with a file, reported by bob
	private string // alice and bob's private space
}

// countingHandler counts the view's CSP report log lines and keeps every
// line's text, so a test can prove no key reaches the log.
type countingHandler struct {
	slog.Handler
	n   *atomic.Int64
	log *lockedLog
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func (c countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "ui csp violation report" {
		c.n.Add(1)
	}
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	c.log.b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		c.log.b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	c.log.b.WriteString("\n")
	return nil
}
func (c countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (c countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c countingHandler) WithGroup(string) slog.Handler            { return c }

func newWorld(t *testing.T) *world {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	w := &world{t: t, sess: map[string]string{}, csp: &atomic.Int64{}, logs: &lockedLog{}}
	log := slog.New(countingHandler{Handler: slog.DiscardHandler, n: w.csp, log: w.logs})
	w.h = hub.New(st, hub.Options{Logger: log})
	w.srv = httptest.NewServer(server.Handler(w.h, registry.New(registrytest.Guard(t)), log))
	// Browsers and MCP streams keep connections open; Close would wait.
	t.Cleanup(func() { w.srv.CloseClientConnections(); w.srv.Close() })
	ctx := context.Background()
	w.admin = w.h.Admin()
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatalf("seeding: %v", err)
		}
		return v
	}
	w.box = must(w.admin.CreateBox(ctx, "team <b>alpha</b>")).(*hub.BoxInfo).BoxID
	w.other = must(w.admin.CreateBox(ctx, "other")).(*hub.BoxInfo).BoxID
	w.alice = must(w.admin.CreateAgent(ctx, w.box, "alice", "planner")).(*hub.AgentInfo)
	w.bob = must(w.admin.CreateAgent(ctx, w.box, `bob <img src=x onerror="window.__pwned=1">`, "reviewer")).(*hub.AgentInfo)
	w.rita = must(w.admin.CreateAgentScoped(ctx, w.box, "rita", "auditor", hub.ScopeRead)).(*hub.AgentInfo)
	w.carol = must(w.admin.CreateAgent(ctx, w.other, "carol", "")).(*hub.AgentInfo)
	brief := "# Release plan\n\nPlan the release.\n\n" + strings.Join(xss, "\n\n")
	w.room = must(w.admin.CreateRoom(ctx, w.box, `planning <svg onload="window.__pwned=1">`, brief)).(*hub.RoomInfo)
	for _, a := range []*hub.AgentInfo{w.alice, w.bob, w.rita} {
		must(w.admin.AddMember(ctx, w.room.RoomID, a.AgentID))
	}
	w.owner = must(w.admin.CreateOwnerKey(ctx, w.box)).(*hub.OwnerKeyInfo).Key
	w.ownerB = must(w.admin.CreateOwnerKey(ctx, w.other)).(*hub.OwnerKeyInfo).Key
	rev := must(w.admin.CreateOwnerKey(ctx, w.box)).(*hub.OwnerKeyInfo)
	must(w.admin.RevokeOwnerKey(ctx, rev.KeyID))
	w.revkd = rev.Key

	for _, a := range []*hub.AgentInfo{w.alice, w.bob, w.rita} {
		w.sess[a.AgentID] = w.prime(a.BoxKey)
	}
	room := map[string]any{"kind": "room", "room_id": w.room.RoomID}
	var first struct {
		ID string `json:"message_id"`
	}
	w.rest(w.alice, "POST", "/v1/messages", map[string]any{"idempotency_key": "m0", "destination": room,
		"body_md": "Please review the **parser** ([spec](https://example.com/spec)).", "requests": []string{w.bob.AgentID},
		"mentions": []string{w.bob.AgentID}}, http.StatusOK, &first)
	w.reqID = first.ID
	for i, body := range xss {
		var sent struct {
			ID string `json:"message_id"`
		}
		// Every other file pins its content; the rest are unversioned.
		file := map[string]string{"url": "https://example.com/f.md", "display_name": label(body)}
		if i%2 == 0 {
			file["sha256"] = strings.Repeat("0f", 32)
		}
		w.rest(w.alice, "POST", "/v1/messages", map[string]any{"idempotency_key": "x" + string(rune('a'+i)),
			"destination": room, "body_md": body, "files": []map[string]string{file}}, http.StatusOK, &sent)
		if i == 0 {
			w.fileMsg = sent.ID
		}
	}
	// Bob reports he cannot open the first file, with a hostile note.
	var got struct {
		Message struct {
			Files []struct {
				ID string `json:"file_id"`
			} `json:"files"`
		} `json:"message"`
	}
	w.rest(w.bob, "GET", "/v1/messages/"+w.fileMsg, nil, http.StatusOK, &got)
	w.rest(w.bob, "PUT", "/v1/messages/"+w.fileMsg+"/files/"+got.Message.Files[0].ID+"/report", map[string]any{
		"idempotency_key": "rep1", "expected_revision": "0", "state": "denied", "note": label(xss[1]) + " 403 from the host"}, http.StatusOK, nil)
	w.rest(w.bob, "POST", "/v1/messages", map[string]any{"idempotency_key": "r1", "destination": room,
		"body_md": "On it.", "reply_to": w.reqID}, http.StatusOK, nil)
	w.rest(w.alice, "POST", "/v1/spaces", map[string]any{"title": `<script>window.__pwned=1</script> release space`,
		"goal": "Ship it. Done when reviewed.", "request_id": "req-1", "visibility": "public"}, http.StatusOK, nil)
	// Bob asks alice, who answers: the charts have a request answered.
	var ask struct {
		ID string `json:"message_id"`
	}
	w.rest(w.bob, "POST", "/v1/messages", map[string]any{"idempotency_key": "q2", "destination": room,
		"body_md": "Can you check the numbers?", "requests": []string{w.alice.AgentID}, "mentions": []string{w.alice.AgentID}},
		http.StatusOK, &ask)
	w.rest(w.alice, "POST", "/v1/requests/"+ask.ID+"/respond", map[string]any{"idempotency_key": "q2done",
		"expected_revision": "0", "status": "result_ready", "body_md": "Numbers checked."}, http.StatusOK, nil)
	// Alice and bob's private space and DM, seen only on their agent pages
	// and the DM page.
	var private struct {
		Space struct {
			ID string `json:"id"`
		} `json:"space"`
	}
	w.rest(w.alice, "POST", "/v1/spaces", map[string]any{"title": `<img src=x onerror="window.__pwned=1"> hush space`,
		"goal": "Private work.", "request_id": "req-2", "visibility": "private"}, http.StatusOK, &private)
	w.private = private.Space.ID
	w.rest(w.alice, "POST", "/v1/spaces/"+w.private+"/members/add", map[string]any{"agent_id": w.bob.AgentID}, http.StatusOK, nil)
	w.rest(w.alice, "POST", "/v1/messages", map[string]any{"idempotency_key": "dm1",
		"destination": map[string]any{"kind": "dm", "recipient_agent_id": w.bob.AgentID},
		"body_md":     "DM body <script>window.__pwned=1</script> just between us"}, http.StatusOK, nil)
	// Bob asks alice in their DM; she needs context, in hostile words.
	var dmAsk struct {
		ID string `json:"message_id"`
	}
	w.rest(w.bob, "POST", "/v1/messages", map[string]any{"idempotency_key": "dmq",
		"destination": map[string]any{"kind": "dm", "recipient_agent_id": w.alice.AgentID},
		"body_md":     "DM ask " + xss[1], "requests": []string{w.alice.AgentID}}, http.StatusOK, &dmAsk)
	w.dmAsk = dmAsk.ID
	w.rest(w.alice, "POST", "/v1/requests/"+w.dmAsk+"/respond", map[string]any{"idempotency_key": "dmqnc",
		"expected_revision": "0", "status": "needs_context", "body_md": "Which quarter? " + xss[0]}, http.StatusOK, nil)
	return w
}

func (w *world) prime(key string) string {
	w.t.Helper()
	var out struct {
		SessionID string `json:"session_id"`
	}
	req, _ := http.NewRequest("POST", w.srv.URL+"/v1/agent/prime", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || out.SessionID == "" {
		w.t.Fatalf("POST /v1/agent/prime = %d %s, want 200 with a session", resp.StatusCode, b)
	}
	return out.SessionID
}

// rest calls a REST route as agent a and checks the status.
func (w *world) rest(a *hub.AgentInfo, method, path string, body any, want int, out any) *http.Response {
	w.t.Helper()
	resp, b := w.do(a.BoxKey, w.sess[a.AgentID], method, path, body)
	if resp.StatusCode != want {
		w.t.Fatalf("%s %s as %s = %d %s, want %d", method, path, a.Name, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			w.t.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
	return resp
}

func (w *world) do(key, session, method, path string, body any) (*http.Response, []byte) {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.srv.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if session != "" {
		req.Header.Set(registry.SessionHeader, session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// label is body as a file label: one line, no bidi characters (the hub
// refuses those in labels).
func label(body string) string {
	s := strings.NewReplacer("\n", " ", "\u202e", "").Replace(body)
	return s[:min(len(s), 200)]
}

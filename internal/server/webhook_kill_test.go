package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/webhook"
)

// The kill -9 test runs the real server in a child process: this test
// binary, re-executed with childEnv set, serves until it is killed.
const (
	childEnv   = "AGENTBOX_TEST_SERVE_CHILD"
	childData  = "AGENTBOX_TEST_SERVE_DATA"
	childRoots = "AGENTBOX_TEST_SERVE_ROOTS"
	childAllow = "AGENTBOX_TEST_SERVE_ALLOW"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(serveChild())
	}
	os.Exit(m.Run())
}

// serveChild is the child's main: the server of `agentbox serve` on the
// given data directory, its dispatcher trusting the test receiver. It
// prints its URL on stdout and serves until the parent kills it.
func serveChild() int {
	pemBytes, err := os.ReadFile(os.Getenv(childRoots))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		fmt.Fprintln(os.Stderr, "no certificate in the roots file")
		return 1
	}
	s, err := server.Start(server.Config{
		Addr: "127.0.0.1:0", DataDir: os.Getenv(childData),
		Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil)),
		Webhooks: webhook.ClientOptions{
			TLSConfig: &tls.Config{RootCAs: roots},
			Allow:     []netip.AddrPort{netip.MustParseAddrPort(os.Getenv(childAllow))},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("URL=" + s.URL())
	select {} // until the parent kills the process
}

// hookReceiver is a TLS endpoint that verifies each delivery's signature
// and holds the first one until released.
type hookReceiver struct {
	srv     *httptest.Server
	secret  string
	hits    chan hookHit
	release chan struct{}
	mu      sync.Mutex
	n       int
}

type hookHit struct {
	id       string
	inboxSeq int64
	verified bool
	body     string
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{hits: make(chan hookHit, 16), release: make(chan struct{})}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<16))
		var ev webhook.Event
		_ = json.Unmarshal(body, &ev)
		r.mu.Lock()
		r.n++
		first, secret := r.n == 1, r.secret
		r.mu.Unlock()
		h := hookHit{id: req.Header.Get(webhook.HeaderID), body: string(body),
			verified: verifySignature(secret, req.Header, body)}
		if ev.Data != nil {
			h.inboxSeq = int64(ev.Data.InboxSeq)
		}
		r.hits <- h
		if first {
			<-r.release // the server is killed while this delivery is in flight
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() {
		select {
		case <-r.release:
		default:
			close(r.release)
		}
		r.srv.Close()
	})
	return r
}

// verifySignature checks a Standard Webhooks signature as a receiver does
// (the README's few lines): HMAC-SHA256 over id.timestamp.body, keyed with
// the secret's base64 part.
func verifySignature(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(h.Get(webhook.HeaderID) + "." + h.Get(webhook.HeaderTimestamp) + "."))
	m.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, sig := range strings.Fields(h.Get(webhook.HeaderSignature)) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

func (r *hookReceiver) next(t *testing.T, what string) hookHit {
	t.Helper()
	select {
	case h := <-r.hits:
		return h
	case <-time.After(60 * time.Second):
		t.Fatalf("no delivery within 60s (%s)", what)
	}
	return hookHit{}
}

// child is a running server process.
type child struct {
	cmd *exec.Cmd
	url string
}

func startChild(t *testing.T, dir, roots, allow string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childData+"="+dir, childRoots+"="+roots, childAllow+"="+allow)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd}
	t.Cleanup(func() { c.kill() })
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "URL="); ok {
				got <- u
			}
		}
		close(got)
	}()
	select {
	case u, ok := <-got:
		if !ok {
			cmd.Wait()
			t.Fatalf("server child ended before serving: %s", stderr.String())
		}
		c.url = u
	case <-time.After(60 * time.Second):
		t.Fatalf("server child did not serve within 60s: %s", stderr.String())
	}
	return c
}

// kill ends the process with SIGKILL (kill -9): no shutdown code runs.
func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
}

// admin runs an owner command as `agentbox admin` does: on the store
// itself while no server runs, over the server's socket while one does.
func admin(t *testing.T, dir string, v any, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if code := admincli.Main(ctx, append(args, "--data", dir), &out, &errb); code != 0 {
		t.Fatalf("admin %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		t.Fatalf("admin %s: %v: %s", strings.Join(args, " "), err, out.String())
	}
}

// restCall calls a REST tool with an agent's key and session.
func restCall(t *testing.T, base, key, session, path, body string, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("Agentbox-Session", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, v) != nil {
		t.Fatalf("POST %s = %d %s", path, resp.StatusCode, raw)
	}
}

// TestWebhookSurvivesKill: a server killed with SIGKILL while a delivery
// is in flight has recorded nothing for it; the next server on the same
// data directory delivers the same event (same webhook-id, signed with the
// endpoint's secret), and the endpoint then records it delivered. The
// pending state lives in the embedded store, not in the process.
func TestWebhookSurvivesKill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	r := newHookReceiver(t)
	roots := filepath.Join(t.TempDir(), "roots.pem")
	if err := os.WriteFile(roots, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	allow := r.srv.Listener.Addr().String()

	var box hub.BoxInfo
	admin(t, dir, &box, "create-box", "--name", "crash")
	var alice, bob hub.AgentInfo
	admin(t, dir, &alice, "create-agent", "--box", box.BoxID, "--name", "alice")
	admin(t, dir, &bob, "create-agent", "--box", box.BoxID, "--name", "bob")
	var hook hub.WebhookInfo
	admin(t, dir, &hook, "add-webhook", "--agent", bob.AgentID, "--url", r.srv.URL+"/hook")
	r.mu.Lock()
	r.secret = hook.Secret
	r.mu.Unlock()

	first := startChild(t, dir, roots, allow)
	var primed struct {
		SessionID string `json:"session_id"`
	}
	restCall(t, first.url, alice.BoxKey, "", "/agent/prime", `{}`, &primed)
	var sent struct {
		MessageID string `json:"message_id"`
	}
	restCall(t, first.url, alice.BoxKey, primed.SessionID, "/messages", `{"idempotency_key": "crash-1",
		"destination": {"kind": "dm", "recipient_agent_id": "`+bob.AgentID+`"}, "body_md": "wake up, bob"}`, &sent)

	cut := r.next(t, "first delivery")
	if !cut.verified || cut.inboxSeq != 1 {
		t.Fatalf("first delivery: verified %v, inbox_seq %d; want a verified event for row 1", cut.verified, cut.inboxSeq)
	}
	first.kill() // kill -9 while the receiver holds the delivery
	close(r.release)

	var list struct {
		Webhooks []hub.WebhookInfo `json:"webhooks"`
	}
	admin(t, dir, &list, "list-webhooks", "--box", box.BoxID)
	if len(list.Webhooks) != 1 || list.Webhooks[0].DeliveredSeq != "0" {
		t.Fatalf("after the kill: %+v; want the endpoint with delivered_seq 0 (pending)", list.Webhooks)
	}

	startChild(t, dir, roots, allow)
	again := r.next(t, "redelivery after restart")
	if again.id != cut.id || !again.verified || again.inboxSeq != 1 {
		t.Errorf("redelivery: id %q verified %v inbox_seq %d; want id %q, verified, row 1", again.id, again.verified, again.inboxSeq, cut.id)
	}
	if strings.Contains(again.body, "wake up") || !strings.Contains(again.body, sent.MessageID) {
		t.Errorf("event %s: want the message id and never the body", again.body)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		admin(t, dir, &list, "list-webhooks", "--box", box.BoxID)
		if len(list.Webhooks) == 1 && list.Webhooks[0].DeliveredSeq == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the redelivery: %+v; want delivered_seq 1", list.Webhooks)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// serveBinary starts the built binary's serve on a free loopback port in
// dir and returns its base URL; the server is killed at cleanup.
func serveBinary(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(binary(t), "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`"addr":"([^"]+)"|addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil && strings.Contains(sc.Text(), "agentbox serving") {
				addr <- m[1] + m[2]
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("agentbox serve did not report its address within 30s")
	}
	return ""
}

// hook runs the built binary as a hook does: environment only.
func hook(t *testing.T, env []string, args ...string) ran {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = env
	return runCmd(t, cmd, args)
}

// TestHookClient: against a running server, agentbox call and agentbox
// inbox keep the session in a 0600 state file, answer the documented exit
// codes, and print the one-line summary.
func TestHookClient(t *testing.T) {
	dir := t.TempDir()
	url := serveBinary(t, dir)
	var box hub.BoxInfo
	adminOK(t, dir, &box, "create-box", "--name", "demo")
	var alice, bob hub.AgentInfo
	adminOK(t, dir, &alice, "create-agent", "--box", box.BoxID, "--name", "alice")
	adminOK(t, dir, &bob, "create-agent", "--box", box.BoxID, "--name", "bob")
	var room hub.RoomInfo
	adminOK(t, dir, &room, "create-room", "--box", box.BoxID, "--name", "release")
	var changed map[string]any
	adminOK(t, dir, &changed, "add-member", "--room", room.RoomID, "--agent", alice.AgentID)
	adminOK(t, dir, &changed, "add-member", "--room", room.RoomID, "--agent", bob.AgentID)

	state := filepath.Join(dir, "state")
	envOf := func(key string) []string {
		return []string{"AGENTBOX_URL=" + url, "AGENTBOX_KEY=" + key, "AGENTBOX_STATE=" + state, "HOME=" + dir}
	}
	asAlice, asBob := envOf(alice.BoxKey), envOf(bob.BoxKey)

	// Nothing yet: exit 3 and "0 unread".
	if r := hook(t, asBob, "inbox", "--summary"); r.code != 3 || strings.TrimSpace(r.stdout) != "0 unread" {
		t.Fatalf("inbox --summary on an empty inbox = exit %d, %q, stderr %q; want 3, \"0 unread\"", r.code, r.stdout, r.stderr)
	}
	fi, err := os.Stat(filepath.Join(state, "sessions.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v, mode %v; want it written 0600", err, fi)
	}
	before, _ := os.ReadFile(filepath.Join(state, "sessions.json"))

	send := fmt.Sprintf(`{"idempotency_key":"s1","destination":{"kind":"room","room_id":%q},"body_md":"please review","requests":[%q],"mentions":[%q]}`,
		room.RoomID, bob.AgentID, bob.AgentID)
	if r := hook(t, asAlice, "call", "message_send", send); r.code != 0 || !strings.Contains(r.stdout, `"message_id"`) {
		t.Fatalf("call message_send = exit %d, %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	dm := fmt.Sprintf(`{"idempotency_key":"s2","destination":{"kind":"dm","recipient_agent_id":%q},"body_md":"hi"}`, bob.AgentID)
	if r := hook(t, asAlice, "call", "message_send", dm); r.code != 0 {
		t.Fatalf("call message_send dm = exit %d, stderr %q", r.code, r.stderr)
	}
	r := hook(t, asBob, "inbox", "--summary", "--wait", "1")
	if want := "2 unread, 1 request from alice in #release, 1 DM from alice"; r.code != 0 || strings.TrimSpace(r.stdout) != want {
		t.Errorf("inbox --summary = exit %d, %q, stderr %q; want 0, %q", r.code, r.stdout, r.stderr, want)
	}
	// bob's session was reused, not primed again.
	if after, _ := os.ReadFile(filepath.Join(state, "sessions.json")); !bytes.Contains(after, before[1:len(before)-1]) {
		t.Errorf("the state file lost bob's session: before %s after %s", before, after)
	}
	r = hook(t, asBob, "inbox")
	var page struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &page) != nil || len(page.Rows) != 2 {
		t.Errorf("inbox = exit %d, %q; want 0 and a JSON page of 2 rows", r.code, r.stdout)
	}

	// A forgotten or stale session primes again.
	if err := os.WriteFile(filepath.Join(state, "sessions.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := hook(t, asBob, "call", "profile_get"); r.code != 0 {
		t.Errorf("call profile_get without a stored session = exit %d, stderr %q; want 0 (primes first)", r.code, r.stderr)
	}

	// The stack's ApiUrl (…/v1) and McpUrl (…/mcp) name the same endpoint.
	for _, u := range []string{url + "/v1", url + "/mcp/"} {
		if r := hook(t, []string{"AGENTBOX_URL=" + u, "AGENTBOX_KEY=" + bob.BoxKey, "AGENTBOX_STATE=" + state}, "call", "profile_get"); r.code != 0 {
			t.Errorf("AGENTBOX_URL=%s: call profile_get = exit %d, stderr %q", u, r.code, r.stderr)
		}
	}

	// Exit codes.
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
	}{
		{"tool error", asBob, []string{"call", "message_get", `{"message_id":"00000000-0000-4000-8000-000000000000"}`}, 1},
		{"usage", asBob, []string{"call"}, 2},
		{"bad json", asBob, []string{"call", "profile_get", "[1]"}, 2},
		{"bad wait", asBob, []string{"inbox", "--wait", "21"}, 2},
		{"no key", []string{"AGENTBOX_URL=" + url, "AGENTBOX_STATE=" + state}, []string{"inbox"}, 4},
		{"wrong key", envOf("abx_wrong"), []string{"inbox"}, 4},
		{"no url", []string{"AGENTBOX_KEY=k", "AGENTBOX_STATE=" + state}, []string{"inbox"}, 5},
		{"unreachable", []string{"AGENTBOX_URL=http://127.0.0.1:1", "AGENTBOX_KEY=k", "AGENTBOX_STATE=" + state}, []string{"inbox"}, 5},
	} {
		if r := hook(t, c.env, c.args...); r.code != c.code {
			t.Errorf("%s: agentbox %v = exit %d, stderr %q; want %d", c.name, c.args, r.code, r.stderr, c.code)
		} else if strings.Contains(r.stderr, bob.BoxKey) {
			t.Errorf("%s: stderr echoes the key", c.name)
		}
	}
}

// TestWebhookCLI: the owner's webhook commands through the running
// server's admin socket: an http:// URL is refused without echoing it,
// the secret is printed once, list shows the state without secrets.
func TestWebhookCLI(t *testing.T) {
	dir := t.TempDir()
	serveBinary(t, dir)
	var box hub.BoxInfo
	adminOK(t, dir, &box, "create-box", "--name", "demo")
	var bob hub.AgentInfo
	adminOK(t, dir, &bob, "create-agent", "--box", box.BoxID, "--name", "bob")
	if msg := adminFails(t, dir, apperr.InvalidArgument, "add-webhook", "--agent", bob.AgentID, "--url", "http://hooks.example.com/x"); strings.Contains(msg, "hooks.example.com") {
		t.Errorf("add-webhook http://: message %q echoes the URL", msg)
	}
	var w hub.WebhookInfo
	adminOK(t, dir, &w, "add-webhook", "--agent", bob.AgentID, "--url", "https://hooks.example.com/x")
	if !strings.HasPrefix(w.Secret, "whsec_") || w.Status != hub.WebhookActive {
		t.Fatalf("add-webhook = %+v", w)
	}
	var rot hub.WebhookInfo
	adminOK(t, dir, &rot, "rotate-webhook-secret", "--webhook", w.WebhookID, "--overlap", "1h")
	if rot.Secrets != 2 || rot.Secret == w.Secret {
		t.Errorf("rotate-webhook-secret = %+v, want a new secret and 2 signing", rot)
	}
	adminFails(t, dir, apperr.InvalidArgument, "rotate-webhook-secret", "--webhook", w.WebhookID, "--overlap", "soon")
	var dis hub.WebhookInfo
	adminOK(t, dir, &dis, "disable-webhook", "--webhook", w.WebhookID)
	var list struct {
		Webhooks []hub.WebhookInfo `json:"webhooks"`
	}
	out := adminOK(t, dir, &list, "list-webhooks", "--box", box.BoxID)
	if len(list.Webhooks) != 1 || list.Webhooks[0].Status != hub.WebhookDisabled || strings.Contains(out, "whsec_") {
		t.Errorf("list-webhooks = %s, want one disabled endpoint and no secret", out)
	}
	adminFails(t, dir, apperr.InvalidArgument, "add-webhook", "--url", "https://hooks.example.com/x")
	adminFails(t, dir, apperr.InvalidArgument, "add-webhook", "--agent", bob.AgentID, "--box", box.BoxID, "--url", "https://hooks.example.com/x")
	var whole hub.WebhookInfo
	adminOK(t, dir, &whole, "add-webhook", "--box", box.BoxID, "--url", "https://hooks.example.com/box")
	if whole.Scope != hub.WebhookScopeBox || whole.AgentID != "" || !strings.HasPrefix(whole.Secret, "whsec_") {
		t.Errorf("add-webhook --box = %+v, want a box endpoint with its secret", whole)
	}
	var removed map[string]bool
	adminOK(t, dir, &removed, "remove-webhook", "--webhook", whole.WebhookID)
	adminOK(t, dir, &removed, "remove-webhook", "--webhook", w.WebhookID)
	adminFails(t, dir, apperr.NotFoundOrForbidden, "enable-webhook", "--webhook", w.WebhookID)
}

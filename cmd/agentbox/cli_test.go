package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

// The newcomer's first commands, run through the built binary as a user
// runs them.

var built struct {
	once sync.Once
	path string
	err  error
}

// binary builds agentbox once per test process and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "agentbox-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "agentbox")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

type ran struct {
	code           int
	stdout, stderr string
}

// agentbox runs the built binary in dir.
func agentbox(t *testing.T, dir string, args ...string) ran {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	return runCmd(t, cmd, args)
}

// runCmd runs cmd (the built binary with args) to its end.
func runCmd(t *testing.T, cmd *exec.Cmd, args []string) ran {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("agentbox %s: %v", strings.Join(args, " "), err)
	}
	return ran{code, out.String(), errb.String()}
}

// adminOK runs an admin command that must succeed and decodes its output.
func adminOK(t *testing.T, dir string, v any, args ...string) string {
	t.Helper()
	r := agentbox(t, dir, append([]string{"admin"}, args...)...)
	if r.code != 0 {
		t.Fatalf("agentbox admin %s: exit %d, stderr %s", strings.Join(args, " "), r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("agentbox admin %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
	return r.stdout
}

// adminFails runs an admin command that must fail with exit 1 and code, and
// returns the error's message.
func adminFails(t *testing.T, dir string, code apperr.Code, args ...string) string {
	t.Helper()
	r := agentbox(t, dir, append([]string{"admin"}, args...)...)
	var doc struct {
		Error apperr.Envelope `json:"error"`
	}
	if r.code != 1 || r.stdout != "" || json.Unmarshal([]byte(r.stderr), &doc) != nil || doc.Error.Code != code {
		t.Fatalf("agentbox admin %s: exit %d, stdout %q, stderr %s; want exit 1 and %s", strings.Join(args, " "), r.code, r.stdout, r.stderr, code)
	}
	return doc.Error.Message
}

// TestCLIMissingStore: outside the directory serve uses, or with a
// mistyped --data, a command fails naming the store instead of creating
// an empty one; create-box and --init create it.
func TestCLIMissingStore(t *testing.T) {
	dir := t.TempDir()
	const box = "00000000-0000-4000-8000-000000000000"
	for _, args := range [][]string{
		{"list-agents", "--box", box},
		{"list-rooms", "--box", box},
		{"list-boxes"},
		{"list-agents", "--box", box, "--data", "typo"},
	} {
		msg := adminFails(t, dir, apperr.NotFoundOrForbidden, args...)
		if !strings.Contains(msg, "agentbox.db") {
			t.Errorf("admin %v: message %q does not name the store", args, msg)
		}
	}
	for _, d := range []string{".agentbox", "typo"} {
		if _, err := os.Stat(filepath.Join(dir, d)); !os.IsNotExist(err) {
			t.Errorf("a failed command created %s (stat: %v)", d, err)
		}
	}
	var boxes struct {
		Boxes []hub.BoxInfo `json:"boxes"`
	}
	adminOK(t, dir, &boxes, "list-boxes", "--init")
	if len(boxes.Boxes) != 0 {
		t.Errorf("list-boxes --init on a new store = %+v, want none", boxes)
	}
	var created hub.BoxInfo
	adminOK(t, dir, &created, "create-box", "--name", "demo", "--data", "elsewhere")
	if _, err := os.Stat(filepath.Join(dir, "elsewhere", "agentbox.db")); err != nil {
		t.Errorf("create-box did not create its store: %v", err)
	}
}

// TestCLIUnknownBox: every command given a box the store does not hold
// fails naming it, the list commands included; list-boxes finds a lost id.
func TestCLIUnknownBox(t *testing.T) {
	dir := t.TempDir()
	var demo, other hub.BoxInfo
	adminOK(t, dir, &demo, "create-box", "--name", "demo")
	adminOK(t, dir, &other, "create-box", "--name", "Another")
	const unknown = "0f0f0f0f-0000-4000-8000-000000000000"
	for _, args := range [][]string{
		{"list-agents", "--box", unknown},
		{"list-rooms", "--box", unknown},
		{"list-owner-keys", "--box", unknown},
		{"migrate-listings", "--box", unknown},
		{"create-agent", "--box", unknown, "--name", "bob"},
		{"create-room", "--box", unknown, "--name", "r"},
		{"create-owner-key", "--box", unknown},
	} {
		if msg := adminFails(t, dir, apperr.NotFoundOrForbidden, args...); !strings.Contains(msg, unknown) {
			t.Errorf("admin %v: message %q does not name the box", args, msg)
		}
	}
	var boxes struct {
		Boxes []hub.BoxInfo `json:"boxes"`
	}
	adminOK(t, dir, &boxes, "list-boxes")
	if len(boxes.Boxes) != 2 || boxes.Boxes[0].BoxID != other.BoxID || boxes.Boxes[1].BoxID != demo.BoxID {
		t.Errorf("list-boxes = %+v, want Another then demo", boxes.Boxes)
	}
	var agents struct {
		Agents []hub.AgentInfo `json:"agents"`
	}
	adminOK(t, dir, &agents, "list-agents", "--box", demo.BoxID)
	if len(agents.Agents) != 0 {
		t.Errorf("list-agents on an empty box = %+v, want none", agents.Agents)
	}
}

// openHub opens the store the CLI wrote in dir (the CLI has exited); the
// store holds the file's lock until close.
func openHub(t *testing.T, dir string) (h *hub.Hub, close func()) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(dir, ".agentbox", "agentbox.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	close = func() { once.Do(func() { st.Close() }) }
	t.Cleanup(close)
	return hub.New(st, hub.Options{Logger: slog.New(slog.DiscardHandler)}), close
}

func primed(t *testing.T, h *hub.Hub, key string) hub.Credentials {
	t.Helper()
	cr := hub.Credentials{Bearer: key, Transport: "rest"}
	out, err := h.Prime(t.Context(), cr, hub.PrimeInput{})
	if err != nil {
		t.Fatalf("Prime: %v", err)
	}
	cr.SessionID = out.SessionID
	return cr
}

// TestCLIListedAgent: create-agent --listed --card-role makes an agent the
// directory finds by role, and its output says so; without --listed the
// output says the directory shows nothing.
func TestCLIListedAgent(t *testing.T) {
	dir := t.TempDir()
	var box hub.BoxInfo
	adminOK(t, dir, &box, "create-box", "--name", "demo")
	var alice, bob, carol hub.AgentInfo
	adminOK(t, dir, &alice, "create-agent", "--box", box.BoxID, "--name", "alice", "--role", "lead", "--listed", "--card-role", "reviewer")
	adminOK(t, dir, &bob, "create-agent", "--box", box.BoxID, "--name", "bob", "--role", "reviewer")
	adminOK(t, dir, &carol, "create-agent", "--box", box.BoxID, "--name", "carol", "--listed")
	if !alice.DirectoryListed || alice.CardRole != "reviewer" || !strings.Contains(alice.Directory, "card role") {
		t.Errorf("create-agent --listed --card-role reviewer = listed %v card_role %q directory %q, want listed, reviewer, and a note naming the card role",
			alice.DirectoryListed, alice.CardRole, alice.Directory)
	}
	if bob.DirectoryListed || !strings.HasPrefix(bob.Directory, "not listed") || !strings.Contains(bob.Directory, "directory-listing --agent "+bob.AgentID+" --on") {
		t.Errorf("create-agent without --listed: directory %q, want a not-listed note naming directory-listing", bob.Directory)
	}
	if !strings.HasPrefix(carol.Directory, "listed") {
		t.Errorf("create-agent --listed: directory %q, want a listed note", carol.Directory)
	}
	h, _ := openHub(t, dir)
	cr := primed(t, h, carol.BoxKey)
	res, err := h.DirectorySearch(t.Context(), cr, hub.DirectorySearchInput{Query: "review"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cards) != 1 || res.Cards[0].AgentID != alice.AgentID || res.Cards[0].Role != "reviewer" || res.Cards[0].Revision != 0 {
		t.Errorf("directory_search(review) = %+v, want alice's card (role reviewer, revision 0) only", res.Cards)
	}
	// The agent's first card update still sends revision "0".
	role := "senior reviewer"
	if _, err := h.DirectoryUpdateSelf(t.Context(), primed(t, h, alice.BoxKey), hub.DirectoryUpdateSelfInput{
		Mutation: hub.Mutation{IdempotencyKey: "card-1"}, ExpectedRevision: 0, Role: &role}); err != nil {
		t.Errorf("directory_update_self at revision 0 after create-agent --card-role: %v", err)
	}
}

// TestCLIRotateKeepsScope: rotate-key without --scope keeps a read-only
// agent read-only; list-agents shows each key's id and scope.
func TestCLIRotateKeepsScope(t *testing.T) {
	dir := t.TempDir()
	var box hub.BoxInfo
	adminOK(t, dir, &box, "create-box", "--name", "demo")
	var reader, writer hub.AgentInfo
	adminOK(t, dir, &reader, "create-agent", "--box", box.BoxID, "--name", "reader", "--scope", "coordination:read")
	adminOK(t, dir, &writer, "create-agent", "--box", box.BoxID, "--name", "writer")
	var rotated, widened hub.AgentInfo
	adminOK(t, dir, &rotated, "rotate-key", "--agent", reader.AgentID)
	if len(rotated.Keys) != 1 || rotated.Keys[0].Scope != hub.ScopeRead {
		t.Fatalf("rotate-key of a read-only agent = keys %+v, want one coordination:read key", rotated.Keys)
	}
	var list struct {
		Agents []hub.AgentInfo `json:"agents"`
	}
	adminOK(t, dir, &list, "list-agents", "--box", box.BoxID)
	want := map[string]hub.KeyInfo{reader.AgentID: rotated.Keys[0], writer.AgentID: {KeyID: writer.KeyIDs[0], Scope: hub.ScopeWrite}}
	for _, a := range list.Agents {
		if len(a.Keys) != 1 || a.Keys[0] != want[a.AgentID] {
			t.Errorf("list-agents: %s keys %+v, want [%+v]", a.Name, a.Keys, want[a.AgentID])
		}
	}
	h, closeStore := openHub(t, dir)
	cr := primed(t, h, rotated.BoxKey)
	_, err := h.CheckpointSave(t.Context(), cr, hub.CheckpointSaveInput{Mutation: hub.Mutation{IdempotencyKey: "cp-1"}, BodyMD: "x"})
	if apperr.Normalize(err).Code != apperr.AuthFailed {
		t.Errorf("checkpoint_save with the rotated read-only key: %v, want AUTH_FAILED", err)
	}
	closeStore()
	adminOK(t, dir, &widened, "rotate-key", "--agent", reader.AgentID, "--scope", "coordination:write")
	if len(widened.Keys) != 1 || widened.Keys[0].Scope != hub.ScopeWrite {
		t.Errorf("rotate-key --scope coordination:write = keys %+v, want one write key", widened.Keys)
	}
}

// TestVersion: agentbox version prints the version the server reports.
func TestVersion(t *testing.T) {
	r := agentbox(t, t.TempDir(), "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agentbox 0.") {
		t.Errorf("agentbox version = exit %d, %q", r.code, r.stdout)
	}
}

// TestServeBusyPort: a busy address fails naming the flag that moves it.
func TestServeBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := agentbox(t, t.TempDir(), "serve", "--addr", ln.Addr().String())
	if r.code != 1 || !strings.Contains(r.stderr, "--addr") || !strings.Contains(r.stderr, "make run ADDR=") || !strings.Contains(r.stderr, ln.Addr().String()) {
		t.Errorf("serve on a busy port = exit %d, stderr %q; want exit 1 naming the address, --addr and make run ADDR=", r.code, r.stderr)
	}
}

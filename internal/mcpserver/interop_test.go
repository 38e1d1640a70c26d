package mcpserver_test

// Interop with the official TypeScript clients: the SDK most agent hosts
// are built on and the MCP Inspector CLI. Both validate what the go-sdk
// client does not (structuredContent against outputSchema, error results
// included), so only they can catch a result a TypeScript host throws away.
// The Node packages are pinned in testdata/tsclient/package-lock.json.

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/agentbox/agentbox/internal/hub"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsClientDir returns the Node project of the interop tests, failing with
// an install hint when Node or its packages are missing.
func tsClientDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH: install Node.js 20 or later; the TypeScript interop tests need it")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "tsclient"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"sdk", "inspector"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
			t.Fatalf("@modelcontextprotocol/%s is not installed: run `npm ci --prefix %s` (make test does it)", pkg, dir)
		}
	}
	return dir
}

// runNode runs a command in dir with a deadline and returns its stdout.
func runNode(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && stderr.Len() > 0 && !strings.Contains(stderr.String(), "tool_is_error") {
		t.Logf("%s stderr:\n%s", name, stderr.String())
	}
	return string(out), err
}

// interopCtx prepares a room with alice and bob for the fixtures.
func (e *env) interopCtx(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	room := e.roomOfAliceAndBob("interop")
	if _, err := e.hub.Admin().SetDirectoryListed(ctx, e.bob.AgentID, true); err != nil {
		t.Fatalf("SetDirectoryListed: %v", err)
	}
	// Bob asks alice for a response in a DM with a file, so that alice has
	// an inbox row, a request to answer and a file to report on.
	pb, err := e.hub.Prime(ctx, hub.Credentials{Bearer: e.bob.BoxKey}, hub.PrimeInput{})
	if err != nil {
		t.Fatalf("Prime(bob): %v", err)
	}
	bob := hub.Credentials{Bearer: e.bob.BoxKey, SessionID: pb.SessionID, Transport: "rest"}
	sent, err := e.hub.MessageSend(ctx, bob, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "interop-ask"},
		Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: e.alice.AgentID},
		BodyMD:      "Please check the spec.", Requests: []string{e.alice.AgentID},
		Files: []hub.FileRefInput{{URL: "https://example.com/spec.md", DisplayName: "spec.md", VersionLabel: "v1"}}})
	if err != nil {
		t.Fatalf("MessageSend(bob to alice): %v", err)
	}
	got, err := e.hub.MessageGet(ctx, bob, hub.MessageGetInput{MessageID: sent.MessageID})
	if err != nil || len(got.Message.Files) != 1 {
		t.Fatalf("MessageGet(bob's DM) = %+v, %v; want its file", got, err)
	}
	return map[string]string{"alice_key": e.alice.BoxKey, "bob_key": e.bob.BoxKey, "bob_id": e.bob.AgentID, "room_id": room.RoomID,
		"request_id": sent.MessageID, "file_id": got.Message.Files[0].FileID}
}

// TestTypeScriptSDKInterop calls every tool in tools/list through the
// official TypeScript SDK client, once to succeed and once to fail, and
// requires every failure to arrive as an isError result with the whole
// envelope rather than as an exception (testdata/tsclient/interop.mjs).
func TestTypeScriptSDKInterop(t *testing.T) {
	t.Parallel() // its own server and client processes
	dir := tsClientDir(t)
	e := newEnv(t)
	c, err := json.Marshal(e.interopCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	out, err := runNode(t, dir, []string{"AGENTBOX_URL=" + e.url, "AGENTBOX_CTX=" + string(c)}, "node", "interop.mjs")
	var report struct {
		Counts   struct{ Tools, OK, Errors int }
		Problems []string
	}
	if jerr := json.Unmarshal([]byte(lastLine(out)), &report); jerr != nil {
		t.Fatalf("node interop.mjs: %v; output %q", err, out)
	}
	for _, p := range report.Problems {
		t.Error(p)
	}
	if err != nil && len(report.Problems) == 0 {
		t.Errorf("node interop.mjs: %v", err)
	}
	if n := len(e.reg.Tools()); report.Counts.Tools != n || report.Counts.OK != n || report.Counts.Errors != n+1 {
		t.Errorf("TypeScript SDK: %d tools listed, %d succeeded, %d errors seen as results; want %d, %d, %d",
			report.Counts.Tools, report.Counts.OK, report.Counts.Errors, n, n, n+1)
	}
	t.Logf("TypeScript SDK 1.32.2: %d tools, %d successes, %d error results (none thrown)", report.Counts.Tools, report.Counts.OK, report.Counts.Errors)
}

// runInspector runs one Inspector CLI process on the endpoint with key
// and returns its one JSON result. It exits 5 (tool_is_error) after
// printing an isError result, which is how a failed tool must arrive.
// inspectorResumes runs the Inspector CLI (with era's arguments first)
// three times, one process each: agent_prime, then checkpoint_get passing
// the session by resume(session id), then checkpoint_get without it — a
// new process is a new, unprimed session, whose error reaches the
// Inspector as a result, not as a thrown error. label names the runs in
// failures.
func inspectorResumes(t *testing.T, label string, era []string, resume func(sid string) []string) {
	t.Helper()
	dir := tsClientDir(t)
	e := newEnv(t)
	inspector := func(args ...string) map[string]any {
		t.Helper()
		return runInspector(t, dir, e.url, e.alice.BoxKey, append(era, args...)...)
	}
	prime := inspector("--method", "tools/call", "--tool-name", "agent_prime")
	sid, _ := structuredOf(prime)["session_id"].(string)
	if prime["isError"] == true || sid == "" {
		t.Fatalf("%s agent_prime: %v, want a session_id", label, prime)
	}
	got := inspector(append([]string{"--method", "tools/call", "--tool-name", "checkpoint_get"}, resume(sid)...)...)
	if got["isError"] == true || structuredOf(got)["checkpoint"] == nil {
		t.Errorf("%s checkpoint_get with the session in a new process: %v, want the checkpoint", label, got)
	}
	unprimed := inspector("--method", "tools/call", "--tool-name", "checkpoint_get")
	if unprimed["isError"] != true || errCode(unprimed) != "NOT_PRIMED" {
		t.Errorf("%s checkpoint_get without a session: %v, want isError NOT_PRIMED", label, unprimed)
	}
}

func runInspector(t *testing.T, dir, url, key string, args ...string) map[string]any {
	t.Helper()
	base := []string{filepath.Join("node_modules", ".bin", "mcp-inspector"), "--cli", url + "/mcp", "--transport", "http",
		"--header", "Authorization: Bearer " + key}
	out, err := runNode(t, dir, nil, "node", append(base, args...)...)
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 5) {
		t.Fatalf("inspector %s: %v; output %s", strings.Join(args, " "), err, out)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("inspector %s: output %q is not one JSON result: %v", strings.Join(args, " "), out, err)
	}
	return res
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestInspectorCLIOneShot drives the MCP Inspector CLI the way a developer
// does: every run is a new process and a new MCP session, so the durable
// session agent_prime returns travels in the Agentbox-Session header.
func TestInspectorCLIOneShot(t *testing.T) {
	t.Parallel() // its own server and client processes
	inspectorResumes(t, "inspector", nil, func(sid string) []string { return []string{"--header", "Agentbox-Session: " + sid} })
	t.Logf("Inspector CLI 2.12.0: agent_prime, then checkpoint_get in a new process with Agentbox-Session, then NOT_PRIMED as a result")
}

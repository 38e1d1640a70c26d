package admincli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/reqlog/reqlogtest"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
)

// result is one CLI run.
type result struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := admincli.Main(t.Context(), args, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// ok runs a command that must succeed and decodes its one JSON document.
func ok(t *testing.T, v any, args ...string) string {
	t.Helper()
	r := cli(t, args...)
	if r.code != admincli.ExitOK || r.stderr != "" {
		t.Fatalf("admin %s: exit %d, stderr %s; want exit 0 and no stderr", strings.Join(args, " "), r.code, r.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("admin %s: stdout is not JSON: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("admin %s: stdout holds more than one JSON document:\n%s", strings.Join(args, " "), r.stdout)
	}
	return r.stdout
}

type errorDoc struct {
	Error apperr.Envelope `json:"error"`
}

// fails runs a command that must fail with exit code and error code.
func fails(t *testing.T, exit int, code apperr.Code, args ...string) {
	t.Helper()
	r := cli(t, args...)
	if r.code != exit {
		t.Fatalf("admin %s: exit %d (stderr %s), want %d", strings.Join(args, " "), r.code, r.stderr, exit)
	}
	if r.stdout != "" {
		t.Errorf("admin %s: stdout %q on failure, want nothing", strings.Join(args, " "), r.stdout)
	}
	var doc errorDoc
	if err := json.Unmarshal([]byte(r.stderr), &doc); err != nil {
		t.Fatalf("admin %s: stderr is not one JSON document: %v\n%s", strings.Join(args, " "), err, r.stderr)
	}
	if doc.Error.Code != code || doc.Error.Message == "" || doc.Error.NextAction == "" {
		t.Errorf("admin %s: error %+v, want code %s with message and next_action", strings.Join(args, " "), doc.Error, code)
	}
}

// env is one way of reaching a store: the CLI's target flags, and a way for
// the test to authenticate with a key against the same data.
type env struct {
	flags []string
	// auth primes with key and returns "" on success or the error code.
	auth func(t *testing.T, key string) apperr.Code
	// after runs checks once the scenario is done.
	after func(t *testing.T)
}

func primeOn(t *testing.T, st store.Store, key string) apperr.Code {
	t.Helper()
	h := hub.New(st, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	_, err := h.Prime(t.Context(), hub.Credentials{Bearer: key, Transport: "rest"}, hub.PrimeInput{})
	if err != nil {
		return apperr.Normalize(err).Code
	}
	return ""
}

// openData opens the store of data directory dir; the caller closes it.
func openData(t *testing.T, dir string) *bolt.Store {
	t.Helper()
	st, err := bolt.Open(filepath.Join(dir, admincli.DBName), bolt.Options{})
	if err != nil {
		t.Fatalf("bolt.Open: %v", err)
	}
	return st
}

// boltEnv: no server runs, the CLI opens the store file itself.
func boltEnv(t *testing.T) env {
	dir := filepath.Join(t.TempDir(), "data")
	return env{
		flags: []string{"--data", dir},
		auth: func(t *testing.T, key string) apperr.Code {
			st := openData(t, dir)
			defer st.Close()
			return primeOn(t, st, key)
		},
		after: func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, admincli.SocketName)); !os.IsNotExist(err) {
				t.Errorf("a socket exists without a server: %v", err)
			}
		},
	}
}

// socketEnv: a server holds the store's exclusive lock, so every command
// must travel over its admin socket; auth goes through its REST endpoint.
func socketEnv(t *testing.T) env {
	dir := filepath.Join(t.TempDir(), "data")
	logs := &reqlogtest.Buffer{}
	srv, err := server.Start(server.Config{Addr: "127.0.0.1:0", DataDir: dir,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatalf("server.Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return env{
		flags: []string{"--data", dir},
		auth: func(t *testing.T, key string) apperr.Code {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/v1/agent/prime", strings.NewReader("{}"))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("POST /v1/agent/prime: %v", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode == http.StatusOK {
				return ""
			}
			var doc errorDoc
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatalf("POST /v1/agent/prime: status %d, body not an error document: %s", resp.StatusCode, body)
			}
			return doc.Error.Code
		},
		after: func(t *testing.T) {
			// Proof that the commands went through the socket: the server
			// logged them (and never their arguments or keys).
			l := logs.String()
			if n := strings.Count(l, `"msg":"admin command"`); n < 5 {
				t.Errorf("server logged %d admin commands, want every command of the scenario:\n%s", n, l)
			}
			if strings.Contains(l, "abk_") || strings.Contains(l, "instructions_md") {
				t.Errorf("server log contains a key or a profile document:\n%s", l)
			}
		},
	}
}

// dynamoEnv: the CLI targets a DynamoDB table on an in-process minidyn,
// creating it on first use.
func dynamoEnv(t *testing.T) env {
	// minidyn checks no signature, but a client for an endpoint must find
	// credentials (dynamo.ErrNoCredentials).
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	client, endpoint := dynamotest.Start(t)
	table := dynamotest.TableName(t, "agentbox-cli-")
	return env{
		flags: []string{"--table", table, "--endpoint", endpoint, "--create-table"},
		auth: func(t *testing.T, key string) apperr.Code {
			return primeOn(t, dynamo.New(client, table, dynamo.Options{}), key)
		},
		after: func(*testing.T) {},
	}
}

// targets are the stores an owner's commands can reach: the embedded store
// opened directly, the same store held by a running server (through the
// admin socket), and a DynamoDB table.
var targets = []struct {
	name string
	env  func(*testing.T) env
}{
	{"Bolt", boltEnv},
	{"ServerSocket", socketEnv},
	{"DynamoDB", dynamoEnv},
}

// TestAdminScenario runs the owner's whole flow against every target: the
// embedded store opened directly, the same store held by a running server
// (through the admin socket), and a DynamoDB table.
func TestAdminScenario(t *testing.T) {
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			with := func(args ...string) []string { return append(args, e.flags...) }

			var box hub.BoxInfo
			ok(t, &box, with("create-box", "--name", "demo")...)
			if box.BoxID == "" || box.Name != "demo" {
				t.Fatalf("create-box = %+v, want a box_id and name demo", box)
			}

			var alice hub.AgentInfo
			ok(t, &alice, with("create-agent", "--box", box.BoxID, "--name", "alice", "--role", "reviewer")...)
			if alice.BoxID != box.BoxID || alice.AgentID == "" || !strings.HasPrefix(alice.BoxKey, "abk_") {
				t.Fatalf("create-agent = %+v, want box_id, agent_id and an abk_ box_key", alice)
			}
			if got := e.auth(t, alice.BoxKey); got != "" {
				t.Fatalf("prime with the issued key: %s, want success", got)
			}

			// The key is shown once: listing never includes it.
			var list struct {
				BoxID  string           `json:"box_id"`
				Agents []*hub.AgentInfo `json:"agents"`
			}
			raw := ok(t, &list, with("list-agents", "--box", box.BoxID)...)
			if len(list.Agents) != 1 || list.Agents[0].AgentID != alice.AgentID || list.Agents[0].Role != "reviewer" {
				t.Fatalf("list-agents = %s, want alice (reviewer) only", raw)
			}
			if strings.Contains(raw, "box_key") || strings.Contains(raw, alice.BoxKey) {
				t.Errorf("list-agents printed key material:\n%s", raw)
			}

			// Rotation invalidates the old key and issues a working one.
			var rotated hub.AgentInfo
			ok(t, &rotated, with("rotate-key", "--agent", alice.AgentID)...)
			if rotated.BoxKey == "" || rotated.BoxKey == alice.BoxKey {
				t.Fatalf("rotate-key returned key %q, want a new key", rotated.BoxKey)
			}
			if got := e.auth(t, alice.BoxKey); got != apperr.AuthFailed {
				t.Errorf("prime with the rotated-out key: %q, want AUTH_FAILED", got)
			}
			if got := e.auth(t, rotated.BoxKey); got != "" {
				t.Errorf("prime with the new key: %q, want success", got)
			}

			// set-profile reads the file on the CLI side, also when the
			// command travels over the socket.
			profile := filepath.Join(t.TempDir(), "profile.json")
			if err := os.WriteFile(profile, []byte(`{"role":"lead","instructions_md":"Review every PR.","payload":{"team":"infra"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			var prof hub.AgentInfo
			ok(t, &prof, with("set-profile", "--agent", alice.AgentID, "--file", profile)...)
			if prof.Role != "lead" || prof.ProfileVersion != 2 {
				t.Errorf("set-profile = role %q version %d, want lead and 2", prof.Role, prof.ProfileVersion)
			}

			// A profile payload passes the one validator of stored JSON:
			// credential-like fields are refused.
			secretProfile := filepath.Join(t.TempDir(), "secret.json")
			if err := os.WriteFile(secretProfile, []byte(`{"payload":{"api_key":"x"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			fails(t, admincli.ExitError, apperr.InvalidArgument, with("set-profile", "--agent", alice.AgentID, "--file", secretProfile)...)

			// Deactivation locks the agent out with a working key;
			// reactivation lets it back in. Ids are case-insensitive.
			var deact hub.AgentInfo
			ok(t, &deact, with("deactivate-agent", "--agent", strings.ToUpper(alice.AgentID))...)
			if deact.Status != "inactive" || deact.AgentID != alice.AgentID {
				t.Errorf("deactivate-agent = %+v, want alice inactive", deact)
			}
			if got := e.auth(t, rotated.BoxKey); got != apperr.AuthFailed {
				t.Errorf("prime while deactivated: %q, want AUTH_FAILED", got)
			}
			var react hub.AgentInfo
			ok(t, &react, with("reactivate-agent", "--agent", alice.AgentID)...)
			if react.Status != "active" {
				t.Errorf("reactivate-agent = %+v, want alice active", react)
			}
			if got := e.auth(t, rotated.BoxKey); got != "" {
				t.Errorf("prime after reactivation: %q, want success", got)
			}

			// Revoking every key locks the agent out.
			var revoked hub.AgentInfo
			ok(t, &revoked, with("revoke-key", "--agent", alice.AgentID)...)
			if len(revoked.KeyIDs) != 0 || revoked.BoxKey != "" {
				t.Errorf("revoke-key = %+v, want no keys and no box_key", revoked)
			}
			if got := e.auth(t, rotated.BoxKey); got != apperr.AuthFailed {
				t.Errorf("prime with a revoked key: %q, want AUTH_FAILED", got)
			}

			// Domain failures: exit 1 with the envelope on stderr.
			fails(t, admincli.ExitError, apperr.NotFoundOrForbidden,
				with("create-agent", "--box", "00000000-0000-4000-8000-000000000000", "--name", "bob")...)
			fails(t, admincli.ExitError, apperr.InvalidArgument, with("rotate-key", "--agent", "not-a-uuid")...)
			fails(t, admincli.ExitError, apperr.LimitExceeded, with("create-box", "--name", strings.Repeat("x", 81))...)

			e.after(t)
		})
	}
}

// TestUsageErrors: a command line the CLI cannot run exits 2 with an
// INVALID_ARGUMENT envelope on stderr and touches no store.
func TestUsageErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"NoCommand", nil},
		{"UnknownCommand", []string{"make-coffee"}},
		{"MissingRequiredFlag", []string{"create-agent", "--name", "bob"}},
		{"EmptyRequiredFlag", []string{"create-box", "--name", ""}},
		{"UnknownFlag", []string{"create-box", "--name", "x", "--colour", "red"}},
		{"FlagOfAnotherCommand", []string{"create-box", "--name", "x", "--agent", "a"}},
		{"PositionalArgument", []string{"create-box", "--name", "x", "extra"}},
		{"DataAndTable", []string{"create-box", "--name", "x", "--data", dir, "--table", "t"}},
		{"CreateTableWithoutEndpoint", []string{"create-box", "--name", "x", "--table", "t", "--create-table"}},
		{"EndpointWithoutTable", []string{"create-box", "--name", "x", "--endpoint", "http://127.0.0.1:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fails(t, admincli.ExitUsage, apperr.InvalidArgument, append(tc.args, "--data", dir)...)
		})
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a usage error created the data directory (stat: %v)", err)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		r := cli(t, args...)
		if r.code != admincli.ExitOK || r.stderr != "" {
			t.Errorf("admin %v: exit %d stderr %q, want 0 and nothing", args, r.code, r.stderr)
		}
		for _, c := range admincli.Commands() {
			if !strings.Contains(r.stdout, c.Name) {
				t.Errorf("admin %v: usage does not mention %s", args, c.Name)
			}
		}
	}
}

// TestCommandHelp: 'admin <command> --help' and 'admin help <command>'
// print that command's help alone: its flags, none of another command's.
func TestCommandHelp(t *testing.T) {
	for _, c := range admincli.Commands() {
		for _, args := range [][]string{{c.Name, "--help"}, {c.Name, "-h"}, {"help", c.Name}} {
			r := cli(t, args...)
			if r.code != admincli.ExitOK || r.stderr != "" {
				t.Fatalf("admin %v: exit %d stderr %q, want 0 and nothing", args, r.code, r.stderr)
			}
			if !strings.HasPrefix(r.stdout, "Usage: agentbox admin [target flags] "+c.Name) {
				t.Errorf("admin %v = %q, want the usage of %s", args, r.stdout, c.Name)
			}
			for _, f := range c.Flags {
				if !strings.Contains(r.stdout, "--"+f.Name) {
					t.Errorf("admin %v does not describe --%s", args, f.Name)
				}
			}
			for _, other := range admincli.Commands() {
				if other.Name != c.Name && strings.Contains(r.stdout, other.Summary) {
					t.Errorf("admin %v also prints %s's help", args, other.Name)
				}
			}
		}
	}
	fails(t, admincli.ExitUsage, apperr.InvalidArgument, "help", "make-coffee")
}

func TestSetProfileUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	fails(t, admincli.ExitError, apperr.InvalidArgument,
		"set-profile", "--agent", "00000000-0000-4000-8000-000000000000", "--file", filepath.Join(dir, "missing.json"), "--data", dir)
}

// TestLockedWithoutServer: another process holds the store and nobody
// answers on the socket (another CLI command, a server starting up). The
// CLI waits a bounded time and then says so; it never hangs.
func TestLockedWithoutServer(t *testing.T) {
	defer admincli.SetLockWait(0)()
	dir := t.TempDir()
	st := openData(t, dir)
	defer st.Close()
	fails(t, admincli.ExitError, apperr.TemporarilyUnavailable, "create-box", "--name", "x", "--data", dir)
}

// TestLockedWithStaleSocket: a socket file left by a killed server does not
// fool the CLI into reporting a server error.
func TestLockedWithStaleSocket(t *testing.T) {
	defer admincli.SetLockWait(0)()
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, admincli.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	st := openData(t, dir)
	defer st.Close()
	fails(t, admincli.ExitError, apperr.TemporarilyUnavailable, "create-box", "--name", "x", "--data", dir)
}

// TestListenReplacesStaleSocket: a server restarted after a crash takes
// over the socket path instead of failing with "address in use".
func TestListenReplacesStaleSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, admincli.SocketName)
	old, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	old.(*net.UnixListener).SetUnlinkOnClose(false)
	old.Close()

	ln, err := admincli.Listen(dir)
	if err != nil {
		t.Fatalf("Listen(%s) over a stale socket: %v", dir, err)
	}
	defer ln.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with permissions 0600", fi.Mode())
	}
}

func TestListenRefusesLongPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if _, err := admincli.Listen(dir); err == nil || !strings.Contains(err.Error(), "shorter --data") {
		t.Errorf("Listen(<long path>) error = %v, want one that suggests a shorter --data", err)
	}
}

// TestSocketHandlerRejects covers what only a misbehaving or newer client
// can send: the server validates every request itself.
func TestSocketHandlerRejects(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), admincli.DBName), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := admincli.SocketHandler(hub.New(st, hub.Options{}).Admin(), slog.New(slog.DiscardHandler))
	for _, tc := range []struct {
		name, method, body string
		status             int
	}{
		{"NotJSON", http.MethodPost, "create-box", http.StatusBadRequest},
		{"UnknownField", http.MethodPost, `{"command":"create-box","args":{"name":"x"},"as":"root"}`, http.StatusBadRequest},
		{"UnknownCommand", http.MethodPost, `{"command":"drop-table","args":{}}`, http.StatusUnprocessableEntity},
		{"UnknownArg", http.MethodPost, `{"command":"create-box","args":{"name":"x","box":"y"}}`, http.StatusUnprocessableEntity},
		{"MissingArg", http.MethodPost, `{"command":"create-box","args":{}}`, http.StatusUnprocessableEntity},
		{"WrongMethod", http.MethodGet, "", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/admin", strings.NewReader(tc.body)))
			if rec.Code != tc.status {
				t.Fatalf("%s /admin %s: status %d, want %d", tc.method, tc.body, rec.Code, tc.status)
			}
			if tc.status == http.StatusMethodNotAllowed {
				return
			}
			var res admincli.Response
			if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Error == nil || res.Error.Code != apperr.InvalidArgument {
				t.Errorf("POST /admin %s: body %s, want an INVALID_ARGUMENT error", tc.body, rec.Body)
			}
		})
	}
}

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/oauth"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

func start(t *testing.T, dir string) *server.Server {
	t.Helper()
	s, err := server.Start(server.Config{Addr: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatalf("Start(%s): %v", dir, err)
	}
	return s
}

func TestStartServesAndShutsDown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fresh", "data")
	s := start(t, dir)

	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v, mode %v; want it created 0700", err, fi.Mode().Perm())
	}
	sock, err := os.Stat(s.SocketPath())
	if err != nil || sock.Mode().Type() != os.ModeSocket || sock.Mode().Perm() != 0o600 {
		t.Errorf("admin socket: %v %v; want a socket with mode 0600", err, sock.Mode())
	}

	resp, err := http.Get(s.URL() + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	var body map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || body["status"] != "ok" {
		t.Errorf("GET /healthz = %d %v, want 200 {status: ok}", resp.StatusCode, body)
	}

	// The REST and MCP planes are mounted: an unauthenticated call gets a
	// JSON answer from them, not the mux's plain-text 404.
	for _, tc := range []struct{ method, path string }{{"POST", "/v1/agent/prime"}, {"POST", "/mcp"}} {
		req, _ := http.NewRequest(tc.method, s.URL()+tc.path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
			t.Errorf("%s %s = %d %q, want the transport's JSON answer", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}

	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := os.Stat(s.SocketPath()); !os.IsNotExist(err) {
		t.Errorf("admin socket still exists after Shutdown (stat: %v)", err)
	}
	// The store's lock is released: the data can be opened (by the CLI,
	// or a restarted server).
	wantStoreFree(t, dir, "Shutdown")
}

// wantStoreFree fails t unless the store of data directory dir can be
// opened, its lock released; after names what came before, in the failure.
func wantStoreFree(t *testing.T, dir, after string) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(dir, admincli.DBName), bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("bolt.Open after %s: %v", after, err)
	}
	st.Close()
}

// TestSecondServerOnSameData: two servers on one data directory would
// fight over the socket; the second fails on the store lock first, and the
// first keeps its socket.
func TestSecondServerOnSameData(t *testing.T) {
	dir := t.TempDir()
	s := start(t, dir)
	defer s.Shutdown(context.Background())

	_, err := server.Start(server.Config{Addr: "127.0.0.1:0", DataDir: dir, LockTimeout: time.Millisecond})
	if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("second Start on %s: %v, want bolt.ErrLocked", dir, err)
	}
	if _, err := os.Stat(s.SocketPath()); err != nil {
		t.Errorf("the first server lost its socket: %v", err)
	}
}

// TestStaleSocketReplaced: a socket file left behind by a killed server
// does not stop the next start.
func TestStaleSocketReplaced(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, admincli.SocketName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, dir)
	defer s.Shutdown(context.Background())
	fi, err := os.Stat(s.SocketPath())
	if err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Errorf("admin socket after start over a stale file: %v %v", err, fi.Mode())
	}
}

func TestStartFailsOnBusyAddress(t *testing.T) {
	dir := t.TempDir()
	s := start(t, dir)
	defer s.Shutdown(context.Background())
	addr := strings.TrimPrefix(s.URL(), "http://")

	other := t.TempDir()
	if _, err := server.Start(server.Config{Addr: addr, DataDir: other}); err == nil {
		t.Fatalf("Start on busy address %s succeeded", addr)
	}
	// The failed start released its store: the directory is usable.
	wantStoreFree(t, other, "a failed Start")
}

// TestRunPrintsURLs: Run announces both endpoints on its output, then shuts
// down when its context ends.
func TestRunPrintsURLs(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // Run still starts, prints, and then shuts down at once.
	var out bytes.Buffer
	if err := server.Run(ctx, server.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir()}, &out); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, want := range []string{"http://127.0.0.1:", "/mcp\n", "/v1\n", admincli.SocketName} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Run printed %q, want it to contain %q", out.String(), want)
		}
	}
}

// TestStartWithOAuth: Config.OAuth puts the resource server in front of
// both planes: the metadata is served, and MCP without credentials is
// challenged. Nothing is fetched from the issuer until a token comes.
func TestStartWithOAuth(t *testing.T) {
	s, err := server.Start(server.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(),
		OAuth: &oauth.Config{Issuer: "http://127.0.0.1:1", Audience: "http://agentbox.example/mcp"}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer s.Shutdown(context.Background())
	resp, err := http.Get(s.URL() + oauth.WellKnown + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET the metadata = %d, want 200", resp.StatusCode)
	}
	req, _ := http.NewRequest("POST", s.URL()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("POST /mcp without credentials = %d %q, want the 401 challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

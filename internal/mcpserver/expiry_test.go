package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestSessionExpiryEverySDK: with each official client a host is built on
// — the go-sdk 1.8.0, the TypeScript SDK 1.32.2 and the TypeScript 2.x
// client — a session that idles past its window reaches the model as an
// isError NOT_PRIMED result on the next call (none of them re-initializes
// after a 404, so a 404 would strand the agent until the host restarts),
// and agent_prime on the same client, with no reconnect, makes the next
// call succeed. The server's clock is moved, never waited for.
func TestSessionExpiryEverySDK(t *testing.T) {
	t.Run("go-sdk", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		cs, rec := e.connect(t, e.alice.BoxKey)
		first := wantOK[hub.PrimeOutput](t, "agent_prime", call(t, cs, "agent_prime", nil))
		wantOK[hub.CheckpointOutput](t, "checkpoint_get", call(t, cs, "checkpoint_get", nil))
		e.clock.Advance(time.Duration(e.hub.Limits().SessionIdleSeconds+1) * time.Second)

		env := wantCode(t, "checkpoint_get after the idle window", call(t, cs, "checkpoint_get", nil), apperr.NotPrimed)
		if !strings.Contains(env.NextAction, "agent_prime") {
			t.Errorf("NOT_PRIMED next_action %q does not say to call agent_prime", env.NextAction)
		}
		again := wantOK[hub.PrimeOutput](t, "agent_prime after the expiry", call(t, cs, "agent_prime", nil))
		if again.SessionID != first.SessionID || again.SessionID != cs.ID() {
			t.Errorf("agent_prime after the expiry: session %q, want the connection's %q bound again", again.SessionID, cs.ID())
		}
		wantOK[hub.CheckpointOutput](t, "checkpoint_get after priming again", call(t, cs, "checkpoint_get", nil))
		inits := 0
		for _, x := range rec.exchanges() {
			if x.rpcMethod == "initialize" {
				inits++
			}
		}
		if inits != 1 {
			t.Errorf("%d initialize requests, want 1 (no reconnect)", inits)
		}
	})
	for _, c := range []struct{ name, mode, pkg string }{
		{"typescript-sdk-1.x", "sdk", "sdk"},
		{"typescript-client-2.x", "client", "client"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := tsClientDir(t)
			pkg, err := os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", c.pkg, "package.json"))
			var manifest struct{ Version string }
			if err != nil || json.Unmarshal(pkg, &manifest) != nil {
				t.Fatalf("@modelcontextprotocol/%s is not installed: run `npm ci --prefix %s` (make test does it)", c.pkg, dir)
			}
			e := newEnv(t)
			report := e.runExpiryScript(t, dir, c.mode)
			for _, p := range report.Problems {
				t.Error(p)
			}
			if report.Initializes != 1 || report.Sessions != 1 {
				t.Errorf("%s: %d initialize requests and %d Mcp-Session-Ids, want 1 and 1 (no reconnect)", c.name, report.Initializes, report.Sessions)
			}
			t.Logf("@modelcontextprotocol/%s %s: expiry answered as a NOT_PRIMED result, re-primed on the same connection", c.pkg, manifest.Version)
		})
	}
}

// expiryReport is expiry.mjs's last line.
type expiryReport struct {
	Done        bool
	Problems    []string
	Initializes int
	Sessions    int
}

// runExpiryScript runs testdata/tsclient/expiry.mjs with the given client
// and moves the server's clock past the idle window when the script asks
// ({"step":"idle"}), then lets it go on (a line on its stdin).
func (e *env) runExpiryScript(t *testing.T, dir, mode string) expiryReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "expiry.mjs", mode)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTBOX_URL="+e.url, "AGENTBOX_KEY="+e.alice.BoxKey)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("node expiry.mjs %s: %v", mode, err)
	}
	var report expiryReport
	idled := false
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var msg struct {
			Step string
			expiryReport
		}
		if json.Unmarshal(lines.Bytes(), &msg) != nil {
			t.Logf("expiry.mjs %s: %s", mode, lines.Text())
			continue
		}
		switch {
		case msg.Step == "idle" && !idled:
			idled = true
			e.clock.Advance(time.Duration(e.hub.Limits().SessionIdleSeconds+1) * time.Second)
			if _, err := io.WriteString(stdin, "go\n"); err != nil {
				t.Fatalf("expiry.mjs %s: writing to stdin: %v", mode, err)
			}
		case msg.Done:
			report = msg.expiryReport
			_ = stdin.Close()
		}
	}
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil || !report.Done || !idled {
		t.Fatalf("node expiry.mjs %s: %v (asked for the clock: %t, reported: %t); stderr:\n%s", mode, err, idled, report.Done, stderr.String())
	}
	return report
}

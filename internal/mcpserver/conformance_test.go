package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// conformanceScenarios are the official suite's server scenarios that
// apply to a tools-only server (the others exercise resources, prompts,
// logging, sampling or test tools this server does not have).
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"dns-rebinding-protection",
	"server-sse-multiple-streams",
}

// conformanceCommand is the pinned official suite, run with Node 22 (its
// requirement) fetched by npx.
var conformanceCommand = []string{"npx", "-y", "-p", "node@22", "-p", "@modelcontextprotocol/conformance@0.1.16", "conformance", "server"}

// TestConformanceSuite runs the official MCP conformance suite's server
// scenarios against the endpoint on a loopback port (the DNS-rebinding
// scenario requires one). Every check of every scenario must pass.
func TestConformanceSuite(t *testing.T) {
	t.Parallel() // its own server and client processes
	if _, err := exec.LookPath("npx"); err != nil {
		t.Fatalf("npx is not on PATH: install Node.js 20 or later (npm ships npx); the conformance suite runs through it")
	}
	e := newEnv(t)
	var wg sync.WaitGroup
	for _, scenario := range conformanceScenarios {
		wg.Go(func() {
			out := t.TempDir()
			args := append(conformanceCommand[1:], "--url", e.url+"/mcp", "--scenario", scenario, "-o", out)
			stdout, err := runNode(t, t.TempDir(), nil, conformanceCommand[0], args...)
			checks := readChecks(t, out)
			if len(checks) == 0 {
				t.Errorf("conformance %s: no checks recorded (%v); output:\n%s", scenario, err, stdout)
				return
			}
			var passed int
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS", "INFO":
					passed++
				default:
					t.Errorf("conformance %s: check %s is %s: %s", scenario, c.ID, c.Status, c.ErrorMessage)
				}
			}
			if err != nil {
				t.Errorf("conformance %s: %v", scenario, err)
			}
			t.Logf("conformance %s: %d/%d checks passed", scenario, passed, len(checks))
		})
	}
	wg.Wait()
}

// check is one result line of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// readChecks collects every checks.json the suite wrote under dir.
func readChecks(t *testing.T, dir string) []check {
	t.Helper()
	var all []check
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		var cs []check
		if json.Unmarshal(b, &cs) == nil {
			all = append(all, cs...)
		}
		return nil
	})
	return all
}

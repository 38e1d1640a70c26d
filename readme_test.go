package agentbox_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/docgen"
	"github.com/agentbox/agentbox/internal/registry"
)

// TestReadmeUpToDate fails when the README's generated tables (tools,
// REST errors) differ from the registry and the REST status table. Fix with
// `make readme` (or go test . -update).
func TestReadmeUpToDate(t *testing.T) {
	doc, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := docgen.Update(doc, registry.New())
	if err != nil {
		t.Fatalf("docgen.Update(README.md): %v", err)
	}
	checkGolden(t, "README.md", want, "make readme")
}

// tryItBlocks returns the sh code blocks of the README's "Try it"
// walkthrough, between its try-it markers, in order.
func tryItBlocks(t *testing.T, doc string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "<!-- try-it:begin -->")
	region, _, ok2 := strings.Cut(rest, "<!-- try-it:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md: no <!-- try-it:begin --> ... <!-- try-it:end --> region")
	}
	var blocks []string
	for {
		_, after, found := strings.Cut(region, "```sh\n")
		if !found {
			break
		}
		block, tail, closed := strings.Cut(after, "\n```")
		if !closed {
			t.Fatal("README.md: an unclosed sh block in Try it")
		}
		blocks = append(blocks, block+"\n")
		region = tail
	}
	if len(blocks) < 5 {
		t.Fatalf("README.md: Try it has %d sh blocks, want the whole loop", len(blocks))
	}
	return blocks
}

// TestReadmeTryIt runs the README's "Try it" as written: the blocks in
// order in one bash (set -euo pipefail: any failing command or call fails
// the test) at a directory holding bin/agentbox, against `agentbox serve`
// on its default --data, with only the port changed. Every "# ⇒ LINE"
// comment must be a line of the output of the command above it, in order.
func TestReadmeTryIt(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's Try it needs %s: install it (apt-get install -y %s)", tool, tool)
		}
	}
	doc, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := tryItBlocks(t, string(doc))

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "agentbox")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/agentbox").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", ".agentbox")
	srv.Dir = dir
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var serveLog strings.Builder
	srv.Stderr = &serveLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "MCP:   http://"); ok {
				addr <- strings.TrimSuffix(u, "/mcp")
			}
		}
	}()
	var host string
	select {
	case host = <-addr:
	case <-time.After(60 * time.Second):
		t.Fatalf("agentbox serve did not announce its address; stderr:\n%s", serveLog.String())
	}

	// One script: a marker line before each block, so that output and
	// failures are traced to their block.
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		fmt.Fprintf(&script, "echo '@@block %d'\n%s", i, strings.ReplaceAll(b, "127.0.0.1:8787", host))
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	outputs := strings.Split(string(out), "@@block ")
	if err != nil {
		last := outputs[len(outputs)-1]
		n, _, _ := strings.Cut(last, "\n")
		t.Fatalf("Try it failed in block %s: %v\n--- block:\n%s\n--- its output:\n%s\n--- server log:\n%s", n, err, blocks[atoi(n)], last, serveLog.String())
	}
	if len(outputs) != len(blocks)+1 {
		t.Fatalf("Try it printed %d block markers, want %d:\n%s", len(outputs)-1, len(blocks), out)
	}
	for i, b := range blocks {
		got := strings.Split(outputs[i+1], "\n")[1:]
		for _, line := range strings.Split(b, "\n") {
			want, ok := strings.CutPrefix(strings.TrimSpace(line), "# ⇒ ")
			if !ok {
				continue
			}
			at := slices.Index(got, want)
			if at < 0 {
				t.Errorf("Try it block %d: no output line %q (in order); the block printed:\n%s", i, want, outputs[i+1])
				break
			}
			got = got[at+1:]
		}
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return n
}

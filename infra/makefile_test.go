package infra_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMakefileBuildsEveryFunction checks the Makefile's SAM hook against
// template.yaml, the way `sam build` uses it (BuildMethod: makefile, one
// `make build-<LogicalId> ARTIFACTS_DIR=…` process per build): every
// function of the template has a rule, and the rules build the one binary
// once and only copy it afterwards. The real build is for this machine's
// architecture (LAMBDA_GOARCH) so that the Go build cache serves it.
func TestMakefileBuildsEveryFunction(t *testing.T) {
	// Read here, not only by make, so that go test's result cache is
	// invalidated when the Makefile changes.
	if mk, err := os.ReadFile("../Makefile"); err != nil || !bytes.Contains(mk, []byte("build-%Function:")) {
		t.Fatalf("../Makefile has no build-%%Function rule (%v)", err)
	}
	root := loadTemplate(t)
	var ids []string
	for _, res := range pairs(get(root, "Resources")) {
		if str(get(res.val, "Type")) == "AWS::Serverless::Function" {
			ids = append(ids, res.key)
		}
	}
	if len(ids) < 2 {
		t.Fatalf("template.yaml has %d functions; want every tool's and MCP's", len(ids))
	}

	buildDir := t.TempDir()
	makeRule := func(dryRun bool, id, artifacts string) string {
		t.Helper()
		args := []string{"-C", "..", "--no-print-directory", "build-" + id,
			"ARTIFACTS_DIR=" + artifacts, "BUILD_DIR=" + buildDir, "LAMBDA_GOARCH=" + runtime.GOARCH}
		if dryRun {
			args = append([]string{"-n"}, args...)
		}
		out, err := exec.Command("make", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	copyLine := "cp " + filepath.Join(buildDir, "bootstrap")
	for _, id := range ids {
		if out := makeRule(true, id, "/artifacts"); !strings.Contains(out, copyLine+" /artifacts/bootstrap") {
			t.Errorf("make -n build-%s does not copy the one binary:\n%s", id, out)
		}
	}

	// Two functions, as two separate make processes: the first builds,
	// the second only copies.
	first, second := t.TempDir(), t.TempDir()
	if out := makeRule(false, ids[0], first); !strings.Contains(out, "go build") {
		t.Errorf("make build-%s on an empty build dir did not build:\n%s", ids[0], out)
	}
	if out := makeRule(false, ids[1], second); strings.Contains(out, "go build") {
		t.Errorf("make build-%s rebuilt the binary that build-%s had just built:\n%s", ids[1], ids[0], out)
	}
	a, errA := os.ReadFile(filepath.Join(first, "bootstrap"))
	b, errB := os.ReadFile(filepath.Join(second, "bootstrap"))
	if errA != nil || errB != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("build-%s and build-%s artifacts: %d and %d bytes (%v, %v), want the same binary", ids[0], ids[1], len(a), len(b), errA, errB)
	}
}

// TestMakefileInstallsNpmTestFolders: make test-deps runs npm ci in a
// folder with a committed package-lock.json when its node_modules is
// missing or older than the lockfile, and not otherwise; node_modules
// folders themselves are never taken for test folders. Dry runs (make -n)
// against a scratch tree: npm itself is not called.
func TestMakefileInstallsNpmTestFolders(t *testing.T) {
	makefile, err := filepath.Abs("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(rel string) string {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lock := write("tests/ts/package-lock.json")
	write("tests/ts/node_modules/dep/package-lock.json") // a dependency's, not a test folder
	dryRun := func() string {
		t.Helper()
		out, err := exec.Command("make", "-n", "--no-print-directory", "-C", dir, "-f", makefile, "test-deps").CombinedOutput()
		if err != nil {
			t.Fatalf("make -n test-deps: %v\n%s", err, out)
		}
		return string(out)
	}
	const install = "cd ./tests/ts/ && npm ci --no-audit --no-fund"

	if out := dryRun(); !strings.Contains(out, install) || strings.Contains(out, "node_modules/dep") {
		t.Errorf("without an install, make -n test-deps =\n%s\nwant %q and nothing for node_modules/dep", out, install)
	}
	stamp := write("tests/ts/node_modules/.agentbox-npm-ci")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, past, past); err != nil {
		t.Fatal(err)
	}
	if out := dryRun(); strings.Contains(out, "npm ci") {
		t.Errorf("with node_modules newer than the lockfile, make -n test-deps =\n%s\nwant no npm ci", out)
	}
	if err := os.Chtimes(stamp, past.Add(-time.Hour), past.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if out := dryRun(); !strings.Contains(out, install) {
		t.Errorf("with node_modules older than the lockfile, make -n test-deps =\n%s\nwant %q", out, install)
	}
}

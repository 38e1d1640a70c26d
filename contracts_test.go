package agentbox_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/rest"
)

var update = flag.Bool("update", false, "rewrite the generated files at the repository root")

// TestContractsUpToDate fails when tool-contracts.json is not what the
// registry generates. Fix with `make contracts` (or go test . -update).
func TestContractsUpToDate(t *testing.T) {
	checkGolden(t, "tool-contracts.json", registry.New().ContractsJSON(), "make contracts")
}

// TestOpenAPIUpToDate fails when openapi.json is not what the registry
// generates. Fix with `make openapi` (or go test . -update).
func TestOpenAPIUpToDate(t *testing.T) {
	checkGolden(t, "openapi.json", rest.OpenAPI(registry.New()), "make openapi")
}

func checkGolden(t *testing.T, path string, want []byte, fix string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v (run %s)", path, err, fix)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale (first difference at line %d); run %s", path, firstDiffLine(got, want), fix)
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

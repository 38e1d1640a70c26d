package agentbox_test

import (
	"os"
	"testing"

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

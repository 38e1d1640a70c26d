package docgen_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/docgen"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/rest"
)

func TestSplice(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		wantErr         bool
	}{
		{name: "Empty", doc: "a\n<!-- x:begin -->\n<!-- x:end -->\nb\n", want: "a\n<!-- x:begin -->\nNEW\n<!-- x:end -->\nb\n"},
		{name: "Replaces", doc: "<!-- x:begin -->\nold\nrows\n<!-- x:end -->", want: "<!-- x:begin -->\nNEW\n<!-- x:end -->"},
		{name: "OtherMarkersUntouched", doc: "<!-- y:begin -->\nkeep\n<!-- y:end -->\n<!-- x:begin -->\n<!-- x:end -->", want: "<!-- y:begin -->\nkeep\n<!-- y:end -->\n<!-- x:begin -->\nNEW\n<!-- x:end -->"},
		{name: "ErrNoBegin", doc: "<!-- x:end -->", wantErr: true},
		{name: "ErrNoEnd", doc: "<!-- x:begin -->\n", wantErr: true},
		{name: "ErrEndBeforeBegin", doc: "<!-- x:end -->\n<!-- x:begin -->\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := docgen.Splice([]byte(tc.doc), "x", "NEW\n")
			if (err != nil) != tc.wantErr {
				t.Fatalf("Splice(%q) error = %v, want error %v", tc.doc, err, tc.wantErr)
			}
			if err == nil && string(got) != tc.want {
				t.Errorf("Splice(%q) = %q, want %q", tc.doc, got, tc.want)
			}
		})
	}
}

// TestTablesCoverEverything: every tool and every error code has exactly
// one row, so a new tool or code cannot be left out of the README.
func TestTablesCoverEverything(t *testing.T) {
	tools := docgen.ToolTable(registry.New())
	for _, tool := range registry.New().Tools() {
		if n := strings.Count(tools, "| `"+tool.Name+"` |"); n != 1 {
			t.Errorf("tool table has %d rows for %s, want 1", n, tool.Name)
		}
	}
	errs := docgen.ErrorTable()
	for _, c := range apperr.Codes() {
		row := fmt.Sprintf("| `%s` | %d |", c, rest.Status(c))
		if n := strings.Count(errs, row); n != 1 {
			t.Errorf("error table has %d rows starting %q, want 1", n, row)
		}
	}
}

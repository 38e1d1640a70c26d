// Package docgen renders the README's generated sections from their
// sources of truth, so that the documentation cannot drift from the code:
//
//   - the tool table, between <!-- tools:begin --> and <!-- tools:end -->,
//     from the registry;
//   - the REST error table, between <!-- errors:begin --> and
//     <!-- errors:end -->, from apperr's codes and rest.Status.
//
// `make readme` rewrites both; a test at the repository root fails when the
// checked-in README differs from what Update produces.
package docgen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/rest"
)

// ToolTable renders one row per tool, in registry order.
func ToolTable(r *registry.Registry) string {
	var b strings.Builder
	b.WriteString("| tool | REST | scope | description | its own errors |\n|---|---|---|---|---|\n")
	for _, t := range r.Tools() {
		scope := "write"
		if t.Scope == registry.ScopeRead {
			scope = "read"
		}
		var own []string
		for _, c := range t.OwnErrors() {
			own = append(own, "`"+string(c)+"`")
		}
		fmt.Fprintf(&b, "| `%s` | `%s %s` | %s | %s | %s |\n", t.Name, t.Method, t.Path, scope, cell(t.Description), strings.Join(own, " "))
	}
	return b.String()
}

// ErrorTable renders one row per error code with its REST status.
func ErrorTable() string {
	var b strings.Builder
	b.WriteString("| code | HTTP status | retryable | what to do |\n|---|---|---|---|\n")
	for _, c := range apperr.Codes() {
		retry := "no"
		if c.Retryable() {
			retry = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %d | %s | %s |\n", c, rest.Status(c), retry, cell(c.NextAction(apperr.Context{})))
	}
	return b.String()
}

// cell makes s safe inside a Markdown table cell: pipes would split the
// cell, and "<key>" would render as an HTML tag and vanish.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	s = strings.ReplaceAll(s, ">", "&gt;")
	return strings.Join(strings.Fields(s), " ")
}

// Splice replaces the text between the markers <!-- name:begin --> and
// <!-- name:end --> (each on its own line) with content.
func Splice(doc []byte, name, content string) ([]byte, error) {
	begin := []byte("<!-- " + name + ":begin -->\n")
	end := []byte("<!-- " + name + ":end -->")
	i := bytes.Index(doc, begin)
	if i < 0 {
		return nil, fmt.Errorf("docgen: marker %q not found", strings.TrimSpace(string(begin)))
	}
	start := i + len(begin)
	j := bytes.Index(doc[start:], end)
	if j < 0 {
		return nil, fmt.Errorf("docgen: marker %q not found after %q", end, strings.TrimSpace(string(begin)))
	}
	var out bytes.Buffer
	out.Write(doc[:start])
	out.WriteString(content)
	out.Write(doc[start+j:])
	return out.Bytes(), nil
}

// Update returns readme with every generated section rewritten.
func Update(readme []byte, r *registry.Registry) ([]byte, error) {
	out, err := Splice(readme, "tools", ToolTable(r))
	if err != nil {
		return nil, err
	}
	return Splice(out, "errors", ErrorTable())
}

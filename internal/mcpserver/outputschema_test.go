package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixtureCall is one entry of testdata/tsclient/fixtures.json, the one
// table of arguments shared with the TypeScript interop test.
type fixtureCall struct {
	Tool  string         `json:"tool"`
	OK    map[string]any `json:"ok"`
	Error map[string]any `json:"error"`
	Code  string         `json:"code"`
}

func loadFixtures(t *testing.T) []fixtureCall {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tsclient", "fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Calls []fixtureCall }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("fixtures.json: %v", err)
	}
	return f.Calls
}

// resolveFixture replaces "$ctx.NAME" and "$ok.TOOL.PATH" strings, as
// interop.mjs does.
func resolveFixture(v any, ctx map[string]string, ok map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		if !strings.HasPrefix(x, "$") {
			return x, nil
		}
		path := strings.Split(x[1:], ".")
		if path[0] == "ctx" {
			if s, found := ctx[path[1]]; found {
				return s, nil
			}
			return nil, fmt.Errorf("%s: no such value", x)
		}
		var cur any = ok
		for _, p := range path[1:] {
			m, isMap := cur.(map[string]any)
			if !isMap {
				return nil, fmt.Errorf("%s: nothing at %s", x, p)
			}
			cur = m[p]
		}
		if cur == nil {
			return nil, fmt.Errorf("%s is undefined", x)
		}
		return cur, nil
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			r, err := resolveFixture(e, ctx, ok)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := resolveFixture(e, ctx, ok)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// TestOutputSchemasHoldForEveryResult calls every tool in tools/list once
// to succeed and once to fail (the shared fixtures) and validates each
// structuredContent against the outputSchema the tool declared, with an
// independent validator: github.com/google/jsonschema-go, already in the
// module graph as the go-sdk's own schema package, so no new dependency,
// and a different implementation from internal/schema, which generated the
// schemas. A result that does not fit its declared schema is what makes
// TypeScript clients throw it away.
func TestOutputSchemasHoldForEveryResult(t *testing.T) {
	e := newEnv(t)
	ctx := e.interopCtx(t)
	cs, _ := e.connect(t, e.alice.BoxKey)

	declared := map[string]*jsonschema.Resolved{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: outputSchema %s does not parse as a JSON Schema: %v", tool.Name, b, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: outputSchema does not resolve: %v", tool.Name, err)
		}
		declared[tool.Name] = rs
	}

	validated, replays := 0, 0
	validate := func(label, tool string, res *mcp.CallToolResult) {
		t.Helper()
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := declared[tool].Validate(v); err != nil {
			t.Errorf("%s: structuredContent %s does not satisfy %s's outputSchema: %v", label, b, tool, err)
			return
		}
		validated++
	}

	validate("checkpoint_get before agent_prime", "checkpoint_get", call(t, cs, "checkpoint_get", nil))
	fixtures := loadFixtures(t)
	covered := map[string]bool{}
	ok := map[string]any{}
	for _, f := range fixtures {
		covered[f.Tool] = true
		if declared[f.Tool] == nil {
			t.Errorf("fixture %s: no such tool in tools/list", f.Tool)
			continue
		}
		for _, kind := range []string{"success", "error"} {
			raw := f.OK
			if kind == "error" {
				raw = f.Error
			}
			args, err := resolveFixture(raw, ctx, ok)
			if err != nil {
				t.Errorf("%s (%s): %v", f.Tool, kind, err)
				continue
			}
			res := call(t, cs, f.Tool, args)
			label := fmt.Sprintf("%s (%s)", f.Tool, kind)
			if res.IsError != (kind == "error") {
				t.Errorf("%s: isError %t, structuredContent %v", label, res.IsError, res.StructuredContent)
			}
			validate(label, f.Tool, res)
			if kind == "success" && !res.IsError {
				ok[f.Tool] = structured[map[string]any](t, res)
				// A replay answers the compact receipt, not the whole
				// result: a strict client validates it too.
				if a, isMap := args.(map[string]any); isMap && a["idempotency_key"] != nil {
					again := call(t, cs, f.Tool, args)
					b, _ := json.Marshal(again.StructuredContent)
					if again.IsError || !strings.Contains(string(b), `"replayed":true`) {
						t.Errorf("%s (replay): isError %t, structuredContent %s; want the receipt marked replayed", f.Tool, again.IsError, b)
					}
					validate(f.Tool+" (replay)", f.Tool, again)
					replays++
				}
			}
		}
	}
	for name := range declared {
		if !covered[name] {
			t.Errorf("%s: no fixture arguments; add the tool to testdata/tsclient/fixtures.json", name)
		}
	}
	if replays == 0 {
		t.Error("no mutation fixture was replayed")
	}
	t.Logf("validated %d results (%d of them replays) against their outputSchema", validated, replays)
	if want := 2*len(declared) + 1 + replays; validated != want {
		t.Errorf("validated %d results against their outputSchema, want %d", validated, want)
	}
}

package mcpserver_test

import (
	"encoding/json"
	"sort"
	"testing"
)

// maxDescriptionBytes bounds the average, per tool, of the description
// bytes a model reads in tools/list: the tool's description plus every
// description in its input schema. The full contract stays in get_help.
const maxDescriptionBytes = 350

// maxHandleDescriptionBytes bounds the description of the session_id
// argument, which every tool declares (the session as a handle, brief
// §11): it is counted apart from maxDescriptionBytes, since it is one
// text repeated on every tool, and must stay short for that reason.
const maxHandleDescriptionBytes = 140

// TestToolListSize measures what tools/list costs a model and fails when
// the descriptions grow past the budget. It prints the figures.
func TestToolListSize(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, e.alice.BoxKey)
	r := e.post(t, toolsListBody, session(sid, e.alice.BoxKey))
	if r.status != 200 {
		t.Fatalf("tools/list: HTTP %d %s", r.status, r.body)
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Title       string          `json:"title"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatal(err)
	}
	tools := list.Result.Tools
	if len(tools) == 0 {
		t.Fatal("tools/list: no tools")
	}
	var modelBytes, descBytes int
	type cost struct {
		name  string
		bytes int
	}
	var costs []cost
	for _, tool := range tools {
		facing, _ := json.Marshal(map[string]any{"name": tool.Name, "title": tool.Title, "description": tool.Description, "inputSchema": tool.InputSchema})
		modelBytes += len(facing)
		var schema any
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		d := len(tool.Description) + descriptions(schema)
		if props, ok := schema.(map[string]any)["properties"].(map[string]any); ok {
			if h, ok := props["session_id"].(map[string]any); ok {
				hd, _ := h["description"].(string)
				if len(hd) > maxHandleDescriptionBytes {
					t.Errorf("%s: session_id description is %d bytes, want at most %d", tool.Name, len(hd), maxHandleDescriptionBytes)
				}
				d -= len(hd)
			}
		}
		descBytes += d
		costs = append(costs, cost{tool.Name, d})
	}
	sort.Slice(costs, func(i, j int) bool { return costs[i].bytes > costs[j].bytes })
	avg := descBytes / len(tools)
	t.Logf("tools/list: %d tools, %d bytes; model-facing (name, title, description, inputSchema) %d bytes; description bytes %d, %d per tool (budget %d); largest %s %d, %s %d",
		len(tools), len(r.body), modelBytes, descBytes, avg, maxDescriptionBytes, costs[0].name, costs[0].bytes, costs[1].name, costs[1].bytes)
	if avg > maxDescriptionBytes {
		t.Errorf("tools/list descriptions average %d bytes per tool, want at most %d: shorten the largest (get_help carries the full contract)", avg, maxDescriptionBytes)
	}
}

// descriptions sums the bytes of every "description" in a JSON Schema.
func descriptions(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "description" {
				n += len(s)
				continue
			}
			n += descriptions(e)
		}
	case []any:
		for _, e := range x {
			n += descriptions(e)
		}
	}
	return n
}

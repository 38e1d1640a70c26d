package rest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/schema"
)

// The registry's current tools exercise few of arguments' branches (no GET
// tool has a typed query parameter yet, no IDData tool exists yet), so this
// test drives it directly with declared shapes.

func props(p map[string]*schema.Schema) *schema.Schema {
	return &schema.Schema{Type: "object", Properties: p}
}

var (
	flatGet = &registry.Tool{Name: "list", Method: "GET", Path: "/v1/rooms/{room_id}/messages", Shape: registry.Flat,
		Input: props(map[string]*schema.Schema{
			"room_id": {Type: "string"}, "limit": {Type: "integer"}, "unread": {Type: "boolean"},
			"cursor": {Type: "string"}, "ratio": {Type: "number"}, "targets": {Type: "array"},
		})}
	flatPost = &registry.Tool{Name: "send", Method: "POST", Path: "/v1/messages", Shape: registry.Flat,
		Input: props(map[string]*schema.Schema{"body_md": {Type: "string"}})}
	idData = &registry.Tool{Name: "update_space", Method: "PATCH", Path: "/v1/spaces/{id}", Shape: registry.IDData,
		Input: props(map[string]*schema.Schema{"id": {Type: "string"}, "data": props(map[string]*schema.Schema{"title": {Type: "string"}})})}
	idDataList = &registry.Tool{Name: "list_spaces", Method: "GET", Path: "/v1/spaces", Shape: registry.IDData,
		Input: props(map[string]*schema.Schema{"data": props(map[string]*schema.Schema{"limit": {Type: "integer"}})})}
)

// build runs arguments on a request routed through a real ServeMux, so that
// path values are set the way the server sets them.
func build(t *testing.T, tool *registry.Tool, target, body string) (string, error) {
	t.Helper()
	var args []byte
	var err error
	mux := http.NewServeMux()
	mux.HandleFunc(tool.Method+" "+tool.Path, func(_ http.ResponseWriter, r *http.Request) {
		q, perr := url.ParseQuery(r.URL.RawQuery)
		if perr != nil {
			t.Fatalf("ParseQuery(%q): %v", r.URL.RawQuery, perr)
		}
		args, err = arguments(tool, r, q, []byte(body))
	})
	r := httptest.NewRequest(tool.Method, target, strings.NewReader(body))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if w.Code == http.StatusNotFound || w.Code == http.StatusMethodNotAllowed {
		t.Fatalf("%s %s did not match %s %s", tool.Method, target, tool.Method, tool.Path)
	}
	return string(args), err
}

// argsCase is one request to build the arguments of: want is the
// arguments' JSON, or a text the refusal must contain.
type argsCase struct {
	name   string
	tool   *registry.Tool
	target string
	body   string
	want   string
}

func TestArguments(t *testing.T) {
	for _, tc := range []argsCase{
		{"FlatEmptyBody", flatPost, "/v1/messages", "", `{}`},
		{"FlatBodyKept", flatPost, "/v1/messages", `{"body_md":"<b>&é</b>"}`, `{"body_md":"<b>&é</b>"}`},
		{"FlatEscapesPreserved", flatPost, "/v1/messages", `{"body_md":"\u00e9\n"}`, `{"body_md":"\u00e9\n"}`},
		{"PathParamAsString", flatGet, "/v1/rooms/r%2F1/messages", "", `{"room_id":"r/1"}`},
		{"QueryTyped", flatGet, "/v1/rooms/r1/messages?limit=20&unread=false&cursor=abc%3D&ratio=0.5", "",
			`{"cursor":"abc=","limit":20,"ratio":0.5,"room_id":"r1","unread":false}`},
		{"QueryAndBody", flatGet, "/v1/rooms/r1/messages?limit=-3", `{"cursor":"c"}`, `{"cursor":"c","limit":-3,"room_id":"r1"}`},
		{"IDData", idData, "/v1/spaces/sp-1", `{"title":"T"}`, `{"data":{"title":"T"},"id":"sp-1"}`},
		{"IDDataEmptyBody", idData, "/v1/spaces/sp-1", "", `{"data":{},"id":"sp-1"}`},
		{"IDDataWithoutID", idDataList, "/v1/spaces?limit=5", "", `{"data":{"limit":5}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := build(t, tc.tool, tc.target, tc.body)
			if err != nil || got != tc.want {
				t.Errorf("arguments(%s %s, %s) = %s, %v; want %s", tc.tool.Method, tc.target, tc.body, got, err, tc.want)
			}
		})
	}
}

func TestArgumentsRefused(t *testing.T) {
	const marker = "ZQXJmark"
	for _, tc := range []argsCase{
		{"PathParamInBody", flatGet, "/v1/rooms/r1/messages", `{"room_id":"r2"}`, "room_id: path parameters are not body fields"},
		{"PathParamInQuery", flatGet, "/v1/rooms/r1/messages?room_id=r2", "", "room_id: is a path parameter"},
		{"UnknownQuery", flatGet, "/v1/rooms/r1/messages?" + marker + "=1", "", "unknown parameter"},
		{"RepeatedQuery", flatGet, "/v1/rooms/r1/messages?limit=1&limit=2", "", "limit: must be given once"},
		{"QueryAndBodyField", flatGet, "/v1/rooms/r1/messages?limit=1", `{"limit":2}`, "limit: is given both"},
		{"IntegerNotInteger", flatGet, "/v1/rooms/r1/messages?limit=" + marker, "", "limit: must be an integer"},
		{"IntegerFloat", flatGet, "/v1/rooms/r1/messages?limit=1.5", "", "limit: must be an integer"},
		{"IntegerOverflow", flatGet, "/v1/rooms/r1/messages?limit=99999999999999999999", "", "limit: must be an integer"},
		{"BooleanLoose", flatGet, "/v1/rooms/r1/messages?unread=1", "", "unread: must be true or false"},
		{"NumberInfinite", flatGet, "/v1/rooms/r1/messages?ratio=Inf", "", "ratio: must be a number"},
		{"ArrayInQuery", flatGet, "/v1/rooms/r1/messages?targets=a", "", "targets: cannot be sent in the query string"},
		{"QueryInvalidUTF8", flatGet, "/v1/rooms/r1/messages?cursor=%FF" + marker, "", "cursor: must be valid UTF-8"},
		{"PathInvalidUTF8", flatGet, "/v1/rooms/%FF" + marker + "/messages", "", "room_id: must be valid UTF-8"},
		{"QueryOnPost", flatPost, "/v1/messages?x=1", `{"body_md":"x"}`, "no query parameters"},
		{"DuplicateKey", flatPost, "/v1/messages", `{"body_md":"a","body_md":"` + marker + `"}`, "duplicate key"},
		{"InvalidUTF8Body", flatPost, "/v1/messages", "{\"body_md\":\"\xff" + marker + "\"}", "invalid UTF-8"},
		{"IDDataLiteralData", idData, "/v1/spaces/sp-1", `{"data":{"title":"T"}}`, dataMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := build(t, tc.tool, tc.target, tc.body)
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.InvalidArgument {
				t.Fatalf("arguments(%s %s, %s) = %s, %v; want INVALID_ARGUMENT", tc.tool.Method, tc.target, tc.body, got, err)
			}
			if !strings.Contains(e.Message, tc.want) {
				t.Errorf("arguments(%s %s): message %q, want it to contain %q", tc.tool.Method, tc.target, e.Message, tc.want)
			}
			if strings.Contains(e.Message, marker) {
				t.Errorf("arguments(%s %s): message %q echoes the caller's text", tc.tool.Method, tc.target, e.Message)
			}
		})
	}
}

// TestConflictRendering: seed-000 tools carry current_revision as a decimal
// string, seed-002 tools (integer expected_version) as an integer, as in
// the MCP transport.
func TestConflictRendering(t *testing.T) {
	reg := registry.New()
	for _, tc := range []struct {
		seed, tool, want string
	}{
		{"000", "checkpoint_save", `"current_revision":"18446744073709551615"`},
		{"002", "save_memory", `"current_revision":18446744073709551615`},
	} {
		tool, _ := reg.Tool(tc.tool)
		w := httptest.NewRecorder()
		writeError(w, 0, apperr.Conflict(1<<64-1), tool)
		if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), tc.want) || strings.Count(w.Body.String(), `"current_revision":`) != 1 {
			t.Errorf("writeError(REVISION_CONFLICT, seed %s) = %d %s, want 409 with %s once", tc.seed, w.Code, w.Body, tc.want)
		}
	}
}

package lambdafn

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/reqlog"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestInitializeRequiresTable(t *testing.T) {
	_, err := initialize(context.Background(), env(nil), reqlog.NewLogger(discard{}, 0), nil, nil)
	if err == nil || !strings.Contains(err.Error(), EnvTable) {
		t.Errorf("initialize without %s = %v, want an error naming it", EnvTable, err)
	}
}

// TestInitializeBuildsOffline: init makes no network call, so building
// against an endpoint where nothing listens succeeds; the failure would
// only come with the first request.
func TestInitializeBuildsOffline(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test") // an endpoint without credentials is refused
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	vars := env(map[string]string{EnvTable: "t", EnvRegion: "eu-west-1", EnvEndpoint: "http://127.0.0.1:1"})
	for _, tc := range []struct {
		name  string
		build func(*hub.Hub, *slog.Logger) (http.Handler, error)
		// route is served by this function; other is not.
		route, other string
	}{
		{"Tool", func(h *hub.Hub, l *slog.Logger) (http.Handler, error) { return toolHandler(h, l, "get_help") },
			"/v1/help/get_help", "/v1/checkpoint"},
		{"MCP", func(h *hub.Hub, l *slog.Logger) (http.Handler, error) { return mcpHandler(h, l), nil },
			"", "/v1/help/get_help"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := initialize(context.Background(), vars, reqlog.NewLogger(discard{}, 0), nil, tc.build)
			if err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if tc.route != "" {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", tc.route, nil))
				if w.Code != 200 {
					t.Errorf("GET %s = %d %s, want 200", tc.route, w.Code, w.Body)
				}
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", tc.other, nil))
			if w.Code != 404 || !strings.Contains(w.Body.String(), "NOT_FOUND_OR_FORBIDDEN") {
				t.Errorf("GET %s = %d %s, want a 404 envelope (not this function's route)", tc.other, w.Code, w.Body)
			}
		})
	}
}

func TestToolHandlerUnknownTool(t *testing.T) {
	if _, err := toolHandler(nil, reqlog.NewLogger(discard{}, 0), "no_such_tool"); err == nil {
		t.Errorf("toolHandler(no_such_tool): got nil error, want one")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestBuilderNeedsAFunction: the one binary refuses to start without
// knowing which function it is, or as a tool the registry lacks.
func TestBuilderNeedsAFunction(t *testing.T) {
	for _, function := range []string{"", "no_such_tool"} {
		if _, err := builder(function)(nil, reqlog.NewLogger(discard{}, 0)); err == nil {
			t.Errorf("builder(%q): got nil error, want one", function)
		}
	}
	if _, err := builder(MCPFunction)(nil, reqlog.NewLogger(discard{}, 0)); err != nil {
		t.Errorf("builder(%q): %v, want the MCP handler", MCPFunction, err)
	}
}

// TestInitializeOAuth: with the issuer and audience set, a function takes
// tokens (an MCP request without credentials is challenged, naming the
// metadata it serves); one of the two alone is a configuration error.
func TestInitializeOAuth(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	base := map[string]string{EnvTable: "t", EnvRegion: "eu-west-1", EnvEndpoint: "http://127.0.0.1:1",
		EnvOAuthIssuer: "https://issuer.example", EnvOAuthAudience: "https://agentbox.example/mcp"}
	mcp := func(h *hub.Hub, l *slog.Logger) (http.Handler, error) { return mcpHandler(h, l), nil }
	h, err := initialize(context.Background(), env(base), reqlog.NewLogger(discard{}, 0), nil, mcp)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/.well-known/oauth-protected-resource/mcp", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"resource":"https://agentbox.example/mcp"`) {
		t.Errorf("GET the metadata = %d %s, want 200 naming the resource", w.Code, w.Body)
	}
	r := httptest.NewRequest("POST", MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	r.Header.Set("Content-Type", "application/json")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 401 || !strings.Contains(w.Header().Get("WWW-Authenticate"),
		`resource_metadata="https://agentbox.example/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("POST %s without credentials = %d %q, want 401 naming the metadata", MCPPath, w.Code, w.Header().Get("WWW-Authenticate"))
	}
	delete(base, EnvOAuthAudience)
	if _, err := initialize(context.Background(), env(base), reqlog.NewLogger(discard{}, 0), nil, mcp); err == nil {
		t.Errorf("initialize with %s but no %s succeeded", EnvOAuthIssuer, EnvOAuthAudience)
	}
}

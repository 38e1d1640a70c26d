package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/version"
)

// TestServerInfoVersion: MCP's serverInfo reports the build's one version
// (the one `agentbox version` prints).
func TestServerInfoVersion(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h := hub.New(st, hub.Options{})
	handler := server.Handler(h, registry.New(registrytest.Guard(t)), nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, r)
	var res struct {
		Result struct {
			ServerInfo struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatalf("initialize: HTTP %d %s: %v", w.Code, w.Body, err)
	}
	if res.Result.ServerInfo.Name != "agentbox" || res.Result.ServerInfo.Version != version.Version {
		t.Errorf("serverInfo = %+v, want agentbox %s", res.Result.ServerInfo, version.Version)
	}
}

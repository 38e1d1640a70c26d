package mcpserver

import (
	"log/slog"
	"net/http"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
)

// NewThroughSDK is New with tools/call served by the SDK, as before
// direct.go: the reference TestDirectCallMatchesSDK compares against.
func NewThroughSDK(h *hub.Hub, r *registry.Registry, log *slog.Logger) http.Handler {
	s := New(h, r, log).(*handler)
	s.sdkCalls = true
	return s
}

// DecodeID is decodeID, for its table test.
var DecodeID = decodeID

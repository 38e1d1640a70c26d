// Package mcpserver is the MCP transport: one Streamable HTTP endpoint that
// serves every registry tool through the official go-sdk, with durable,
// store-backed sessions in front of the SDK's stateless handler.
//
// # Design
//
//	client ──HTTP──▶ session layer (this package) ──▶ mcp.StreamableHTTPHandler
//	                    │ reads/writes sessions          (Stateless, JSONResponse)
//	                    ▼                                    │ tools/call
//	                 hub (store)  ◀── registry.Tool.Invoke ◀─┘
//
// # Why a session layer
//
// Lambda keeps nothing between invocations, so the SDK must run in
// stateless mode: every request gets a throwaway SDK session, and the SDK
// neither issues nor checks Mcp-Session-Id. The brief still wants MCP
// sessions (agent_prime binds one, DELETE ends one, an expired one must be
// re-initialized), so this package implements the spec's session rules on
// top, persisting sessions through the hub so that any instance validates
// any session:
//
//   - initialize: the SDK answers into a buffer first; only a successful
//     InitializeResult opens a session (hub.OpenSession: bound to the bearer's
//     agent, or unbound until agent_prime binds it) and is sent with
//     Mcp-Session-Id. A bad bearer is 401. A failed initialize never leaves
//     an orphan session behind.
//   - tools/call: the header must be present (else 400), but the store is not
//     read here: the tool's own batched read loads the session with the key
//     and the tool's items in one round trip, so an expired session answers
//     NOT_PRIMED as a tool result.
//   - every other method (tools/list, ping, notifications/...): the session is
//     checked here; unknown or expired is 404 (the spec's signal to
//     re-initialize), a session bound to another agent is 401.
//   - server/discover passes without a session: it is the SEP-2575 probe the
//     go-sdk client sends before initialize, and the server answers it with
//     UnsupportedProtocolVersion because it advertises only the
//     session-based protocol versions (<= 2025-11-25), so clients fall back
//     to initialize.
//   - DELETE ends the session (hub.CloseSession) and answers 204; GET is 405,
//     since a stateless server has no stream to offer.
//
// A session id is never authority on its own: the hub accepts it only with
// the key of the agent it is bound to (TestSessionHijackingPrevention).
//
// # Request bodies
//
// The body is read once, capped at hub.MaxRequestBytes whether or not the
// client sent Content-Length (413 beyond), decoded with the SDK's own JSON-RPC
// decoder (so this layer and the SDK cannot disagree about the method), and
// handed back to the SDK. JSON-RPC batches are refused with 400: protocol
// 2025-06-18 removed them, and the SDK accepts them only from clients that
// omit MCP-Protocol-Version, which would let one POST mix methods that this
// layer must treat differently.
//
// # Responses
//
// JSONResponse mode: each POST is answered by one application/json body, as
// API Gateway and Lambda need. A tool's domain failure is a tool result with
// isError true and the error envelope in structuredContent.error, never a
// JSON-RPC error; failures of this layer are HTTP statuses with a JSON-RPC
// error body that says nothing about keys or sessions.
//
// The SDK's DNS-rebinding protection stays on. This layer repeats the same
// check first, because it writes to the store (initialize, DELETE) and
// answers DELETE itself, before the SDK would have looked.
package mcpserver

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
)

// Version is reported as the server implementation's version in the MCP
// initialize result.
const Version = "0.1.0"

// transport is the transport name recorded on sessions this package opens
// and passed to the hub with every tool call.
const transport = "mcp"

// instructions are sent to clients at initialize: the one rule an agent
// must know before its first call.
const instructions = "Call agent_prime first: it binds this MCP session to your agent and returns its id. " +
	"Authenticate every call with 'Authorization: Bearer <key>' or the box_key argument. " +
	"Tool failures are results with isError true and structuredContent.error {code, message, next_action, help, retryable}."

// handler is the MCP endpoint. It is safe for concurrent use and holds no
// per-session state: every session lives in the store.
type handler struct {
	hub *hub.Hub
	log *slog.Logger
	sdk http.Handler
}

// New returns the MCP Streamable HTTP endpoint serving every tool of r over
// h. log receives one JSON line per tool call and per rejected request, and
// never arguments, keys or session ids; a nil log discards.
func New(h *hub.Hub, r *registry.Registry, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &handler{hub: h, log: log}
	sdkLog := slog.New(minLevel{log.Handler().WithAttrs([]slog.Attr{slog.String("component", "mcp-sdk")}), slog.LevelWarn})
	server := mcp.NewServer(&mcp.Implementation{Name: "agentbox", Title: "agentbox coordination hub", Version: Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLog,
		// Tools only; no list_changed (a stateless server cannot notify)
		// and no logging capability.
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SupportedProtocolVersions: sessionProtocolVersions(),
	})
	for _, t := range r.Tools() {
		server.AddTool(mcpTool(t), s.toolHandler(t))
	}
	s.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              sdkLog,
		MaxRequestBodyBytes: hub.MaxRequestBytes,
	})
	return s
}

// statelessProtocol is the first protocol version without sessions
// (SEP-2575): it has no initialize and no Mcp-Session-Id.
const statelessProtocol = "2026-07-28"

// sessionProtocolVersions are the SDK's protocol versions that have an
// initialize handshake and Mcp-Session-Id. Advertising only these makes a
// client that probes with server/discover fall back to initialize, which is
// where this package issues the session.
func sessionProtocolVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < statelessProtocol {
			out = append(out, v)
		}
	}
	return out
}

// minLevel drops records below a level. The SDK logs every stateless
// request's throwaway session at Info; only its warnings are worth a line.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.level}
}

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
// top, through the hub, so that any instance validates any session:
//
//   - initialize: the SDK answers into a buffer first; only a successful
//     InitializeResult gets an Mcp-Session-Id. The id is signed and
//     stateless (hub.OpenSession): initialize writes nothing, with or
//     without a key, so anyone may call it. A bad bearer is 401.
//     agent_prime binds the id to the agent and stores the session.
//   - every other request needs the header (else 400). tools/list, ping
//     and notifications check the session here: unknown, ended, or bound
//     to another agent's key is 404 (one answer, the spec's signal to
//     re-initialize); a bound session without its key is 401; an expired
//     one is served.
//   - tools/call: a forged id is 404 at once (its signature is checked
//     without a read); otherwise the tool checks the session in its own
//     batched read, and only when it answers NOT_PRIMED or AUTH_FAILED (or
//     needs no session: get_help) does this layer read the session to turn
//     an ended or foreign one into 404. An expired session stays the
//     tool's NOT_PRIMED result, which agent_prime on the same connection
//     leaves. The tool's session is its session_id argument when given
//     (the handle agent_prime returned), else the Agentbox-Session header
//     (REST's durable session header), else Mcp-Session-Id. The rules in
//     full are at the top of session.go.
//   - Protocol 2026-07-28, which has neither initialize nor sessions, is
//     served beside them (modern.go): a request whose _meta names a
//     protocol version, or whose header names 2026-07-28, is answered by
//     this layer (server/discover, tools/list, tools/call), its session
//     being the session_id argument or the Agentbox-Session header. A
//     server/discover without _meta is the SDK's (the 2025 era has none).
//   - Methods this tools-only server does not serve (logging/setLevel,
//     resources/*, prompts/*, anything unknown) are -32601, although the SDK
//     would answer some; unknown notifications are accepted and ignored.
//   - DELETE ends a bound MCP session (its agent's key required) and
//     answers 204; the agent's session it carried stays reachable as the
//     session_id argument (or Agentbox-Session header) until it expires. An unbound one is ended only
//     with a key (else 405: it expires on its own, and ending it would be
//     a write anyone could make). GET is 405, since a stateless server has
//     no stream to offer.
//
// A session id is never authority on its own: the hub accepts it only with
// the key of the agent it is bound to (TestSessionHijackingPrevention).
//
// # Request bodies
//
// Content-Type must be application/json (415); Accept must allow
// application/json (406; text/event-stream is not required, since this
// endpoint never streams); an MCP-Protocol-Version header must name an
// offered version (400; for 2026-07-28 and later the spec's -32022). The body is read once, capped at
// hub.MaxRequestBytes whether or not the client sent Content-Length (413
// beyond), checked by the same strict JSON gate as REST (duplicate keys,
// invalid UTF-8, depth: -32700), decoded once with the rules of the SDK's
// JSON-RPC decoder (decodeMessage: exact keys, so this layer and the SDK
// cannot disagree about the method), and handed back to the SDK — except
// tools/call, which this layer answers itself with the SDK's types and
// encoder (direct.go: the SDK's stateless per-request session cost four
// times the tool's own work). JSON-RPC batches are served for protocol 2025-03-26 (and
// clients that send no version): each member takes the path it would take
// alone; later versions removed them (400).
//
// # Responses
//
// JSONResponse mode: each POST is answered by one application/json body, as
// API Gateway and Lambda need. A tool's domain failure is a tool result with
// isError true and the error envelope in structuredContent.error (and, whole,
// in its text), never a JSON-RPC error; failures of this layer are HTTP
// statuses with a JSON-RPC error body that says nothing about keys or
// sessions. The SDK's own failures are rewritten into that form with fixed
// messages, since its messages name the rejected method or tool.
//
// The SDK's DNS-rebinding protection stays on. This layer repeats the same
// check first, because it answers DELETE itself, and adds the Origin rule
// (a browser's Origin must be this server's, or loopback on a loopback
// listener; else 403).
package mcpserver

import (
	"context"
	"github.com/agentbox/agentbox/internal/limits"
	"log/slog"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/version"
)

// serverInfo is the server's implementation, in the initialize result
// and the server/discover result; its version is the build's.
var serverInfo = &mcp.Implementation{Name: "agentbox", Title: "agentbox coordination hub", Version: version.Version}

// transport is the transport name recorded on sessions this package opens
// and passed to the hub with every tool call.
const transport = "mcp"

// instructions are sent to clients at initialize: the one rule an agent
// must know before its first call.
const instructions = "Call agent_prime first: it primes your session and returns its session_id. " +
	"Pass that session_id as the session_id argument of every later call (your host may open a new MCP connection per call); " +
	"when a tool answers NOT_PRIMED, call agent_prime again and use the session_id it returns. " +
	"Authenticate with 'Authorization: Bearer <key>'; tools whose arguments list box_key also accept the key there. " +
	"Tool failures are results with isError true and structuredContent.error {code, message, next_action, help, retryable}."

// handler is the MCP endpoint. It is safe for concurrent use and holds no
// per-session state: every session lives in the store.
type handler struct {
	hub *hub.Hub
	log *slog.Logger
	sdk http.Handler
	// tools run each registry tool by name; tools/call reaches them
	// without the SDK (direct.go), other paths through it.
	tools map[string]toolFunc
	// open names the tools that need no session (get_help).
	open map[string]bool
	// sdkCalls sends tools/call through the SDK as well: only for the
	// test that compares the two paths.
	sdkCalls bool
	// versions are the session-based protocol versions, newest first,
	// which the SDK negotiates at initialize.
	versions []string
	// supported are every version served, newest first: the modern
	// ones (modern.go) and versions.
	supported []string
	// discover is the server/discover result (modern.go).
	discover []byte
	// inflight are the running tools/call requests of 2025-era sessions,
	// for notifications/cancelled (cancel.go).
	inflight inflight
	// authFail counts failed authentications per source, in memory, as
	// the REST transport does (internal/rest/authlimit.go): a source past
	// its burst is answered 429 before anything is read.
	authFail *limits.Local
}

// New returns the MCP Streamable HTTP endpoint serving every tool of r over
// h. log receives one JSON line per tool call and per rejected request, and
// never arguments, keys or session ids; a nil log discards.
func New(h *hub.Hub, r *registry.Registry, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &handler{hub: h, log: log, versions: sessionProtocolVersions()}
	s.supported = append(slices.Clone(modernVersions), s.versions...)
	s.discover = s.discoverResult()
	if h != nil {
		if cfg := h.LimitConfig(); cfg != nil {
			s.authFail = limits.NewLocal(cfg.AuthFailures)
		}
	}
	sdkLog := slog.New(minLevel{log.Handler().WithAttrs([]slog.Attr{slog.String("component", "mcp-sdk")}), slog.LevelWarn})
	server := mcp.NewServer(serverInfo, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLog,
		// Tools only; no list_changed (a stateless server cannot notify)
		// and no logging capability.
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SupportedProtocolVersions: s.versions,
	})
	s.tools, s.open = make(map[string]toolFunc), make(map[string]bool)
	for _, t := range r.Tools() {
		s.tools[t.Name], s.open[t.Name] = s.runTool(t), !t.Authenticated
		server.AddTool(mcpTool(t), toolHandler(s.tools[t.Name]))
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

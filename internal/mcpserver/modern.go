package mcpserver

// # Protocol 2026-07-28 beside the 2025 revisions
//
// 2026-07-28 (SEP-2575, SEP-2567, SEP-2243) has no initialize and no
// Mcp-Session-Id: every request carries its protocol version, client info
// and capabilities in params._meta, the HTTP request mirrors the version,
// the method and (for tools/call) the tool name in the MCP-Protocol-Version,
// Mcp-Method and Mcp-Name headers, and the server answers each request on
// its own. The go-sdk this package serves through negotiates only the
// session-based revisions here, so this layer answers the modern methods
// itself, as it answers tools/call for every revision (direct.go).
//
// Era selection is body-primary, as the spec's dual-era rules and both
// official SDKs do it: a request whose params._meta names a protocol
// version, or whose MCP-Protocol-Version header names 2026-07-28 or later,
// is modern; anything else (initialize, a request without _meta and with a
// 2025 header or none) takes the 2025 path unchanged. An initialize that
// offers 2026-07-28 selects the 2025 era by definition (versioning.mdx:
// "an initialize request selects legacy semantics") and is answered with
// the newest session-based revision, 2025-11-25.
//
// A modern request passes these checks, in this order (the order of the
// TypeScript SDK's validation ladder), each a 400 with a JSON-RPC error:
//
//  1. the header and _meta versions differ: -32020 (HeaderMismatch);
//  2. the version is not one this server serves: -32022
//     (UnsupportedProtocolVersionError, with the supported versions);
//  3. _meta lacks the protocol version or the client capabilities (both
//     required by the schema's RequestMetaObject): -32602;
//  4. a request (not a notification) lacks MCP-Protocol-Version, or its
//     Mcp-Method is missing or not the body's method, or a tools/call's
//     Mcp-Name (Base64 sentinel decoded) is missing or not params.name:
//     -32020;
//  5. a method 2026-07-28 does not define or this server does not serve:
//     404 with -32601.
//
// Served: server/discover (versions, capabilities, server info,
// instructions, with caching hints), tools/list (the SDK's list, with
// resultType and caching hints) and tools/call (the tool's answer with
// resultType). No message echoes a rejected value; the -32022 data's
// "requested", which the schema requires, is the requested version only
// when it has a version's shape.
//
// The tool's session is the session_id argument or the Agentbox-Session
// header (registry.SessionArgument): a modern request's Mcp-Session-Id is
// ignored, as the spec says, so a tool without a handle answers NOT_PRIMED
// as a tool error the model can act on.
//
// Cancellation: on Streamable HTTP 2026-07-28 a client cancels by closing
// its request, which cancels the request's context, and inbox_list's wait
// ends with it (TestModernDisconnectStopsWait). The 2025 revisions send
// notifications/cancelled instead: inflight (cancel.go) maps (session, key,
// JSON-RPC id) to the running call's context. That map is per instance: on
// Lambda a notification that reaches another instance finds nothing, and
// the wait runs to its bound (at most hub.MaxWaitSeconds); so cancellation
// is best effort there, as the spec allows ("MAY ignore").

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// modernVersions are the sessionless protocol revisions served here.
var modernVersions = []string{statelessProtocol}

// The _meta keys of 2026-07-28 (schema RequestMetaObject, ResultMetaObject).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// The request metadata headers of 2026-07-28 Streamable HTTP.
const (
	methodHeader = "Mcp-Method"
	nameHeader   = "Mcp-Name"
)

// Error codes 2026-07-28 defines.
const (
	codeHeaderMismatch     int64 = -32020
	codeUnsupportedVersion int64 = -32022
)

// cacheTTLMillis is the caching hint (caching.mdx) on server/discover and
// tools/list: both change only with a deployment, and neither depends on
// the caller, so they are "public".
const cacheTTLMillis = 10 * 60 * 1000

// modernInstructions replace the session-based instructions for clients
// without an MCP session.
const modernInstructions = "Call agent_prime first: it returns session_id, your session's handle. " +
	"Pass it as the session_id argument of every later call (this protocol revision has no MCP session). " +
	"Authenticate with 'Authorization: Bearer <key>'; tools whose arguments list box_key also accept the key there. " +
	"Tool failures are results with isError true and structuredContent.error {code, message, next_action, help, retryable}."

// envelope is what a modern request's params say about the request.
type envelope struct {
	version     string // _meta's protocol version
	hasVersion  bool
	metaOK      bool   // _meta, when present, is an object with client capabilities
	name        string // params.name (tools/call)
	hasName     bool
	cursor      json.RawMessage
	paramsValid bool // params is absent, null or an object
}

// readEnvelope reads the members of params this layer needs.
func readEnvelope(params json.RawMessage) envelope {
	env := envelope{paramsValid: true}
	if isNull(params) {
		return env
	}
	env.paramsValid = strictjson.Members(params, func(key, value []byte) bool {
		switch string(key) {
		case "_meta":
			if isNull(value) {
				return true
			}
			caps := false
			env.metaOK = strictjson.Members(value, func(k, v []byte) bool {
				switch string(k) {
				case metaProtocolVersion:
					env.version, env.hasVersion = decodeString(v)
				case metaClientCapabilities:
					caps = len(v) > 0 && v[0] == '{'
				}
				return true
			}) && caps
		case "name":
			env.name, env.hasName = decodeString(value)
		case "cursor":
			env.cursor = value
		}
		return true
	})
	return env
}

// isModern reports a request of the sessionless era: its _meta names a
// protocol version, or its header names a revision that is not one of the
// session-based ones and is not older than 2026-07-28.
func (s *handler) isModern(r *http.Request, req *jsonrpc.Request) bool {
	if v := r.Header.Get(protocolHeader); v != "" && !slices.Contains(s.versions, v) && v >= statelessProtocol {
		return true
	}
	if req.Method == methodInitialize {
		return false
	}
	return readEnvelope(req.Params).hasVersion
}

// versionShape is a protocol version's form; only such a value is
// repeated in an UnsupportedProtocolVersionError.
var versionShape = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// modern answers one request or notification of the sessionless era.
func (s *handler) modern(w http.ResponseWriter, r *http.Request, bearer string, req *jsonrpc.Request) {
	id := req.ID
	env := readEnvelope(req.Params)
	header := r.Header.Get(protocolHeader)
	if header != "" && env.hasVersion && header != env.version {
		s.modernReject(w, r, http.StatusBadRequest, id, codeHeaderMismatch,
			"Header mismatch: MCP-Protocol-Version is not the protocol version in params._meta.", nil, "header mismatch")
		return
	}
	requested := env.version
	if !env.hasVersion {
		requested = header
	}
	if !slices.Contains(modernVersions, requested) {
		shown := ""
		if versionShape.MatchString(requested) {
			shown = requested
		}
		data, _ := json.Marshal(struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{s.supported, shown})
		s.modernReject(w, r, http.StatusBadRequest, id, codeUnsupportedVersion, "Unsupported protocol version.", data, "protocol version")
		return
	}
	if !env.paramsValid || !env.hasVersion || !env.metaOK {
		s.modernReject(w, r, http.StatusBadRequest, id, jsonrpc.CodeInvalidParams,
			"Invalid params: params._meta must carry "+metaProtocolVersion+" and "+metaClientCapabilities+".", nil, "envelope")
		return
	}
	if !req.IsCall() {
		// 2026-07-28 defines no client notification over HTTP (a client
		// cancels by closing its request); any is accepted and ignored.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if header == "" || r.Header.Get(methodHeader) != req.Method {
		s.modernReject(w, r, http.StatusBadRequest, id, codeHeaderMismatch,
			"Header mismatch: MCP-Protocol-Version and Mcp-Method are required and must match the body.", nil, "header mismatch")
		return
	}
	if req.Method == methodCallTool {
		name, ok := headerValue(r.Header.Values(nameHeader))
		if !ok || !env.hasName || name != env.name {
			s.modernReject(w, r, http.StatusBadRequest, id, codeHeaderMismatch,
				"Header mismatch: Mcp-Name is required on tools/call and must be params.name.", nil, "header mismatch")
			return
		}
	}
	switch req.Method {
	case methodDiscover, "tools/list":
		// Neither needs a key, but a bad one is 401 at once (a host
		// learns to authenticate before its first tool call); a tool
		// checks its own credentials.
		if bearer != "" {
			if _, err := s.hub.OpenSession(r.Context(), bearer); err != nil {
				s.fail(w, r, id, err)
				return
			}
		}
		if req.Method == methodDiscover {
			writeRPCResult(w, id, s.discover)
			return
		}
		s.modernList(w, r, req, env)
	case methodCallTool:
		// The spec: ignore an Mcp-Session-Id on a modern request. The
		// tool's session is its session_id argument or Agentbox-Session.
		r.Header.Del(SessionHeader)
		ans, ok := s.directCall(w, r, req)
		switch {
		case ok && ans.challenge:
			s.fail(w, r, id, apperr.New(apperr.AuthFailed, "Authentication failed."))
		case ok:
			writeTypedResult(w, id, ans, `"complete"`)
		}
	default:
		s.modernReject(w, r, http.StatusNotFound, id, jsonrpc.CodeMethodNotFound, "Method not found.", nil, "unknown method")
	}
}

// headerValue is one header's value with the Base64 sentinel
// (=?base64?…?=) decoded; ok is false when the header is absent, repeated
// or badly encoded.
func headerValue(vs []string) (string, bool) {
	if len(vs) != 1 {
		return "", false
	}
	v := vs[0]
	const prefix, suffix = "=?base64?", "?="
	if len(v) >= len(prefix)+len(suffix) && v[:len(prefix)] == prefix && v[len(v)-len(suffix):] == suffix {
		b, err := base64.StdEncoding.DecodeString(v[len(prefix) : len(v)-len(suffix)])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return v, true
}

// discoverResult is the DiscoverResult this server answers: the same for
// every caller and every request.
func (s *handler) discoverResult() json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"resultType":        "complete",
		"supportedVersions": s.supported,
		"capabilities":      map[string]any{"tools": map[string]any{}},
		"_meta":             map[string]any{metaServerInfo: serverInfo},
		"instructions":      modernInstructions,
		"ttlMs":             cacheTTLMillis,
		"cacheScope":        "public",
	})
	if err != nil {
		// Unreachable: strings and maps of strings.
		panic("mcpserver: encoding the discover result: " + err.Error())
	}
	return b
}

// modernList answers tools/list: the SDK lists the tools (its request
// carries no _meta and a 2025 version, so the SDK takes its session-based
// path), and the result gains resultType and the caching hints.
func (s *handler) modernList(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, env envelope) {
	params := map[string]json.RawMessage{}
	if env.cursor != nil {
		params["cursor"] = env.cursor
	}
	body, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: req.ID, Method: req.Method, Params: mustJSON(params)})
	if err != nil {
		s.modernReject(w, r, http.StatusInternalServerError, req.ID, codeServerError, "Internal error.", nil, "list encode")
		return
	}
	sub := r.Clone(r.Context())
	for _, h := range []string{SessionHeader, methodHeader, nameHeader} {
		sub.Header.Del(h)
	}
	sub.Header.Set(protocolHeader, s.versions[0])
	sub.Body = io.NopCloser(bytes.NewReader(body))
	sub.ContentLength = int64(len(body))
	buf := newBufferedResponse()
	s.serve(buf, sub, req.Method)
	var resp struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if !buf.succeeded() || json.Unmarshal(buf.body.Bytes(), &resp) != nil || resp.Result == nil {
		buf.copyTo(w)
		return
	}
	resp.Result["resultType"] = json.RawMessage(`"complete"`)
	resp.Result["ttlMs"] = mustJSON(cacheTTLMillis)
	resp.Result["cacheScope"] = json.RawMessage(`"public"`)
	writeRPCResult(w, req.ID, mustJSON(resp.Result))
}

// mustJSON encodes a value that always encodes.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("mcpserver: encoding: " + err.Error())
	}
	return b
}

// writeRPCResult writes a JSON-RPC result response.
func writeRPCResult(w http.ResponseWriter, id jsonrpc.ID, result json.RawMessage) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
	if err != nil {
		writeJSONRPCError(w, http.StatusInternalServerError, id, codeServerError, "Internal error.")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// modernReject writes a failure of a modern request, with the error's
// data when its schema has some, and logs it (reason is a fixed phrase).
func (s *handler) modernReject(w http.ResponseWriter, r *http.Request, status int, id jsonrpc.ID, code int64, message string, data json.RawMessage, reason string) {
	s.log.InfoContext(r.Context(), "mcp request rejected", "request_id", reqlog.ID(r.Context()),
		"http_method", r.Method, "status", status, "reason", reason)
	writeJSONRPCErrorData(w, status, id, code, message, data)
}

package mcpserver

// # Session rules (2025-era: initialize and Mcp-Session-Id)
//
// Two things are called a session here: the MCP session, named by the
// Mcp-Session-Id that initialize issues (a signed id, hub.OpenSession), and
// the agent's durable session that agent_prime opens, whose id it returns
// as session_id. agent_prime binds the first to the second (same id), so a
// host that keeps its connection needs nothing else; and every tool takes
// session_id as an argument (the handle), so a host that opens a new
// connection for every call loses nothing. The handle wins over any
// header; it is valid only with its agent's key.
//
// What each request on an Mcp-Session-Id answers:
//
//   - Forged or garbled: 404 (-32001), on every method, before any tool
//     runs (the signature is checked without a read).
//   - Ended by DELETE: 404 on every method that depends on it — tools/list,
//     ping, notifications; a tools/call whose tool answered NOT_PRIMED or
//     AUTH_FAILED; get_help (which needs no session: the layer checks the
//     MCP session for it). A tools/call whose session_id argument names a
//     live session of the caller runs: it does not depend on the header.
//     The agent's session the ended MCP session carried stays reachable
//     as the argument (or the Agentbox-Session header) until it expires
//     (a per-call host ends every connection, the one agent_prime ran on
//     included).
//   - Bound to another agent than the bearer key's: 404, as for an
//     unknown id (its existence is not confirmed). Bound, without any
//     bearer key: 401 on tools/list, ping and notifications; a tools/call
//     is judged by the tool (box_key may carry the key: else AUTH_FAILED
//     as a tool result).
//   - Expired — bound but idle past its window, or never bound within its
//     first hour: served. tools/list and ping need no live session; a
//     tool answers NOT_PRIMED as a tool result (never 404, which strands
//     the official SDKs: none re-initializes by itself), with the way out
//     in next_action; agent_prime on the same Mcp-Session-Id binds it
//     again, so the host needs no reconnect. Only the agent that first
//     bound an id binds it again; 30 days after issue agent_prime opens a
//     new session instead and returns its session_id (hub/session.go).
//   - No Mcp-Session-Id on a request other than initialize and
//     server/discover: 400.
//
// DELETE ends the MCP session (204; 405 for a session never bound, sent
// without a key; 404 for another agent's). NOT_PRIMED's next action over
// MCP (apperr's next actions) names the session_id argument: the model can
// only pass the argument.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/bearer"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/loopback"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// Header names this layer reads or writes.
const (
	SessionHeader   = "Mcp-Session-Id"
	RequestIDHeader = "X-Request-Id"
)

// JSON-RPC methods the session layer treats specially.
const (
	methodInitialize = "initialize"
	methodCallTool   = "tools/call"
	methodDiscover   = "server/discover"
)

// served are the methods this tools-only server answers; any other
// request is -32601 and any other notification is accepted and ignored,
// so capabilities it does not declare (logging, resources, prompts,
// completions) are refused even though the SDK would answer them.
var served = map[string]bool{
	methodInitialize:            true,
	methodDiscover:              true,
	"ping":                      true,
	"tools/list":                true,
	methodCallTool:              true,
	"notifications/initialized": true,
	"notifications/cancelled":   true,
}

// JSON-RPC error codes of this layer's HTTP failures. -32001 is what other
// MCP SDKs answer for an unknown session; -32000 is the generic server
// error.
const (
	codeServerError     int64 = -32000
	codeSessionNotFound int64 = -32001
)

// protocolHeader is the header carrying the negotiated protocol version.
const protocolHeader = "Mcp-Protocol-Version"

// batchesRemoved is the first protocol version without JSON-RPC batches.
const batchesRemoved = "2025-06-18"

// ServeHTTP is the session layer described in the package comment.
func (s *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rid := reqlog.IDFrom(r.Header.Get(RequestIDHeader))
	w.Header().Set(RequestIDHeader, rid)
	r = r.WithContext(reqlog.With(r.Context(), rid))

	if loopback.Rebinding(r) {
		s.reject(w, r, http.StatusForbidden, jsonrpc.ID{}, codeServerError, "Forbidden: invalid Host header.", "dns rebinding")
		return
	}
	if !originAllowed(r) {
		s.reject(w, r, http.StatusForbidden, jsonrpc.ID{}, codeServerError, "Forbidden: invalid Origin header.", "origin")
		return
	}
	// Failed authentications are limited per source (the key id, or the
	// client address when no key parses; limits.AuthSources) in memory: a
	// source past its burst costs no store read at all.
	var sources []string
	if s.authFail != nil {
		key, _ := bearer.Key(r.Header)
		sources = limits.AuthSources(r.RemoteAddr, hub.PresentedKeyID(key))
		now := time.Now()
		for _, src := range sources {
			if blocked, wait := s.authFail.Blocked(src, now); blocked {
				w.Header().Set("Retry-After", strconv.Itoa(limits.RetryAfter(wait)))
				s.reject(w, r, http.StatusTooManyRequests, jsonrpc.ID{}, codeServerError,
					"Too many failed authentications from this source; nothing was done.", string(apperr.RateLimited))
				return
			}
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if sw.status == http.StatusUnauthorized {
				now := time.Now()
				for _, src := range sources {
					s.authFail.Charge(src, now)
				}
			}
		}()
		w = sw
	}
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodDelete:
		s.delete(w, r)
	default:
		// A stateless server offers no GET stream (the spec's 405 tells the
		// client so); nothing else is part of the transport.
		w.Header().Set("Allow", "POST, DELETE")
		s.reject(w, r, http.StatusMethodNotAllowed, jsonrpc.ID{}, codeServerError, "Method not allowed: this endpoint takes POST and DELETE.", "method")
	}
}

func (s *handler) post(w http.ResponseWriter, r *http.Request) {
	key, err := bearer.Key(r.Header)
	if err != nil {
		// Refused rather than treated as anonymous, so a client cannot
		// believe it authenticated when it did not.
		s.reject(w, r, http.StatusUnauthorized, jsonrpc.ID{}, codeServerError, "Authentication failed.", "authorization header")
		return
	}
	if key == "" && s.hub != nil && s.hub.TakesTokens() {
		// With OAuth on, a request without credentials is the client's
		// cue to authorize: the 401 names the resource metadata
		// (internal/oauth completes the challenge).
		s.reject(w, r, http.StatusUnauthorized, jsonrpc.ID{}, codeServerError, "Authentication required.", "no credentials")
		return
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		s.reject(w, r, http.StatusUnsupportedMediaType, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Content-Type must be application/json.", "content type")
		return
	}
	if !acceptsJSON(r.Header) {
		s.reject(w, r, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Accept must allow application/json: this endpoint answers JSON only.", "accept")
		return
	}
	version := r.Header.Get(protocolHeader)
	if version != "" && !slices.Contains(s.versions, version) && version < statelessProtocol {
		// A 2025-era header naming no served revision (a 2026-07-28 or
		// later one is judged with the body, modern.go).
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Unsupported "+protocolHeader+"; supported: "+strings.Join(s.versions, ", ")+".", "protocol version")
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.reject(w, r, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Request body exceeds %d bytes.", hub.MaxRequestBytes), "body too large")
			return
		}
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "The request body could not be read.", "body read")
		return
	}
	if isBatch(body) {
		if version >= batchesRemoved {
			s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
				"JSON-RPC batches were removed in protocol "+batchesRemoved+"; send one message per request.", "batch")
			return
		}
		s.batch(w, r, key, body)
		return
	}
	msg, ok := s.decode(w, r, body)
	if !ok {
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok && s.isModern(r, req) {
		s.modern(w, r, key, req)
		return
	}
	if version >= statelessProtocol {
		// A modern header on a response the client posted: not a message
		// of any era this server serves.
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "The body must be a JSON-RPC request or notification.", "modern response")
		return
	}
	s.one(w, r, key, msg, body)
}

// decode reads one JSON-RPC message through the same strict gate as REST:
// duplicate keys, invalid UTF-8, trailing data or excessive depth never
// reach the SDK's lenient decoder. On failure it has answered.
func (s *handler) decode(w http.ResponseWriter, r *http.Request, raw []byte) (jsonrpc.Message, bool) {
	if err := strictjson.Check(raw, envelopeDepth); err != nil {
		var se *strictjson.Error
		problem := "invalid JSON"
		if errors.As(err, &se) {
			problem = se.Problem
		}
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "Parse error: "+problem+".", "strict json")
		return nil, false
	}
	msg, err := decodeMessage(raw)
	if err != nil {
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "The body is not a JSON-RPC message.", "parse")
		return nil, false
	}
	return msg, true
}

// envelopeDepth bounds the JSON-RPC envelope's nesting: the arguments'
// own bound plus the envelope, params and arguments levels.
const envelopeDepth = hub.MaxJSONDepth + 3

// batch answers a 2025-03-26 JSON-RPC batch: each message goes through
// exactly the path it would take alone, and the answers are joined into
// one array. A transport failure of any message (a session that is gone,
// a bad key) is the answer to the whole POST, as it would be to that
// message alone; initialize may not be batched (2025-03-26).
func (s *handler) batch(w http.ResponseWriter, r *http.Request, bearer string, body []byte) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil || len(raws) == 0 {
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "A JSON-RPC batch must be a non-empty array of messages.", "batch")
		return
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		msg, ok := s.decode(w, r, raw)
		if !ok {
			return
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == methodInitialize {
			s.reject(w, r, http.StatusBadRequest, req.ID, jsonrpc.CodeInvalidRequest, "initialize may not be part of a batch.", "batch")
			return
		}
		msgs[i] = msg
	}
	var answers []json.RawMessage
	for i, msg := range msgs {
		sub := r.Clone(r.Context())
		sub.Body = io.NopCloser(bytes.NewReader(raws[i]))
		sub.ContentLength = int64(len(raws[i]))
		ans := newBufferedResponse()
		s.one(ans, sub, bearer, msg, raws[i])
		switch ans.status {
		case http.StatusOK:
			answers = append(answers, bytes.TrimSpace(ans.body.Bytes()))
		case http.StatusAccepted:
		default:
			ans.copyTo(w)
			return
		}
	}
	if len(answers) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	out, err := strictjson.Marshal(answers)
	if err != nil {
		// Unreachable: every answer is JSON the SDK or this layer wrote.
		s.reject(w, r, http.StatusInternalServerError, jsonrpc.ID{}, codeServerError, "Internal error.", "batch encode")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// one answers a single JSON-RPC message: into the response, or into a
// bufferedResponse when it is part of a batch, so that the batch can join
// the answers.
func (s *handler) one(out http.ResponseWriter, r *http.Request, bearer string, msg jsonrpc.Message, raw []byte) {
	var method string
	var id jsonrpc.ID
	call := false
	req, _ := msg.(*jsonrpc.Request)
	if req != nil {
		method, id, call = req.Method, req.ID, req.IsCall()
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))

	sid := r.Header.Get(SessionHeader)
	switch {
	case method == methodInitialize:
		s.initialize(out, r, bearer, id)
	case method == methodDiscover:
		s.serve(out, r, method)
	case sid == "":
		s.reject(out, r, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id required; initialize first.", "no session")
	case method != "" && !served[method] && call:
		// The method is not echoed: nothing of a rejected request is.
		s.reject(out, r, http.StatusOK, id, jsonrpc.CodeMethodNotFound, "Method not found.", "unknown method")
	case method == methodCallTool && call:
		r, done := s.inflight.track(r, sid, bearer, id)
		defer done()
		s.callTool(out, r, bearer, sid, req)
	default:
		if err := s.hub.CheckSession(r.Context(), sid, bearer); err != nil {
			s.fail(out, r, id, err)
			break
		}
		if method == methodCancelled && req != nil {
			s.inflight.cancelled(sid, bearer, req.Params)
		}
		if method != "" && !served[method] {
			// An unknown notification needs no answer.
			out.WriteHeader(http.StatusAccepted)
			break
		}
		s.serve(out, r, method)
	}
}

// callTool runs a tools/call under the rules in the note at the top of
// this file. The tool checks its session in its own batched read; only
// when that answers NOT_PRIMED or AUTH_FAILED, or the tool needs no
// session (get_help), does this layer read the transport's session, to
// turn an ended or unknown one (or one bound to another agent) into the
// spec's 404. An expired one stays the tool's NOT_PRIMED result, which the
// model leaves by calling agent_prime on the same connection.
func (s *handler) callTool(w http.ResponseWriter, r *http.Request, bearer, sid string, req *jsonrpc.Request) {
	id := req.ID
	ok, err := s.hub.SessionIDAuthentic(r.Context(), sid)
	if err != nil {
		s.fail(w, r, id, err)
		return
	}
	if !ok {
		s.fail(w, r, id, apperr.New(apperr.NotPrimed, "Unknown session."))
		return
	}
	if s.sdkCalls {
		buf := newBufferedResponse()
		s.serve(buf, r, methodCallTool)
		p, _ := callParams(req.Params)
		if s.sessionGone(w, r, bearer, sid, id, buf.toolErrorCode(), p != nil && s.open[p.Name]) {
			return
		}
		buf.copyTo(w)
		return
	}
	// The tool runs before anything is written, so that its answer can
	// still become a 404.
	ans, ok := s.directCall(w, r, req)
	if ok && ans.challenge {
		s.fail(w, r, id, apperr.New(apperr.AuthFailed, "Authentication failed."))
		return
	}
	if !ok || s.sessionGone(w, r, bearer, sid, id, ans.code, ans.open) {
		return
	}
	writeResult(w, id, ans)
}

// sessionGone answers 404 (and reports true) when the transport's session
// is ended, unknown or bound to another agent, and the call depends on it:
// the tool failed with NOT_PRIMED or AUTH_FAILED, or needs no session at
// all (open), so that no method succeeds on an ended session. A tool that
// succeeded on the session_id argument does not depend on it.
func (s *handler) sessionGone(w http.ResponseWriter, r *http.Request, bearer, sid string, id jsonrpc.ID, code apperr.Code, open bool) bool {
	if !open && code != apperr.NotPrimed && code != apperr.AuthFailed {
		return false
	}
	err := s.hub.CheckSession(r.Context(), sid, bearer)
	if e, ok := apperr.As(err); ok && e.Code == apperr.NotPrimed {
		s.fail(w, r, id, err)
		return true
	}
	return false
}

// serve lets the SDK answer. A JSON-RPC error the SDK writes keeps its
// code but gets a fixed message (the SDK's own names the rejected method or
// tool), and an HTTP failure it writes as text becomes a JSON-RPC error.
func (s *handler) serve(w http.ResponseWriter, r *http.Request, method string) {
	// This endpoint answers JSON only, which the SDK offers only to
	// clients that also accept an event stream.
	r.Header.Set("Accept", "application/json, text/event-stream")
	buf := newBufferedResponse()
	s.sdk.ServeHTTP(buf, r)
	buf.sanitize(method)
	buf.copyTo(w)
}

// initialize lets the SDK answer first and issues the session id only
// when that answer is a successful InitializeResult. The id is signed and
// stateless (hub.OpenSession): initialize writes nothing.
func (s *handler) initialize(w http.ResponseWriter, r *http.Request, bearer string, id jsonrpc.ID) {
	buf := newBufferedResponse()
	s.serve(buf, r, methodInitialize)
	if !buf.succeeded() {
		buf.copyTo(w)
		return
	}
	sid, err := s.hub.OpenSession(r.Context(), bearer)
	if err != nil {
		s.fail(w, r, id, err)
		return
	}
	w.Header().Set(SessionHeader, sid)
	buf.copyTo(w)
}

func (s *handler) delete(w http.ResponseWriter, r *http.Request) {
	key, err := bearer.Key(r.Header)
	if err != nil {
		// Refused rather than treated as anonymous, so a client cannot
		// believe it authenticated when it did not.
		s.reject(w, r, http.StatusUnauthorized, jsonrpc.ID{}, codeServerError, "Authentication failed.", "authorization header")
		return
	}
	sid := r.Header.Get(SessionHeader)
	if sid == "" {
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id required.", "no session")
		return
	}
	err = s.hub.CloseSession(r.Context(), sid, hub.Credentials{Bearer: key, SessionID: sid, Transport: transport})
	switch {
	case errors.Is(err, hub.ErrUnboundSession):
		w.Header().Set("Allow", "POST")
		s.reject(w, r, http.StatusMethodNotAllowed, jsonrpc.ID{}, codeServerError,
			"This session was never bound by agent_prime; it expires on its own. Send your key to end it now.", "unbound delete")
	case err != nil:
		s.fail(w, r, jsonrpc.ID{}, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// fail answers a domain error raised by this layer (not by a tool) with the
// HTTP status the MCP transport spec gives it.
func (s *handler) fail(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, err error) {
	e := apperr.Normalize(err)
	status, code, message := http.StatusInternalServerError, codeServerError, e.Message
	switch e.Code {
	case apperr.AuthFailed:
		// No detail: which of key, agent or session failed is not told.
		status, message = http.StatusUnauthorized, "Authentication failed."
	case apperr.NotPrimed:
		status, code, message = http.StatusNotFound, codeSessionNotFound, "Session not found or ended; initialize again."
	case apperr.RateLimited:
		status = http.StatusTooManyRequests
	case apperr.TemporarilyUnavailable:
		status = http.StatusServiceUnavailable
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if cause := errors.Unwrap(e); cause != nil {
		s.log.ErrorContext(r.Context(), "mcp request failed", "request_id", reqlog.ID(r.Context()),
			"code", string(e.Code), "status", status, "err", cause)
	}
	s.reject(w, r, status, id, code, message, string(e.Code))
}

// reject writes an HTTP failure with a JSON-RPC error body and logs it.
// reason is a fixed phrase or a code, never request data.
func (s *handler) reject(w http.ResponseWriter, r *http.Request, status int, id jsonrpc.ID, code int64, message, reason string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agentbox"`)
	}
	s.log.InfoContext(r.Context(), "mcp request rejected", "request_id", reqlog.ID(r.Context()),
		"http_method", r.Method, "status", status, "reason", reason)
	writeJSONRPCError(w, status, id, code, message)
}

// rpcErrorBody is a JSON-RPC error response. It is encoded here rather than
// with jsonrpc.EncodeMessage because that omits an unknown id, where JSON-RPC
// 2.0 requires "id": null.
type rpcErrorBody struct {
	JSONRPC string        `json:"jsonrpc"`
	ID      any           `json:"id"`
	Error   jsonrpc.Error `json:"error"`
}

func writeJSONRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string) {
	writeJSONRPCErrorData(w, status, id, code, message, nil)
}

// writeJSONRPCErrorData is writeJSONRPCError with the error's data member
// (omitted when nil).
func writeJSONRPCErrorData(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string, errData json.RawMessage) {
	data, err := json.Marshal(rpcErrorBody{JSONRPC: "2.0", ID: id.Raw(), Error: jsonrpc.Error{Code: code, Message: message, Data: errData}})
	if err != nil {
		// Unreachable: an id decoded from JSON encodes again.
		http.Error(w, message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// readBody reads the whole body under the transport's cap. MaxBytesReader
// counts bytes as they are read, so chunked bodies without Content-Length
// are capped too.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	defer r.Body.Close()
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hub.MaxRequestBytes))
	if err != nil {
		return nil, fmt.Errorf("mcpserver: reading request body: %w", err)
	}
	return b, nil
}

// isJSON reports an application/json media type (parameters allowed).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// acceptsJSON reports an Accept header that allows application/json: this
// endpoint never answers with an event stream, so text/event-stream is
// not required. No Accept header at all accepts anything.
func acceptsJSON(h http.Header) bool {
	vs := h.Values("Accept")
	if len(vs) == 0 {
		return true
	}
	for _, v := range vs {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && (mt == "application/json" || mt == "application/*" || mt == "*/*") {
				return true
			}
		}
	}
	return false
}

// originAllowed applies the spec's Origin rule (2025-11-25: an invalid
// Origin is 403). Clients that are not browsers send none. A browser's
// Origin must be this server's own origin, or, on a loopback listener, a
// loopback origin; anything else is a page on another site, which a
// DNS-rebinding or cross-site attack would use.
func originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return loopback.Listener(r) && loopback.Addr(u.Host)
}

func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// toolErrorCode returns the error code of a tools/call answer that is an
// isError result, or "".
func (b *bufferedResponse) toolErrorCode() apperr.Code {
	b.mu.Lock()
	defer b.mu.Unlock()
	var res struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct {
					Code apperr.Code `json:"code"`
				} `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if b.status != http.StatusOK || json.Unmarshal(b.body.Bytes(), &res) != nil || !res.Result.IsError {
		return ""
	}
	return res.Result.StructuredContent.Error.Code
}

// rpcMessages are the fixed messages that replace the SDK's JSON-RPC error
// messages, which can name the rejected method, tool or value.
var rpcMessages = map[int64]string{
	jsonrpc.CodeParseError:     "Parse error.",
	jsonrpc.CodeInvalidRequest: "Invalid request.",
	jsonrpc.CodeMethodNotFound: "Method not found.",
	jsonrpc.CodeInvalidParams:  "Invalid params.",
	jsonrpc.CodeInternalError:  "Internal error.",
}

// sanitize rewrites the SDK's failures into this layer's form (see serve).
func (b *bufferedResponse) sanitize(method string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status >= 400 && !strings.HasPrefix(b.header.Get("Content-Type"), "application/json") {
		// A text/plain http.Error: the request was refused before any
		// JSON-RPC message was read, so the id is unknown.
		data, _ := json.Marshal(rpcErrorBody{JSONRPC: "2.0", Error: jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid request."}})
		b.header = http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}}
		b.body.Reset()
		b.body.Write(data)
		return
	}
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}
	if json.Unmarshal(b.body.Bytes(), &resp) != nil || resp.Error == nil {
		return
	}
	msg, ok := rpcMessages[resp.Error.Code]
	if !ok {
		msg = "Request failed."
	}
	if method == methodCallTool && resp.Error.Code == jsonrpc.CodeInvalidParams {
		msg = invalidCallMessage
	}
	if len(resp.ID) == 0 {
		resp.ID = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", resp.ID, jsonrpc.Error{Code: resp.Error.Code, Message: msg}})
	if err != nil {
		return
	}
	b.body.Reset()
	b.body.Write(data)
}

// bufferedResponse holds the SDK's answer to initialize until the session is
// open, so that Mcp-Session-Id can be added, or the answer replaced by a
// failure. The SDK writes from its connection goroutine, hence the mutex.
type bufferedResponse struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedResponse() *bufferedResponse {
	return &bufferedResponse{header: http.Header{}}
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// succeeded reports an HTTP 200 JSON body holding a JSON-RPC result.
func (b *bufferedResponse) succeeded() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status != http.StatusOK || !strings.HasPrefix(b.header.Get("Content-Type"), "application/json") {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(b.body.Bytes())
	if err != nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	return ok && resp.Error == nil
}

func (b *bufferedResponse) copyTo(w http.ResponseWriter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, v := range b.header {
		w.Header()[k] = v
	}
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.body.Bytes())
}

// statusWriter remembers the status a response was written with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

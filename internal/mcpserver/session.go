package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/reqlog"
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

// JSON-RPC error codes of this layer's HTTP failures. -32001 is what other
// MCP SDKs answer for an unknown session; -32000 is the generic server
// error.
const (
	codeServerError     int64 = -32000
	codeSessionNotFound int64 = -32001
)

// ServeHTTP is the session layer described in the package comment.
func (s *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rid := reqlog.IDFrom(r.Header.Get(RequestIDHeader))
	w.Header().Set(RequestIDHeader, rid)
	r = r.WithContext(reqlog.With(r.Context(), rid))

	if rebinding(r) {
		s.reject(w, r, http.StatusForbidden, jsonrpc.ID{}, codeServerError, "Forbidden: invalid Host header.", "dns rebinding")
		return
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
	bearer, ok := bearerToken(r.Header)
	if !ok {
		s.reject(w, r, http.StatusUnauthorized, jsonrpc.ID{}, codeServerError, "Authentication failed.", "authorization header")
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
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))

	if isBatch(body) {
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"JSON-RPC batches are not supported; send one message per request.", "batch")
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "The body is not a JSON-RPC message.", "parse")
		return
	}
	var method string
	var id jsonrpc.ID
	if req, ok := msg.(*jsonrpc.Request); ok {
		method, id = req.Method, req.ID
	}

	sid := r.Header.Get(SessionHeader)
	switch {
	case method == methodInitialize:
		s.initialize(w, r, bearer, id)
	case method == methodDiscover:
		s.sdk.ServeHTTP(w, r)
	case sid == "":
		s.reject(w, r, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id required; initialize first.", "no session")
	case method == methodCallTool:
		// The tool checks the session in its own batched read.
		s.sdk.ServeHTTP(w, r)
	default:
		if err := s.hub.CheckSession(r.Context(), sid, bearer); err != nil {
			s.fail(w, r, id, err)
			return
		}
		s.sdk.ServeHTTP(w, r)
	}
}

// initialize lets the SDK answer first and opens the session only when that
// answer is a successful InitializeResult, so a rejected initialize leaves
// nothing in the store.
func (s *handler) initialize(w http.ResponseWriter, r *http.Request, bearer string, id jsonrpc.ID) {
	buf := newBufferedResponse()
	s.sdk.ServeHTTP(buf, r)
	if !buf.succeeded() {
		buf.copyTo(w)
		return
	}
	sid, err := s.hub.OpenSession(r.Context(), bearer, transport)
	if err != nil {
		s.fail(w, r, id, err)
		return
	}
	w.Header().Set(SessionHeader, sid)
	buf.copyTo(w)
}

func (s *handler) delete(w http.ResponseWriter, r *http.Request) {
	bearer, ok := bearerToken(r.Header)
	if !ok {
		s.reject(w, r, http.StatusUnauthorized, jsonrpc.ID{}, codeServerError, "Authentication failed.", "authorization header")
		return
	}
	sid := r.Header.Get(SessionHeader)
	if sid == "" {
		s.reject(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id required.", "no session")
		return
	}
	err := s.hub.CloseSession(r.Context(), sid, hub.Credentials{Bearer: bearer, SessionID: sid, Transport: transport})
	if err != nil {
		s.fail(w, r, jsonrpc.ID{}, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
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
		status, code, message = http.StatusNotFound, codeSessionNotFound, "Session not found or expired; initialize again."
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
	data, err := json.Marshal(rpcErrorBody{JSONRPC: "2.0", ID: id.Raw(), Error: jsonrpc.Error{Code: code, Message: message}})
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

func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// bearerToken extracts the key of 'Authorization: Bearer <key>'. ok is false
// when an Authorization header is present but is not exactly one bearer
// credential: such a request is refused rather than treated as anonymous,
// so a client cannot believe it authenticated when it did not.
func bearerToken(h http.Header) (key string, ok bool) {
	vs := h.Values("Authorization")
	switch len(vs) {
	case 0:
		return "", true
	case 1:
	default:
		return "", false
	}
	scheme, key, found := strings.Cut(strings.TrimSpace(vs[0]), " ")
	key = strings.TrimSpace(key)
	if !found || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return "", false
	}
	return key, true
}

// rebinding reports a request that reached a loopback listener under a
// non-loopback Host: a DNS-rebinding attack from a browser. It is the SDK's
// own rule, applied before this layer touches the store.
func rebinding(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && isLoopback(local.String()) && !isLoopback(r.Host)
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
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

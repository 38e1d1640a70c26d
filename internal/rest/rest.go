// Package rest is the REST transport: one route per registry tool, each a
// thin translation between HTTP and registry.Tool.Invoke.
//
// # Request pipeline
//
// Every request, in this order:
//
//  1. gets a request id (X-Request-Id when plain, else a fresh one), echoed
//     in the response's X-Request-Id header;
//  2. is refused if box_key appears in the query string: secrets do not go
//     in URLs, where proxies and access logs keep them;
//  3. has its credentials read: the key from 'Authorization: Bearer <key>'
//     (scheme case-insensitive; any other form, or two Authorization
//     headers, is AUTH_FAILED) and the session from the Agentbox-Session
//     header;
//  4. has its body capped at hub.MaxRequestBytes, for a declared
//     Content-Length and for a chunked body alike (413, LIMIT_EXCEEDED);
//  5. must declare Content-Type: application/json when it has a body (415);
//  6. passes the strict JSON gate (strictjson.Check) before this package
//     parses the body: merging path and query parameters re-encodes the
//     object, which would otherwise silently drop a duplicate key or replace
//     invalid UTF-8 before Invoke's own gate could see it;
//  7. becomes the tool's arguments object (see arguments) and goes through
//     Invoke: schema validation, authentication, the domain.
//
// # Responses
//
// Success is 200 with the tool's output as JSON. Failure is
// {"error": apperr.Envelope} with the status from Status; AUTH_FAILED adds
// WWW-Authenticate: Bearer, RATE_LIMITED and TEMPORARILY_UNAVAILABLE add
// Retry-After (seconds, at least 1). current_revision is a decimal string
// for seed-000 tools and an integer for seed-002 tools, whose
// expected_version is an integer. An unknown route is 404
// NOT_FOUND_OR_FORBIDDEN (the same bytes as a resource the caller may not
// see) and a known path with another method is 405 with Allow. A panic is
// answered as a generic STORAGE_FAILURE; its value and stack go to the log
// only. Every response carries Cache-Control: no-store: outputs are private
// to the authenticated agent.
//
// # Logging
//
// One JSON line per request: request_id, tool, method, status, code,
// duration_ms. Never the key, the body, the query or the session id. The
// code is "OK" on success, as in the MCP transport's log. The internal
// cause of a STORAGE_FAILURE (and of TEMPORARILY_UNAVAILABLE) is logged as
// err, at error (warn) level: store errors name an operation and an engine
// code, never a value.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/bearer"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/schema"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// Header names of the REST contract.
const (
	// RequestIDHeader carries a caller's or API Gateway's request id in,
	// and the id this request was logged under out.
	RequestIDHeader = "X-Request-Id"
	// SessionHeader carries the session id agent_prime returned.
	SessionHeader = registry.SessionHeader
)

// Transport is the name sessions opened over REST record.
const Transport = "rest"

// dataMessage is the seed-002 rule for IDData tools, verbatim.
const dataMessage = "A literal top-level data property is invalid in REST; send the object directly as the body."

// Status maps an error code to its HTTP status. It is the one table of the
// REST contract (the README's error table is checked against it). Two
// transport-level statuses are not in it because no domain code produces
// them: 413 for a body over hub.MaxRequestBytes (LIMIT_EXCEEDED) and 415 for
// a body that is not declared application/json (INVALID_ARGUMENT).
func Status(code apperr.Code) int {
	switch code {
	case apperr.AuthFailed:
		return http.StatusUnauthorized
	case apperr.NotPrimed:
		return http.StatusPreconditionRequired
	case apperr.ProfileOutdated, apperr.RoomArchived, apperr.RevisionConflict, apperr.IdempotencyConflict:
		return http.StatusConflict
	case apperr.NotFoundOrForbidden:
		return http.StatusNotFound
	case apperr.InvalidArgument, apperr.CursorInvalid:
		return http.StatusBadRequest
	case apperr.LimitExceeded:
		return http.StatusUnprocessableEntity
	case apperr.RateLimited:
		return http.StatusTooManyRequests
	case apperr.TemporarilyUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON body of every REST error response.
type ErrorBody struct {
	Error apperr.Envelope `json:"error"`
}

// WriteError writes e as a REST error response: status (Status(e.Code)
// when 0), the headers its code calls for, and {"error": envelope}. It is
// exported so that the Lambda adapter and the entry points answer
// transport-level failures in exactly the REST form.
func WriteError(w http.ResponseWriter, status int, e *apperr.Error) {
	writeError(w, status, e, nil)
}

// errorContext is what t's errors are answered for over REST (t nil: an
// unrouted request).
func errorContext(t *registry.Tool) apperr.Context {
	c := registry.ErrorContext(t, apperr.REST)
	if t == nil {
		c.Help += " GET " + OpenAPIPath + " lists every route."
	}
	return c
}

func writeError(w http.ResponseWriter, status int, e *apperr.Error, t *registry.Tool) {
	if status == 0 {
		status = Status(e.Code)
	}
	h := w.Header()
	switch {
	case e.RequiredScope != "":
		status = http.StatusForbidden
		h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+e.RequiredScope+`"`)
	case e.Code == apperr.AuthFailed:
		h.Set("WWW-Authenticate", "Bearer")
	case e.Code == apperr.RateLimited, e.Code == apperr.TemporarilyUnavailable:
		h.Set("Retry-After", strconv.Itoa(max(e.RetryAfter, 1)))
	}
	body, err := strictjson.Marshal(struct {
		Error any `json:"error"`
	}{e.EnvelopeIn(errorContext(t))})
	if err != nil {
		// An Envelope is strings, bools and ints: it always encodes.
		panic("rest: encoding an error envelope: " + err.Error())
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// server is the handler New returns.
type server struct {
	h       *hub.Hub
	log     *slog.Logger
	mux     *http.ServeMux
	methods []string
	// authFail counts failed authentications per source (authlimit.go).
	authFail *limits.Local
}

// New returns the REST handler for every tool of r, on h, logging to log
// (slog.Default() when nil). Routes are the tools' Method and Path as Go
// ServeMux patterns; a per-tool Lambda function passes r.Only(name) so that
// it serves exactly its own route.
func New(h *hub.Hub, r *registry.Registry, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	s := &server{h: h, log: log, mux: http.NewServeMux()}
	if cfg := h.LimitConfig(); cfg != nil {
		s.authFail = limits.NewLocal(cfg.AuthFailures)
	}
	for _, t := range r.Tools() {
		s.mux.Handle(t.Method+" "+t.Path, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			s.serve(w, req, t, func(ctx context.Context) (any, int, error) {
				return s.invoke(ctx, w, req, t)
			})
		}))
		if !slices.Contains(s.methods, t.Method) {
			s.methods = append(s.methods, t.Method)
		}
	}
	// The contract is public, like get_help.
	s.mux.HandleFunc("GET "+OpenAPIPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(openAPIDoc())
	})
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	s.serve(w, r, nil, func(context.Context) (any, int, error) {
		if allow := s.allowed(r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			return nil, http.StatusMethodNotAllowed, apperr.New(apperr.InvalidArgument,
				"This route does not accept the request's method; the Allow header lists those it does.")
		}
		return nil, 0, apperr.Forbidden().WithNext("Check the method and path; GET " + OpenAPIPath + " lists every route.")
	})
}

// allowed lists the methods some route would accept for r's path.
func (s *server) allowed(r *http.Request) []string {
	var out []string
	for _, m := range s.methods {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// serve runs one request for t (nil for an unrouted request): request id,
// panic recovery, response, log line. run returns the output, or an error
// with an optional status override.
func (s *server) serve(w http.ResponseWriter, r *http.Request, t *registry.Tool, run func(context.Context) (any, int, error)) {
	start := time.Now()
	tool := ""
	if t != nil {
		tool = t.Name
	}
	id := reqlog.IDFrom(r.Header.Get(RequestIDHeader))
	w.Header().Set(RequestIDHeader, id)
	ctx, tally := metrics.Begin(reqlog.With(r.Context(), id))

	out, status, err := s.recovered(ctx, tool, run)
	var body []byte
	if err == nil {
		if body, err = strictjson.Marshal(out); err != nil {
			err, status = fmt.Errorf("rest: encoding %s output: %w", tool, err), 0
		}
	}

	attrs := []slog.Attr{
		slog.String("request_id", id),
		slog.String("tool", tool),
		slog.String("method", r.Method),
	}
	level := slog.LevelInfo
	code := "OK"
	if err != nil {
		e := apperr.Normalize(err)
		code = string(e.Code)
		if status == 0 {
			status = Status(e.Code)
		}
		writeError(w, status, e, t)
		switch {
		case e.Code == apperr.StorageFailure:
			level = slog.LevelError
		case e.Code == apperr.TemporarilyUnavailable:
			level = slog.LevelWarn
		}
		if level > slog.LevelInfo {
			if cause := errors.Unwrap(e); cause != nil {
				attrs = append(attrs, slog.String("err", cause.Error()))
			}
		}
	} else {
		status = http.StatusOK
		writeJSON(w, status, body)
	}
	took := time.Since(start)
	attrs = append(attrs,
		slog.Int("status", status),
		slog.String("code", code),
		slog.Int64("duration_ms", took.Milliseconds()))
	s.log.LogAttrs(ctx, level, "rest request", attrs...)
	s.h.Metrics().Call(ctx, tally.Call(tool, code, took))
}

// recovered runs run and turns a panic into an opaque STORAGE_FAILURE whose
// value and stack are logged, never sent. http.ErrAbortHandler keeps its
// meaning: the server aborts the response.
func (s *server) recovered(ctx context.Context, tool string, run func(context.Context) (any, int, error)) (out any, status int, err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler {
			panic(p)
		}
		s.log.LogAttrs(ctx, slog.LevelError, "rest panic",
			slog.String("request_id", reqlog.ID(ctx)),
			slog.String("tool", tool),
			slog.String("panic", fmt.Sprint(p)),
			slog.String("stack", string(debug.Stack())))
		out, status = nil, 0
		err = apperr.Wrap(apperr.StorageFailure, "The request could not be completed.", fmt.Errorf("panic: %v", p))
	}()
	return run(ctx)
}

// invoke is one tool call: credentials, body, arguments, Invoke.
func (s *server) invoke(ctx context.Context, w http.ResponseWriter, r *http.Request, t *registry.Tool) (any, int, error) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, 0, apperr.Invalid("", "the query string is malformed")
	}
	if query.Has("box_key") {
		return nil, 0, apperr.New(apperr.InvalidArgument,
			"box_key is not accepted in the query string: URLs are logged and cached.").
			WithNext("Send your key as 'Authorization: Bearer <key>' (or box_key in the JSON body), with a new key if this one may have been recorded.")
	}
	if query.Has(registry.SessionArgument) {
		return nil, 0, apperr.New(apperr.InvalidArgument,
			"session_id is not accepted in the query string: URLs are logged and cached.").
			WithNext("Send the session_id agent_prime returned as the " + SessionHeader + " header.")
	}
	key, err := bearerKey(r.Header)
	if err != nil {
		return nil, 0, err
	}
	sessions := r.Header.Values(SessionHeader)
	if len(sessions) > 1 {
		return nil, 0, apperr.Invalid(SessionHeader, "send the header once")
	}
	body, status, err := readBody(w, r)
	if err != nil {
		return nil, status, err
	}
	args, err := arguments(t, r, query, body)
	if err != nil {
		return nil, 0, err
	}
	cr := hub.Credentials{Bearer: key, Transport: Transport}
	if len(sessions) == 1 {
		cr.SessionID, cr.SessionHandle = sessions[0], true
	}
	sources := authSources(r, key)
	if err := s.authBlocked(sources); err != nil {
		return nil, 0, err
	}
	out, err := t.Invoke(ctx, s.h, cr, args)
	s.countAuthFailure(sources, err)
	return out, 0, err
}

// bearerKey is the request's bearer key (package bearer's rule). No
// header is no key; any other form, or several headers, is AUTH_FAILED
// rather than being ignored, so a caller who meant to authenticate learns
// at once that it did not.
func bearerKey(h http.Header) (string, error) {
	key, err := bearer.Key(h)
	switch {
	case errors.Is(err, bearer.ErrMultiple):
		return "", apperr.New(apperr.AuthFailed, "Send exactly one Authorization header.")
	case err != nil:
		return "", apperr.New(apperr.AuthFailed, "The Authorization header must be 'Bearer <key>'.")
	}
	return key, nil
}

// readBody reads the body under the cap and checks its media type. A
// Content-Length over the cap is refused before reading anything; a chunked
// body is cut off by http.MaxBytesReader, which also tells the server to
// close the connection rather than drain the rest.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	tooLarge := func() ([]byte, int, error) {
		return nil, http.StatusRequestEntityTooLarge,
			apperr.Limit("request body", strconv.Itoa(hub.MaxRequestBytes>>10)+" KiB")
	}
	if r.ContentLength > hub.MaxRequestBytes {
		return tooLarge()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hub.MaxRequestBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		return nil, 0, apperr.Invalid("", "the request body could not be read")
	}
	if len(body) == 0 {
		return nil, 0, nil
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" || (params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
		return nil, http.StatusUnsupportedMediaType,
			apperr.New(apperr.InvalidArgument, "A request body must be sent as Content-Type: application/json (UTF-8).")
	}
	return body, 0, nil
}

// arguments builds the tool's arguments object from the request.
//
// Flat tools: the body object (empty body = {}), plus each path parameter
// as a string, plus, for GET routes, each query parameter converted to the
// type its input schema property declares. IDData tools: {"id": <path id>,
// "data": <body>} where the body is the data object itself, so a top-level
// "data" property is refused; other path and query parameters go into data.
// A parameter that is also a body field is refused rather than letting one
// silently win.
func arguments(t *registry.Tool, r *http.Request, query url.Values, body []byte) ([]byte, error) {
	obj := map[string]json.RawMessage{}
	if len(body) > 0 {
		if err := strictjson.Check(body, hub.MaxJSONDepth); err != nil {
			return nil, apperr.Invalid("", err.Error())
		}
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, apperr.Invalid("", "request body is not a JSON object")
		}
	}
	props := t.Input
	if t.Shape == registry.IDData {
		if _, ok := obj["data"]; ok {
			return nil, apperr.New(apperr.InvalidArgument, dataMessage)
		}
		props = props.Properties["data"]
	}

	var id json.RawMessage
	pathParams := t.PathParams()
	for _, p := range pathParams {
		v := r.PathValue(p)
		if !utf8.ValidString(v) {
			return nil, apperr.Invalid(p, "must be valid UTF-8")
		}
		if t.Shape == registry.IDData && p == "id" {
			id = jsonString(v)
			continue
		}
		if _, dup := obj[p]; dup {
			return nil, apperr.Invalid(p, "path parameters are not body fields")
		}
		obj[p] = jsonString(v)
	}

	if len(query) > 0 {
		if t.Method != http.MethodGet {
			return nil, apperr.New(apperr.InvalidArgument, "This route takes no query parameters; send arguments in the JSON body.")
		}
		names := make([]string, 0, len(query))
		for name := range query {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			var prop *schema.Schema
			if props != nil && !slices.Contains(pathParams, name) {
				prop = props.Properties[name]
			}
			if prop == nil {
				// A plain name is named, as the schema names an unknown
				// property; anything else is the caller's text and is not
				// echoed.
				switch {
				case slices.Contains(pathParams, name):
					return nil, apperr.Invalid(name, "is a path parameter: send it in the path, not in the query string")
				case schema.PlainName(name):
					return nil, apperr.Invalid(name, "is not a query parameter of this tool; help names its parameters")
				}
				return nil, apperr.New(apperr.InvalidArgument, "The query string has an unknown parameter; help names this tool's parameters.")
			}
			if len(query[name]) != 1 {
				return nil, apperr.Invalid(name, "must be given once")
			}
			if _, dup := obj[name]; dup {
				return nil, apperr.Invalid(name, "is given both in the query string and in the body")
			}
			v, err := queryValue(name, prop, query[name][0])
			if err != nil {
				return nil, err
			}
			obj[name] = v
		}
	}

	if t.Shape == registry.IDData {
		data, err := strictjson.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("rest: encoding data: %w", err)
		}
		wrapped := map[string]json.RawMessage{"data": data}
		if id != nil {
			wrapped["id"] = id
		}
		obj = wrapped
	}
	args, err := strictjson.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("rest: encoding arguments: %w", err)
	}
	return args, nil
}

// queryValue converts one query parameter by its schema type. Only scalar
// properties can travel in a query string; the value must be valid UTF-8,
// since encoding it would otherwise replace bytes with U+FFFD.
func queryValue(name string, prop *schema.Schema, v string) (json.RawMessage, error) {
	if !utf8.ValidString(v) {
		return nil, apperr.Invalid(name, "must be valid UTF-8")
	}
	switch prop.Type {
	case "string":
		return jsonString(v), nil
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, apperr.Invalid(name, "must be an integer")
		}
		return json.RawMessage(strconv.FormatInt(n, 10)), nil
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !isFinite(f) {
			return nil, apperr.Invalid(name, "must be a number")
		}
		return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "boolean":
		switch v {
		case "true", "false":
			return json.RawMessage(v), nil
		}
		return nil, apperr.Invalid(name, "must be true or false")
	}
	return nil, apperr.Invalid(name, "cannot be sent in the query string")
}

func isFinite(f float64) bool { return f-f == 0 }

func jsonString(s string) json.RawMessage {
	b, err := strictjson.Marshal(s)
	if err != nil {
		panic("rest: encoding a string: " + err.Error())
	}
	return b
}

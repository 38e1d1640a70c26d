// Package lambdahttp adapts an http.Handler to AWS Lambda behind an API
// Gateway HTTP API (payload format 2.0), so that a Lambda function serves
// exactly the handler that the local server and the tests serve.
//
// # Request mapping
//
//   - method from requestContext.http.method; path and query from rawPath
//     and rawQueryString (not the decoded path, so %2F stays a byte of one
//     segment, as net/http would see it);
//   - headers as API Gateway sends them: names lower-cased, repeated values
//     already comma-joined into one; cookies travel in their own array and
//     become one Cookie header;
//   - the body, base64-decoded when isBase64Encoded. The size cap is checked
//     on the encoded text before decoding (hub.MaxRequestBytes, or its base64
//     length, hub.MaxRequestBytes*4/3+4), so an oversized event costs no
//     decoding; over it the answer is 413 LIMIT_EXCEEDED in the REST error
//     form;
//   - requestContext.requestId becomes X-Request-Id, replacing any client
//     value, so that the function's log lines join API Gateway's.
//
// # Response mapping
//
// The handler's response is buffered (Lambda returns one payload). Each
// header becomes one value (repeated values comma-joined), except Set-Cookie,
// which goes to the cookies array because cookie values may contain commas.
// The body is sent as text when it is valid UTF-8 and base64-encoded
// otherwise.
package lambdahttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/rest"
)

// MaxEventBody is the longest event body accepted before decoding: the
// base64 length of hub.MaxRequestBytes (with padding), or
// hub.MaxRequestBytes itself for a body sent as text.
const MaxEventBody = hub.MaxRequestBytes*4/3 + 4

// Handler returns a Lambda handler for API Gateway HTTP API events that
// serves next. It never returns an error: every failure is an HTTP response
// in the REST error form, because a Lambda error would reach the caller as
// API Gateway's bare 500.
func Handler(next http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		ctx, cancel := requestDeadline(ctx)
		defer cancel()
		w := newBuffer()
		serve(ctx, w, ev, next)
		return w.response(), nil
	}
}

// deadlineMargin is how long before the function's own deadline a request's
// work is cut off, so that a slow engine ends in the envelope's retryable
// TEMPORARILY_UNAVAILABLE (a cancelled context) instead of the function
// timing out and API Gateway answering with a body of its own.
const deadlineMargin = time.Second

// requestDeadline bounds ctx at the invocation's deadline less
// deadlineMargin (unchanged when the invocation has no deadline, or too
// little time for a margin).
func requestDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) <= 2*deadlineMargin {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, dl.Add(-deadlineMargin))
}

func serve(ctx context.Context, w *buffer, ev events.APIGatewayV2HTTPRequest, next http.Handler) {
	defer func() {
		if p := recover(); p != nil {
			// The handler's own recovery (rest) did not catch it; answer
			// generically and keep the details for the log.
			slog.Default().LogAttrs(ctx, slog.LevelError, "lambdahttp panic",
				slog.String("request_id", ev.RequestContext.RequestID),
				slog.String("panic", fmt.Sprint(p)),
				slog.String("stack", string(debug.Stack())))
			w.reset()
			rest.WriteError(w, 0, apperr.New(apperr.StorageFailure, "The request could not be completed."))
		}
	}()
	r, status, err := request(ctx, ev)
	if err != nil {
		if id := ev.RequestContext.RequestID; id != "" {
			w.Header().Set(rest.RequestIDHeader, id)
		}
		rest.WriteError(w, status, err)
		return
	}
	next.ServeHTTP(w, r)
}

// request converts an event into the *http.Request the handler sees. On
// failure it returns the status and error to answer with.
func request(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (*http.Request, int, *apperr.Error) {
	limit := hub.MaxRequestBytes
	if ev.IsBase64Encoded {
		limit = MaxEventBody
	}
	if len(ev.Body) > limit {
		return nil, http.StatusRequestEntityTooLarge, apperr.Limit("request body", strconv.Itoa(hub.MaxRequestBytes>>10)+" KiB")
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			return nil, http.StatusBadRequest, apperr.Invalid("", "the request body is not valid base64")
		}
		if len(body) > hub.MaxRequestBytes {
			return nil, http.StatusRequestEntityTooLarge, apperr.Limit("request body", strconv.Itoa(hub.MaxRequestBytes>>10)+" KiB")
		}
	}

	method := ev.RequestContext.HTTP.Method
	if method == "" {
		return nil, http.StatusBadRequest, apperr.Invalid("", "the event has no HTTP method")
	}
	rawPath := ev.RawPath
	if rawPath == "" {
		rawPath = "/"
	}
	requestURI := rawPath
	if ev.RawQueryString != "" {
		requestURI += "?" + ev.RawQueryString
	}
	u, err := url.ParseRequestURI(requestURI)
	if err != nil {
		return nil, http.StatusBadRequest, apperr.Invalid("", "the request path is malformed")
	}

	r, err := http.NewRequestWithContext(ctx, method, requestURI, bytes.NewReader(body))
	if err != nil {
		return nil, http.StatusBadRequest, apperr.Invalid("", "the request is malformed")
	}
	r.URL = u
	r.RequestURI = requestURI
	r.ContentLength = int64(len(body))
	if len(body) == 0 {
		r.Body = http.NoBody
	}
	proto := ev.RequestContext.HTTP.Protocol
	if major, minor, ok := http.ParseHTTPVersion(proto); ok {
		r.Proto, r.ProtoMajor, r.ProtoMinor = proto, major, minor
	}
	for name, value := range ev.Headers {
		r.Header.Set(name, value)
	}
	// net/http servers keep these out of Header: Host is r.Host, and the
	// length is the decoded body's, not the event's.
	r.Header.Del("Content-Length")
	r.Header.Del("Host")
	if len(ev.Cookies) > 0 {
		r.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	r.Header.Set(rest.RequestIDHeader, ev.RequestContext.RequestID)
	if ev.RequestContext.RequestID == "" {
		r.Header.Del(rest.RequestIDHeader)
	}
	r.Host = ev.RequestContext.DomainName
	if h := ev.Headers["host"]; h != "" {
		r.Host = h
	}
	r.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	return r, 0, nil
}

// buffer is the ResponseWriter a Lambda invocation writes into. Flush is a
// no-op so that streaming handlers (SSE) work; their output arrives whole.
type buffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBuffer() *buffer { return &buffer{header: http.Header{}} }

func (b *buffer) Header() http.Header { return b.header }

func (b *buffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *buffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// Flush implements http.Flusher.
func (b *buffer) Flush() {}

func (b *buffer) reset() {
	b.header, b.status = http.Header{}, 0
	b.body.Reset()
}

func (b *buffer) response() events.APIGatewayV2HTTPResponse {
	res := events.APIGatewayV2HTTPResponse{StatusCode: b.status, Headers: map[string]string{}}
	if res.StatusCode == 0 {
		res.StatusCode = http.StatusOK
	}
	for name, values := range b.header {
		if len(values) == 0 {
			continue
		}
		if name == "Set-Cookie" {
			res.Cookies = append(res.Cookies, values...)
			continue
		}
		res.Headers[name] = strings.Join(values, ", ")
	}
	body := b.body.Bytes()
	if utf8.Valid(body) {
		res.Body = string(body)
	} else {
		res.Body = base64.StdEncoding.EncodeToString(body)
		res.IsBase64Encoded = true
	}
	return res
}

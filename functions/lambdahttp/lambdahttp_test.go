package lambdahttp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentbox/agentbox/functions/lambdahttp"
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// event loads testdata/name, a hand-written API Gateway HTTP API (payload
// 2.0) event, replacing {{NAME}} placeholders with vars, and decodes it the
// way the Lambda runtime does.
func event(t *testing.T, name string, vars map[string]string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vars {
		raw = bytes.ReplaceAll(raw, []byte("{{"+k+"}}"), []byte(v))
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return ev
}

// seen is what a handler observed of a request.
type seen struct {
	method, path, rawPath, query, host, remote string
	header                                     http.Header
	body                                       []byte
	contentLength                              int64
}

func recordingHandler(got *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		*got = seen{method: r.Method, path: r.URL.Path, rawPath: r.URL.EscapedPath(), query: r.URL.RawQuery,
			host: r.Host, remote: r.RemoteAddr, header: r.Header.Clone(), body: body, contentLength: r.ContentLength}
		w.WriteHeader(http.StatusNoContent)
	})
}

// TestRequestMapping checks, field by field, what a handler sees of each
// fixture event.
func TestRequestMapping(t *testing.T) {
	vars := map[string]string{"BOX_KEY": "abk_test", "SESSION": "s_test"}
	saveBody := `{"expected_revision":"0","idempotency_key":"lambda-save-1","body_md":"Saved through API Gateway ✓"}`
	for _, tc := range []struct {
		fixture string
		want    seen
		headers map[string]string
	}{
		{"get_help.json", seen{method: "GET", path: "/v1/help/checkpoint_save", rawPath: "/v1/help/checkpoint_save",
			host: "r3pmxmplak.execute-api.eu-west-1.amazonaws.com", remote: "203.0.113.17", body: []byte{}},
			map[string]string{"X-Request-Id": "Qk3xZgH9joEEJ7w=", "User-Agent": "agentbox-client/0.3 (go1.26)", "Content-Length": ""}},
		{"agent_prime.json", seen{method: "POST", path: "/v1/agent/prime", rawPath: "/v1/agent/prime",
			host: "r3pmxmplak.execute-api.eu-west-1.amazonaws.com", remote: "203.0.113.17", body: []byte("{}"), contentLength: 2},
			map[string]string{"Authorization": "Bearer abk_test", "Content-Type": "application/json",
				"X-Request-Id": "Qk3xhgH8joEEJ8Q="}},
		{"checkpoint_save_base64.json", seen{method: "PUT", path: "/v1/checkpoint", rawPath: "/v1/checkpoint",
			host: "r3pmxmplak.execute-api.eu-west-1.amazonaws.com", remote: "203.0.113.17", body: []byte(saveBody), contentLength: int64(len(saveBody))},
			map[string]string{"Agentbox-Session": "s_test", "Content-Type": "application/json; charset=utf-8"}},
		{"checkpoint_get_cookies_query.json", seen{method: "GET", path: "/v1/checkpoint", rawPath: "/v1/checkpoint",
			query: "box_key=abk_test&note=a%20b%2Fc",
			host:  "r3pmxmplak.execute-api.eu-west-1.amazonaws.com", remote: "203.0.113.17", body: []byte{}},
			map[string]string{"Cookie": "theme=dark; consent=analytics,ads", "Accept": "application/json, text/plain;q=0.5",
				"X-Forwarded-For": "198.51.100.4, 203.0.113.17", "Host": ""}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			var got seen
			res, err := lambdahttp.Handler(recordingHandler(&got))(context.Background(), event(t, tc.fixture, vars))
			if err != nil || res.StatusCode != http.StatusNoContent {
				t.Fatalf("Handler(%s) = %d, %v; want 204, nil", tc.fixture, res.StatusCode, err)
			}
			hdr := got.header
			got.header = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Handler(%s): handler saw\n%+v\nwant\n%+v", tc.fixture, got, tc.want)
			}
			for k, v := range tc.headers {
				if g := hdr.Get(k); g != v {
					t.Errorf("Handler(%s): header %s = %q, want %q", tc.fixture, k, g, v)
				}
				if v != "" && len(hdr.Values(k)) != 1 {
					t.Errorf("Handler(%s): header %s has values %q, want one", tc.fixture, k, hdr.Values(k))
				}
			}
		})
	}
}

// TestResponseMapping: single-value headers, Set-Cookie in cookies, text
// bodies as text and binary bodies as base64.
func TestResponseMapping(t *testing.T) {
	ev := event(t, "get_help.json", nil)
	for _, tc := range []struct {
		name       string
		handler    http.HandlerFunc
		want       events.APIGatewayV2HTTPResponse
		wantHeader map[string]string
	}{
		{"Text", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Add("Vary", "Accept")
			w.Header().Add("Vary", "Authorization")
			w.Header().Add("Set-Cookie", "a=1; Path=/")
			w.Header().Add("Set-Cookie", "b=2, with comma")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"ok":"✓"}`)
		}, events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: `{"ok":"✓"}`, Cookies: []string{"a=1; Path=/", "b=2, with comma"}},
			map[string]string{"Vary": "Accept, Authorization"}},
		{"Binary", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte{0xff, 0x00, 0xfe})
		}, events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: base64.StdEncoding.EncodeToString([]byte{0xff, 0x00, 0xfe}), IsBase64Encoded: true}, nil},
		{"NothingWritten", func(http.ResponseWriter, *http.Request) {},
			events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil},
		{"Flushed", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "data: 2\n\n")
		}, events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "data: 1\n\ndata: 2\n\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := lambdahttp.Handler(tc.handler)(context.Background(), ev)
			if err != nil {
				t.Fatalf("Handler: %v", err)
			}
			headers := res.Headers
			res.Headers = nil
			if !reflect.DeepEqual(res, tc.want) {
				t.Errorf("Handler response = %+v, want %+v", res, tc.want)
			}
			for k, v := range tc.wantHeader {
				if headers[k] != v {
					t.Errorf("response header %s = %q, want %q", k, headers[k], v)
				}
			}
		})
	}
}

// TestBodyCap: oversized bodies are refused before they are decoded or
// reach the handler.
func TestBodyCap(t *testing.T) {
	justOver := make([]byte, hub.MaxRequestBytes+1)
	for _, tc := range []struct {
		name    string
		body    string
		base64  bool
		refused bool
	}{
		{"TextAtCap", strings.Repeat("a", hub.MaxRequestBytes), false, false},
		{"TextOverCap", strings.Repeat("a", hub.MaxRequestBytes+1), false, true},
		{"Base64AtCap", base64.StdEncoding.EncodeToString(make([]byte, hub.MaxRequestBytes)), true, false},
		{"Base64DecodesOverCap", base64.StdEncoding.EncodeToString(justOver), true, true},
		{"Base64TextOverCap", strings.Repeat("A", lambdahttp.MaxEventBody+1), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := event(t, "agent_prime.json", map[string]string{"BOX_KEY": "k"})
			ev.Body, ev.IsBase64Encoded = tc.body, tc.base64
			reached := false
			res, err := lambdahttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				reached = true
			}))(context.Background(), ev)
			if err != nil {
				t.Fatalf("Handler: %v", err)
			}
			if !tc.refused {
				if !reached || res.StatusCode != 200 {
					t.Errorf("%d-character body: got %d (handler reached: %v), want it served", len(tc.body), res.StatusCode, reached)
				}
				return
			}
			if reached || res.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("%d-character body: got %d (handler reached: %v), want 413 before the handler", len(tc.body), res.StatusCode, reached)
			}
			var body rest.ErrorBody
			if err := json.Unmarshal([]byte(res.Body), &body); err != nil || body.Error.Code != apperr.LimitExceeded {
				t.Errorf("413 body %s: want a LIMIT_EXCEEDED envelope (%v)", res.Body, err)
			}
		})
	}
}

func TestMalformedEvents(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*events.APIGatewayV2HTTPRequest)
	}{
		{"BadBase64", func(ev *events.APIGatewayV2HTTPRequest) { ev.Body, ev.IsBase64Encoded = "not base64!", true }},
		{"NoMethod", func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = "" }},
		{"RelativePath", func(ev *events.APIGatewayV2HTTPRequest) { ev.RawPath = "v1/help" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := event(t, "get_help.json", nil)
			tc.change(&ev)
			res, err := lambdahttp.Handler(http.NotFoundHandler())(context.Background(), ev)
			if err != nil || res.StatusCode != http.StatusBadRequest {
				t.Errorf("Handler(%s) = %d, %v; want 400, nil", tc.name, res.StatusCode, err)
			}
		})
	}
}

func TestPanicIsAnEnvelope(t *testing.T) {
	res, err := lambdahttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Partial", "1")
		panic("boom ZQXJ")
	}))(context.Background(), event(t, "get_help.json", nil))
	if err != nil || res.StatusCode != 500 || strings.Contains(res.Body, "ZQXJ") || res.Headers["X-Partial"] != "" {
		t.Errorf("Handler(panicking) = %d %v %s, %v; want a clean generic 500", res.StatusCode, res.Headers, res.Body, err)
	}
}

// TestThroughREST runs the fixtures through the adapter into the real REST
// handler: help, prime, a base64 save with the session, and a query string
// carrying box_key, which REST refuses.
func TestThroughREST(t *testing.T) {
	w := hubtest.New(t, teststores.All()[0], hubtest.Config{})
	h, ctx, alice := w.Hub, w.Ctx, w.Alice
	var logs bytes.Buffer
	fn := lambdahttp.Handler(rest.New(h, registry.New(), reqlog.NewLogger(&logs, slog.LevelInfo)))
	vars := map[string]string{"BOX_KEY": alice.BoxKey}

	invoke := func(fixture string, wantStatus int, out any) events.APIGatewayV2HTTPResponse {
		t.Helper()
		ev := event(t, fixture, vars)
		res, err := fn(ctx, ev)
		if err != nil || res.StatusCode != wantStatus {
			t.Fatalf("invoking %s: got %d %s, %v; want %d", fixture, res.StatusCode, res.Body, err, wantStatus)
		}
		if res.IsBase64Encoded || res.Headers["Content-Type"] != "application/json" {
			t.Errorf("invoking %s: Content-Type %q base64 %v, want application/json as text", fixture, res.Headers["Content-Type"], res.IsBase64Encoded)
		}
		if got, want := res.Headers["X-Request-Id"], reqlog.IDFrom(ev.RequestContext.RequestID); want == ev.RequestContext.RequestID && got != want {
			t.Errorf("invoking %s: X-Request-Id = %q, want API Gateway's %q", fixture, got, want)
		}
		if out != nil {
			if err := json.Unmarshal([]byte(res.Body), out); err != nil {
				t.Fatalf("invoking %s: body %s: %v", fixture, res.Body, err)
			}
		}
		return res
	}

	var help struct {
		Contract struct{ Name string } `json:"contract"`
	}
	invoke("get_help.json", 200, &help)
	if help.Contract.Name != "checkpoint_save" {
		t.Errorf("get_help.json: contract %q, want checkpoint_save", help.Contract.Name)
	}

	var prime struct {
		SessionID string `json:"session_id"`
	}
	invoke("agent_prime.json", 200, &prime)
	vars["SESSION"] = prime.SessionID

	var saved struct {
		Checkpoint struct {
			Revision string `json:"revision"`
			BodyMD   string `json:"body_md"`
		} `json:"checkpoint"`
	}
	invoke("checkpoint_save_base64.json", 200, &saved)
	if saved.Checkpoint.Revision != "1" || saved.Checkpoint.BodyMD != "Saved through API Gateway ✓" {
		t.Errorf("checkpoint_save_base64.json: got revision %q body %q, want \"1\" and the decoded text", saved.Checkpoint.Revision, saved.Checkpoint.BodyMD)
	}

	var refused rest.ErrorBody
	res := invoke("checkpoint_get_cookies_query.json", 400, &refused)
	if refused.Error.Code != apperr.InvalidArgument || !strings.Contains(refused.Error.NextAction, "Authorization") {
		t.Errorf("checkpoint_get_cookies_query.json: envelope %+v, want INVALID_ARGUMENT pointing to the Authorization header", refused.Error)
	}
	if strings.Contains(res.Body, alice.BoxKey) || strings.Contains(logs.String(), alice.BoxKey) {
		t.Errorf("the key sent in the query string was echoed or logged")
	}
}

// TestRequestDeadlineBeforeFunctionDeadline: the handler's work ends a
// margin before the invocation's deadline, so a slow engine is answered by
// the service (a cancelled context) rather than by the function timing out.
func TestRequestDeadlineBeforeFunctionDeadline(t *testing.T) {
	fnDeadline := time.Now().Add(10 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), fnDeadline)
	defer cancel()
	var got time.Time
	var had bool
	_, err := lambdahttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, had = r.Context().Deadline()
		w.WriteHeader(http.StatusNoContent)
	}))(ctx, event(t, "get_help.json", nil))
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	if !had || !got.Before(fnDeadline) {
		t.Errorf("request deadline = %v (set %t), want one before the function's %v", got, had, fnDeadline)
	}
}

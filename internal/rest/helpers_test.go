package rest_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/reqlog/reqlogtest"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// env is a REST server over real net/http on one store, with the hubtest
// world: a box holding alice and bob and a second box holding carol.
type env struct {
	w     *hubtest.World
	t     *testing.T
	h     *hub.Hub
	srv   *httptest.Server
	logs  *reqlogtest.Buffer
	box   string
	alice *hub.AgentInfo
	bob   *hub.AgentInfo
	carol *hub.AgentInfo
}

func boltStore(t *testing.T) store.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	if err != nil {
		t.Fatalf("bolt.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newEnv serves rest.New on st, wrapped by wrap when it is not nil.
func newEnv(t *testing.T, st store.Store, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	return newEnvOpts(t, st, hub.Options{}, wrap)
}

// newEnvOpts is newEnv with a hub configured by opts.
func newEnvOpts(t *testing.T, st store.Store, opts hub.Options, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	w := hubtest.New(t, teststores.Adapter{}, hubtest.Config{Store: st, Options: opts, Role: "coder"})
	logs := &reqlogtest.Buffer{}
	var handler = conformsToOpenAPI(t, rest.New(w.Hub, registry.New(registrytest.Guard(t)), reqlog.NewLogger(logs, slog.LevelDebug)))
	if wrap != nil {
		handler = wrap(handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return &env{w: w, t: t, h: w.Hub, srv: srv, logs: logs, box: w.Box, alice: w.Alice, bob: w.Bob, carol: w.Mallory}
}

// room creates a room of box main with members.
func (e *env) room(name string, members ...*hub.AgentInfo) *hub.RoomInfo {
	return e.w.MustRoom(e.box, name, members...)
}

// req is one HTTP request to the server.
type req struct {
	method, path string
	// key is sent as 'Authorization: Bearer <key>' unless auth is set.
	key string
	// auth, when set, is the raw Authorization header.
	auth    string
	session string
	body    string
	// contentType defaults to application/json when body is not empty;
	// "-" sends none.
	contentType string
	header      map[string]string
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

// do sends r; failures to send are reported on t (the calling test or
// subtest, which may differ from the env's).
func (e *env) do(t *testing.T, r req) resp {
	t.Helper()
	hr, err := http.NewRequest(r.method, e.srv.URL+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatalf("http.NewRequest(%s %s): %v", r.method, r.path, err)
	}
	if r.body == "" {
		hr.Body, hr.ContentLength = nil, 0
	}
	switch {
	case r.auth != "":
		hr.Header.Set("Authorization", r.auth)
	case r.key != "":
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	if r.session != "" {
		hr.Header.Set(rest.SessionHeader, r.session)
	}
	switch {
	case r.contentType == "-":
	case r.contentType != "":
		hr.Header.Set("Content-Type", r.contentType)
	case r.body != "":
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	return e.send(t, hr)
}

func (e *env) send(t *testing.T, hr *http.Request) resp {
	t.Helper()
	res, err := e.srv.Client().Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", hr.Method, hr.URL.Path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", hr.Method, hr.URL.Path, err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: body}
}

// decode unmarshals the response body into v.
func (r resp) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response body %s: %v", r.body, err)
	}
}

// envelope returns the error envelope, failing unless the body is exactly
// {"error": {...}}.
func (r resp) envelope(t *testing.T) apperr.Envelope {
	t.Helper()
	var body map[string]json.RawMessage
	r.decode(t, &body)
	if len(body) != 1 || body["error"] == nil {
		t.Fatalf("response body %s: want exactly {\"error\": envelope}", r.body)
	}
	var env apperr.Envelope
	if err := json.Unmarshal(body["error"], &env); err != nil {
		t.Fatalf("error envelope %s: %v", body["error"], err)
	}
	return env
}

// wantError checks status, code and the content type of an error response.
func (r resp) wantError(t *testing.T, call string, status int, code apperr.Code) apperr.Envelope {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: got HTTP %d %s, want %d %s", call, r.status, r.body, status, code)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type = %q, want application/json", call, ct)
	}
	env := r.envelope(t)
	if env.Code != code {
		t.Fatalf("%s: got code %s (%s), want %s", call, env.Code, env.Message, code)
	}
	if env.Message == "" || env.NextAction == "" || env.Help == "" {
		t.Errorf("%s: envelope %+v lacks message, next_action or help", call, env)
	}
	return env
}

// wantOK checks a 200 and decodes the body into v (when not nil).
func (r resp) wantOK(t *testing.T, call string, v any) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: got HTTP %d %s, want 200", call, r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type = %q, want application/json", call, ct)
	}
	if v != nil {
		r.decode(t, v)
	}
}

// prime calls agent_prime with key and returns the session id.
func (e *env) prime(key string) string {
	e.t.Helper()
	var out struct {
		SessionID string `json:"session_id"`
	}
	e.do(e.t, req{method: "POST", path: "/v1/agent/prime", key: key}).wantOK(e.t, "POST /v1/agent/prime", &out)
	if out.SessionID == "" {
		e.t.Fatalf("POST /v1/agent/prime: no session_id")
	}
	return out.SessionID
}

// as returns the calls of the agent with key in session sid.
func (e *env) as(t *testing.T, key, sid string) func(method, path, body string) resp {
	return func(method, path, body string) resp {
		return e.do(t, req{method: method, path: path, key: key, session: sid, body: body})
	}
}

type checkpointOut struct {
	Checkpoint struct {
		Revision string `json:"revision"`
		BodyMD   string `json:"body_md"`
	} `json:"checkpoint"`
	Replayed bool `json:"replayed"`
}

func saveBody(expected, idem, text string) string {
	b, _ := json.Marshal(map[string]string{"expected_revision": expected, "idempotency_key": idem, "body_md": text})
	return string(b)
}

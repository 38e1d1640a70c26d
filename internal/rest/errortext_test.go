package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
)

// TestBodiesAreNotHTMLEscaped: text carrying "<", ">" and "&" comes back
// in a REST body as itself, result and error alike.
func TestBodiesAreNotHTMLEscaped(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	key := e.alice.BoxKey
	sid := e.prime(key)
	const markup = "<key> & <b>bold</b>"
	e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", "markup-1", markup)}).
		wantOK(t, "PUT /v1/checkpoint", nil)
	for _, tc := range []struct {
		name string
		r    req
		want string
	}{
		{"read", req{method: "GET", path: "/v1/checkpoint", key: key, session: sid}, markup},
		{"error", req{method: "GET", path: "/v1/checkpoint", auth: "Basic x"}, "Bearer <key>"},
	} {
		body := string(e.do(t, tc.r).body)
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(body, esc) {
				t.Errorf("%s %s: body %s has the HTML escape %s", tc.r.method, tc.r.path, body, esc)
			}
		}
		if !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: body %s, want it to contain %q", tc.r.method, tc.r.path, body, tc.want)
		}
	}
}

// TestErrorsSpeakREST: over REST, help is the tool's own help route, a
// read's INVALID_ARGUMENT names the unexpected field and no mutation id,
// a seed-002 conflict speaks of expected_version and operation_key, and an
// unrouted request points at the route list.
func TestErrorsSpeakREST(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	key := e.alice.BoxKey
	sid := e.prime(key)

	env := e.do(t, req{method: "GET", path: "/v1/checkpoint?sesion_id=x", key: key, session: sid}).
		wantError(t, "GET /v1/checkpoint?sesion_id=x", http.StatusBadRequest, apperr.InvalidArgument)
	if !strings.Contains(env.Message, "sesion_id") {
		t.Errorf("GET /v1/checkpoint?sesion_id=x: message %q, want it to name sesion_id", env.Message)
	}
	if strings.Contains(env.NextAction, "mutation") || strings.Contains(env.NextAction, "_key") {
		t.Errorf("GET /v1/checkpoint?sesion_id=x: next_action %q speaks of a mutation id; a read has none", env.NextAction)
	}
	if want := "GET /v1/help/checkpoint_get"; !strings.Contains(env.Help, want) || strings.Contains(env.Help, "get_help {") {
		t.Errorf("GET /v1/checkpoint?sesion_id=x: help %q, want the REST route %s", env.Help, want)
	}

	put := req{method: "PUT", path: "/v1/memory/working-context", key: key, session: sid, body: `{"expected_version":0,"content":"v1"}`}
	e.do(t, put).wantOK(t, "PUT /v1/memory/working-context", nil)
	stale := e.do(t, put)
	var seed002 struct {
		Error struct {
			apperr.Envelope
			CurrentRevision uint64 `json:"current_revision"`
		} `json:"error"`
	}
	stale.decode(t, &seed002)
	env = seed002.Error.Envelope
	if stale.status != http.StatusConflict || env.Code != apperr.RevisionConflict || seed002.Error.CurrentRevision != 1 {
		t.Fatalf("PUT /v1/memory/working-context stale: HTTP %d %s, want 409 REVISION_CONFLICT with current_revision 1", stale.status, stale.body)
	}
	if !strings.Contains(env.Message, "expected_version") || strings.Contains(env.Message, "revision you sent") {
		t.Errorf("PUT /v1/memory stale: message %q, want it in terms of expected_version", env.Message)
	}
	if !strings.Contains(env.NextAction, "operation_key") || strings.Contains(env.NextAction, "idempotency_key") {
		t.Errorf("PUT /v1/memory stale: next_action %q, want seed 002's operation_key", env.NextAction)
	}
	if want := "GET /v1/help/save_memory"; !strings.Contains(env.Help, want) {
		t.Errorf("PUT /v1/memory stale: help %q, want %s", env.Help, want)
	}

	env = e.do(t, req{method: "GET", path: "/v1/no-such-route", key: key}).
		wantError(t, "GET /v1/no-such-route", http.StatusNotFound, apperr.NotFoundOrForbidden)
	if !strings.Contains(env.NextAction+env.Help, "/v1/openapi.json") || strings.Contains(env.NextAction+env.Help, "README") {
		t.Errorf("GET /v1/no-such-route: next_action %q help %q, want the route list, not the README", env.NextAction, env.Help)
	}
}

package rest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestRateLimited429: over the write limit a save is 429 RATE_LIMITED with
// Retry-After equal to retry_after_seconds; it writes nothing, and the same
// request after the wait succeeds.
func TestRateLimited429(t *testing.T) {
	clock := teststores.NewClock()
	cfg := limits.Config{AgentMutations: limits.Rate{PerSecond: 0.25, Burst: 2}}
	st, err := bolt.Open(filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{Now: clock.Now})
	if err != nil {
		t.Fatalf("bolt.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := newEnvOpts(t, st, hub.Options{Now: clock.Now, Limits: &cfg}, nil)
	key := e.alice.BoxKey
	sid := e.prime(key) // one write of the burst
	e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", "s1", "one")}).
		wantOK(t, "first save", nil)
	second := req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("1", "s2", "two")}
	r := e.do(t, second)
	env := r.wantError(t, "save over the limit", http.StatusTooManyRequests, apperr.RateLimited)
	if env.RetryAfterSeconds == nil || *env.RetryAfterSeconds < 1 || !env.Retryable {
		t.Fatalf("envelope %+v: want retryable with retry_after_seconds ≥ 1", env)
	}
	if got := r.header.Get("Retry-After"); got != strconv.Itoa(*env.RetryAfterSeconds) {
		t.Errorf("Retry-After = %q, want %d as in the envelope", got, *env.RetryAfterSeconds)
	}
	var cp checkpointOut
	e.do(t, req{method: "GET", path: "/v1/checkpoint", key: key, session: sid}).wantOK(t, "GET /v1/checkpoint", &cp)
	if cp.Checkpoint.BodyMD != "one" {
		t.Fatalf("checkpoint %q after a limited save, want %q", cp.Checkpoint.BodyMD, "one")
	}
	clock.Advance(time.Duration(*env.RetryAfterSeconds) * time.Second)
	cp = checkpointOut{}
	e.do(t, second).wantOK(t, "same save after Retry-After", &cp)
	if cp.Replayed || cp.Checkpoint.Revision != "2" {
		t.Errorf("save after the wait: revision %s replayed %v, want 2, not a replay", cp.Checkpoint.Revision, cp.Replayed)
	}
}

// countingWrites counts store writes.
type countingWrites struct {
	store.Store
	n atomic.Int64
}

func (c *countingWrites) Write(ctx context.Context, ops []store.Op) error {
	c.n.Add(1)
	return c.Store.Write(ctx, ops)
}

// wrongSecret returns key with its secret changed: well formed, naming the
// same agent and key id, failing authentication.
func wrongSecret(t *testing.T, key string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(key, "abk_"))
	if err != nil {
		t.Fatalf("decoding a key: %v", err)
	}
	raw[len(raw)-1] ^= 1
	return "abk_" + base64.RawURLEncoding.EncodeToString(raw)
}

// TestAuthFailuresLimitedPerSource: unauthenticated and failed requests
// write nothing; past the burst of failures a source is answered 429
// before the store is read at all. Requests without a well-formed key
// count against the address, a well-formed key against its key id.
func TestAuthFailuresLimitedPerSource(t *testing.T) {
	st := &countingWrites{Store: boltStore(t)}
	cfg := limits.Config{AuthFailures: limits.Rate{PerSecond: 0.01, Burst: 3}}
	e := newEnvOpts(t, st, hub.Options{Limits: &cfg}, nil)
	st.n.Store(0)
	for i, r := range []req{
		{method: "GET", path: "/v1/checkpoint"},
		{method: "POST", path: "/v1/agent/prime", key: "abk_not-a-key"},
		{method: "PUT", path: "/v1/checkpoint", body: saveBody("0", "x", "x")},
	} {
		e.do(t, r).wantError(t, fmt.Sprintf("request without a well-formed key %d", i), http.StatusUnauthorized, apperr.AuthFailed)
	}
	e.do(t, req{method: "POST", path: "/v1/agent/prime"}).
		wantError(t, "keyless failure past the burst", http.StatusTooManyRequests, apperr.RateLimited)
	bad := wrongSecret(t, e.alice.BoxKey)
	for i := range 3 {
		e.do(t, req{method: "POST", path: "/v1/agent/prime", key: bad}).
			wantError(t, fmt.Sprintf("wrong secret %d", i), http.StatusUnauthorized, apperr.AuthFailed)
	}
	r := e.do(t, req{method: "POST", path: "/v1/agent/prime", key: bad})
	env := r.wantError(t, "failure past the burst", http.StatusTooManyRequests, apperr.RateLimited)
	if r.header.Get("Retry-After") == "" || env.RetryAfterSeconds == nil {
		t.Errorf("429 without Retry-After / retry_after_seconds: %v %+v", r.header, env)
	}
	if n := st.n.Load(); n != 0 {
		t.Errorf("%d store writes for unauthenticated and failed requests, want 0", n)
	}
}

// TestAuthFailuresSpareValidKeys: one client retries a rotated-out key
// and another a malformed one, far past the burst, from the address a
// valid agent shares with them (every local agent is 127.0.0.1): each
// failing client is stopped, and the valid agent is never refused.
func TestAuthFailuresSpareValidKeys(t *testing.T) {
	cfg := limits.Config{AuthFailures: limits.Rate{PerSecond: 0.01, Burst: 3}}
	e := newEnvOpts(t, boltStore(t), hub.Options{Limits: &cfg}, nil)
	stale := e.bob.BoxKey
	if _, err := e.h.Admin().RotateKey(context.Background(), e.bob.AgentID); err != nil {
		t.Fatal(err)
	}
	key := e.alice.BoxKey
	sid := e.prime(key)
	for i := range 12 {
		for _, failing := range []string{stale, "abk_not-a-key"} {
			r := e.do(t, req{method: "GET", path: "/v1/profile", key: failing})
			want := http.StatusUnauthorized
			if i >= 3 {
				want = http.StatusTooManyRequests
			}
			if r.status != want {
				t.Fatalf("failing client, call %d: HTTP %d, want %d", i, r.status, want)
			}
		}
		e.do(t, req{method: "GET", path: "/v1/profile", key: key, session: sid}).
			wantOK(t, fmt.Sprintf("valid agent on the same address, call %d", i), nil)
	}
}

// TestControlCharacterCorpusREST: every name and title field an agent
// sets over REST refuses each control class with a 400 that echoes
// nothing of the value.
func TestControlCharacterCorpusREST(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	room := e.room("probe-room", e.alice)
	key := e.alice.BoxKey
	sid := e.prime(key)
	var created struct {
		Space struct {
			ID string `json:"id"`
		} `json:"space"`
	}
	e.do(t, req{method: "POST", path: "/v1/spaces", key: key, session: sid,
		body: `{"request_id":"r","title":"target","goal":"g","visibility":"public"}`}).wantOK(t, "create_space", &created)

	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	fields := []struct {
		name         string
		method, path string
		body         func(v, k string) string
	}{
		{"space title (create)", "POST", "/v1/spaces", func(v, k string) string {
			return js(map[string]any{"request_id": "r", "title": v, "goal": "g", "visibility": "public"})
		}},
		{"space title (update)", "POST", "/v1/spaces/" + created.Space.ID, func(v, k string) string {
			return js(map[string]any{"expected_version": 1, "title": v, "goal": "g", "status": "active"})
		}},
		{"card role", "PUT", "/v1/directory/self", func(v, k string) string {
			return js(map[string]any{"expected_revision": "0", "idempotency_key": k, "role": v})
		}},
		{"card contact_notes", "PUT", "/v1/directory/self", func(v, k string) string {
			return js(map[string]any{"expected_revision": "0", "idempotency_key": k, "contact_notes": v})
		}},
		{"file display_name", "POST", "/v1/messages", func(v, k string) string {
			return js(map[string]any{"idempotency_key": k, "body_md": "see file",
				"destination": map[string]any{"kind": "room", "room_id": room.RoomID},
				"files":       []any{map[string]any{"url": "https://example.com/a.md", "display_name": v}}})
		}},
	}
	const marker = "zzprobe"
	classes := []struct{ class, chars string }{
		{"C0", "\x01\x1b"}, {"DEL", "\x7f"}, {"C1", "\u0085\u009b"},
		{"bidi override", "\u202a\u202b\u202c\u202d\u202e"}, {"bidi isolate", "\u2066\u2067\u2068\u2069"},
	}
	for _, fd := range fields {
		for _, c := range classes {
			for _, ch := range c.chars {
				call := fmt.Sprintf("%s with %s U+%04X", fd.name, c.class, ch)
				r := e.do(t, req{method: fd.method, path: fd.path, key: key, session: sid, body: fd.body("ok"+string(ch)+marker, "p")})
				r.wantError(t, call, http.StatusBadRequest, apperr.InvalidArgument)
				if strings.Contains(string(r.body), marker) {
					t.Errorf("%s: response %s echoes the rejected value", call, r.body)
				}
			}
		}
	}
	// The same requests with a clean value pass validation (a conflict
	// on the card's revision is past it), so the 400s above were the
	// characters'.
	for i, fd := range fields {
		r := e.do(t, req{method: fd.method, path: fd.path, key: key, session: sid, body: fd.body("a clean value", fmt.Sprint("clean-", i))})
		if r.status == http.StatusBadRequest {
			t.Errorf("%s with a clean value: HTTP 400 %s", fd.name, r.body)
		}
	}
}

// TestErrorPathsDoNotEcho: a marker placed in each part of a request that
// can be rejected never comes back in the response.
func TestErrorPathsDoNotEcho(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	key := e.alice.BoxKey
	sid := e.prime(key)
	const marker = "zzprobe"
	for _, r := range []req{
		{method: "GET", path: "/v1/" + marker},
		{method: "DELETE", path: "/v1/checkpoint/" + marker},
		{method: "GET", path: "/v1/spaces/" + marker, key: key, session: sid},
		{method: "GET", path: "/v1/messages/" + marker, key: key, session: sid},
		// A property or parameter name is named in the error only when it
		// is a plain snake_case name (schema.PlainName); these are not.
		{method: "GET", path: "/v1/checkpoint?" + marker + "-q=1", key: key, session: sid},
		{method: "GET", path: "/v1/checkpoint", key: "abk_" + marker},
		{method: "GET", path: "/v1/checkpoint", auth: "Basic " + marker},
		{method: "GET", path: "/v1/checkpoint", key: key, session: "s_" + marker},
		{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: `{"` + marker + `-p":1}`},
		{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: `{"expected_revision":"` + marker + `"}`},
		{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: `{"body_md":` + marker + `}`},
		{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: `{"a":1}`, contentType: "text/" + marker},
		{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", marker+" !", "x")},
		{method: "PUT", path: "/v1/memory/" + marker + "_X", key: key, session: sid, body: `{"expected_version":0,"content":"x"}`},
		{method: "POST", path: "/v1/spaces", key: key, session: sid, body: `{"request_id":"r","title":"t","goal":"g","visibility":"` + marker + `"}`},
	} {
		got := e.do(t, r)
		if got.status < 400 {
			t.Errorf("%s %s: HTTP %d, want an error", r.method, r.path, got.status)
		}
		if strings.Contains(string(got.body), marker) {
			t.Errorf("%s %s: response %s echoes the rejected value", r.method, r.path, got.body)
		}
	}
}

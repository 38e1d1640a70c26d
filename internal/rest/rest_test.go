package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestCheckpointFlow is the session-and-self path end to end, on both
// storage adapters: prime, read "0", save with CAS, lose a CAS, replay,
// and reuse a mutation ID for another payload.
func TestCheckpointFlow(t *testing.T) {
	hubtest.ForEachAdapterSerial(t, func(t *testing.T, a teststores.Adapter) {
		e := newEnv(t, a.Open(t, nil), nil)
		key := e.alice.BoxKey
		sid := e.prime(key)

		var got checkpointOut
		e.do(t, req{method: "GET", path: "/v1/checkpoint", key: key, session: sid}).wantOK(t, "GET /v1/checkpoint", &got)
		if got.Checkpoint.Revision != "0" {
			t.Fatalf("GET /v1/checkpoint before any save: revision = %q, want \"0\"", got.Checkpoint.Revision)
		}

		first := saveBody("0", "cp-1", "first")
		got = checkpointOut{}
		e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: first}).wantOK(t, "PUT /v1/checkpoint expected 0", &got)
		if got.Checkpoint.Revision != "1" || got.Replayed {
			t.Fatalf("PUT /v1/checkpoint expected 0: got revision %q replayed %v, want \"1\" and not replayed", got.Checkpoint.Revision, got.Replayed)
		}

		env := e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", "cp-2", "stale")}).
			wantError(t, "PUT /v1/checkpoint with stale expected 0", http.StatusConflict, apperr.RevisionConflict)
		if env.CurrentRevision == nil || *env.CurrentRevision != "1" {
			t.Errorf("REVISION_CONFLICT current_revision = %v, want \"1\"", env.CurrentRevision)
		}
		if env.Retryable {
			t.Errorf("REVISION_CONFLICT retryable = true, want false")
		}

		got = checkpointOut{}
		e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: first}).wantOK(t, "PUT /v1/checkpoint replay", &got)
		if !got.Replayed || got.Checkpoint.Revision != "1" {
			t.Errorf("replayed PUT: got revision %q replayed %v, want \"1\" and replayed", got.Checkpoint.Revision, got.Replayed)
		}
		got = checkpointOut{}
		e.do(t, req{method: "GET", path: "/v1/checkpoint", key: key, session: sid}).wantOK(t, "GET /v1/checkpoint", &got)
		if got.Checkpoint.Revision != "1" || got.Checkpoint.BodyMD != "first" {
			t.Errorf("GET after replay: got revision %q body %q, want \"1\" \"first\" (no second effect)", got.Checkpoint.Revision, got.Checkpoint.BodyMD)
		}

		e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", "cp-1", "changed")}).
			wantError(t, "PUT /v1/checkpoint reusing cp-1 for another payload", http.StatusConflict, apperr.IdempotencyConflict)
	})
}

func TestNotPrimed(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	for _, tc := range []struct {
		name, session string
	}{
		{"NoSession", ""},
		{"MalformedSession", "not-a-session"},
		{"UnknownSession", "s_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := e.do(t, req{method: "GET", path: "/v1/checkpoint", key: e.alice.BoxKey, session: tc.session}).
				wantError(t, "GET /v1/checkpoint session "+tc.session, http.StatusPreconditionRequired, apperr.NotPrimed)
			// The way out over REST is the header, not a tool argument.
			if env.Message != "No live session: it is missing, unknown or expired." ||
				env.NextAction != "Call agent_prime, then send its session_id as the Agentbox-Session header on every call." {
				t.Errorf("NOT_PRIMED over REST = %q / %q, want what is missing and the header to send", env.Message, env.NextAction)
			}
			e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: e.alice.BoxKey, session: tc.session, body: saveBody("0", "k", "x")}).
				wantError(t, "PUT /v1/checkpoint session "+tc.session, http.StatusPreconditionRequired, apperr.NotPrimed)
		})
	}
}

func TestAuthFailed(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	ctx := context.Background()
	aliceSID := e.prime(e.alice.BoxKey)
	e.prime(e.bob.BoxKey)

	revoked, err := e.h.Admin().CreateAgent(ctx, e.box, "dave", "")
	if err != nil {
		t.Fatalf("CreateAgent(dave): %v", err)
	}
	daveSID := e.prime(revoked.BoxKey)
	if _, err := e.h.Admin().RevokeKey(ctx, revoked.AgentID, ""); err != nil {
		t.Fatalf("RevokeKey(dave): %v", err)
	}
	withBoxKey := func(k string) string {
		var m map[string]string
		_ = json.Unmarshal([]byte(saveBody("0", "k-auth", "x")), &m)
		m["box_key"] = k
		b, _ := json.Marshal(m)
		return string(b)
	}

	for _, tc := range []struct {
		name string
		r    req
	}{
		{"MissingKey", req{method: "GET", path: "/v1/checkpoint", session: aliceSID}},
		{"GarbageKey", req{method: "GET", path: "/v1/checkpoint", key: "abk_garbage", session: aliceSID}},
		{"BasicScheme", req{method: "GET", path: "/v1/checkpoint", auth: "Basic YWxpY2U6cHc=", session: aliceSID}},
		{"BearerWithoutKey", req{method: "GET", path: "/v1/checkpoint", auth: "Bearer", session: aliceSID}},
		{"RevokedKey", req{method: "GET", path: "/v1/checkpoint", key: revoked.BoxKey, session: daveSID}},
		{"RevokedKeyPrime", req{method: "POST", path: "/v1/agent/prime", key: revoked.BoxKey}},
		{"OtherAgentsKeyWithMySession", req{method: "GET", path: "/v1/checkpoint", key: e.bob.BoxKey, session: aliceSID}},
		{"OtherBoxKeyWithMySession", req{method: "GET", path: "/v1/checkpoint", key: e.carol.BoxKey, session: aliceSID}},
		{"BearerAndBoxKeyNameDifferentAgents", req{method: "PUT", path: "/v1/checkpoint", key: e.alice.BoxKey, session: aliceSID, body: withBoxKey(e.bob.BoxKey)}},
		{"BoxKeyOfOtherAgentAlone", req{method: "PUT", path: "/v1/checkpoint", session: aliceSID, body: withBoxKey(e.bob.BoxKey)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, tc.r)
			r.wantError(t, tc.r.method+" "+tc.r.path, http.StatusUnauthorized, apperr.AuthFailed)
			if got := r.header.Get("WWW-Authenticate"); got != "Bearer" {
				t.Errorf("WWW-Authenticate = %q, want \"Bearer\"", got)
			}
		})
	}

	t.Run("LowercaseSchemeAccepted", func(t *testing.T) {
		e.do(t, req{method: "GET", path: "/v1/checkpoint", auth: "bearer " + e.alice.BoxKey, session: aliceSID}).
			wantOK(t, "GET /v1/checkpoint with 'bearer' scheme", nil)
	})
	t.Run("BoxKeyInBodyAccepted", func(t *testing.T) {
		e.do(t, req{method: "PUT", path: "/v1/checkpoint", session: aliceSID, body: withBoxKey(e.alice.BoxKey)}).
			wantOK(t, "PUT /v1/checkpoint with box_key in the body", nil)
	})
}

// TestBoxIsolation: two boxes hold resources of the same names — a room
// "general", a public space "Shared", a memory note "plan", an agent named
// alice — and carol, of the other box, must see only her own: every
// listing, read and search answers from her box, and an id of this box is
// answered exactly like an id that does not exist. Nothing carol receives
// names a resource of alice's box.
func TestBoxIsolation(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	ctx := context.Background()
	adm := e.h.Admin()
	aliceSID, carolSID := e.prime(e.alice.BoxKey), e.prime(e.carol.BoxKey)
	alice, carol := e.as(t, e.alice.BoxKey, aliceSID), e.as(t, e.carol.BoxKey, carolSID)

	// Same names on both sides.
	rooms := map[string]string{}
	for who, box := range map[string]string{"alice": e.box, "carol": e.carol.BoxID} {
		r, err := adm.CreateRoom(ctx, box, "general", "")
		if err != nil {
			t.Fatalf("CreateRoom(general, %s's box): %v", who, err)
		}
		rooms[who] = r.RoomID
	}
	for who, ag := range map[string]*hub.AgentInfo{"alice": e.alice, "carol": e.carol} {
		if _, err := adm.AddMember(ctx, rooms[who], ag.AgentID); err != nil {
			t.Fatalf("AddMember(%s): %v", who, err)
		}
		if _, err := adm.SetDirectoryListed(ctx, ag.AgentID, true); err != nil {
			t.Fatalf("SetDirectoryListed(%s): %v", who, err)
		}
	}
	otherAlice, err := adm.CreateAgent(ctx, e.carol.BoxID, "alice", "coder")
	if err != nil {
		t.Fatalf("CreateAgent(alice in carol's box): %v", err)
	}
	if _, err := adm.SetDirectoryListed(ctx, otherAlice.AgentID, true); err != nil {
		t.Fatalf("SetDirectoryListed: %v", err)
	}
	alice("PUT", "/v1/checkpoint", saveBody("0", "k", "alice's checkpoint")).wantOK(t, "PUT /v1/checkpoint (alice)", nil)
	alice("PUT", "/v1/memory/plan", `{"expected_version":0,"content":"alice's plan"}`).wantOK(t, "PUT /v1/memory/plan (alice)", nil)
	carol("PUT", "/v1/memory/plan", `{"expected_version":0,"content":"carol's plan"}`).wantOK(t, "PUT /v1/memory/plan (carol)", nil)
	var space struct {
		Space struct {
			ID string `json:"id"`
		} `json:"space"`
	}
	alice("POST", "/v1/spaces", `{"request_id":"r1","title":"Shared","goal":"g","visibility":"public"}`).wantOK(t, "POST /v1/spaces (alice)", &space)
	carol("POST", "/v1/spaces", `{"request_id":"r1","title":"Shared","goal":"g","visibility":"public"}`).wantOK(t, "POST /v1/spaces (carol)", nil)

	// What carol may never see.
	leaks := []string{e.alice.AgentID, e.bob.AgentID, rooms["alice"], space.Space.ID, "alice's", e.box}
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/v1/checkpoint", "", ""},
		{"GET", "/v1/rooms", "", rooms["carol"]},
		{"GET", "/v1/memory/plan", "", "carol's plan"},
		{"GET", "/v1/memory", "", "plan"},
		{"GET", "/v1/spaces", "", "Shared"},
		{"POST", "/v1/directory/search", `{"query":"alice"}`, otherAlice.AgentID},
	} {
		r := carol(c.method, c.path, c.body)
		r.wantOK(t, "carol "+c.method+" "+c.path, nil)
		if !strings.Contains(string(r.body), c.want) {
			t.Errorf("carol %s %s = %s, want her own %q", c.method, c.path, r.body, c.want)
		}
		for _, l := range leaks {
			if strings.Contains(string(r.body), l) {
				t.Errorf("carol %s %s = %s: leaks %q of the other box", c.method, c.path, r.body, l)
			}
		}
	}
	const unknown = "00000000-0000-4000-8000-0000000000ff"
	for _, c := range []struct{ other, unknown string }{
		{"/v1/rooms/" + rooms["alice"], "/v1/rooms/" + unknown},
		{"/v1/rooms/" + rooms["alice"] + "/brief", "/v1/rooms/" + unknown + "/brief"},
		{"/v1/spaces/" + space.Space.ID, "/v1/spaces/" + unknown},
		{"/v1/directory/" + e.alice.AgentID, "/v1/directory/" + unknown},
	} {
		got, want := carol("GET", c.other, ""), carol("GET", c.unknown, "")
		want.wantError(t, "carol GET "+c.unknown, http.StatusNotFound, apperr.NotFoundOrForbidden)
		if got.status != want.status || string(got.body) != string(want.body) {
			t.Errorf("carol GET %s = %d %s, want exactly the unknown id's %d %s", c.other, got.status, got.body, want.status, want.body)
		}
	}
}

func TestProfileOutdated(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	key := e.alice.BoxKey
	sid := e.prime(key)
	if _, err := e.h.Admin().SetProfile(context.Background(), e.alice.AgentID, []byte(`{"role":"reviewer"}`)); err != nil {
		t.Fatalf("SetProfile: %v", err)
	}
	e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", "k1", "x")}).
		wantError(t, "PUT /v1/checkpoint after SetProfile", http.StatusConflict, apperr.ProfileOutdated)

	var prof struct {
		Profile struct {
			Version string `json:"version"`
			Role    string `json:"role"`
		} `json:"profile"`
	}
	e.do(t, req{method: "GET", path: "/v1/profile", key: key, session: sid}).wantOK(t, "GET /v1/profile", &prof)
	if prof.Profile.Version != "2" || prof.Profile.Role != "reviewer" {
		t.Errorf("GET /v1/profile: got version %q role %q, want \"2\" \"reviewer\"", prof.Profile.Version, prof.Profile.Role)
	}
	e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", "k2", "x")}).
		wantOK(t, "PUT /v1/checkpoint after GET /v1/profile", nil)
}

// TestStrictJSON: bodies the strict gate or the schema refuse are 400, and
// neither the response nor the log ever carries the rejected value.
func TestStrictJSON(t *testing.T) {
	const marker = "ZQXJ-MARKER-7731"
	e := newEnv(t, boltStore(t), nil)
	key := e.alice.BoxKey
	sid := e.prime(key)
	deep := `{"expected_revision":"0","idempotency_key":"k","body_md":"x","payload":` +
		strings.Repeat(`{"`+marker+`":`, 100) + `1` + strings.Repeat(`}`, 100) + `}`

	for _, tc := range []struct {
		name string
		body string
	}{
		{"UnknownField", `{"expected_revision":"0","idempotency_key":"k","body_md":"x","` + marker + `":"` + marker + `"}`},
		{"DuplicateKey", `{"expected_revision":"0","idempotency_key":"k","body_md":"` + marker + `","body_md":"` + marker + `2"}`},
		{"DuplicateKeyEscaped", `{"expected_revision":"0","idempotency_key":"k","body_md":"` + marker + `","body\u005fmd":"x"}`},
		{"InvalidUTF8", `{"expected_revision":"0","idempotency_key":"k","body_md":"` + marker + "\xff\xfe" + `"}`},
		{"LoneSurrogate", `{"expected_revision":"0","idempotency_key":"k","body_md":"` + marker + `\ud800"}`},
		{"Depth100", deep},
		{"NotAnObject", `["` + marker + `"]`},
		{"TrailingData", `{"expected_revision":"0","idempotency_key":"k","body_md":"x"} "` + marker + `"`},
		{"RevisionAsNumber", `{"expected_revision":0,"idempotency_key":"` + marker + `","body_md":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: tc.body})
			r.wantError(t, "PUT /v1/checkpoint "+tc.name, http.StatusBadRequest, apperr.InvalidArgument)
			if bytes.Contains(r.body, []byte(marker)) {
				t.Errorf("PUT /v1/checkpoint %s: response %s echoes the rejected value", tc.name, r.body)
			}
		})
	}
	if strings.Contains(e.logs.String(), marker) {
		t.Errorf("log echoes a rejected value:\n%s", e.logs)
	}
	var got checkpointOut
	e.do(t, req{method: "GET", path: "/v1/checkpoint", key: key, session: sid}).wantOK(t, "GET /v1/checkpoint", &got)
	if got.Checkpoint.Revision != "0" {
		t.Errorf("after rejected saves: revision = %q, want \"0\"", got.Checkpoint.Revision)
	}
}

func TestContentType(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	key := e.alice.BoxKey
	sid := e.prime(key)
	rev := 0
	for i, tc := range []struct {
		contentType string
		want        int
	}{
		{"-", http.StatusUnsupportedMediaType},
		{"text/plain", http.StatusUnsupportedMediaType},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"application/json; charset=latin1", http.StatusUnsupportedMediaType},
		{"application/json", http.StatusOK},
		{"Application/JSON; charset=UTF-8", http.StatusOK},
	} {
		r := e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, contentType: tc.contentType,
			body: saveBody(strconv.Itoa(rev), "ct-"+strconv.Itoa(i), "x")})
		call := "PUT /v1/checkpoint with Content-Type " + tc.contentType
		if tc.want == http.StatusOK {
			r.wantOK(t, call, nil)
			rev++
			continue
		}
		r.wantError(t, call, tc.want, apperr.InvalidArgument)
	}
	// No body needs no Content-Type.
	e.do(t, req{method: "GET", path: "/v1/checkpoint", key: key, session: sid}).wantOK(t, "GET /v1/checkpoint without body", nil)
}

// TestBodyCap: a body over hub.MaxRequestBytes is 413 LIMIT_EXCEEDED,
// whether it declares its length or arrives chunked.
func TestBodyCap(t *testing.T) {
	var sawChunked bool
	e := newEnv(t, boltStore(t), func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked" {
				sawChunked = true
			}
			next.ServeHTTP(w, r)
		})
	})
	key := e.alice.BoxKey
	sid := e.prime(key)
	big := `{"expected_revision":"0","idempotency_key":"k","body_md":"` + strings.Repeat("a", hub.MaxRequestBytes) + `"}`

	for _, tc := range []struct {
		name    string
		chunked bool
	}{{"ContentLength", false}, {"Chunked", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(big)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length
			}
			hr, err := http.NewRequest("PUT", e.srv.URL+"/v1/checkpoint", body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.chunked {
				hr.ContentLength = -1
			}
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("Authorization", "Bearer "+key)
			hr.Header.Set(rest.SessionHeader, sid)
			r := e.send(t, hr)
			env := r.wantError(t, "PUT /v1/checkpoint with a body over the cap", http.StatusRequestEntityTooLarge, apperr.LimitExceeded)
			if strings.Contains(env.Message, "aaaa") {
				t.Errorf("envelope message %q echoes the body", env.Message)
			}
		})
	}
	if !sawChunked {
		t.Errorf("the chunked case did not reach the server with Transfer-Encoding: chunked")
	}
}

func TestGetHelp(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	var got struct {
		Contract struct {
			Name string `json:"name"`
			REST struct {
				Method string `json:"method"`
				Path   string `json:"path"`
			} `json:"rest"`
		} `json:"contract"`
	}
	e.do(t, req{method: "GET", path: "/v1/help/checkpoint_save"}).wantOK(t, "GET /v1/help/checkpoint_save", &got)
	if got.Contract.Name != "checkpoint_save" || got.Contract.REST.Method != "PUT" || got.Contract.REST.Path != "/v1/checkpoint" {
		t.Errorf("GET /v1/help/checkpoint_save: got %+v, want the checkpoint_save contract (PUT /v1/checkpoint)", got.Contract)
	}

	for _, tc := range []struct {
		name string
		r    req
		want string // a fragment the message must contain
	}{
		{"UnknownTool", req{method: "GET", path: "/v1/help/no_such_tool"}, "tool"},
		{"PathParamAsBodyField", req{method: "GET", path: "/v1/help/agent_prime", body: `{"tool":"checkpoint_save"}`}, "path parameters are not body fields"},
		{"PathParamAsQuery", req{method: "GET", path: "/v1/help/agent_prime?tool=checkpoint_save"}, "tool: is a path parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := e.do(t, tc.r).wantError(t, tc.r.method+" "+tc.r.path, http.StatusBadRequest, apperr.InvalidArgument)
			if !strings.Contains(env.Message, tc.want) {
				t.Errorf("%s %s: message %q, want it to mention %q", tc.r.method, tc.r.path, env.Message, tc.want)
			}
		})
	}
}

// TestQueryString: secrets never travel in URLs, and a parameter the
// contract does not name is refused without being echoed.
func TestQueryString(t *testing.T) {
	const marker = "ZQXJqueryMARKER"
	e := newEnv(t, boltStore(t), nil)
	key := e.alice.BoxKey
	sid := e.prime(key)

	for _, tc := range []struct {
		name string
		r    req
		want string
	}{
		{"BoxKeyOnGet", req{method: "GET", path: "/v1/checkpoint?box_key=" + key, session: sid}, "Authorization"},
		{"BoxKeyOnPut", req{method: "PUT", path: "/v1/checkpoint?box_key=" + key, session: sid, body: saveBody("0", "k", "x")}, "Authorization"},
		{"BoxKeyWithBearer", req{method: "GET", path: "/v1/checkpoint?box_key=" + key, key: key, session: sid}, "Authorization"},
		{"UnknownParameter", req{method: "GET", path: "/v1/checkpoint?" + marker + "=" + marker, key: key, session: sid}, "unknown parameter"},
		{"QueryOnPut", req{method: "PUT", path: "/v1/checkpoint?" + marker + "=1", key: key, session: sid, body: saveBody("0", "k", "x")}, "no query parameters"},
		{"MalformedQuery", req{method: "GET", path: "/v1/checkpoint?a=%zz", key: key, session: sid}, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, tc.r)
			env := r.wantError(t, tc.r.method+" "+tc.name, http.StatusBadRequest, apperr.InvalidArgument)
			if !strings.Contains(env.Message+env.NextAction, tc.want) {
				t.Errorf("%s: envelope %+v, want it to mention %q", tc.name, env, tc.want)
			}
			for _, secret := range []string{key, marker} {
				if bytes.Contains(r.body, []byte(secret)) {
					t.Errorf("%s: response %s echoes a query value", tc.name, r.body)
				}
			}
		})
	}
	if strings.Contains(e.logs.String(), key) {
		t.Errorf("log contains the key")
	}
}

func TestRouting(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	for _, tc := range []struct {
		method, path string
		status       int
		code         apperr.Code
		allow        string
	}{
		{"GET", "/v1/nope", http.StatusNotFound, apperr.NotFoundOrForbidden, ""},
		{"GET", "/", http.StatusNotFound, apperr.NotFoundOrForbidden, ""},
		{"POST", "/v1/help", http.StatusNotFound, apperr.NotFoundOrForbidden, ""},
		{"DELETE", "/v1/checkpoint", http.StatusMethodNotAllowed, apperr.InvalidArgument, "GET, PUT"},
		{"GET", "/v1/agent/prime", http.StatusMethodNotAllowed, apperr.InvalidArgument, "POST"},
		{"POST", "/v1/help/checkpoint_get", http.StatusMethodNotAllowed, apperr.InvalidArgument, "GET"},
	} {
		r := e.do(t, req{method: tc.method, path: tc.path})
		call := tc.method + " " + tc.path
		r.wantError(t, call, tc.status, tc.code)
		if got := r.header.Get("Allow"); got != tc.allow {
			t.Errorf("%s: Allow = %q, want %q", call, got, tc.allow)
		}
		if r.header.Get(rest.RequestIDHeader) == "" {
			t.Errorf("%s: no %s in the response", call, rest.RequestIDHeader)
		}
	}
}

func TestRequestID(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	fresh := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, tc := range []struct {
		name, sent string
		keep       bool
	}{
		{"Plain", "req-123.abc:XYZ_9", true},
		{"Absent", "", false},
		{"Hostile", `a b"}{"level":"ERROR"`, false},
		{"TooLong", strings.Repeat("a", 65), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.sent != "" {
				hdr[rest.RequestIDHeader] = tc.sent
			}
			r := e.do(t, req{method: "GET", path: "/v1/help/get_help", header: hdr})
			got := r.header.Get(rest.RequestIDHeader)
			if tc.keep && got != tc.sent {
				t.Errorf("X-Request-Id %q: echoed %q, want it kept", tc.sent, got)
			}
			if !tc.keep && !fresh.MatchString(got) {
				t.Errorf("X-Request-Id %q: echoed %q, want a fresh 24-hex id", tc.sent, got)
			}
			found := false
			for _, l := range e.logs.Lines(t) {
				if l["request_id"] == got {
					found = true
				}
			}
			if !found {
				t.Errorf("no log line with request_id %q", got)
			}
		})
	}
}

// TestLogLines: one JSON line per request with the documented fields, and
// nothing secret in any of them.
func TestLogLines(t *testing.T) {
	const marker = "ZQXJ-body-MARKER"
	e := newEnv(t, boltStore(t), nil)
	key := e.alice.BoxKey
	sid := e.prime(key)
	e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", "k", marker)}).wantOK(t, "PUT /v1/checkpoint", nil)
	e.do(t, req{method: "PUT", path: "/v1/checkpoint", key: key, session: sid, body: saveBody("0", "k2", marker)}).
		wantError(t, "PUT /v1/checkpoint stale", http.StatusConflict, apperr.RevisionConflict)

	lines := e.logs.Lines(t)
	if len(lines) != 3 {
		t.Fatalf("got %d log lines, want 3 (one per request):\n%s", len(lines), e.logs)
	}
	want := []struct {
		tool, method string
		status       float64
		code         string
	}{
		{"agent_prime", "POST", 200, "OK"},
		{"checkpoint_save", "PUT", 200, "OK"},
		{"checkpoint_save", "PUT", 409, "REVISION_CONFLICT"},
	}
	for i, l := range lines {
		for _, f := range []string{"request_id", "tool", "method", "status", "code", "duration_ms"} {
			if _, ok := l[f]; !ok {
				t.Errorf("log line %d %v: no %s", i, l, f)
			}
		}
		if l["tool"] != want[i].tool || l["method"] != want[i].method || l["status"] != want[i].status || l["code"] != want[i].code {
			t.Errorf("log line %d = %v, want tool %s method %s status %v code %s", i, l, want[i].tool, want[i].method, want[i].status, want[i].code)
		}
	}
	for _, secret := range []string{key, sid, marker} {
		if strings.Contains(e.logs.String(), secret) {
			t.Errorf("log contains a key, session id or body value %q:\n%s", secret, e.logs)
		}
	}
}

// TestStoreFaults: an engine that is busy answers 503 with Retry-After; a
// read that fails answers 503 too (it changed nothing: retry), its cause
// reaching the log only; a panic is a generic 500.
func TestStoreFaults(t *testing.T) {
	const cause = "dynamo: BatchGetItem: InternalServerError ZQXJ-cause"
	for _, tc := range []struct {
		name       string
		err        error
		panicking  bool
		status     int
		code       apperr.Code
		retryAfter string
		logLevel   string
		logFrag    string
	}{
		{"Unavailable", store.ErrUnavailable, false, http.StatusServiceUnavailable, apperr.TemporarilyUnavailable, "1", "WARN", store.ErrUnavailable.Error()},
		{"ReadFailure", errors.New(cause), false, http.StatusServiceUnavailable, apperr.TemporarilyUnavailable, "1", "WARN", cause},
		{"Panic", nil, true, http.StatusInternalServerError, apperr.StorageFailure, "", "ERROR", "injected panic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := teststores.NewFaults(boltStore(t))
			e := newEnv(t, fs, nil)
			sid := e.prime(e.alice.BoxKey)
			fs.FailReads(tc.err)
			fs.FailWrites(tc.err)
			fs.Panic(tc.panicking)

			r := e.do(t, req{method: "GET", path: "/v1/checkpoint", key: e.alice.BoxKey, session: sid})
			env := r.wantError(t, "GET /v1/checkpoint on a faulty store", tc.status, tc.code)
			if got := r.header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tc.retryAfter)
			}
			if tc.code.Retryable() != env.Retryable {
				t.Errorf("retryable = %v, want %v", env.Retryable, tc.code.Retryable())
			}
			if tc.retryAfter != "" && (env.RetryAfterSeconds == nil || *env.RetryAfterSeconds != 1) {
				t.Errorf("retry_after_seconds = %v, want 1", env.RetryAfterSeconds)
			}
			for _, leak := range []string{"ZQXJ", "dynamo", "panic", "store:"} {
				if bytes.Contains(r.body, []byte(leak)) {
					t.Errorf("response %s leaks the internal cause (%q)", r.body, leak)
				}
			}
			logged := false
			for _, l := range e.logs.Lines(t) {
				if l["level"] != tc.logLevel {
					continue
				}
				b, _ := json.Marshal(l)
				if strings.Contains(string(b), tc.logFrag) {
					logged = true
				}
			}
			if !logged {
				t.Errorf("no %s log line carries the cause %q:\n%s", tc.logLevel, tc.logFrag, e.logs)
			}
		})
	}
}

// TestStatusTable is the README's error table.
func TestStatusTable(t *testing.T) {
	want := map[apperr.Code]int{
		apperr.AuthFailed:             401,
		apperr.NotPrimed:              428,
		apperr.ProfileOutdated:        409,
		apperr.NotFoundOrForbidden:    404,
		apperr.RoomArchived:           409,
		apperr.InvalidArgument:        400,
		apperr.LimitExceeded:          422,
		apperr.RevisionConflict:       409,
		apperr.IdempotencyConflict:    409,
		apperr.CursorInvalid:          400,
		apperr.RateLimited:            429,
		apperr.TemporarilyUnavailable: 503,
		apperr.StorageFailure:         500,
	}
	for _, c := range apperr.Codes() {
		w, ok := want[c]
		if !ok {
			t.Errorf("code %s has no documented status", c)
			continue
		}
		if got := rest.Status(c); got != w {
			t.Errorf("Status(%s) = %d, want %d", c, got, w)
		}
	}
	if got := rest.Status("NO_SUCH_CODE"); got != 500 {
		t.Errorf("Status(NO_SUCH_CODE) = %d, want 500", got)
	}
}

// TestWriteErrorHeaders: the headers each code calls for.
func TestWriteErrorHeaders(t *testing.T) {
	for _, tc := range []struct {
		err        *apperr.Error
		status     int
		header     string
		want       string
		wantStatus int
	}{
		{apperr.New(apperr.AuthFailed, "x"), 0, "WWW-Authenticate", "Bearer", 401},
		{&apperr.Error{Code: apperr.RateLimited, Message: "x", RetryAfter: 7}, 0, "Retry-After", "7", 429},
		{apperr.New(apperr.RateLimited, "x"), 0, "Retry-After", "1", 429},
		{apperr.New(apperr.LimitExceeded, "x"), http.StatusRequestEntityTooLarge, "Retry-After", "", 413},
	} {
		w := httptest.NewRecorder()
		rest.WriteError(w, tc.status, tc.err)
		if w.Code != tc.wantStatus || w.Header().Get(tc.header) != tc.want {
			t.Errorf("WriteError(%d, %s): got status %d %s %q, want %d %q", tc.status, tc.err.Code, w.Code, tc.header, w.Header().Get(tc.header), tc.wantStatus, tc.want)
		}
	}
}

// TestUpperCaseIDsInPaths: a path parameter is a UUID in any case; the
// upper-case spelling reaches the same resource (it used to be a 404).
func TestUpperCaseIDsInPaths(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	room := e.room("general", e.alice)
	sid := e.prime(e.alice.BoxKey)
	var space struct {
		Space struct {
			ID string `json:"id"`
		} `json:"space"`
	}
	e.do(t, req{method: "POST", path: "/v1/spaces", key: e.alice.BoxKey, session: sid,
		body: `{"request_id":"r1","title":"Plans","goal":"g","visibility":"private"}`}).wantOK(t, "POST /v1/spaces", &space)
	for _, path := range []string{
		"/v1/rooms/" + strings.ToUpper(room.RoomID),
		"/v1/rooms/" + strings.ToUpper(room.RoomID) + "/brief",
		"/v1/spaces/" + strings.ToUpper(space.Space.ID),
		"/v1/directory/" + strings.ToUpper(e.alice.AgentID),
	} {
		r := e.do(t, req{method: "GET", path: path, key: e.alice.BoxKey, session: sid})
		r.wantOK(t, "GET "+path, nil)
		if strings.Contains(string(r.body), strings.ToUpper(room.RoomID)) || strings.Contains(string(r.body), strings.ToUpper(space.Space.ID)) {
			t.Errorf("GET %s = %s: want ids in canonical lower case", path, r.body)
		}
	}
}

package mcpserver_test

// Tests through the official go-sdk client over real HTTP: what an MCP
// host actually sees.

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
)

func TestInitializeIssuesSession(t *testing.T) {
	e := newEnv(t)
	cs, rec := e.connect(t, e.alice.BoxKey)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("ListTools: %v", err)
	}

	xs := rec.exchanges()
	init := slices.IndexFunc(xs, func(x exchange) bool { return x.rpcMethod == "initialize" })
	if init < 0 {
		t.Fatalf("exchanges %+v: no initialize", xs)
	}
	sid := xs[init].gotSession
	if xs[init].status != 200 || !strings.HasPrefix(sid, "m_") {
		t.Fatalf("initialize: got HTTP %d with Mcp-Session-Id %q, want 200 with a signed m_ session id", xs[init].status, sid)
	}
	if cs.ID() != sid {
		t.Errorf("ClientSession.ID() = %q, want the issued %q", cs.ID(), sid)
	}
	for i, x := range xs {
		if i != init && x.gotSession != "" {
			t.Errorf("exchange %d (%s %s): response carries Mcp-Session-Id; only initialize issues one", i, x.httpMethod, x.rpcMethod)
		}
		if i > init && x.sentSession != sid {
			t.Errorf("exchange %d (%s %s): client sent Mcp-Session-Id %q, want %q", i, x.httpMethod, x.rpcMethod, x.sentSession, sid)
		}
		if x.httpMethod == "GET" && x.status != 405 {
			t.Errorf("standalone SSE GET: got HTTP %d, want 405", x.status)
		}
	}
	// A client of the session-based era gets the version it asked for.
	if got := cs.InitializeResult().ProtocolVersion; got != legacyProtocol {
		t.Errorf("negotiated protocol %s, want %s", got, legacyProtocol)
	}
}

func TestListTools(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(t, e.alice.BoxKey)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var got []string
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
		byName[tool.Name] = tool
	}
	want := e.reg.Names()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("ListTools names = %v, want the registry's %v", got, want)
	}

	for _, rt := range e.reg.Tools() {
		t.Run(rt.Name, func(t *testing.T) {
			tool := byName[rt.Name]
			if tool.Title != rt.Title || tool.Description != rt.Description {
				t.Errorf("title/description = %q/%q, want %q/%q", tool.Title, tool.Description, rt.Title, rt.Description)
			}
			in := registrytest.AsJSON[any](t, tool.InputSchema)
			if want := registrytest.AsJSON[any](t, rt.Input); !reflect.DeepEqual(in, want) {
				t.Errorf("inputSchema = %v, want the registry's %v", in, want)
			}
			if ap, _ := in.(map[string]any)["additionalProperties"]; ap != false {
				t.Errorf("inputSchema.additionalProperties = %v, want false", ap)
			}
			if got, want := registrytest.AsJSON[any](t, tool.OutputSchema), registrytest.AsJSON[any](t, rt.Output); !reflect.DeepEqual(got, want) {
				t.Errorf("outputSchema = %v, want the registry's %v", got, want)
			}
			a := tool.Annotations
			if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
				t.Fatalf("annotations = %+v, want every hint set explicitly", a)
			}
			gotHints := map[string]bool{"readOnlyHint": a.ReadOnlyHint, "destructiveHint": *a.DestructiveHint,
				"idempotentHint": a.IdempotentHint, "openWorldHint": *a.OpenWorldHint}
			if want := rt.Annotations(); !reflect.DeepEqual(gotHints, want) {
				t.Errorf("annotations = %v, want %v", gotHints, want)
			}
		})
	}
}

// TestToolFlow runs the session and checkpoint story on every storage
// adapter: priming binds the transport's session, CAS saves, conflicts and
// replays come back as tool results.
func TestToolFlow(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cs, _ := e.connect(t, e.alice.BoxKey)
		sid := cs.ID()

		wantCode(t, "checkpoint_get before agent_prime", call(t, cs, "checkpoint_get", nil), apperr.NotPrimed)

		prime := wantOK[hub.PrimeOutput](t, "agent_prime", call(t, cs, "agent_prime", map[string]any{}))
		if prime.SessionID != sid {
			t.Errorf("agent_prime session_id = %q, want the Mcp-Session-Id %q", prime.SessionID, sid)
		}
		// The first prime of a new session binds it: nothing resumed.
		if prime.SessionResumed || prime.Agent.AgentID != e.alice.AgentID {
			t.Errorf("agent_prime = resumed %t agent %s, want resumed false agent %s", prime.SessionResumed, prime.Agent.AgentID, e.alice.AgentID)
		}
		again := wantOK[hub.PrimeOutput](t, "agent_prime again", call(t, cs, "agent_prime", map[string]any{}))
		if !again.SessionResumed || again.SessionID != sid {
			t.Errorf("agent_prime again = session %q resumed %t, want %q resumed true", again.SessionID, again.SessionResumed, sid)
		}

		got := wantOK[hub.CheckpointOutput](t, "checkpoint_get", call(t, cs, "checkpoint_get", nil))
		if got.Checkpoint.Revision != 0 {
			t.Errorf("checkpoint_get revision = %d, want 0", got.Checkpoint.Revision)
		}

		save := map[string]any{"idempotency_key": "cp-1", "expected_revision": "0", "body_md": "first draft"}
		saved := wantOK[hub.CheckpointOutput](t, "checkpoint_save", call(t, cs, "checkpoint_save", save))
		if saved.Checkpoint.Revision != 1 || saved.Replayed || saved.Checkpoint.SessionID != sid {
			t.Errorf("checkpoint_save = revision %d replayed %t session %q, want 1, false, %q",
				saved.Checkpoint.Revision, saved.Replayed, saved.Checkpoint.SessionID, sid)
		}

		replay := wantOK[hub.CheckpointOutput](t, "checkpoint_save replay", call(t, cs, "checkpoint_save", save))
		if replay.Checkpoint.Revision != 1 || !replay.Replayed {
			t.Errorf("checkpoint_save replay = revision %d replayed %t, want 1, true", replay.Checkpoint.Revision, replay.Replayed)
		}

		stale := map[string]any{"idempotency_key": "cp-2", "expected_revision": "0", "body_md": "overwrite?"}
		res := call(t, cs, "checkpoint_save", stale)
		env := wantCode(t, "checkpoint_save stale", res, apperr.RevisionConflict)
		if env.CurrentRevision == nil || *env.CurrentRevision != "1" {
			t.Errorf("REVISION_CONFLICT current_revision = %v, want \"1\"", env.CurrentRevision)
		}
		if raw := structured[map[string]map[string]any](t, res); raw["error"]["current_revision"] != "1" {
			t.Errorf("structuredContent = %v, want error.current_revision the JSON string \"1\"", res.StructuredContent)
		}

		changed := map[string]any{"idempotency_key": "cp-1", "expected_revision": "0", "body_md": "a different action"}
		wantCode(t, "checkpoint_save reused key", call(t, cs, "checkpoint_save", changed), apperr.IdempotencyConflict)

		after := wantOK[hub.CheckpointOutput](t, "checkpoint_get", call(t, cs, "checkpoint_get", nil))
		if after.Checkpoint.Revision != 1 || after.Checkpoint.BodyMD != "first draft" {
			t.Errorf("checkpoint after conflicts = revision %d %q, want 1 \"first draft\"", after.Checkpoint.Revision, after.Checkpoint.BodyMD)
		}
	})
}

func TestNotPrimed(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(t, e.alice.BoxKey)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"profile_get", nil},
		{"checkpoint_get", nil},
		{"checkpoint_save", map[string]any{"idempotency_key": "k", "expected_revision": "0", "body_md": "x"}},
	} {
		wantCode(t, tc.tool+" before agent_prime", call(t, cs, tc.tool, tc.args), apperr.NotPrimed)
	}
	// get_help needs no session.
	wantOK[map[string]any](t, "get_help", call(t, cs, "get_help", map[string]any{"tool": "checkpoint_save"}))
}

// TestBoxKeyWithoutBearer is the seed-000 client: no Authorization header,
// the key in every call's box_key argument.
func TestBoxKeyWithoutBearer(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connect(t, "")
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("ListTools on an unbound session: %v", err)
	}
	key := map[string]any{"box_key": e.alice.BoxKey}

	wantCode(t, "checkpoint_get before agent_prime", call(t, cs, "checkpoint_get", key), apperr.NotPrimed)
	wantCode(t, "agent_prime without any key", call(t, cs, "agent_prime", nil), apperr.AuthFailed)

	prime := wantOK[hub.PrimeOutput](t, "agent_prime", call(t, cs, "agent_prime", key))
	if prime.SessionID != cs.ID() || prime.Agent.AgentID != e.alice.AgentID {
		t.Fatalf("agent_prime = session %q agent %s, want %q %s", prime.SessionID, prime.Agent.AgentID, cs.ID(), e.alice.AgentID)
	}
	save := map[string]any{"box_key": e.alice.BoxKey, "idempotency_key": "cp-1", "expected_revision": "0", "body_md": "via box_key"}
	saved := wantOK[hub.CheckpointOutput](t, "checkpoint_save", call(t, cs, "checkpoint_save", save))
	if saved.Checkpoint.Revision != 1 {
		t.Errorf("checkpoint_save revision = %d, want 1", saved.Checkpoint.Revision)
	}
	wantCode(t, "checkpoint_get without box_key", call(t, cs, "checkpoint_get", nil), apperr.AuthFailed)
}

// TestSessionHijackingPrevention: a session id is never authority. Once a
// session is bound to an agent, every other key is refused on it, whether
// it arrives as box_key or as a bearer.
func TestSessionHijackingPrevention(t *testing.T) {
	e := newEnv(t)

	t.Run("box_key of another agent on a session bound by agent_prime", func(t *testing.T) {
		cs, _ := e.connect(t, "")
		wantOK[hub.PrimeOutput](t, "agent_prime alice", call(t, cs, "agent_prime", map[string]any{"box_key": e.alice.BoxKey}))
		for _, intruder := range []*hub.AgentInfo{e.bob, e.mallory} {
			k := map[string]any{"box_key": intruder.BoxKey}
			wantCode(t, "agent_prime as "+intruder.Name, call(t, cs, "agent_prime", k), apperr.AuthFailed)
			wantCode(t, "checkpoint_get as "+intruder.Name, call(t, cs, "checkpoint_get", k), apperr.AuthFailed)
		}
		wantOK[hub.CheckpointOutput](t, "checkpoint_get alice after the attempts",
			call(t, cs, "checkpoint_get", map[string]any{"box_key": e.alice.BoxKey}))
	})

	sid := e.initialize(t, e.alice.BoxKey)
	if r := e.post(t, toolCall("agent_prime", `{}`), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
		t.Fatalf("agent_prime alice: %s", r.body)
	}
	// Another agent's bearer on alice's session gets exactly the answer an
	// unknown session gets, so the id's existence is not confirmed.
	unknown := e.post(t, toolsListBody, session(unknownSession, e.bob.BoxKey))
	for _, intruder := range []*hub.AgentInfo{e.bob, e.mallory} {
		t.Run("bearer of "+intruder.Name+" on alice's session", func(t *testing.T) {
			if r := e.post(t, toolsListBody, session(sid, intruder.BoxKey)); r.status != 404 || string(r.body) != string(unknown.body) {
				t.Errorf("tools/list: got HTTP %d %s, want %d %s as for an unknown session", r.status, r.body, unknown.status, unknown.body)
			}
			for _, tool := range []string{"agent_prime", "checkpoint_get"} {
				if r := e.post(t, toolCall(tool, `{}`), session(sid, intruder.BoxKey)); r.status != 404 {
					t.Errorf("%s: got HTTP %d %s, want 404", tool, r.status, r.body)
				}
			}
			if r := e.do(t, "DELETE", nil, session(sid, intruder.BoxKey)); r.status != 404 {
				t.Errorf("DELETE: got HTTP %d, want 404", r.status)
			}
		})
	}
	t.Run("no key on alice's session", func(t *testing.T) {
		r := e.post(t, toolCall("checkpoint_get", `{}`), session(sid, ""))
		if got := r.toolResult(t).code(t); got != apperr.AuthFailed {
			t.Errorf("checkpoint_get: got %s, want AUTH_FAILED", got)
		}
	})
	// Alice's session survived every attempt.
	if r := e.post(t, toolCall("checkpoint_get", `{}`), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
		t.Errorf("checkpoint_get alice: %s, want success", r.body)
	}
}

func TestCredentials(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		bearer string
		boxKey string
		want   apperr.Code // "" for success
	}{
		{"bearer only", e.alice.BoxKey, "", ""},
		{"bearer and box_key of the same agent", e.alice.BoxKey, e.alice.BoxKey, ""},
		{"bearer and box_key of different agents", e.alice.BoxKey, e.bob.BoxKey, apperr.AuthFailed},
		{"bearer and box_key of different boxes", e.alice.BoxKey, e.mallory.BoxKey, apperr.AuthFailed},
		{"malformed box_key", e.alice.BoxKey, "abk_not-a-key", apperr.AuthFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, _ := e.connect(t, tc.bearer)
			args := map[string]any{}
			if tc.boxKey != "" {
				args["box_key"] = tc.boxKey
			}
			res := call(t, cs, "agent_prime", args)
			if tc.want == "" {
				wantOK[hub.PrimeOutput](t, "agent_prime", res)
				return
			}
			wantCode(t, "agent_prime", res, tc.want)
		})
	}

	t.Run("client with a bad bearer cannot initialize", func(t *testing.T) {
		client := mcp.NewClient(&mcp.Implementation{Name: "agentbox-test", Version: "1"}, nil)
		rec := &recorder{bearer: "abk_" + strings.Repeat("A", 86), base: http.DefaultTransport}
		_, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: e.url, HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1}, nil)
		if err == nil {
			t.Fatal("Connect with a bad bearer: got a session, want an error")
		}
		for _, x := range rec.exchanges() {
			if x.rpcMethod == "initialize" && (x.status != 401 || x.gotSession != "") {
				t.Errorf("initialize: got HTTP %d with Mcp-Session-Id %q, want 401 and none", x.status, x.gotSession)
			}
		}
	})
}

// TestSessionExpiry: an idle session is expired for every instance, and the
// expiry reaches the model as a tool result it can act on, never as the
// transport's 404 (which strands the official SDKs, none of which
// re-initializes): tools/list is still served, a tool answers NOT_PRIMED
// saying how to leave it, and agent_prime on the same Mcp-Session-Id binds
// it again, with no new initialize.
func TestSessionExpiry(t *testing.T) {
	e := newEnv(t)
	sid := e.initialize(t, e.alice.BoxKey)
	if r := e.post(t, toolCall("agent_prime", `{}`), session(sid, e.alice.BoxKey)); r.toolResult(t).IsError {
		t.Fatalf("agent_prime: %s", r.body)
	}
	idle := e.hub.Limits().SessionIdleSeconds
	e.clock.Advance(time.Duration(idle+1) * time.Second)

	if r := e.post(t, toolsListBody, session(sid, e.alice.BoxKey)); r.status != 200 {
		t.Errorf("tools/list on an expired session: got HTTP %d, want 200 (it needs no session)", r.status)
	}
	res := e.post(t, toolCall("checkpoint_get", `{}`), session(sid, e.alice.BoxKey)).toolResult(t)
	if code := res.code(t); code != apperr.NotPrimed {
		t.Fatalf("checkpoint_get on an expired session: %s, want NOT_PRIMED", code)
	}
	var te toolError
	if err := json.Unmarshal(res.StructuredContent, &te); err != nil {
		t.Fatal(err)
	}
	if te.Error.Message != "No live session: it is missing, unknown or expired." ||
		te.Error.NextAction != "Call agent_prime, then pass its session_id argument on every call." {
		t.Errorf("NOT_PRIMED over MCP = %q / %q, want the expiry and the way out", te.Error.Message, te.Error.NextAction)
	}
	// Another agent's key on the expired id (bound to alice) answers as on an unknown one.
	if r := e.post(t, toolCall("agent_prime", `{}`), session(sid, e.bob.BoxKey)); r.status != 404 {
		t.Errorf("agent_prime by bob on alice's id: got HTTP %d %s, want 404", r.status, r.body)
	}
	r := e.post(t, toolCall("agent_prime", `{}`), session(sid, e.alice.BoxKey))
	var prime hub.PrimeOutput
	if res := r.toolResult(t); res.IsError || json.Unmarshal(res.StructuredContent, &prime) != nil || prime.SessionID != sid || prime.SessionResumed {
		t.Fatalf("agent_prime on the expired session: %s, want session_id %q opened again", r.body, sid)
	}
	if res := e.post(t, toolCall("checkpoint_get", `{}`), session(sid, e.alice.BoxKey)).toolResult(t); res.IsError {
		t.Errorf("checkpoint_get after priming again: %s, want success", res.StructuredContent)
	}
}

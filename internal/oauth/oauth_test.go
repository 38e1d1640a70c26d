package oauth_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/oauth"
	"github.com/agentbox/agentbox/internal/oauth/oauthtest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

const redirect = "http://localhost/cb"

// world is one agentbox (REST and MCP, on bbolt) taking the tokens of one
// real OpenID provider, with a box whose agents are linked to its users.
type world struct {
	t        *testing.T
	url      string // agentbox, no trailing slash
	resource string // this resource: url + "/mcp"
	op       *oauthtest.Provider
	admin    *hub.Admin
	// app's tokens are for this resource; other's for another one; app2's
	// for this resource too, but no link names it or its subjects.
	app, app2, other oauthtest.Client
	// alice is linked to (op, Subject1, app); bob to (op, Subject2) and
	// deactivated; carol has a read-only key.
	alice, bob, carol *hub.AgentInfo
}

// newWorld starts the provider and the server; now, when set, is the
// resource server's clock.
func newWorld(t *testing.T, now func() time.Time) *world {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	w := &world{t: t, url: "http://" + srv.Listener.Addr().String()}
	w.resource = w.url + "/mcp"
	w.app = oauthtest.Client{ID: "app", RedirectURI: redirect, Audience: []string{w.resource}}
	w.app2 = oauthtest.Client{ID: "app2", RedirectURI: redirect, Audience: []string{w.resource}}
	w.other = oauthtest.Client{ID: "other", RedirectURI: redirect, Audience: []string{"http://elsewhere.example/mcp"}}
	w.op = oauthtest.Start(t, w.app, w.app2, w.other)

	res, err := oauth.New(oauth.Config{Issuer: w.op.URL, Audience: w.resource, Now: now})
	if err != nil {
		t.Fatalf("oauth.New: %v", err)
	}
	st, err := bolt.Open(filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{})
	if err != nil {
		t.Fatalf("bolt.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	quiet := slog.New(slog.DiscardHandler)
	h := hub.New(st, hub.Options{Tokens: res, Logger: quiet})
	srv.Config.Handler = res.Handler(server.Handler(h, registry.New(), quiet))
	srv.Start()
	t.Cleanup(srv.Close)

	ctx := t.Context()
	w.admin = h.Admin()
	box, err := w.admin.CreateBox(ctx, "team")
	if err != nil {
		t.Fatalf("CreateBox: %v", err)
	}
	agent := func(name, scope string) *hub.AgentInfo {
		a, err := w.admin.CreateAgentScoped(ctx, box.BoxID, name, "dev", scope)
		if err != nil {
			t.Fatalf("CreateAgentScoped(%s): %v", name, err)
		}
		return a
	}
	w.alice, w.bob, w.carol = agent("alice", hub.ScopeWrite), agent("bob", hub.ScopeWrite), agent("carol", hub.ScopeRead)
	w.link(hub.NewOAuthLink{Issuer: w.op.URL, Subject: oauthtest.Subject1, Client: w.app.ID, Agent: w.alice.AgentID})
	// other's tokens are linked too: they are refused for their audience
	// alone.
	w.link(hub.NewOAuthLink{Issuer: w.op.URL, Subject: oauthtest.Subject1, Client: w.other.ID, Agent: w.alice.AgentID})
	w.link(hub.NewOAuthLink{Issuer: w.op.URL, Subject: oauthtest.Subject2, Agent: w.bob.AgentID})
	if _, err := w.admin.DeactivateAgent(ctx, w.bob.AgentID); err != nil {
		t.Fatalf("DeactivateAgent: %v", err)
	}
	return w
}

func (w *world) link(n hub.NewOAuthLink) {
	w.t.Helper()
	if _, err := w.admin.LinkOAuth(w.t.Context(), n); err != nil {
		w.t.Fatalf("LinkOAuth(%+v): %v", n, err)
	}
}

// token runs the authorization-code flow for c as subject.
func (w *world) token(c oauthtest.Client, subject string, scopes ...string) string {
	w.t.Helper()
	tok, err := w.op.Token(w.t.Context(), c, subject, scopes...)
	if err != nil {
		w.t.Fatalf("Token(%s, %s): %v", c.ID, subject, err)
	}
	return tok
}

// answer is what a request got, without its request id.
type answer struct {
	status    int
	challenge string
	body      string
}

func (w *world) do(method, path, bearer, session, body string) answer {
	w.t.Helper()
	return w.doHeaders(method, path, bearer, session, body, nil)
}

// doHeaders is do with extra request headers.
func (w *world) doHeaders(method, path, bearer, session, body string, headers map[string]string) answer {
	w.t.Helper()
	req, err := http.NewRequestWithContext(w.t.Context(), method, w.url+path, strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if session != "" {
		req.Header.Set("Agentbox-Session", session)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, challenge: resp.Header.Get("WWW-Authenticate"), body: string(b)}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// mcpSession initializes an MCP session with bearer and returns its id.
func (w *world) mcpSession(bearer string) string {
	w.t.Helper()
	req, _ := http.NewRequestWithContext(w.t.Context(), "POST", w.url+"/mcp", strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		w.t.Fatalf("initialize with a good token = %d without Mcp-Session-Id", resp.StatusCode)
	}
	return sid
}

// prime primes a session with bearer over REST and returns its id.
func (w *world) prime(bearer string) string {
	w.t.Helper()
	a := w.do("POST", "/v1/agent/prime", bearer, "", "{}")
	var out struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(a.body), &out); a.status != 200 || err != nil || out.SessionID == "" {
		w.t.Fatalf("POST /v1/agent/prime = %d %s, want 200 with a session_id", a.status, a.body)
	}
	return out.SessionID
}

const save = `{"expected_revision":"0","idempotency_key":"k1","body_md":"from a token"}`

// TestTokenActsAsLinkedAgent: a linked subject's token is its agent's key:
// it primes, writes and reads back what it wrote, on REST and MCP.
func TestTokenActsAsLinkedAgent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	tok := w.token(w.app, oauthtest.Subject1, hub.ScopeWrite)
	sid := w.prime(tok)
	if a := w.do("PUT", "/v1/checkpoint", tok, sid, save); a.status != 200 {
		t.Fatalf("PUT /v1/checkpoint with a write token = %d %s, want 200", a.status, a.body)
	}
	// alice's own key reads what the token wrote: the token is alice.
	a := w.do("GET", "/v1/checkpoint", w.alice.BoxKey, w.prime(w.alice.BoxKey), "")
	if a.status != 200 || !strings.Contains(a.body, "from a token") {
		t.Errorf("GET /v1/checkpoint with alice's key = %d %s, want the token's checkpoint", a.status, a.body)
	}
	if a := w.do("POST", "/mcp", tok, "", initialize); a.status != 200 {
		t.Errorf("MCP initialize with the token = %d %s, want 200", a.status, a.body)
	}
}

// TestRefusedTokensAnswerAsUnknownKey: every refused token gets the bytes
// an unknown key gets — status, challenge and body, over REST and MCP —
// so nothing tells a caller why.
func TestRefusedTokensAnswerAsUnknownKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	good := w.token(w.app, oauthtest.Subject1, hub.ScopeWrite)

	// A second provider: a token with another iss, for this resource.
	foreign := oauthtest.Start(t, w.app)
	wrongIssuer, err := foreign.Token(t.Context(), w.app, oauthtest.Subject1, hub.ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	// An unknown key: shaped like one, but no record has its id.
	unknownKey := "abk_" + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 64))

	cases := []struct{ name, token, counterpart string }{
		{"WrongIssuer", wrongIssuer, unknownKey},
		{"WrongAudience", w.token(w.other, oauthtest.Subject1, hub.ScopeWrite), unknownKey},
		{"TamperedSignature", tamper(good), unknownKey},
		{"TamperedClaims", setClaim(w.token(w.app, oauthtest.Subject1, hub.ScopeRead), "scope", hub.ScopeWrite), unknownKey},
		{"UnknownKid", resign(t, good, "rotated-away"), unknownKey},
		{"UnmappedSubject", w.token(w.app2, oauthtest.Subject1, hub.ScopeWrite), unknownKey},
		{"DeactivatedAgent", w.token(w.app, oauthtest.Subject2, hub.ScopeWrite), w.bob.BoxKey},
		{"NotAJWT", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln", unknownKey},
	}
	// A live MCP session, opened with the good token: a tools/call on it
	// with a refused token is 401 too (the client's cue to refresh), in
	// both eras.
	sid := w.mcpSession(good)
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_prime","arguments":{}}}`
	const modern = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_prime","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []struct {
				method, path, body string
				headers            map[string]string
			}{
				{"POST", "/v1/agent/prime", "{}", nil},
				{"POST", "/mcp", initialize, nil},
				{"POST", "/mcp", call, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}},
				{"POST", "/mcp", modern, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "agent_prime"}},
			} {
				got := w.doHeaders(r.method, r.path, tc.token, "", r.body, r.headers)
				want := w.doHeaders(r.method, r.path, tc.counterpart, "", r.body, r.headers)
				if got != want {
					t.Errorf("%s %s with the token = %+v\nwith its key counterpart = %+v; want the same", r.method, r.path, got, want)
				}
				if got.status != http.StatusUnauthorized {
					t.Errorf("%s %s with the token = %d, want 401", r.method, r.path, got.status)
				}
			}
		})
	}
}

// TestExpiredToken: past its exp (and the skew), a token is an unknown key.
func TestExpiredToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func() time.Time { return time.Now().Add(time.Hour) })
	tok := w.token(w.app, oauthtest.Subject1, hub.ScopeWrite)
	unknownKey := "abk_" + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 64))
	got, want := w.do("POST", "/v1/agent/prime", tok, "", "{}"), w.do("POST", "/v1/agent/prime", unknownKey, "", "{}")
	if got != want || got.status != http.StatusUnauthorized {
		t.Errorf("POST /v1/agent/prime with an expired token = %+v, want the unknown key's %+v", got, want)
	}
}

// TestReadOnlyTokenRefusedMutation: a token with coordination:read only
// primes and reads, and a mutation gets exactly what a read-only key gets:
// 403 insufficient_scope.
func TestReadOnlyTokenRefusedMutation(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	tok := w.token(w.app, oauthtest.Subject1, hub.ScopeRead)
	sid := w.prime(tok)
	if a := w.do("GET", "/v1/checkpoint", tok, sid, ""); a.status != 200 {
		t.Errorf("GET /v1/checkpoint with a read token = %d %s, want 200", a.status, a.body)
	}
	got := w.do("PUT", "/v1/checkpoint", tok, sid, save)
	want := w.do("PUT", "/v1/checkpoint", w.carol.BoxKey, w.prime(w.carol.BoxKey), save)
	if got != want {
		t.Errorf("PUT /v1/checkpoint with a read token = %+v\nwith a read-only key = %+v; want the same", got, want)
	}
	if got.status != http.StatusForbidden || !strings.Contains(got.challenge, `error="insufficient_scope"`) ||
		!strings.Contains(got.challenge, `resource_metadata="`+w.url+oauth.WellKnown+`/mcp"`) {
		t.Errorf("PUT /v1/checkpoint with a read token = %d %q, want 403 insufficient_scope naming the metadata", got.status, got.challenge)
	}

	// No coordination scope at all: refused for reads too, as a scope
	// problem (there is no key without a scope to compare with).
	none := w.token(w.app, oauthtest.Subject1)
	if a := w.do("POST", "/v1/agent/prime", none, "", "{}"); a.status != http.StatusForbidden ||
		!strings.Contains(a.challenge, `scope="coordination:read"`) {
		t.Errorf("POST /v1/agent/prime with a scopeless token = %d %q, want 403 asking for coordination:read", a.status, a.challenge)
	}
}

// TestChallengeNamesMetadata: with OAuth on, MCP without credentials is
// 401 (the client's cue to authorize), and every 401 names the metadata
// and the scopes (MCP authorization, "Protected Resource Metadata
// Discovery").
func TestChallengeNamesMetadata(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	want := `resource_metadata="` + w.url + `/.well-known/oauth-protected-resource/mcp", scope="coordination:read coordination:write"`
	for _, r := range []struct{ method, path, bearer, body string }{
		{"POST", "/mcp", "", initialize},
		{"POST", "/mcp", "abk_nonsense", initialize},
		{"POST", "/v1/agent/prime", "", "{}"},
	} {
		a := w.do(r.method, r.path, r.bearer, "", r.body)
		if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.challenge, "Bearer ") || !strings.Contains(a.challenge, want) {
			t.Errorf("%s %s (bearer %q) = %d %q, want 401 with a challenge containing %s", r.method, r.path, r.bearer, a.status, a.challenge, want)
		}
	}
}

// TestMetadataDocument validates both metadata addresses against RFC 9728:
// JSON, resource (required) is the resource identifier the path form was
// derived from, authorization_servers names the issuer, and the scopes and
// bearer method are the ones the server takes.
func TestMetadataDocument(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	for _, path := range []string{oauth.WellKnown + "/mcp", oauth.WellKnown} {
		resp, err := http.Get(w.url + path)
		if err != nil {
			t.Fatal(err)
		}
		var md map[string]any
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s = %d %q (%v), want 200 JSON", path, resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		if md["resource"] != w.resource {
			t.Errorf("GET %s: resource = %v, want %s", path, md["resource"], w.resource)
		}
		for field, want := range map[string][]any{
			"authorization_servers":    {w.op.URL},
			"scopes_supported":         {hub.ScopeRead, hub.ScopeWrite},
			"bearer_methods_supported": {"header"},
		} {
			got, _ := md[field].([]any)
			if len(got) != len(want) || !equalAll(got, want) {
				t.Errorf("GET %s: %s = %v, want %v", path, field, md[field], want)
			}
		}
	}
	// The issuer named is a real authorization server (RFC 8414 /
	// OpenID discovery), issuing for exactly that issuer.
	resp, err := http.Get(w.op.URL + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var as struct {
		Issuer string   `json:"issuer"`
		PKCE   []string `json:"code_challenge_methods_supported"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&as)
	resp.Body.Close()
	if as.Issuer != w.op.URL || !equalAll([]any{as.PKCE[0]}, []any{"S256"}) {
		t.Errorf("authorization server metadata: issuer %q, PKCE %v; want %s with S256", as.Issuer, as.PKCE, w.op.URL)
	}
}

func equalAll(a, b []any) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIssuerDown: a token that cannot be checked because the issuer is
// unreachable is TEMPORARILY_UNAVAILABLE (the client keeps its token and
// retries), never AUTH_FAILED.
func TestIssuerDown(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	res, err := oauth.New(oauth.Config{Issuer: down.URL, Audience: "http://agentbox.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = res.Verify(context.Background(), "eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
	var ue *hub.UnavailableError
	if !errors.As(err, &ue) {
		t.Errorf("Verify with the issuer down = %v, want a hub.UnavailableError", err)
	}
}

// tamper changes one byte of the signature.
func tamper(tok string) string {
	i := strings.LastIndexByte(tok, '.') + 5
	c := byte('A')
	if tok[i] == 'A' {
		c = 'B'
	}
	return tok[:i] + string(c) + tok[i+1:]
}

// setClaim sets one claim of the payload, keeping the signature.
func setClaim(tok, claim, value string) string {
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(payload, &claims)
	claims[claim] = value
	payload, _ = json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

// resign signs tok's claims with a fresh key under kid, which the issuer's
// key set does not hold: the fault of a key rotated away or a forger's
// key, which the provider cannot be made to produce.
func resign(t *testing.T, tok, kid string) string {
	t.Helper()
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScopeBoundAudience is Cognito's shape: no configured audience, the
// resource server's identifier as the scope prefix. The metadata then
// names the endpoint each request came to, and a token that carries an
// aud (minted for some resource) is refused: only aud-less tokens bound by
// their scopes are this resource's.
func TestScopeBoundAudience(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	res, err := oauth.New(oauth.Config{Issuer: w.op.URL, ScopePrefix: "https://rs.example/", AudienceFromScopes: true})
	if err != nil {
		t.Fatal(err)
	}
	tok := w.token(w.app, oauthtest.Subject1, "https://rs.example/"+hub.ScopeWrite)
	if id, err := res.Verify(t.Context(), tok); err == nil {
		t.Errorf("Verify(token with an aud, no audience configured) = %+v, want a refusal", id)
	}
	req := httptest.NewRequest("GET", oauth.WellKnown+"/mcp", nil)
	req.Host = "abc.execute-api.eu-west-1.amazonaws.com"
	req.Header.Set("X-Forwarded-Proto", "https")
	rec := httptest.NewRecorder()
	res.Handler(http.NotFoundHandler()).ServeHTTP(rec, req)
	var md oauth.Metadata
	_ = json.Unmarshal(rec.Body.Bytes(), &md)
	if md.Resource != "https://abc.execute-api.eu-west-1.amazonaws.com/mcp" ||
		md.ScopesSupported[1] != "https://rs.example/coordination:write" {
		t.Errorf("metadata behind API Gateway = %s, want the request's own /mcp and prefixed scopes", rec.Body)
	}
	if _, err := oauth.New(oauth.Config{Issuer: w.op.URL}); err == nil {
		t.Errorf("oauth.New without audience or scope binding succeeded")
	}
}

// TestTypeScriptOAuthFlow runs the full authorization-code + PKCE flow
// with the TypeScript SDK's OAuth client provider, starting from nothing
// but the MCP URL (testdata/tsclient/oauth.mjs in internal/mcpserver, whose
// package-lock.json pins the SDK), then the coordination loop as alice on
// the token with bob on his key.
func TestTypeScriptOAuthFlow(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "mcpserver", "testdata", "tsclient"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH: install Node.js 20 or later; the TypeScript OAuth test needs it")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("@modelcontextprotocol/sdk is not installed: run `npm ci --prefix %s` (make test does it)", dir)
	}
	w := newWorld(t, nil)
	w.op.SetDefaultUser(oauthtest.Subject1)
	ctx := t.Context()
	dave, err := w.admin.CreateAgent(ctx, w.alice.BoxID, "dave", "dev")
	if err != nil {
		t.Fatal(err)
	}
	room, err := w.admin.CreateRoom(ctx, w.alice.BoxID, "review", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{w.alice.AgentID, dave.AgentID} {
		if _, err := w.admin.AddMember(ctx, room.RoomID, a); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := json.Marshal(map[string]string{"client_id": w.app.ID, "redirect_uri": w.app.RedirectURI,
		"alice_id": w.alice.AgentID, "bob_key": dave.BoxKey, "bob_id": dave.AgentID, "room_id": room.RoomID})

	run, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, "node", "oauth.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTBOX_URL="+w.resource, "AGENTBOX_CTX="+string(c))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node oauth.mjs: %v; stdout %q; stderr:\n%s", err, out, stderr.String())
	}
	var report struct {
		Flow     map[string]any `json:"flow"`
		Steps    []string       `json:"steps"`
		Problems []string       `json:"problems"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("node oauth.mjs printed %q: %v", out, err)
	}
	for _, p := range report.Problems {
		t.Errorf("oauth.mjs: %s", p)
	}
	if report.Flow["pkce"] != "S256" || report.Flow["resource"] != w.resource ||
		report.Flow["scope"] != hub.ScopeRead+" "+hub.ScopeWrite {
		t.Errorf("the authorization request = %v, want S256 PKCE, resource %s and the challenge's two scopes", report.Flow, w.resource)
	}
	if len(report.Steps) < 7 {
		t.Errorf("oauth.mjs ran %v, want the whole loop", report.Steps)
	}
}

// TestChallengeScopePrefix: an insufficient_scope challenge names the
// scope as the issuer's tokens carry it (Cognito's prefix), so a client's
// step-up asks for a scope that exists.
func TestChallengeScopePrefix(t *testing.T) {
	t.Parallel()
	res, err := oauth.New(oauth.Config{Issuer: "https://issuer.example", ScopePrefix: "agentbox-t/", AudienceFromScopes: true})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Challenge(http.StatusForbidden, `Bearer error="insufficient_scope", scope="coordination:write"`, "https://h/meta")
	want := `Bearer error="insufficient_scope", scope="agentbox-t/coordination:write", resource_metadata="https://h/meta"`
	if got != want {
		t.Errorf("Challenge(403) = %s, want %s", got, want)
	}
	got = res.Challenge(http.StatusUnauthorized, `Bearer realm="agentbox"`, "https://h/meta")
	want = `Bearer realm="agentbox", resource_metadata="https://h/meta", scope="agentbox-t/coordination:read agentbox-t/coordination:write"`
	if got != want {
		t.Errorf("Challenge(401) = %s, want %s", got, want)
	}
}

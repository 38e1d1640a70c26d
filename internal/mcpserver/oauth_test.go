package mcpserver_test

import (
	"context"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/oauth"
	"github.com/agentbox/agentbox/internal/oauth/oauthtest"
)

// TestEveryToolOnAToken runs every tool's success fixture (the shared
// fixtures.json) as alice on an OAuth access token of a real provider:
// what a tool reads and writes must not depend on how its caller
// authenticated (a token's auth checks name other records than a key's).
func TestEveryToolOnAToken(t *testing.T) {
	const audience = "http://agentbox.test/mcp"
	app := oauthtest.Client{ID: "app", RedirectURI: "http://localhost/cb", Audience: []string{audience}}
	op := oauthtest.Start(t, app)
	res, err := oauth.New(oauth.Config{Issuer: op.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWrapped(t, adapter(t, "bolt"), nil, func(o *hub.Options) { o.Tokens = res })
	ctx := e.interopCtx(t)
	if _, err := e.hub.Admin().LinkOAuth(context.Background(), hub.NewOAuthLink{Issuer: op.URL, Subject: oauthtest.Subject1, Agent: e.alice.AgentID}); err != nil {
		t.Fatal(err)
	}
	tok, err := op.Token(t.Context(), app, oauthtest.Subject1, hub.ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := e.connect(t, tok)
	ok := map[string]any{}
	for _, f := range loadFixtures(t) {
		args, err := resolveFixture(f.OK, ctx, ok)
		if err != nil {
			t.Errorf("%s: %v", f.Tool, err)
			continue
		}
		res := call(t, cs, f.Tool, args)
		if res.IsError {
			t.Errorf("%s on a token: %v, want success (as on alice's key)", f.Tool, res.StructuredContent)
			continue
		}
		ok[f.Tool] = structured[map[string]any](t, res)
	}
}

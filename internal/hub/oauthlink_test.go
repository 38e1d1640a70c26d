package hub_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/oauth"
	"github.com/agentbox/agentbox/internal/oauth/oauthtest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

const tokenAudience = "http://agentbox.test/mcp"

// tokenWorld is a hub on ad taking the tokens of a real provider, whose
// clients app and app2 mint tokens for this resource; wrap wraps its store.
func tokenWorld(t *testing.T, ad teststores.Adapter, wrap ...func(store.Store) store.Store) (*hubtest.World, *oauthtest.Provider, [2]oauthtest.Client) {
	t.Helper()
	clients := [2]oauthtest.Client{
		{ID: "app", RedirectURI: "http://localhost/cb", Audience: []string{tokenAudience}},
		{ID: "app2", RedirectURI: "http://localhost/cb", Audience: []string{tokenAudience}},
	}
	op := oauthtest.Start(t, clients[0], clients[1])
	res, err := oauth.New(oauth.Config{Issuer: op.URL, Audience: tokenAudience})
	if err != nil {
		t.Fatal(err)
	}
	w := hubtest.New(t, ad, hubtest.Config{Options: hub.Options{Tokens: res}, Wrap: wrap})
	return w, op, clients
}

func mustToken(t *testing.T, op *oauthtest.Provider, c oauthtest.Client, sub string) string {
	t.Helper()
	tok, err := op.Token(t.Context(), c, sub, hub.ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// primedAliceOnToken links Subject1 to alice and primes a session on a
// token of client c: the link and the session's credentials.
func primedAliceOnToken(t *testing.T, w *hubtest.World, op *oauthtest.Provider, c oauthtest.Client) (*hub.OAuthLinkInfo, hub.Credentials) {
	t.Helper()
	link, err := w.Admin.LinkOAuth(w.Ctx, hub.NewOAuthLink{Issuer: op.URL, Subject: oauthtest.Subject1, Agent: w.Alice.AgentID})
	if err != nil {
		t.Fatal(err)
	}
	cr := hub.Credentials{Bearer: mustToken(t, op, c, oauthtest.Subject1), Transport: "rest"}
	p, err := w.Hub.Prime(w.Ctx, cr, hub.PrimeInput{})
	if err != nil {
		t.Fatal(err)
	}
	cr.SessionID = p.SessionID
	return link, cr
}

// TestOAuthLinks: a link makes a subject's tokens its agent's; a client
// link wins over the issuer-wide one; a linked triple is not linked again;
// unlinking refuses the tokens again, as an unknown key.
func TestOAuthLinks(t *testing.T) {
	hubtest.ForEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		w, op, c := tokenWorld(t, ad)
		ctx := context.Background()
		tok := mustToken(t, op, c[0], oauthtest.Subject1)
		tok2 := mustToken(t, op, c[1], oauthtest.Subject1)
		prime := func(bearer string) (*hub.PrimeOutput, error) {
			return w.Hub.Prime(ctx, hub.Credentials{Bearer: bearer, Transport: "rest"}, hub.PrimeInput{})
		}
		if _, err := prime(tok); apperr.Normalize(err).Code != apperr.AuthFailed {
			t.Fatalf("Prime(unlinked token) = %v, want AUTH_FAILED", err)
		}
		wide, err := w.Admin.LinkOAuth(ctx, hub.NewOAuthLink{Issuer: op.URL, Subject: oauthtest.Subject1, Agent: w.Alice.AgentID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Admin.LinkOAuth(ctx, hub.NewOAuthLink{Issuer: op.URL, Subject: oauthtest.Subject1, Agent: w.Bob.AgentID}); apperr.Normalize(err).Code != apperr.InvalidArgument {
			t.Errorf("LinkOAuth(the same triple to bob) = %v, want INVALID_ARGUMENT", err)
		}
		w.Clock.Advance(time.Second)
		if _, err := w.Admin.LinkOAuth(ctx, hub.NewOAuthLink{Issuer: op.URL, Subject: oauthtest.Subject1, Client: c[1].ID, Agent: w.Bob.AgentID}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, token string
			want        *hub.AgentInfo
		}{{"IssuerWide", tok, w.Alice}, {"ClientLinkWins", tok2, w.Bob}} {
			p, err := prime(tc.token)
			if err != nil || p.Agent.AgentID != tc.want.AgentID {
				t.Errorf("%s: Prime = %+v, %v; want %s", tc.name, p, err, tc.want.Name)
			}
		}
		links, err := w.Admin.ListOAuthLinks(ctx, w.Box)
		if err != nil || len(links) != 2 || links[0].LinkID != wide.LinkID {
			t.Errorf("ListOAuthLinks = %+v, %v; want the two links, oldest first", links, err)
		}
		if _, err := w.Admin.UnlinkOAuth(ctx, wide.LinkID); err != nil {
			t.Fatal(err)
		}
		if _, err := prime(tok); apperr.Normalize(err).Code != apperr.AuthFailed {
			t.Errorf("Prime(token of an unlinked subject) = %v, want AUTH_FAILED", err)
		}
		if _, err := w.Admin.UnlinkOAuth(ctx, wide.LinkID); apperr.Normalize(err).Code != apperr.NotFoundOrForbidden {
			t.Errorf("UnlinkOAuth(already unlinked) = %v, want NOT_FOUND_OR_FORBIDDEN", err)
		}
	})
}

// unlinkBeforeWrite unlinks a link just before the first write it sees
// once armed: an owner's unlink landing between a mutation's read and its
// write.
type unlinkBeforeWrite struct {
	store.Store
	armed  atomic.Bool
	unlink func()
}

func (u *unlinkBeforeWrite) Write(ctx context.Context, ops []store.Op) error {
	if u.armed.CompareAndSwap(true, false) {
		u.unlink()
	}
	return u.Store.Write(ctx, ops)
}

// TestOAuthUnlinkRacesMutation: a mutation whose link is removed after
// its read fails its write with AUTH_FAILED (authChecks), like a key
// revoked mid-call.
func TestOAuthUnlinkRacesMutation(t *testing.T) {
	hubtest.ForEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		hook := &unlinkBeforeWrite{}
		w, op, c := tokenWorld(t, ad, func(s store.Store) store.Store { hook.Store = s; return hook })
		ctx := context.Background()
		link, cr := primedAliceOnToken(t, w, op, c[0])
		hook.unlink = func() {
			if _, err := w.Admin.UnlinkOAuth(ctx, link.LinkID); err != nil {
				t.Errorf("UnlinkOAuth: %v", err)
			}
		}
		hook.armed.Store(true)
		_, err := w.Hub.CheckpointSave(ctx, cr, hub.CheckpointSaveInput{BodyMD: "x"})
		hubtest.WantCode(t, "CheckpointSave after the link was removed", err, apperr.AuthFailed)
	})
}

// TestOAuthTokenMutatesOwnAgentRecord: a tool whose write conditions the
// caller's own agent record (directory_update_self) runs on a token,
// whose auth checks name that record too: one write may address an item
// once (DynamoDB refuses two operations on one item in a transaction).
func TestOAuthTokenMutatesOwnAgentRecord(t *testing.T) {
	hubtest.ForEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		w, op, c := tokenWorld(t, ad)
		ctx := context.Background()
		_, cr := primedAliceOnToken(t, w, op, c[0])
		role := "reviewer"
		if _, err := w.Hub.DirectoryUpdateSelf(ctx, cr, hub.DirectoryUpdateSelfInput{Role: &role}); err != nil {
			t.Errorf("DirectoryUpdateSelf on a token: %v", err)
		}
	})
}

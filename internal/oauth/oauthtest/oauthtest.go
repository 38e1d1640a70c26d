// Package oauthtest runs a real OpenID provider in process for tests:
// zitadel/oidc's OP (OpenID-certified) over its example in-memory storage,
// issuing JWT access tokens by the authorization-code flow with PKCE.
// Only test files import it, so no binary links the provider.
//
// What the provider is told beyond zitadel's defaults: its clients get JWT
// access tokens (not opaque ones) carrying the coordination scopes they
// asked for, each client's tokens name the audience the test gives it (the
// resource they are minted for, RFC 8707), and the login page signs in the
// user the authorization request's login_hint names, at once (the test is
// the user; Provider.SetDefaultUser's when there is no hint).
package oauthtest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
)

// Users are the example storage's users by subject, with their login
// names; the provider's subjects are "id1" and "id2".
const (
	Subject1 = "id1"
	Subject2 = "id2"
)

const password = "verysecure"

// Provider is a running OpenID provider.
type Provider struct {
	// URL is the issuer (no trailing slash).
	URL string

	// defaultUser is the subject the login signs in without a login_hint.
	mu          sync.Mutex
	defaultUser string

	srv     *httptest.Server
	storage *store
}

// Client is one registered client.
type Client struct {
	ID          string
	RedirectURI string
	// Audience is the aud of its access tokens (default: its id).
	Audience []string
}

// Start runs a provider with clients registered; it stops with t.
func Start(t testing.TB, clients ...Client) *Provider {
	t.Helper()
	p := &Provider{defaultUser: Subject2}
	p.srv = httptest.NewUnstartedServer(nil)
	p.URL = "http://" + p.srv.Listener.Addr().String()
	users := storage.NewUserStore(p.URL)
	cs := map[string]*storage.Client{}
	p.storage = &store{audience: map[string][]string{}, logins: map[string]string{}}
	for _, c := range clients {
		cs[c.ID] = storage.NativeClient(c.ID, c.RedirectURI)
		if len(c.Audience) > 0 {
			p.storage.audience[c.ID] = c.Audience
		}
	}
	p.storage.Storage = storage.NewStorageWithClients(users, cs)
	p.storage.loginURL = func(id string) string { return "/login?id=" + url.QueryEscape(id) }
	for _, sub := range []string{Subject1, Subject2} {
		p.storage.logins[sub] = users.GetUserByID(sub).Username
	}
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:      sha256.Sum256([]byte(t.Name())),
		CodeMethodS256: true,
	}, p.storage, op.StaticIssuer(p.URL), op.WithAllowInsecure())
	if err != nil {
		t.Fatalf("op.NewProvider: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/login", p.login)
	mux.Handle("/", provider)
	p.srv.Config.Handler = mux
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// SetDefaultUser makes the login sign in subject when a request has no
// login_hint (a client that sends none, as the MCP SDKs do).
func (p *Provider) SetDefaultUser(subject string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.defaultUser = subject
}

// login signs the request's user in and sends the browser back to the
// provider, which redirects it to the client with a code.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	req, err := p.storage.AuthRequestByID(r.Context(), id)
	if err != nil {
		http.Error(w, "unknown auth request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	sub := p.defaultUser
	p.mu.Unlock()
	if ar, ok := req.(*storage.AuthRequest); ok && ar.LoginHint != "" {
		sub = ar.LoginHint
	}
	name, ok := p.storage.logins[sub]
	if !ok {
		http.Error(w, "unknown user", http.StatusBadRequest)
		return
	}
	if err := p.storage.CheckUsernamePassword(name, password, id); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, p.URL+"/authorize/callback?id="+url.QueryEscape(id), http.StatusFound)
}

// Token runs the authorization-code flow with PKCE for client as the user
// subject, asking for scopes, and returns the access token.
func (p *Provider) Token(ctx context.Context, c Client, subject string, scopes ...string) (string, error) {
	conf := &oauth2.Config{
		ClientID:    c.ID,
		RedirectURL: c.RedirectURI,
		Scopes:      append([]string{"openid"}, scopes...),
		Endpoint: oauth2.Endpoint{AuthURL: p.URL + "/authorize", TokenURL: p.URL + "/oauth/token",
			AuthStyle: oauth2.AuthStyleInParams},
	}
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("login_hint", subject))
	code, err := p.follow(ctx, authURL, c.RedirectURI)
	if err != nil {
		return "", err
	}
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return "", fmt.Errorf("oauthtest: token exchange: %w", err)
	}
	return tok.AccessToken, nil
}

// follow follows redirects from authURL as a browser would, until one
// leaves for redirectURI, and returns that redirect's code.
func (p *Provider) follow(ctx context.Context, authURL, redirectURI string) (string, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := authURL
	for range 10 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			return "", fmt.Errorf("oauthtest: %s answered %d without a redirect", next, resp.StatusCode)
		}
		if strings.HasPrefix(loc.String(), redirectURI) {
			if e := loc.Query().Get("error"); e != "" {
				return "", fmt.Errorf("oauthtest: authorization refused: %s %s", e, loc.Query().Get("error_description"))
			}
			return loc.Query().Get("code"), nil
		}
		next = loc.String()
	}
	return "", errors.New("oauthtest: too many redirects")
}

// store is the example storage with this package's policy.
type store struct {
	*storage.Storage
	audience map[string][]string
	logins   map[string]string
	loginURL func(string) string
	mu       sync.Mutex
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c, loginURL: s.loginURL}, nil
}

func (s *store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	r, err := s.Storage.AuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	aud := s.audience[r.GetClientID()]
	s.mu.Unlock()
	if len(aud) == 0 {
		return r, nil
	}
	return audRequest{AuthRequest: r, aud: aud}, nil
}

// GetPrivateClaimsFromScopes puts the coordination scopes granted into
// the access token's scope claim.
func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	var granted []string
	for _, sc := range scopes {
		if isCoordination(sc) {
			granted = append(granted, sc)
		}
	}
	if len(granted) == 0 {
		return nil, nil
	}
	return map[string]any{"scope": strings.Join(granted, " ")}, nil
}

func isCoordination(scope string) bool {
	return strings.HasSuffix(scope, "coordination:read") || strings.HasSuffix(scope, "coordination:write")
}

// client issues JWT access tokens, allows the coordination scopes and
// logs in through the provider's own login handler.
type client struct {
	op.Client
	loginURL func(string) string
}

func (client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (c client) IsScopeAllowed(scope string) bool {
	return isCoordination(scope) || c.Client.IsScopeAllowed(scope)
}
func (c client) LoginURL(id string) string { return c.loginURL(id) }

// audRequest is an authorization request whose tokens name aud.
type audRequest struct {
	op.AuthRequest
	aud []string
}

func (a audRequest) GetAudience() []string { return a.aud }

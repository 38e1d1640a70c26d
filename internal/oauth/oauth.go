// Package oauth is agentbox as an OAuth 2.1 resource server (the MCP
// authorization spec, revisions 2025-11-25 and 2026-07-28): it verifies
// access tokens of the tenant's own issuer for the hub (hub.TokenVerifier),
// serves the protected resource metadata of RFC 9728, and adds that
// metadata's address to every 401 challenge, so a client that has only the
// server's URL finds the authorization server by itself.
//
// # Tokens
//
// A token is accepted only when all of these hold, checked by
// github.com/coreos/go-oidc/v3 (JOSE by go-jose) and this package:
//
//   - its signature verifies against the issuer's JWKS, found through the
//     issuer's discovery document (/.well-known/openid-configuration),
//     cached, and fetched again when a token names a key id the cache does
//     not hold (key rotation); an algorithm outside the issuer's is refused;
//   - iss is exactly the configured issuer;
//   - it is bound to this resource (RFC 8707): aud holds Config.Audience.
//     Amazon Cognito's access tokens carry no aud; with
//     Config.AudienceFromScopes a token without aud is bound by its scopes
//     instead, whose prefix is the resource server's identifier (and so
//     must be Config.ScopePrefix). A token minted for another resource is
//     refused, never passed through;
//   - it has not expired (Config.Skew of leeway) and is not an ID token
//     (Cognito's token_use, when present, must be "access").
//
// Its scope (the space-separated "scope" claim, or "scp") maps onto the
// seed's two scopes, ScopePrefix + "coordination:read" and
// ScopePrefix + "coordination:write"; who the subject is, the hub decides
// (its OAuth links).
//
// Discovery runs on the first token, not at start-up, so a Lambda cold
// start or `agentbox serve` does not depend on the issuer being up; a
// failed fetch is hub.UnavailableError (TEMPORARILY_UNAVAILABLE) and is
// tried again by the next token.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/agentbox/agentbox/internal/hub"
)

// The seed's scopes, before any prefix.
const (
	scopeRead  = hub.ScopeRead
	scopeWrite = hub.ScopeWrite
)

// DefaultSkew is the leeway on expiry: clocks of issuer and server differ
// by a little; more would extend a stolen token's life.
const DefaultSkew = 30 * time.Second

// Config configures the resource server.
type Config struct {
	// Issuer is the authorization server's issuer identifier, exactly as
	// its tokens' iss claim (and its discovery document) spell it.
	Issuer string
	// Audience is this resource's identifier: the aud a token must carry
	// (RFC 8707's resource, the public URL of the MCP endpoint, e.g.
	// https://example.com/mcp), and the resource the metadata names.
	// It may be empty only with AudienceFromScopes: then no token with an
	// aud is accepted, and the metadata names the MCP endpoint of the
	// address each request came to (how a stack learns its own URL, which
	// its template cannot name without a dependency cycle).
	Audience string
	// ScopePrefix is prepended to the seed's scope names in tokens and in
	// the metadata: Cognito writes a resource server's scopes as
	// "<identifier>/<scope>". Default empty.
	ScopePrefix string
	// AudienceFromScopes accepts a token without aud when its scopes carry
	// ScopePrefix (which must be set): how Cognito binds an access token
	// to a resource server. A token with an aud must still name Audience.
	AudienceFromScopes bool
	// MetadataURL is the public address of the protected resource
	// metadata, named in every challenge. Default: derived from Audience
	// (RFC 9728 §3.1: https://host/.well-known/oauth-protected-resource/mcp
	// for https://host/mcp).
	MetadataURL string
	// Skew is the leeway on expiry (default DefaultSkew; negative: none).
	Skew time.Duration
	// HTTPClient fetches discovery and keys (default http.DefaultClient
	// with a 10 s timeout).
	HTTPClient *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Resource is the configured resource server. It is safe for concurrent
// use.
type Resource struct {
	cfg Config

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
}

// New checks cfg and returns its Resource. Nothing is fetched yet.
func New(cfg Config) (*Resource, error) {
	iss, err := url.Parse(cfg.Issuer)
	if err != nil || iss.Host == "" || (iss.Scheme != "https" && iss.Scheme != "http") {
		return nil, errors.New("oauth: the issuer must be an http(s) URL")
	}
	if cfg.Audience == "" && !cfg.AudienceFromScopes {
		return nil, errors.New("oauth: an audience (this resource's identifier) is required")
	}
	if cfg.AudienceFromScopes && cfg.ScopePrefix == "" {
		return nil, errors.New("oauth: audience from scopes needs a scope prefix")
	}
	if cfg.MetadataURL == "" && cfg.Audience != "" {
		cfg.MetadataURL, err = metadataURL(cfg.Audience)
		if err != nil {
			return nil, err
		}
	}
	if cfg.Skew == 0 {
		cfg.Skew = DefaultSkew
	}
	if cfg.Skew < 0 {
		cfg.Skew = 0
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Resource{cfg: cfg}, nil
}

// metadataURL is RFC 9728 §3.1's well-known address for resource: the
// well-known segment between host and path.
func metadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", errors.New("oauth: the audience is no http(s) URL; set the metadata URL")
	}
	return u.Scheme + "://" + u.Host + WellKnown + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// Scopes are the two scopes as tokens carry them: read, then write.
func (r *Resource) Scopes() []string {
	return []string{r.cfg.ScopePrefix + scopeRead, r.cfg.ScopePrefix + scopeWrite}
}

// Verify implements hub.TokenVerifier.
func (r *Resource) Verify(ctx context.Context, raw string) (*hub.TokenIdentity, error) {
	v, err := r.loadVerifier(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := v.Verify(oidc.ClientContext(ctx, r.cfg.HTTPClient), raw)
	if err != nil {
		return nil, err
	}
	var c struct {
		Scope    string          `json:"scope"`
		Scp      json.RawMessage `json:"scp"`
		ClientID string          `json:"client_id"`
		AZP      string          `json:"azp"`
		TokenUse string          `json:"token_use"`
	}
	if err := tok.Claims(&c); err != nil {
		return nil, err
	}
	if c.TokenUse != "" && c.TokenUse != "access" {
		return nil, errors.New("oauth: not an access token")
	}
	if tok.Subject == "" {
		return nil, errors.New("oauth: no subject")
	}
	scopes := strings.Fields(c.Scope)
	if len(c.Scp) > 0 {
		var list []string
		var one string
		if json.Unmarshal(c.Scp, &list) == nil {
			scopes = append(scopes, list...)
		} else if json.Unmarshal(c.Scp, &one) == nil {
			scopes = append(scopes, strings.Fields(one)...)
		}
	}
	id := &hub.TokenIdentity{Issuer: tok.Issuer, Subject: tok.Subject, Client: c.ClientID}
	if id.Client == "" {
		id.Client = c.AZP
	}
	prefixed := false
	for _, s := range scopes {
		switch s {
		case r.cfg.ScopePrefix + scopeRead:
			id.Read = true
		case r.cfg.ScopePrefix + scopeWrite:
			id.Read, id.Write = true, true
		}
		prefixed = prefixed || (r.cfg.ScopePrefix != "" && strings.HasPrefix(s, r.cfg.ScopePrefix))
	}
	if !r.boundHere(tok.Audience, prefixed) {
		return nil, errors.New("oauth: the token is for another resource")
	}
	return id, nil
}

// boundHere says whether a token of audience aud is for this resource.
func (r *Resource) boundHere(aud []string, prefixedScopes bool) bool {
	for _, a := range aud {
		if a != "" && a == r.cfg.Audience {
			return true
		}
	}
	return len(aud) == 0 && r.cfg.AudienceFromScopes && prefixedScopes
}

// loadVerifier discovers the issuer once; a failure is retried by the
// next call.
func (r *Resource) loadVerifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.verifier != nil {
		return r.verifier, nil
	}
	// The key set outlives this request, so its fetches get a context of
	// their own (with the client) rather than the request's.
	keysCtx := oidc.ClientContext(context.WithoutCancel(ctx), r.cfg.HTTPClient)
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, r.cfg.HTTPClient), r.cfg.Issuer)
	if err != nil {
		return nil, &hub.UnavailableError{Err: err}
	}
	skew := r.cfg.Skew
	r.verifier = p.VerifierContext(keysCtx, &oidc.Config{
		// The audience is this resource's, checked by boundHere: go-oidc
		// checks an ID token's client id, not a resource.
		SkipClientIDCheck: true,
		Now:               func() time.Time { return r.cfg.Now().Add(-skew) },
	})
	return r.verifier, nil
}

// WellKnown is RFC 9728's well-known path.
const WellKnown = "/.well-known/oauth-protected-resource"

// Metadata is the protected resource metadata document (RFC 9728 §2).
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// Metadata returns the document this resource serves to req.
func (r *Resource) Metadata(req *http.Request) Metadata {
	return Metadata{
		Resource:               r.resource(req),
		AuthorizationServers:   []string{r.cfg.Issuer},
		ScopesSupported:        r.Scopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "agentbox",
	}
}

// resource is the resource identifier: the audience, else the MCP
// endpoint at the address req came to.
func (r *Resource) resource(req *http.Request) string {
	if r.cfg.Audience != "" {
		return r.cfg.Audience
	}
	return origin(req) + "/mcp"
}

// MetadataURL is the metadata address the challenges to req name.
func (r *Resource) MetadataURL(req *http.Request) string {
	if r.cfg.MetadataURL != "" {
		return r.cfg.MetadataURL
	}
	return origin(req) + WellKnown + "/mcp"
}

// origin is the scheme and host req came to: https behind TLS or a proxy
// that says so (API Gateway sets X-Forwarded-Proto), else http.
func origin(req *http.Request) string {
	scheme := "http"
	if req.TLS != nil || req.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + req.Host
}

// Handler serves the metadata at WellKnown and at its path form for /mcp,
// and passes every other request to next with its challenges completed: a
// 401's WWW-Authenticate gains resource_metadata and scope, a 403
// insufficient_scope gains resource_metadata (MCP authorization, "Protected
// Resource Metadata Discovery" and "Scope Challenge Handling"). Nothing
// else of next's answers changes, so a refused token and a refused key
// answer the same bytes.
func (r *Resource) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == WellKnown || req.URL.Path == WellKnown+"/mcp" {
			r.serveMetadata(w, req)
			return
		}
		next.ServeHTTP(&challengeWriter{ResponseWriter: w, r: r, meta: r.MetadataURL(req)}, req)
	})
}

func (r *Resource) serveMetadata(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h.Set("Content-Type", "application/json")
	// Public and the same for everyone: browsers' clients may read it.
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cache-Control", "max-age=300")
	body, err := json.Marshal(r.Metadata(req))
	if err != nil {
		// Strings only: it always encodes.
		panic("oauth: encoding metadata: " + err.Error())
	}
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// Challenge completes a bearer challenge for status (401 or 403) with the
// metadata address meta; other statuses, and values that are no Bearer
// challenge, are returned as they are.
func (r *Resource) Challenge(status int, value, meta string) string {
	if !strings.HasPrefix(value, "Bearer") {
		return value
	}
	var add []string
	switch status {
	case http.StatusUnauthorized:
		add = []string{`resource_metadata="` + meta + `"`, `scope="` + strings.Join(r.Scopes(), " ") + `"`}
	case http.StatusForbidden:
		if !strings.Contains(value, `error="insufficient_scope"`) {
			return value
		}
		// The transports name the seed's scope; tokens carry it with the
		// issuer's prefix, and the client must ask for that.
		value = strings.ReplaceAll(value, `scope="coordination:`, `scope="`+r.cfg.ScopePrefix+`coordination:`)
		add = []string{`resource_metadata="` + meta + `"`}
	default:
		return value
	}
	params := strings.TrimSpace(strings.TrimPrefix(value, "Bearer"))
	if params != "" {
		add = append([]string{params}, add...)
	}
	return "Bearer " + strings.Join(add, ", ")
}

// challengeWriter rewrites WWW-Authenticate as the status is written.
type challengeWriter struct {
	http.ResponseWriter
	r     *Resource
	meta  string
	wrote bool
}

func (c *challengeWriter) WriteHeader(status int) {
	if !c.wrote {
		c.wrote = true
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			h := c.Header()
			if v := h.Get("WWW-Authenticate"); v != "" {
				h.Set("WWW-Authenticate", c.r.Challenge(status, v, c.meta))
			}
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *challengeWriter) Write(b []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

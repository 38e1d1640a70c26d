package hub

import (
	"context"
	"errors"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
)

// OAuth access tokens (issue 27).
//
// A bearer that is not an agent key is, when the hub has a TokenVerifier,
// an access token of the tenant's own issuer. The verifier (internal/oauth)
// proves who minted it, for whom and until when; this file decides who it
// is: the owner links (issuer, subject[, client]) to one agent of one box
// (LinkOAuth), and begin then treats the caller exactly as that agent's
// key: the same session rules, limits, scopes and audit fields. Every
// failure — a token the verifier refuses, a subject nobody linked, a link
// to a deactivated agent — is the one AUTH_FAILED an unknown key gets.
//
// A link to one client wins over the issuer-wide link of the same subject,
// and both are read in one batch. A mutation's write checks the link and
// the agent record at the versions read, so an unlink or a deactivation
// between read and write cannot slip through (keys get the same from their
// key records, which a status change rewrites).

// TokenVerifier validates an OAuth access token. It never trusts the token:
// signature, issuer, audience and expiry are all checked before it answers.
type TokenVerifier interface {
	// Verify returns who the token is, or an error (any: the hub answers
	// every refusal as AUTH_FAILED and logs nothing of the token).
	Verify(ctx context.Context, token string) (*TokenIdentity, error)
}

// TokenIdentity is what a verified access token says of its holder.
type TokenIdentity struct {
	Issuer  string
	Subject string
	// Client is the token's client id (client_id, else azp), if any.
	Client string
	// Read and Write say which of the two coordination scopes the token
	// grants (Write implies Read).
	Read, Write bool
}

// tokenCaller is the agent a verified token links to.
type tokenCaller struct {
	link    *table.OAuthLink
	version uint64
	id      *TokenIdentity
}

// resolveToken verifies token and finds its link. A bearer that is no JWT
// (three dot-separated parts) is refused before the verifier sees it, as
// any malformed key is.
func (h *Hub) resolveToken(ctx context.Context, token string) (*tokenCaller, error) {
	if strings.Count(token, ".") != 2 {
		return nil, authFailed()
	}
	id, err := h.tokens.Verify(ctx, token)
	if err != nil {
		var ue *UnavailableError
		if errors.As(err, &ue) {
			return nil, apperr.Wrap(apperr.TemporarilyUnavailable, "The token issuer could not be reached; try again shortly.", err)
		}
		return nil, authFailed()
	}
	keys := []store.Key{table.OAuthLinkKey(table.OAuthLinkID(id.Issuer, id.Subject, ""))}
	if id.Client != "" {
		keys = append(keys, table.OAuthLinkKey(table.OAuthLinkID(id.Issuer, id.Subject, id.Client)))
	}
	items, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	it := items[0]
	if len(items) == 2 && items[1] != nil {
		it = items[1]
	}
	link, err := decode[table.OAuthLink](it, authFailed())
	if err != nil {
		return nil, err
	}
	return &tokenCaller{link: link, version: it.Version, id: id}, nil
}

// readOnly says whether the token caller may only read; an error when the
// token grants neither scope.
func (t *tokenCaller) readOnly() (bool, error) {
	if !t.id.Read && !t.id.Write {
		e := apperr.New(apperr.AuthFailed, "This token grants neither coordination scope.").
			WithNext("Ask the authorization server for a token with the " + ScopeRead + " or " + ScopeWrite + " scope.")
		e.RequiredScope = ScopeRead
		return false, e
	}
	return !t.id.Write || t.link.Scope == ScopeRead, nil
}

// UnavailableError is a TokenVerifier's refusal that is not the token's
// fault: the issuer's discovery document or key set could not be fetched.
// The hub answers it TEMPORARILY_UNAVAILABLE, not AUTH_FAILED, so a valid
// token is not thrown away by its client.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return "token issuer unavailable: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// OAuthLinkInfo describes a link as the admin plane shows it.
type OAuthLinkInfo struct {
	LinkID    string `json:"link_id"`
	Issuer    string `json:"issuer"`
	Subject   string `json:"subject"`
	Client    string `json:"client,omitempty"`
	BoxID     string `json:"box_id"`
	AgentID   string `json:"agent_id"`
	Scope     string `json:"scope"`
	CreatedAt string `json:"created_at"`
}

func oauthLinkInfo(r *table.OAuthLink) *OAuthLinkInfo {
	scope := ScopeWrite
	if r.Scope == ScopeRead {
		scope = ScopeRead
	}
	return &OAuthLinkInfo{LinkID: r.ID, Issuer: r.Issuer, Subject: r.Subject, Client: r.Client,
		BoxID: r.BoxID, AgentID: r.AgentID, Scope: scope, CreatedAt: timestamp(r.CreatedAt)}
}

// NewOAuthLink is what LinkOAuth links.
type NewOAuthLink struct {
	// Issuer is the token's iss, exactly; Subject its sub.
	Issuer, Subject string
	// Client, when set, limits the link to tokens of that client.
	Client string
	// Agent is the agent the tokens act as.
	Agent string
	// Scope caps the link: ScopeRead makes every token of it read-only;
	// empty or ScopeWrite leaves the token's scopes as granted.
	Scope string
}

// maxLinkField bounds issuer, subject and client: far above any real
// value, small enough to keep a record small.
const maxLinkField = 512

// LinkOAuth maps a token subject to an agent. The agent must exist; a
// triple already linked is ALREADY_EXISTS (unlink it first), so a link is
// never silently moved to another agent.
func (a *Admin) LinkOAuth(ctx context.Context, n NewOAuthLink) (*OAuthLinkInfo, error) {
	for _, f := range []struct{ name, v string }{{"issuer", n.Issuer}, {"subject", n.Subject}, {"client", n.Client}} {
		if len(f.v) > maxLinkField || (f.v == "" && f.name != "client") {
			return nil, apperr.Invalid(f.name, "must be 1 to 512 bytes")
		}
	}
	if n.Scope != "" {
		if err := checkScope(n.Scope); err != nil {
			return nil, err
		}
	}
	if err := uuidArg("agent", &n.Agent); err != nil {
		return nil, err
	}
	return retry(ctx, func() (*OAuthLinkInfo, error) {
		rec, ver, err := a.loadAgent(ctx, n.Agent)
		if err != nil {
			return nil, err
		}
		link := &table.OAuthLink{ID: table.OAuthLinkID(n.Issuer, n.Subject, n.Client), Issuer: n.Issuer, Subject: n.Subject,
			Client: n.Client, BoxID: rec.BoxID, AgentID: rec.ID, CreatedAt: a.h.clock(), Scope: storedScope(n.Scope)}
		err = a.h.st.Write(ctx, []store.Op{
			store.Check(table.AgentKey(rec.ID), store.AtVersion(ver)),
			store.Put(link.Item(), store.Absent),
		})
		if cf, ok := store.ConditionFailed(err); ok {
			if cf.Index == 0 {
				return nil, errContended
			}
			return nil, apperr.New(apperr.InvalidArgument, "This subject is already linked for this issuer and client.").
				WithNext("Run 'agentbox admin oauth-unlink --link <link_id>' first (oauth-list shows it) to link it to another agent.")
		}
		if err != nil {
			return nil, storageErr(err)
		}
		return oauthLinkInfo(link), nil
	})
}

// maxOAuthLinks bounds oauth-list: a box links a handful of people.
const maxOAuthLinks = 500

// ListOAuthLinks lists a box's links, oldest first.
func (a *Admin) ListOAuthLinks(ctx context.Context, box string) ([]*OAuthLinkInfo, error) {
	return boxIndexRows(ctx, a, strings.ToLower(box), table.BoxOAuthLinksIndex, maxOAuthLinks, oauthLinkInfo)
}

// UnlinkOAuth deletes a link; the next request with its tokens is refused
// like any unknown key, and a mutation already past its read fails its
// write (authChecks).
func (a *Admin) UnlinkOAuth(ctx context.Context, link string) (*OAuthLinkInfo, error) {
	if len(link) != 64 || strings.Trim(link, "0123456789abcdef") != "" {
		return nil, apperr.Invalid("link", "must be a link_id from oauth-list")
	}
	rec, _, err := get[table.OAuthLink](ctx, a.h.st, table.OAuthLinkKey(link), apperr.Forbidden())
	if err != nil {
		return nil, err
	}
	if err := a.h.st.Write(ctx, []store.Op{store.Delete(table.OAuthLinkKey(link), store.Unconditional)}); err != nil {
		return nil, storageErr(err)
	}
	return oauthLinkInfo(rec), nil
}

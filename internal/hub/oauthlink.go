package hub

import (
	"context"
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
	if err := uuidArg("box", &box); err != nil {
		return nil, err
	}
	if err := a.requireBox(ctx, box); err != nil {
		return nil, err
	}
	recs, _, err := query[table.OAuthLink](ctx, a.h.st, store.Query{Index: store.GSI1, PK: table.BoxOAuthLinksIndex(box), Limit: maxOAuthLinks})
	if err != nil {
		return nil, err
	}
	out := make([]*OAuthLinkInfo, 0, len(recs))
	for _, r := range recs {
		out = append(out, oauthLinkInfo(r))
	}
	return out, nil
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

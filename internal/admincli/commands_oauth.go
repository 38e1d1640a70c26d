package admincli

import (
	"context"

	"github.com/agentbox/agentbox/internal/hub"
)

// OAuth subject links (issue 27): who an access token of the tenant's
// issuer is. The server must run with --oauth-issuer (or the stack with
// its OAuth parameter) for links to matter.
func init() { commands = append(commands, oauthCommands...) }

// oauthLinkList is oauth-list's output: an object, like list-agents'.
type oauthLinkList struct {
	BoxID string               `json:"box_id"`
	Links []*hub.OAuthLinkInfo `json:"links"`
}

var oauthCommands = []*Command{
	{
		Name: "oauth-link",
		Summary: "Let a person's OAuth access tokens act as one agent: map the token subject (sub) of an issuer " +
			"(iss, exactly), optionally of one client only, to the agent. Unlinked subjects are refused like unknown keys.",
		Flags: []Flag{
			{Name: "issuer", Usage: "the tokens' issuer, exactly as their iss claim (e.g. https://cognito-idp.<region>.amazonaws.com/<pool id>)", Required: true},
			{Name: "subject", Usage: "the person's subject (the tokens' sub claim)", Required: true},
			{Name: "client", Usage: "accept only tokens of this client id (default: every client of the issuer; a client link wins over it)"},
			idFlag("agent"),
			{Name: "scope", Usage: "coordination:read caps the link read-only; default: what each token grants"},
		},
		Run: func(ctx context.Context, a *hub.Admin, args Args) (any, error) {
			return a.LinkOAuth(ctx, hub.NewOAuthLink{Issuer: args["issuer"], Subject: args["subject"],
				Client: args["client"], Agent: args["agent"], Scope: args["scope"]})
		},
	},
	{
		Name:    "oauth-list",
		Summary: "List a box's OAuth subject links, oldest first.",
		Flags:   []Flag{idFlag("box")},
		Run:     boxRows((*hub.Admin).ListOAuthLinks, func(box string, l []*hub.OAuthLinkInfo) any { return oauthLinkList{BoxID: box, Links: l} }),
	},
	{
		Name:    "oauth-unlink",
		Summary: "Remove an OAuth subject link; its tokens are refused from their next request.",
		Flags:   []Flag{{Name: "link", Usage: "link id (link_id from oauth-list)", Required: true}},
		Run:     with1((*hub.Admin).UnlinkOAuth, "link"),
	},
}

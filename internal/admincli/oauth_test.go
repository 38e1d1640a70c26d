package admincli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestOAuthLinkCommands runs oauth-link, oauth-list and oauth-unlink
// against the embedded store (what the links do to tokens is tested with
// a real provider in internal/hub and internal/oauth).
func TestOAuthLinkCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	data := []string{"--data", dir}
	var box hub.BoxInfo
	ok(t, &box, append([]string{"create-box", "--name", "b"}, data...)...)
	var agent hub.AgentInfo
	ok(t, &agent, append([]string{"create-agent", "--box", box.BoxID, "--name", "a"}, data...)...)

	link := []string{"oauth-link", "--issuer", "https://issuer.example", "--subject", "user-1", "--agent", agent.AgentID}
	var l1, l2 hub.OAuthLinkInfo
	ok(t, &l1, append(link, data...)...)
	if l1.LinkID == "" || l1.AgentID != agent.AgentID || l1.BoxID != box.BoxID || l1.Scope != hub.ScopeWrite {
		t.Errorf("oauth-link = %+v; want a link of the agent with the write scope", l1)
	}
	fails(t, admincli.ExitError, apperr.InvalidArgument, append(link, data...)...)
	ok(t, &l2, append(append(link, "--client", "app", "--scope", hub.ScopeRead), data...)...)
	if l2.LinkID == l1.LinkID || l2.Scope != hub.ScopeRead || l2.Client != "app" {
		t.Errorf("oauth-link --client app --scope read = %+v; want a second, read-only link", l2)
	}
	fails(t, admincli.ExitError, apperr.InvalidArgument, append([]string{"oauth-link", "--issuer", "https://issuer.example",
		"--subject", "user-2", "--agent", agent.AgentID, "--scope", "admin"}, data...)...)

	var list struct {
		Links []hub.OAuthLinkInfo `json:"links"`
	}
	out := ok(t, &list, append([]string{"oauth-list", "--box", box.BoxID}, data...)...)
	if len(list.Links) != 2 || !strings.Contains(out, "user-1") {
		t.Errorf("oauth-list = %s; want both links", out)
	}
	var gone hub.OAuthLinkInfo
	ok(t, &gone, append([]string{"oauth-unlink", "--link", l1.LinkID}, data...)...)
	fails(t, admincli.ExitError, apperr.NotFoundOrForbidden, append([]string{"oauth-unlink", "--link", l1.LinkID}, data...)...)
	ok(t, &list, append([]string{"oauth-list", "--box", box.BoxID}, data...)...)
	if len(list.Links) != 1 || list.Links[0].LinkID != l2.LinkID {
		t.Errorf("oauth-list after unlink = %+v; want the client link only", list.Links)
	}
}

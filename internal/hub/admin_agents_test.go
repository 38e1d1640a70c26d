package hub_test

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestAddAgentListedWithCardRole: an agent created listed with a card
// role is found by role at once, its card at revision 0 (the agent's first
// update still sends "0"); rotations keep a read-only key read-only; an
// unknown box is an error naming it.
func TestAddAgentListedWithCardRole(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		admin := f.h.Admin()
		rita, err := admin.AddAgent(f.ctx, hub.NewAgent{Box: f.box, Name: "rita", Listed: true, CardRole: "release manager", Scope: hub.ScopeRead})
		if err != nil {
			t.Fatalf("AddAgent: %v", err)
		}
		got, err := f.h.DirectorySearch(f.ctx, f.prime(f.a), hub.DirectorySearchInput{Query: "RELEASE"})
		if err != nil || len(got.Cards) != 1 || got.Cards[0].AgentID != rita.AgentID || got.Cards[0].Revision != 0 {
			t.Fatalf("directory_search(RELEASE) = %+v, %v; want rita's card at revision 0", got, err)
		}
		rotated, err := admin.RotateKey(f.ctx, rita.AgentID)
		if err != nil || len(rotated.Keys) != 1 || rotated.Keys[0].Scope != hub.ScopeRead {
			t.Fatalf("RotateKey(read-only agent) = %+v, %v; want one coordination:read key", rotated, err)
		}
		role := "releases"
		_, err = f.h.DirectoryUpdateSelf(f.ctx, f.prime(rotated), hub.DirectoryUpdateSelfInput{Mutation: hub.Mutation{IdempotencyKey: "c1"}, Role: &role})
		if e := apperr.Normalize(err); e.Code != apperr.AuthFailed {
			t.Errorf("directory_update_self with the rotated read-only key: %v, want AUTH_FAILED", err)
		}
		widened, err := admin.RotateKeyScoped(f.ctx, rita.AgentID, hub.ScopeWrite)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.h.DirectoryUpdateSelf(f.ctx, f.prime(widened), hub.DirectoryUpdateSelfInput{Mutation: hub.Mutation{IdempotencyKey: "c2"}, Role: &role}); err != nil {
			t.Errorf("directory_update_self at revision 0 after AddAgent with a card role: %v", err)
		}
		const unknown = "0f0f0f0f-0000-4000-8000-000000000000"
		for name, call := range map[string]func() error{
			"ListAgents": func() error { return errOf(admin.ListAgents(f.ctx, unknown)) },
			"ListRooms":  func() error { return errOf(admin.ListRooms(f.ctx, unknown)) },
			"AddAgent":   func() error { return errOf(admin.AddAgent(f.ctx, hub.NewAgent{Box: unknown, Name: "x"})) },
		} {
			if e := apperr.Normalize(call()); e.Code != apperr.NotFoundOrForbidden || !strings.Contains(e.Message, unknown) {
				t.Errorf("%s(unknown box) = %v, want NOT_FOUND_OR_FORBIDDEN naming the box", name, e)
			}
		}
		boxes, err := admin.ListBoxes(f.ctx)
		if err != nil || len(boxes) != 2 {
			t.Errorf("ListBoxes = %+v, %v; want the fixture's two boxes", boxes, err)
		}
	})
}

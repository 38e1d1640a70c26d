package registry_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/registry/registrytest"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestEveryToolDeclaresTheSessionArgument: the handle is an optional
// string property of every tool's input, never required, and never inside
// a seed-002 tool's data.
func TestEveryToolDeclaresTheSessionArgument(t *testing.T) {
	t.Parallel()
	for _, tool := range registry.New().Tools() {
		p := tool.Input.Properties[registry.SessionArgument]
		if p == nil || p.Type != "string" || p.Description == "" {
			t.Errorf("%s input: %s = %+v, want a described string property", tool.Name, registry.SessionArgument, p)
			continue
		}
		for _, req := range tool.Input.Required {
			if req == registry.SessionArgument {
				t.Errorf("%s input: %s is required, want optional", tool.Name, registry.SessionArgument)
			}
		}
		if data := tool.Input.Properties["data"]; data != nil && data.Properties[registry.SessionArgument] != nil {
			t.Errorf("%s input: data declares %s, want it beside id and data only", tool.Name, registry.SessionArgument)
		}
	}
}

// TestSessionArgument: a call that carries no transport session works with
// the handle argument alone, on a seed-000 and a seed-002 tool; the
// argument wins over a transport session; and it is never authority on its
// own: another agent's key with it fails authentication.
func TestSessionArgument(t *testing.T) {
	hubtest.ForEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		w := hubtest.New(t, ad, hubtest.Config{})
		ctx, h, alice, bob := w.Ctx, w.Hub, w.Alice, w.Bob
		r := registry.New()
		invoke := func(tool string, cr hub.Credentials, args string) error {
			t.Helper()
			tl, ok := r.Tool(tool)
			if !ok {
				t.Fatalf("no tool %s", tool)
			}
			_, err := tl.Invoke(ctx, h, cr, []byte(args))
			return err
		}
		prime := func(key string) string {
			t.Helper()
			tl, _ := r.Tool("agent_prime")
			out, err := tl.Invoke(ctx, h, hub.Credentials{Bearer: key, Transport: "mcp"}, []byte(`{}`))
			if err != nil {
				t.Fatalf("agent_prime: %v", err)
			}
			p := registrytest.AsJSON[struct {
				SessionID string `json:"session_id"`
			}](t, out)
			if p.SessionID == "" {
				t.Fatalf("agent_prime = %+v, want a session_id", out)
			}
			return p.SessionID
		}
		aSess, bSess := prime(alice.BoxKey), prime(bob.BoxKey)
		arg := func(extra string) string { return `{"session_id":"` + aSess + `"` + extra + `}` }
		code := func(err error) apperr.Code {
			if err == nil {
				return ""
			}
			e, _ := apperr.As(err)
			if e == nil {
				return "not an apperr"
			}
			return e.Code
		}
		cases := []struct {
			name, tool string
			cr         hub.Credentials
			args       string
			want       apperr.Code
		}{
			{"Flat/handle alone", "checkpoint_get", hub.Credentials{Bearer: alice.BoxKey}, arg(""), ""},
			{"Flat/no handle", "checkpoint_get", hub.Credentials{Bearer: alice.BoxKey}, `{}`, apperr.NotPrimed},
			{"Flat/handle over another transport session", "checkpoint_get", hub.Credentials{Bearer: alice.BoxKey, SessionID: "s_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, arg(""), ""},
			{"Flat/unknown handle", "checkpoint_get", hub.Credentials{Bearer: alice.BoxKey, SessionID: aSess}, `{"session_id":"s_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`, apperr.NotPrimed},
			{"Flat/garbled handle", "checkpoint_get", hub.Credentials{Bearer: alice.BoxKey}, `{"session_id":"nope"}`, apperr.NotPrimed},
			{"Flat/box_key and handle", "checkpoint_get", hub.Credentials{}, `{"session_id":"` + aSess + `","box_key":"` + alice.BoxKey + `"}`, ""},
			{"Flat/handle with another agent's key", "checkpoint_get", hub.Credentials{Bearer: bob.BoxKey}, arg(""), apperr.AuthFailed},
			{"Flat/another agent's handle", "checkpoint_get", hub.Credentials{Bearer: alice.BoxKey}, `{"session_id":"` + bSess + `"}`, apperr.AuthFailed},
			{"Flat/handle without a key", "checkpoint_get", hub.Credentials{}, arg(""), apperr.AuthFailed},
			{"Flat/not a string", "checkpoint_get", hub.Credentials{Bearer: alice.BoxKey}, `{"session_id":7}`, apperr.InvalidArgument},
			{"Flat/mutation", "checkpoint_save", hub.Credentials{Bearer: alice.BoxKey}, arg(`,"idempotency_key":"h1","expected_revision":"0","body_md":"x"`), ""},
			{"IDData/handle beside id", "get_memory", hub.Credentials{Bearer: alice.BoxKey}, `{"id":"missing-note","session_id":"` + aSess + `"}`, apperr.NotFoundOrForbidden},
			{"IDData/no handle", "get_memory", hub.Credentials{Bearer: alice.BoxKey}, `{"id":"missing-note"}`, apperr.NotPrimed},
			{"IDData/handle inside data", "list_memory", hub.Credentials{Bearer: alice.BoxKey}, `{"data":{"session_id":"` + aSess + `"}}`, apperr.InvalidArgument},
			{"Unauthenticated tool ignores it", "get_help", hub.Credentials{}, `{"tool":"inbox_list","session_id":"` + aSess + `"}`, ""},
		}
		for _, tc := range cases {
			if got := code(invoke(tc.tool, tc.cr, tc.args)); got != tc.want {
				t.Errorf("%s: Invoke(%s, %s) = %q, want %q", tc.name, tc.tool, tc.args, got, tc.want)
			}
		}
	})
}

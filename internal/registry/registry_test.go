package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/schema"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// strictObjects walks a schema and reports every object schema that
// declares properties without additionalProperties:false.
func strictObjects(t *testing.T, tool, path string, s *schema.Schema) {
	t.Helper()
	if s == nil {
		return
	}
	if s.Type == "object" && s.Properties != nil && (s.AdditionalProperties == nil || *s.AdditionalProperties) {
		t.Errorf("tool %s: input schema at %q is not strict (additionalProperties must be false)", tool, path)
	}
	for name, p := range s.Properties {
		strictObjects(t, tool, path+"."+name, p)
	}
	strictObjects(t, tool, path+"[]", s.Items)
}

func TestDeclarations(t *testing.T) {
	r := registry.New()
	if len(r.Tools()) == 0 {
		t.Fatal("registry.New(): no tools")
	}
	routes := map[string]string{}
	for _, tool := range r.Tools() {
		strictObjects(t, tool.Name, "", tool.Input)
		if tool.Input.Type != "object" || tool.Output.Type != "object" {
			t.Errorf("tool %s: input/output schemas must be objects", tool.Name)
		}
		route := tool.Method + " " + tool.Path
		if prev, dup := routes[route]; dup {
			t.Errorf("tools %s and %s share route %s", prev, tool.Name, route)
		}
		routes[route] = tool.Name
		c := tool.Contract()
		if len(c.SecuritySchemes) != 1 || c.SecuritySchemes[0].Type != "oauth2" {
			t.Errorf("tool %s: security schemes %+v, want one oauth2", tool.Name, c.SecuritySchemes)
		}
		if want := map[bool]string{true: registry.ScopeRead, false: registry.ScopeWrite}[tool.Hints.ReadOnly]; c.SecuritySchemes[0].Scopes[0] != want {
			t.Errorf("tool %s: scope %v, want %s", tool.Name, c.SecuritySchemes[0].Scopes, want)
		}
		for hint := range c.Annotations {
			if c.AnnotationJustifications[hint] == "" {
				t.Errorf("tool %s: %s has no justification", tool.Name, hint)
			}
		}
	}
	if _, err := r.Only("no_such_tool"); err == nil {
		t.Errorf("Only(no_such_tool): got nil error")
	}
	one, err := r.Only("checkpoint_get")
	if err != nil || len(one.Tools()) != 1 {
		t.Errorf("Only(checkpoint_get) = %v, %v; want one tool", one, err)
	}
}

func TestInvokeStrictness(t *testing.T) {
	ad := teststores.All()[0]
	h := hub.New(ad.Open(t, nil), hub.Options{})
	r := registry.New()
	save, _ := r.Tool("checkpoint_save")
	const marker = "MARKER-7f3a"
	cases := []struct {
		name string
		args string
		want apperr.Code
	}{
		{"UnknownField", `{"idempotency_key":"k","expected_revision":"0","body_md":"x","` + marker + `":1}`, apperr.InvalidArgument},
		{"DuplicateKey", `{"idempotency_key":"k","expected_revision":"0","body_md":"x","body_md":"` + marker + `"}`, apperr.InvalidArgument},
		{"InvalidUTF8", "{\"idempotency_key\":\"k\",\"expected_revision\":\"0\",\"body_md\":\"" + marker + "\xff\"}", apperr.InvalidArgument},
		{"WrongType", `{"idempotency_key":"k","expected_revision":0,"body_md":"` + marker + `"}`, apperr.InvalidArgument},
		{"RevisionNotDecimal", `{"idempotency_key":"k","expected_revision":"01","body_md":"` + marker + `"}`, apperr.InvalidArgument},
		{"RevisionOverflow", `{"idempotency_key":"k","expected_revision":"18446744073709551616","body_md":"x"}`, apperr.InvalidArgument},
		{"MissingRequired", `{"idempotency_key":"k","body_md":"` + marker + `"}`, apperr.InvalidArgument},
		{"BadIdempotencyKey", `{"idempotency_key":"` + marker + ` !","expected_revision":"0","body_md":"x"}`, apperr.InvalidArgument},
		{"TooDeep", `{"idempotency_key":"k","expected_revision":"0","body_md":"x","payload":` + strings.Repeat(`{"a":`, 20) + "1" + strings.Repeat("}", 20) + `}`, apperr.LimitExceeded},
		{"NotAnObject", `["` + marker + `"]`, apperr.InvalidArgument},
		{"TrailingData", `{"idempotency_key":"k","expected_revision":"0","body_md":"x"} {"` + marker + `":1}`, apperr.InvalidArgument},
		{"IDTooLong", `{"idempotency_key":"` + strings.Repeat("k", 81) + `","expected_revision":"0","body_md":"x"}`, apperr.LimitExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := save.Invoke(context.Background(), h, hub.Credentials{}, []byte(tc.args))
			e, ok := apperr.As(err)
			if !ok || e.Code != tc.want {
				t.Fatalf("Invoke(checkpoint_save, %s) = %v, want %s", tc.name, err, tc.want)
			}
			env, _ := json.Marshal(e.Envelope())
			if strings.Contains(string(env), marker) || strings.Contains(string(env), "kkkkkkkk") {
				t.Errorf("error envelope echoes the rejected input: %s", env)
			}
		})
	}
	// Valid arguments reach the domain, which answers AUTH_FAILED without a key.
	_, err := save.Invoke(context.Background(), h, hub.Credentials{}, []byte(`{"idempotency_key":"k","expected_revision":"0","body_md":"x"}`))
	if e, _ := apperr.As(err); e == nil || e.Code != apperr.AuthFailed {
		t.Fatalf("Invoke(valid, no key) = %v, want AUTH_FAILED", err)
	}
}

func TestGetHelp(t *testing.T) {
	ad := teststores.All()[0]
	h := hub.New(ad.Open(t, nil), hub.Options{})
	r := registry.New()
	help, _ := r.Tool("get_help")
	for _, name := range r.Names() {
		out, err := help.Invoke(context.Background(), h, hub.Credentials{}, []byte(`{"tool":"`+name+`"}`))
		if err != nil {
			t.Fatalf("get_help(%s): %v", name, err)
		}
		c := out.(*registry.HelpOutput).Contract
		if c["name"] != name || c["input_schema"] == nil || c["output_schema"] == nil || c["security_schemes"] == nil {
			t.Errorf("get_help(%s) = %v, want the whole contract", name, c)
		}
	}
	_, err := help.Invoke(context.Background(), h, hub.Credentials{}, []byte(`{"tool":"nope"}`))
	if e, _ := apperr.As(err); e == nil || e.Code != apperr.InvalidArgument || strings.Contains(e.Message, "nope") {
		t.Fatalf("get_help(nope) = %v, want INVALID_ARGUMENT not echoing the name", err)
	}
}

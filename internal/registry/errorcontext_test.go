package registry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/registry"
)

// TestErrorTextsFitToolAndTransport renders every code for every tool on
// both transports, as the transports do (registry.ErrorContext), and wants
// next_action and help in the words of that tool and transport: a read
// names no mutation id, a seed-000 mutation its idempotency_key, a seed-002
// one its operation_key, a seed-002 tool no box_key; help is the tool's
// own get_help in the transport's form, never the README. NOT_PRIMED's
// words belong to the session layer and are not checked here.
func TestErrorTextsFitToolAndTransport(t *testing.T) {
	for _, tool := range registry.New().Tools() {
		_, idem := tool.Input.Properties["idempotency_key"]
		_, boxKey := tool.Input.Properties["box_key"]
		data := tool.Input.Properties["data"]
		op := data != nil && data.Properties["operation_key"] != nil
		for _, tr := range []apperr.Transport{apperr.MCP, apperr.REST} {
			c := registry.ErrorContext(tool, tr)
			wantHelp := `get_help {"tool":"` + tool.Name + `"}`
			if tr == apperr.REST {
				wantHelp = "GET /v1/help/" + tool.Name
			}
			for _, code := range apperr.Codes() {
				b, err := json.Marshal(apperr.New(code, "m").EnvelopeIn(c))
				if err != nil {
					t.Fatal(err)
				}
				var env apperr.Envelope
				if err := json.Unmarshal(b, &env); err != nil {
					t.Fatal(err)
				}
				where := tool.Name + " over " + string(tr) + " " + string(code)
				if !strings.Contains(env.Help, wantHelp) || strings.Contains(env.Help, "README") {
					t.Errorf("%s: help %q, want it to point at %s and not at the README", where, env.Help, wantHelp)
				}
				if code == apperr.NotPrimed {
					continue
				}
				next := env.NextAction
				if code == apperr.InvalidArgument && !strings.Contains(next, "("+wantHelp+")") {
					t.Errorf("%s: next_action %q, want it to name the contract's call %s", where, next, wantHelp)
				}
				var banned []string
				if strings.Contains(next, "mutation ID") {
					t.Errorf("%s: next_action %q speaks of a mutation ID; name the tool's own argument or none", where, next)
				}
				if tool.Hints.ReadOnly {
					// A read changed nothing: no outcome to doubt.
					banned = append(banned, "uncertain", "persisted")
				}
				switch {
				case tool.Hints.ReadOnly || (!idem && !op):
					banned = append(banned, "idempotency_key", "operation_key")
				case idem:
					banned = append(banned, "operation_key")
				case op:
					banned = append(banned, "idempotency_key")
				}
				if !boxKey {
					banned = append(banned, "box_key")
				}
				if tr == apperr.MCP {
					banned = append(banned, "JSON body", "Retry-After")
				} else {
					banned = append(banned, "in the arguments", "on the connection")
				}
				for _, word := range banned {
					if strings.Contains(next, word) {
						t.Errorf("%s: next_action %q mentions %q", where, next, word)
					}
				}
				if code == apperr.IdempotencyConflict || tool.Hints.ReadOnly {
					continue
				}
				// A mutation's retry advice names its own key.
				if retry := code == apperr.TemporarilyUnavailable || code == apperr.StorageFailure || code == apperr.RateLimited; retry {
					switch {
					case idem && !strings.Contains(next, "same idempotency_key"):
						t.Errorf("%s: next_action %q, want it to say to keep the same idempotency_key", where, next)
					case op && !strings.Contains(next, "same operation_key"):
						t.Errorf("%s: next_action %q, want it to say to keep the same operation_key", where, next)
					}
				}
			}
		}
	}
}

// TestSeed002ConflictSaysVersion: a stale expected_version on a seed-002
// tool is answered in the seed's words (version), not seed 000's
// (revision).
func TestSeed002ConflictSaysVersion(t *testing.T) {
	tool, _ := registry.New().Tool("save_memory")
	b, err := json.Marshal(apperr.VersionConflict(3).EnvelopeIn(registry.ErrorContext(tool, apperr.MCP)))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(strings.ToLower(s), "revision you sent") || strings.Contains(s, "expected_revision") ||
		!strings.Contains(s, "expected_version") || !strings.Contains(s, `"current_revision":3`) {
		t.Errorf("save_memory REVISION_CONFLICT = %s, want it in terms of expected_version with current_revision 3", s)
	}
}

// TestMutationKeyExamplesPerTool: every seed-000 mutation shows an
// idempotency_key example of its own, valid under its schema, so that an
// agent copying examples never sends one tool's key to another.
func TestMutationKeyExamplesPerTool(t *testing.T) {
	seen := map[string]string{}
	for _, tool := range registry.New().Tools() {
		p := tool.Input.Properties["idempotency_key"]
		if p == nil {
			continue
		}
		if p.Example != nil || len(p.Examples) != 1 {
			t.Errorf("%s: idempotency_key example %v, examples %v; want one examples entry", tool.Name, p.Example, p.Examples)
			continue
		}
		ex, _ := p.Examples[0].(string)
		if other, dup := seen[ex]; dup {
			t.Errorf("%s and %s both show idempotency_key %q", tool.Name, other, ex)
		}
		seen[ex] = tool.Name
		if err := p.Validate([]byte(`"` + ex + `"`)); err != nil {
			t.Errorf("%s: idempotency_key example %q: %v", tool.Name, ex, err)
		}
	}
	if len(seen) < 2 {
		t.Fatalf("found %d tools with idempotency_key, want the seed-000 mutations", len(seen))
	}
}

package registry_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/store"
)

// One test per rule that holds for every tool of a kind (registry/errors.go),
// iterating over the registry: a rule's test provokes its code for every
// tool that lists it.

// declaring are the tools to which the shared rule of code applies.
func declaring(r *registry.Registry, code apperr.Code) []*registry.Tool {
	var out []*registry.Tool
	for _, tl := range r.Tools() {
		if slices.Contains(tl.SharedErrors(), code) {
			out = append(out, tl)
		}
	}
	return out
}

// okArgs are alice's succeeding arguments for tl with a key of its own.
func okArgs(w *world, tl *registry.Tool, key string) string {
	w.t.Helper()
	return toolCases[tl.Name].ok(w, strings.ReplaceAll(tl.Name, "_", "-")+"-"+key)
}

// TestEveryToolGatesItsArguments: every tool refuses arguments its schema
// does not admit (INVALID_ARGUMENT) and arguments past the JSON depth
// bound (LIMIT_EXCEEDED), before its domain sees them.
func TestEveryToolGatesItsArguments(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		deep := strings.Repeat(`{"a":`, hub.MaxJSONDepth+1) + "1" + strings.Repeat("}", hub.MaxJSONDepth+1)
		for _, tl := range declaring(w.r, apperr.InvalidArgument) {
			_, err := w.call(tl.Name, w.alice, `{"surplus":true}`)
			wantCode(t, tl.Name+"(surplus field)", err, apperr.InvalidArgument)
		}
		for _, tl := range declaring(w.r, apperr.LimitExceeded) {
			_, err := w.call(tl.Name, w.alice, `{"surplus":`+deep+`}`)
			wantCode(t, tl.Name+"(too deep)", err, apperr.LimitExceeded)
		}
	})
}

// TestEveryToolAuthenticates: without a key, with a forged one, and with
// another agent's key on alice's session, every authenticated tool answers
// AUTH_FAILED; so does every mutation but agent_prime called with a
// read-only key.
func TestEveryToolAuthenticates(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		ro, err := w.h.Admin().CreateAgentScoped(w.ctx, w.alice.BoxID, "reader", "", hub.ScopeRead)
		if err != nil {
			t.Fatalf("CreateAgentScoped: %v", err)
		}
		reader := hub.Credentials{Bearer: ro.BoxKey, SessionID: w.prime(ro), Transport: "rest"}
		for _, tl := range declaring(w.r, apperr.AuthFailed) {
			args := okArgs(w, tl, "auth")
			for _, tc := range []struct {
				name string
				cr   hub.Credentials
			}{
				{"NoKey", hub.Credentials{SessionID: w.session[w.alice.AgentID]}},
				{"ForgedKey", hub.Credentials{Bearer: "abk_forged", SessionID: w.session[w.alice.AgentID]}},
				{"AnotherAgentsSession", hub.Credentials{Bearer: w.mallory.BoxKey, SessionID: w.session[w.alice.AgentID]}},
			} {
				_, err := w.invoke(tl.Name, tc.cr, args)
				wantCode(t, tl.Name+" "+tc.name, err, apperr.AuthFailed)
			}
			if !tl.Hints.ReadOnly && tl.Name != "agent_prime" {
				_, err := w.invoke(tl.Name, reader, args)
				wantCode(t, tl.Name+" with a read-only key", err, apperr.AuthFailed)
			}
		}
	})
}

// TestEveryToolNeedsAPrimedSession: every tool but agent_prime answers
// NOT_PRIMED without a live primed session of the caller's.
func TestEveryToolNeedsAPrimedSession(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		unbound, err := w.h.OpenSession(w.ctx, "")
		if err != nil {
			t.Fatalf("OpenSession: %v", err)
		}
		tools := declaring(w.r, apperr.NotPrimed)
		args := map[string]string{}
		for _, tl := range tools {
			args[tl.Name] = okArgs(w, tl, "np")
		}
		for _, session := range []struct{ name, id string }{
			{"NoSession", ""},
			{"MalformedSession", "not-a-session"},
			{"UnknownSession", "s_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
			{"UnboundSession", unbound},
		} {
			for _, tl := range tools {
				_, err := w.invoke(tl.Name, hub.Credentials{Bearer: w.alice.BoxKey, SessionID: session.id, Transport: "rest"}, args[tl.Name])
				wantCode(t, tl.Name+" "+session.name, err, apperr.NotPrimed)
			}
		}
		// An idle session expires: every tool then answers NOT_PRIMED.
		w.clock.Advance(13 * time.Hour)
		for _, tl := range tools {
			_, err := w.call(tl.Name, w.alice, args[tl.Name])
			wantCode(t, tl.Name+" after 13h idle", err, apperr.NotPrimed)
		}
	})
}

// TestEveryMutationChecksTheProfile: once the owner changes alice's
// profile, every mutation listing PROFILE_OUTDATED refuses until she reads
// it with profile_get, while every read goes on working; afterwards each
// mutation succeeds.
func TestEveryMutationChecksTheProfile(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		muts := declaring(w.r, apperr.ProfileOutdated)
		args := map[string]string{}
		for _, tl := range muts {
			args[tl.Name] = okArgs(w, tl, "po")
		}
		if _, err := w.h.Admin().SetProfile(w.ctx, w.alice.AgentID, []byte(`{"role":"reviewer","instructions_md":"Review PRs."}`)); err != nil {
			t.Fatalf("SetProfile: %v", err)
		}
		for _, tl := range muts {
			_, err := w.call(tl.Name, w.alice, args[tl.Name])
			wantCode(t, tl.Name+" after a profile change", err, apperr.ProfileOutdated)
		}
		for _, tl := range w.r.Tools() {
			if !tl.Hints.ReadOnly || tl.Name == "profile_get" {
				continue
			}
			if _, err := w.call(tl.Name, w.alice, okArgs(w, tl, "po")); err != nil {
				t.Errorf("%s with an outdated profile: %v, want success (reads go on)", tl.Name, err)
			}
		}
		w.mustCall("profile_get", w.alice, `{}`)
		for _, tl := range muts {
			if _, err := w.call(tl.Name, w.alice, args[tl.Name]); err != nil {
				t.Errorf("%s after profile_get: %v, want success", tl.Name, err)
			}
		}
	})
}

// TestEveryMutationReplays: every tool with a mutation key answers a retry
// of the same key and payload with the first call's receipt, marked
// replayed, and the same key with another payload with
// IDEMPOTENCY_CONFLICT.
func TestEveryMutationReplays(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		for _, tl := range declaring(w.r, apperr.IdempotencyConflict) {
			key := strings.ReplaceAll(tl.Name, "_", "-") + "-replay"
			args := toolCases[tl.Name].ok(w, key)
			if _, err := w.call(tl.Name, w.alice, args); err != nil {
				t.Errorf("%s: %v", tl.Name, err)
				continue
			}
			again, err := w.call(tl.Name, w.alice, args)
			if err != nil || again["replayed"] != true {
				t.Errorf("%s replayed = %v, %v; want the receipt marked replayed", tl.Name, again, err)
			}
			_, err = w.call(tl.Name, w.alice, toolCases[tl.Name].again(w, key))
			wantCode(t, tl.Name+"(same key, other payload)", err, apperr.IdempotencyConflict)
		}
	})
}

// TestEveryToolSurvivesStoreFaults: a store whose reads fail answers
// TEMPORARILY_UNAVAILABLE from every authenticated tool; a write that times out answers it from every mutation, and one
// that fails otherwise STORAGE_FAILURE (both of unknown outcome to the
// caller; here nothing was written). After the faults, each call succeeds
// as a first effect. (A read or write refused under load is retried by
// the kernel with real backoff for about half a second before it answers
// TEMPORARILY_UNAVAILABLE; the hub's TestUnavailableRetriedTakesEffectOnce
// holds that path, once, rather than 34 times here.)
func TestEveryToolSurvivesStoreFaults(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		args := map[string]string{}
		for _, tl := range w.r.Tools() {
			args[tl.Name] = okArgs(w, tl, "fault")
		}
		for _, fault := range []struct {
			name   string
			reads  error
			writes error
			code   apperr.Code
			tools  []*registry.Tool
		}{
			{"ReadsFail", errStorage, nil, apperr.TemporarilyUnavailable, declaring(w.r, apperr.TemporarilyUnavailable)},
			{"WritesTimeOut", nil, fmt.Errorf("no answer: %w", store.ErrTimeout), apperr.TemporarilyUnavailable, declaring(w.r, apperr.StorageFailure)},
			{"WritesFail", nil, errStorage, apperr.StorageFailure, declaring(w.r, apperr.StorageFailure)},
		} {
			w.fault.FailReads(fault.reads)
			w.fault.FailWrites(fault.writes)
			for _, tl := range w.r.Tools() {
				_, err := w.call(tl.Name, w.alice, args[tl.Name])
				if slices.Contains(fault.tools, tl) {
					wantCode(t, tl.Name+" "+fault.name, err, fault.code)
				}
				// Any other tool may succeed (a read whose receipt is
				// lost) or answer a code it lists (the guard in call).
			}
			w.fault.FailReads(nil)
			w.fault.FailWrites(nil)
		}
		for _, tl := range w.r.Tools() {
			out, err := w.call(tl.Name, w.alice, args[tl.Name])
			if err != nil || out["replayed"] == true {
				t.Errorf("%s after the faults = %v, %v; want a first effect", tl.Name, out, err)
			}
		}
	})
}

// TestEveryToolIsRateLimited: with one call allowed per agent and
// instance, every authenticated tool's second call answers RATE_LIMITED.
func TestEveryToolIsRateLimited(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		cfg := &limits.Config{AgentCalls: limits.Rate{PerSecond: 0.001, Burst: 1}}
		for _, tl := range declaring(w.r, apperr.RateLimited) {
			args := okArgs(w, tl, "rate")
			limited := hub.New(w.st, hub.Options{Now: w.clock.Now, Limits: cfg})
			if _, err := w.invokeOn(limited, tl.Name, w.creds(w.alice), args); err != nil {
				t.Errorf("%s, first call: %v", tl.Name, err)
			}
			_, err := w.invokeOn(limited, tl.Name, w.creds(w.alice), args)
			wantCode(t, tl.Name+", second call", err, apperr.RateLimited)
		}
	})
}

// TestEveryToolsRoundTrips bounds the store round trips of every tool's
// succeeding call once the session is primed.
func TestEveryToolsRoundTrips(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, w *world) {
		for _, tl := range w.r.Tools() {
			args := okArgs(w, tl, "rt")
			w.st.Reset()
			if _, err := w.call(tl.Name, w.alice, args); err != nil {
				t.Errorf("%s: %v", tl.Name, err)
				continue
			}
			got, max := w.st.Reset(), toolCases[tl.Name].roundTrips
			if got > max {
				t.Errorf("%s: %d store round trips, want at most %d", tl.Name, got, max)
			}
		}
	})
}

package hub_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// writeTally counts writes, so a test can prove a path writes nothing.
type writeTally struct {
	store.Store
	n *atomic.Int64
}

func (w writeTally) Write(ctx context.Context, ops []store.Op) error {
	w.n.Add(1)
	return w.Store.Write(ctx, ops)
}

// TestOpenSessionWritesNothing: initialize is unauthenticated, so the id it
// issues is signed and stateless; only agent_prime stores the session.
func TestOpenSessionWritesNothing(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var writes atomic.Int64
		f := newFixture(t, ad, func(s store.Store) store.Store { return writeTally{s, &writes} })
		writes.Store(0)
		for _, bearer := range []string{"", f.a.BoxKey} {
			id, err := f.h.OpenSession(f.ctx, bearer)
			if err != nil {
				t.Fatalf("OpenSession(bearer %t): %v", bearer != "", err)
			}
			if err := f.h.CheckSession(f.ctx, id, ""); err != nil {
				t.Errorf("CheckSession(new unbound id, no key) = %v, want nil", err)
			}
		}
		if n := writes.Load(); n != 0 {
			t.Errorf("OpenSession and CheckSession of unbound ids: %d store writes, want 0", n)
		}
		if _, err := f.h.OpenSession(f.ctx, "ak_forged"); err == nil {
			t.Errorf("OpenSession(forged bearer) = nil, want AUTH_FAILED")
		}
	})
}

// TestSessionLifecycle walks one signed session through every state and
// checks what each presentation of it answers.
func TestSessionLifecycle(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		id := f.mustOpenSession()
		tampered := id[:len(id)-2] + "AA"
		if tampered == id {
			tampered = id[:len(id)-2] + "BB"
		}
		wantCode(t, "CheckSession(tampered id)", f.h.CheckSession(f.ctx, tampered, ""), apperr.NotPrimed)
		cr := hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, Transport: "mcp"}
		_, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
		wantCode(t, "CheckpointGet on an unbound session", err, apperr.NotPrimed)

		first, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{})
		if err != nil || first.SessionID != id || first.SessionResumed {
			t.Fatalf("Prime(new signed session) = %+v, %v; want session %q, session_resumed false", first, err, id)
		}
		again, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{})
		if err != nil || !again.SessionResumed {
			t.Fatalf("Prime(again) = %+v, %v; want session_resumed true", again, err)
		}

		// Bound: the key is required, and another agent's key answers
		// exactly as an unknown session does.
		if err := f.h.CheckSession(f.ctx, id, f.a.BoxKey); err != nil {
			t.Errorf("CheckSession(bound, own key) = %v, want nil", err)
		}
		wantCode(t, "CheckSession(bound, no key)", f.h.CheckSession(f.ctx, id, ""), apperr.AuthFailed)
		other := wantCode(t, "CheckSession(bound, other agent's key)", f.h.CheckSession(f.ctx, id, f.b.BoxKey), apperr.NotPrimed)
		unknown := wantCode(t, "CheckSession(tampered id)", f.h.CheckSession(f.ctx, tampered, f.b.BoxKey), apperr.NotPrimed)
		if other.Message != unknown.Message || other.NextAction != unknown.NextAction {
			t.Errorf("another agent's session answers %+v, an unknown one %+v; want one answer", other, unknown)
		}
		_, err = f.h.Prime(f.ctx, hub.Credentials{Bearer: f.b.BoxKey, SessionID: id, Transport: "mcp"}, hub.PrimeInput{})
		wantCode(t, "Prime(bound to alice) by bob", err, apperr.AuthFailed)

		// Bound sessions outlive the signed id's own expiry while used.
		for range 3 {
			f.clock.Advance(40 * time.Minute)
			if _, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{}); err != nil {
				t.Fatalf("CheckpointGet %v after issue: %v", 40*time.Minute, err)
			}
		}

		wantCode(t, "CloseSession(other agent)", f.h.CloseSession(f.ctx, id, hub.Credentials{Bearer: f.b.BoxKey}), apperr.NotPrimed)
		if err := f.h.CloseSession(f.ctx, id, cr); err != nil {
			t.Fatalf("CloseSession: %v", err)
		}
		wantCode(t, "CheckSession(ended, own key)", f.h.CheckSession(f.ctx, id, f.a.BoxKey), apperr.NotPrimed)
		wantCode(t, "CheckSession(ended, no key)", f.h.CheckSession(f.ctx, id, ""), apperr.NotPrimed)
		_, err = f.h.Prime(f.ctx, cr, hub.PrimeInput{})
		wantCode(t, "Prime(ended session)", err, apperr.NotPrimed)
	})
}

// TestEndedUnboundSessionStaysEnded: an ended session id never falls back
// to "unbound"; ending one without a key writes nothing.
func TestEndedUnboundSessionStaysEnded(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		id := f.mustOpenSession()
		if err := f.h.CloseSession(f.ctx, id, hub.Credentials{}); !errors.Is(err, hub.ErrUnboundSession) {
			t.Fatalf("CloseSession(unbound, no key) = %v, want ErrUnboundSession", err)
		}
		if err := f.h.CloseSession(f.ctx, id, hub.Credentials{Bearer: f.b.BoxKey}); err != nil {
			t.Fatalf("CloseSession(unbound, a key) = %v", err)
		}
		wantCode(t, "CheckSession(ended unbound)", f.h.CheckSession(f.ctx, id, ""), apperr.NotPrimed)
		_, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, Transport: "mcp"}, hub.PrimeInput{})
		wantCode(t, "Prime(ended unbound session)", err, apperr.NotPrimed)

		// Presented as the session_id argument, the ended id is replaced:
		// the model passes whatever agent_prime returns.
		out, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, SessionHandle: true, Transport: "mcp"}, hub.PrimeInput{})
		if err != nil || out.SessionID == id || out.SessionResumed {
			t.Fatalf("Prime(ended id as the argument) = %+v, %v; want a new session", out, err)
		}

		// Waiting past its first hour unbound makes an id idle, not gone:
		// the host keeps sending it, so agent_prime still binds it.
		late := f.mustOpenSession()
		f.clock.Advance(61 * time.Minute)
		if err := f.h.CheckSession(f.ctx, late, ""); err != nil {
			t.Errorf("CheckSession(unbound after 61m) = %v, want nil (served)", err)
		}
		cr := hub.Credentials{Bearer: f.a.BoxKey, SessionID: late, Transport: "mcp"}
		_, err = f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
		wantCode(t, "CheckpointGet(unbound after 61m)", err, apperr.NotPrimed)
		if out, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{}); err != nil || out.SessionID != late {
			t.Fatalf("Prime(unbound after 61m) = %+v, %v; want session %q", out, err, late)
		}
		if _, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{}); err != nil {
			t.Errorf("CheckpointGet after binding the late id: %v", err)
		}
	})
}

// TestIdleSignedSessionIsBoundAgain: a bound signed session that expired
// while idle answers NOT_PRIMED saying how to leave it, and agent_prime
// binds the same id again, since the host keeps sending it; only the agent
// that first bound it may (receipts are stored under the session id), an
// ended one stays ended, and past its life an id is replaced.
func TestIdleSignedSessionIsBoundAgain(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad).limited(limits.Config{SessionsPerAgent: 2})
		idle := time.Duration(f.h.Limits().SessionIdleSeconds) * time.Second
		as := func(a *hub.AgentInfo, id string) hub.Credentials {
			return hub.Credentials{Bearer: a.BoxKey, SessionID: id, Transport: "mcp"}
		}
		prime := func(cr hub.Credentials) *hub.PrimeOutput {
			t.Helper()
			out, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{})
			if err != nil {
				t.Fatalf("Prime: %v", err)
			}
			return out
		}
		id := f.mustOpenSession()
		alice := as(f.a, id)
		prime(alice)
		f.clock.Advance(idle + time.Second)

		_, err := f.h.CheckpointGet(f.ctx, alice, hub.CheckpointGetInput{})
		e := wantCode(t, "CheckpointGet(idle session)", err, apperr.NotPrimed)
		// The next action is worded where the envelope is rendered.
		if next := e.Envelope().NextAction; !strings.Contains(e.Message, "expired") || !strings.Contains(next, "agent_prime") || !strings.Contains(next, "session_id") {
			t.Errorf("NOT_PRIMED = %q / %q, want it to say the session expired and to call agent_prime and pass session_id", e.Message, next)
		}
		// Served to its agent; another agent's key answers as for an
		// unknown session, and none at all is refused, as while it lived.
		if err := f.h.CheckSession(f.ctx, id, f.a.BoxKey); err != nil {
			t.Errorf("CheckSession(idle, own key) = %v, want nil", err)
		}
		wantCode(t, "CheckSession(idle, no key)", f.h.CheckSession(f.ctx, id, ""), apperr.AuthFailed)
		wantCode(t, "CheckSession(idle, other agent's key)", f.h.CheckSession(f.ctx, id, f.b.BoxKey), apperr.NotPrimed)
		// Bob never inherits alice's id (nor the receipts under it).
		_, err = f.h.Prime(f.ctx, as(f.b, id), hub.PrimeInput{})
		wantCode(t, "Prime(alice's idle id) by bob", err, apperr.AuthFailed)
		_, err = f.h.Prime(f.ctx, hub.Credentials{Bearer: f.b.BoxKey, SessionID: id, SessionHandle: true}, hub.PrimeInput{})
		wantCode(t, "Prime(alice's idle id as the argument) by bob", err, apperr.AuthFailed)

		again := prime(alice)
		if again.SessionID != id || again.SessionResumed {
			t.Fatalf("Prime(idle) = session %q resumed %t, want %q opened again", again.SessionID, again.SessionResumed, id)
		}
		if _, err := f.h.CheckpointGet(f.ctx, alice, hub.CheckpointGetInput{}); err != nil {
			t.Fatalf("CheckpointGet after priming again: %v", err)
		}
		// The id is listed once in alice's sessions: two more sessions
		// within the cap of two end only the oldest other one.
		second := f.mustOpenSession()
		prime(as(f.a, second))
		if _, err := f.h.CheckpointGet(f.ctx, alice, hub.CheckpointGetInput{}); err != nil {
			t.Fatalf("CheckpointGet on the id bound again, after a second session: %v", err)
		}

		// An ended MCP session stays ended, also past its first hour and
		// idle window; the agent's session it carried lives on as the
		// session_id argument until it expires.
		if err := f.h.CloseSession(f.ctx, id, alice); err != nil {
			t.Fatalf("CloseSession: %v", err)
		}
		_, err = f.h.CheckpointGet(f.ctx, alice, hub.CheckpointGetInput{})
		wantCode(t, "CheckpointGet(ended, by its Mcp-Session-Id)", err, apperr.NotPrimed)
		handle := hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, SessionHandle: true}
		if _, err := f.h.CheckpointGet(f.ctx, handle, hub.CheckpointGetInput{}); err != nil {
			t.Errorf("CheckpointGet(ended MCP session, as the session_id argument): %v, want success", err)
		}
		if out := prime(handle); out.SessionID != id || !out.SessionResumed {
			t.Errorf("Prime(ended MCP session, as the argument) = %q resumed %t, want %q resumed", out.SessionID, out.SessionResumed, id)
		}
		wantCode(t, "CheckSession(ended, resumed as a handle)", f.h.CheckSession(f.ctx, id, f.a.BoxKey), apperr.NotPrimed)
		f.clock.Advance(idle + time.Second)
		wantCode(t, "CheckSession(ended)", f.h.CheckSession(f.ctx, id, f.a.BoxKey), apperr.NotPrimed)
		_, err = f.h.Prime(f.ctx, alice, hub.PrimeInput{})
		wantCode(t, "Prime(ended)", err, apperr.NotPrimed)

		// Past its life nothing of an id is remembered: served, but
		// agent_prime opens a new session rather than binding it again.
		old := f.mustOpenSession()
		prime(as(f.a, old))
		f.clock.Advance(31 * 24 * time.Hour)
		if err := f.h.CheckSession(f.ctx, old, f.b.BoxKey); err != nil {
			t.Errorf("CheckSession(stale) = %v, want nil", err)
		}
		if out := prime(as(f.a, old)); out.SessionID == old {
			t.Errorf("Prime(stale id) kept it, want a new session")
		}
	})
}

// TestCloseRacingBindAgain: a DELETE that lands between agent_prime's read
// of an idle id and its write binding the id again is never undone: the
// binding fails, and the id stays ended.
func TestCloseRacingBindAgain(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var hook onceHook
		f := newFixture(t, ad, withOnceHook(&hook))
		id := f.mustOpenSession()
		cr := hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, Transport: "mcp"}
		if _, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{}); err != nil {
			t.Fatalf("Prime: %v", err)
		}
		f.clock.Advance(time.Duration(f.h.Limits().SessionIdleSeconds+1) * time.Second)
		hook.set(func() {
			if err := f.h.CloseSession(f.ctx, id, cr); err != nil {
				t.Errorf("CloseSession racing a binding again: %v", err)
			}
		})
		_, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{})
		hook.raced(t, "Prime(idle id) racing CloseSession")
		wantCode(t, "Prime(idle id) racing CloseSession", err, apperr.NotPrimed)
		wantCode(t, "CheckSession after the race", f.h.CheckSession(f.ctx, id, f.a.BoxKey), apperr.NotPrimed)
	})
}

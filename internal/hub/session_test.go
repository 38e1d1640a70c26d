package hub_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
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
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		id, err := f.h.OpenSession(f.ctx, "")
		if err != nil {
			t.Fatalf("OpenSession: %v", err)
		}
		tampered := id[:len(id)-2] + "AA"
		if tampered == id {
			tampered = id[:len(id)-2] + "BB"
		}
		wantCode(t, "CheckSession(tampered id)", f.h.CheckSession(f.ctx, tampered, ""), apperr.NotPrimed)
		cr := hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, Transport: "mcp"}
		_, err = f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
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
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		id, err := f.h.OpenSession(f.ctx, "")
		if err != nil {
			t.Fatalf("OpenSession: %v", err)
		}
		if err := f.h.CloseSession(f.ctx, id, hub.Credentials{}); !errors.Is(err, hub.ErrUnboundSession) {
			t.Fatalf("CloseSession(unbound, no key) = %v, want ErrUnboundSession", err)
		}
		if err := f.h.CloseSession(f.ctx, id, hub.Credentials{Bearer: f.b.BoxKey}); err != nil {
			t.Fatalf("CloseSession(unbound, a key) = %v", err)
		}
		wantCode(t, "CheckSession(ended unbound)", f.h.CheckSession(f.ctx, id, ""), apperr.NotPrimed)
		_, err = f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, Transport: "mcp"}, hub.PrimeInput{})
		wantCode(t, "Prime(ended unbound session)", err, apperr.NotPrimed)

		late, err := f.h.OpenSession(f.ctx, "")
		if err != nil {
			t.Fatalf("OpenSession: %v", err)
		}
		f.clock.Advance(61 * time.Minute)
		wantCode(t, "CheckSession(unbound after 61m)", f.h.CheckSession(f.ctx, late, ""), apperr.NotPrimed)
		_, err = f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey, SessionID: late, Transport: "mcp"}, hub.PrimeInput{})
		wantCode(t, "Prime(expired unbound session)", err, apperr.NotPrimed)
	})
}

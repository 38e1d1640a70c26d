package hub_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestInboxWaitIsHonest: the wait inbox_list grants is capped by the time
// its call has left (a Lambda function's deadline, less a margin to answer)
// and by the deployment's cap, and the result says what was granted and
// how long the call waited; agent_prime reports the cap. In fake time
// (testing/synctest), so the waits take none.
func TestInboxWaitIsHonest(t *testing.T) {
	t.Parallel()
	ad := teststores.Bubbled()[0] // opened inside the bubble
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, ad)
		crB := f.prime(f.b)
		wait := func(f *fixture, ctx context.Context, asked int) (granted, waited float64, took time.Duration) {
			t.Helper()
			start := time.Now()
			out, err := f.h.InboxList(ctx, crB, hub.InboxListInput{WaitSeconds: asked})
			if err != nil {
				t.Fatalf("InboxList(wait %d): %v", asked, err)
			}
			if out.WaitGrantedSeconds == nil || out.WaitedSeconds == nil {
				t.Fatalf("InboxList(wait %d) = %+v: want wait_granted_seconds and waited_seconds", asked, out)
			}
			return *out.WaitGrantedSeconds, *out.WaitedSeconds, time.Since(start)
		}

		// No deadline: what was asked.
		if g, w, took := wait(f, f.ctx, 20); g != 20 || w != 20 || took != 20*time.Second {
			t.Errorf("wait 20 without a deadline: granted %g, waited %g, took %v; want 20, 20, 20s", g, w, took)
		}
		// A call with 9 s left (a 10 s function less its own margin)
		// waits 8 s and says so, rather than being cut off silently.
		ctx, cancel := context.WithTimeout(f.ctx, 9*time.Second)
		g, w, took := wait(f, ctx, 20)
		cancel()
		if g != 8 || w != 8 || took != 8*time.Second {
			t.Errorf("wait 20 with 9 s left: granted %g, waited %g, took %v; want 8, 8, 8s", g, w, took)
		}
		// Less than the margin left: no wait at all, said.
		ctx, cancel = context.WithTimeout(f.ctx, 500*time.Millisecond)
		g, w, took = wait(f, ctx, 5)
		cancel()
		if g != 0 || w != 0 || took != 0 {
			t.Errorf("wait 5 with 0.5 s left: granted %g, waited %g, took %v; want 0, 0, 0", g, w, took)
		}

		// The deployment's cap, reported by agent_prime.
		for _, cap := range []int{0, 3} {
			lf := f.limited(limits.Config{InboxWaitSeconds: cap})
			out, err := lf.h.Prime(lf.ctx, hub.Credentials{Bearer: lf.b.BoxKey, SessionID: crB.SessionID}, hub.PrimeInput{})
			if err != nil {
				t.Fatalf("Prime: %v", err)
			}
			if out.Limits.InboxWaitMaxSeconds != cap {
				t.Errorf("agent_prime's inbox_wait_max_seconds = %d, want %d", out.Limits.InboxWaitMaxSeconds, cap)
			}
			if g, w, took := wait(lf, lf.ctx, 20); g != float64(cap) || w != float64(cap) || took != time.Duration(cap)*time.Second {
				t.Errorf("wait 20 capped at %d: granted %g, waited %g, took %v", cap, g, w, took)
			}
		}
	})
}

// TestMessageSendWakesWaiters: a committed message wakes this process's
// waiters of its recipients before message_send returns; without that a
// waiting inbox_list would notice it only at its next poll of the head, up
// to a second later (TestInboxWait times that wake; this test pins it to
// before message_send returns).
func TestMessageSendWakesWaiters(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		woke := f.h.NextArrival(f.b.AgentID)
		if _, err := f.h.MessageSend(f.ctx, f.prime(f.a), hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "k"},
			Destination: toDM(f.b.AgentID), BodyMD: "hi"}); err != nil {
			t.Fatalf("MessageSend: %v", err)
		}
		select {
		case <-woke:
		default:
			t.Errorf("MessageSend returned without waking the recipient's waiters")
		}
	})
}

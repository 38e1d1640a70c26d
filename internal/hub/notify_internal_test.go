package hub

import (
	"context"
	"testing"

	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestMessageSendWakesWaiters: a committed message wakes this process's
// waiters of its recipients before message_send returns; without that a
// waiting inbox_list would notice it only at its next poll of the head,
// up to a second later, which no timing-free test of the wait can tell.
func TestMessageSendWakesWaiters(t *testing.T) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			clock := teststores.NewClock()
			h := New(ad.Open(t, clock.Now), Options{Now: clock.Now, OrderedWrites: ad.OrderedWrites})
			ctx := context.Background()
			box, err := h.Admin().CreateBox(ctx, "main")
			if err != nil {
				t.Fatalf("CreateBox: %v", err)
			}
			var crs []Credentials
			var ids []string
			for _, name := range []string{"alice", "bob"} {
				ag, err := h.Admin().CreateAgent(ctx, box.BoxID, name, "")
				if err != nil {
					t.Fatalf("CreateAgent: %v", err)
				}
				p, err := h.Prime(ctx, Credentials{Bearer: ag.BoxKey}, PrimeInput{})
				if err != nil {
					t.Fatalf("Prime: %v", err)
				}
				crs, ids = append(crs, Credentials{Bearer: ag.BoxKey, SessionID: p.SessionID}), append(ids, ag.AgentID)
			}
			woke := h.waiters.wait(ids[1])
			if _, err := h.MessageSend(ctx, crs[0], MessageSendInput{Mutation: Mutation{IdempotencyKey: "k"},
				Destination: Destination{Kind: KindDM, RecipientAgentID: ids[1]}, BodyMD: "hi"}); err != nil {
				t.Fatalf("MessageSend: %v", err)
			}
			select {
			case <-woke:
			default:
				t.Errorf("MessageSend returned without waking the recipient's waiters")
			}
		})
	}
}

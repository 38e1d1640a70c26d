package webhook_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/agentbox/agentbox/internal/webhook"
)

// TestDeliverAgentsRetries: what the webhook function does with a Streams
// batch that changed an agent's inbox head (the batch's parsing is
// functions/lambdafn's). A 500 is DeliverAgents' error (Lambda retries the
// batch, then dead-letters it), the retry delivers, and a replayed batch
// with nothing new delivers nothing.
func TestDeliverAgentsRetries(t *testing.T) {
	hubtest.ForEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReceiver(t)
		r.answer = func(n int) int {
			if n == 1 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		}
		w := newWorld(t, ad, r)
		msg := w.send(t)
		d := webhook.New(w.h, r.client(), nil)
		batch := map[string]bool{w.bobID: true}
		if err := d.DeliverAgents(context.Background(), batch); err == nil {
			t.Fatal("DeliverAgents with a delivery that got 500 returned no error; Lambda would not retry the batch")
		}
		if got := r.next(t); got.event.Data.InboxSeq != 1 {
			t.Errorf("first attempt %+v", got.event.Data)
		}
		if err := d.DeliverAgents(context.Background(), batch); err != nil {
			t.Fatalf("the retried batch: %v", err)
		}
		if got := r.next(t); !got.ok || got.event.Data.InboxSeq != 1 || got.event.Data.MessageID != msg {
			t.Errorf("retry delivered %+v verified %v, want inbox_seq 1 for %s", got.event.Data, got.ok, msg)
		}
		if e := w.endpoint(t); e.DeliveredSeq != "1" {
			t.Errorf("delivered_seq %s, want 1", e.DeliveredSeq)
		}
		if err := d.DeliverAgents(context.Background(), batch); err != nil || len(r.hits) != 0 {
			t.Errorf("a replayed batch with nothing new: %v, %d deliveries; want none", err, len(r.hits))
		}
	})
}

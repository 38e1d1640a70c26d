package webhook_test

import (
	"context"
	"testing"

	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/agentbox/agentbox/internal/webhook"
)

// TestDeliverAllPending: what a dead-lettered batch named is still
// pending in the table; the scheduled full pass (DeliverAgents(nil))
// delivers it without any stream record naming it.
func TestDeliverAllPending(t *testing.T) {
	hubtest.ForEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReceiver(t)
		w := newWorld(t, ad, r)
		msg := w.send(t) // pending; no batch names it (as after the dead-letter queue)
		if err := webhook.New(w.h, r.client(), nil).DeliverAgents(context.Background(), nil); err != nil {
			t.Fatalf("full pass: %v", err)
		}
		if got := r.next(t); !got.ok || got.event.Data.InboxSeq != 1 || got.event.Data.MessageID != msg {
			t.Errorf("full pass delivered %+v verified %v, want inbox_seq 1 for %s", got.event.Data, got.ok, msg)
		}
		if e := w.endpoint(t); e.DeliveredSeq != "1" {
			t.Errorf("delivered_seq %s, want 1", e.DeliveredSeq)
		}
	})
}

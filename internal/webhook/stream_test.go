package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/agentbox/agentbox/internal/webhook"
)

// TestStreamHandler: a DynamoDB Streams batch (fixture, keys only) that
// changed an agent's inbox head delivers to its endpoint; a 500 is the
// handler's error (Lambda retries the batch, then dead-letters it), and
// the retry delivers.
func TestStreamHandler(t *testing.T) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			r := newReceiver(t)
			r.answer = func(n int) int {
				if n == 1 {
					return http.StatusInternalServerError
				}
				return http.StatusOK
			}
			w := newWorld(t, ad, r)
			raw, err := os.ReadFile("testdata/stream_event.json")
			if err != nil {
				t.Fatal(err)
			}
			var ev events.DynamoDBEvent
			if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "AGENT_ID", w.bobID)), &ev); err != nil {
				t.Fatal(err)
			}
			if got := webhook.StreamAgents(ev); len(got) != 1 || !got[w.bobID] {
				t.Fatalf("StreamAgents = %v, want bob only (the inbox head's record)", got)
			}
			msg := w.send(t)
			handle := webhook.StreamHandler(webhook.New(w.h, r.client(), nil))
			if err := handle(context.Background(), ev); err == nil {
				t.Fatal("a batch whose delivery got 500 returned no error; Lambda would not retry it")
			}
			if d := r.next(t); d.event.Data.InboxSeq != 1 {
				t.Errorf("first attempt %+v", d.event.Data)
			}
			if err := handle(context.Background(), ev); err != nil {
				t.Fatalf("the retried batch: %v", err)
			}
			if d := r.next(t); !d.ok || d.event.Data.InboxSeq != 1 || d.event.Data.MessageID != msg {
				t.Errorf("retry delivered %+v verified %v, want inbox_seq 1 for %s", d.event.Data, d.ok, msg)
			}
			if e := w.endpoint(t); e.DeliveredSeq != "1" {
				t.Errorf("delivered_seq %s, want 1", e.DeliveredSeq)
			}
			if err := handle(context.Background(), ev); err != nil || len(r.hits) != 0 {
				t.Errorf("a replayed batch with nothing new: %v, %d deliveries; want none", err, len(r.hits))
			}
		})
	}
}

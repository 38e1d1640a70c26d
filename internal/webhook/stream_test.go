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

// scheduledEvent is an EventBridge scheduled event as Lambda delivers it.
const scheduledEvent = `{"version": "0", "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa", "detail-type": "Scheduled Event",
  "source": "aws.events", "account": "123456789012", "time": "2026-12-02T02:00:00Z", "region": "eu-west-1",
  "resources": ["arn:aws:events:eu-west-1:123456789012:rule/redeliver"], "detail": {}}`

// TestFunctionHandlerRedelivers: what a dead-lettered batch named is
// still pending in the table; the scheduled event's full pass delivers
// it without any stream record. A stream batch still works through the
// same handler, and any other event is refused without side effects.
func TestFunctionHandlerRedelivers(t *testing.T) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			r := newReceiver(t)
			w := newWorld(t, ad, r)
			handle := webhook.FunctionHandler(webhook.New(w.h, r.client(), nil))
			for _, bad := range []string{`{}`, `[]`, `"x"`, `{"source": "aws.events", "detail-type": "Other"}`} {
				if err := handle(context.Background(), json.RawMessage(bad)); err == nil {
					t.Errorf("event %s accepted", bad)
				}
			}
			if len(r.hits) != 0 {
				t.Fatalf("a refused event delivered %d times", len(r.hits))
			}
			msg := w.send(t) // pending; no stream batch names it (as after the dead-letter queue)
			if err := handle(context.Background(), json.RawMessage(scheduledEvent)); err != nil {
				t.Fatalf("scheduled pass: %v", err)
			}
			if d := r.next(t); !d.ok || d.event.Data.InboxSeq != 1 || d.event.Data.MessageID != msg {
				t.Errorf("scheduled pass delivered %+v verified %v, want inbox_seq 1 for %s", d.event.Data, d.ok, msg)
			}
			if e := w.endpoint(t); e.DeliveredSeq != "1" {
				t.Errorf("delivered_seq %s, want 1", e.DeliveredSeq)
			}
			raw, err := os.ReadFile("testdata/stream_event.json")
			if err != nil {
				t.Fatal(err)
			}
			w.send(t)
			if err := handle(context.Background(), json.RawMessage(strings.ReplaceAll(string(raw), "AGENT_ID", w.bobID))); err != nil {
				t.Fatalf("stream batch through FunctionHandler: %v", err)
			}
			if d := r.next(t); d.event.Data.InboxSeq != 2 {
				t.Errorf("stream batch delivered %+v, want inbox_seq 2", d.event.Data)
			}
		})
	}
}

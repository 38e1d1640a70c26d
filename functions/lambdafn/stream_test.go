package lambdafn

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestStreamAgents: of a DynamoDB Streams batch (fixture, keys only), the
// webhook function takes the agents whose inbox head changed; a message
// row, another record family and a removal are not wake-ups, and a batch
// without a head delivers nothing (the dispatcher is not called).
func TestStreamAgents(t *testing.T) {
	raw, err := os.ReadFile("testdata/stream_event.json")
	if err != nil {
		t.Fatal(err)
	}
	const agent = "00000000-0000-4000-8000-0000000000b0"
	var ev events.DynamoDBEvent
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "AGENT_ID", agent)), &ev); err != nil {
		t.Fatal(err)
	}
	if got := streamAgents(ev); !slices.Equal(slices.Sorted(maps.Keys(got)), []string{agent}) {
		t.Errorf("streamAgents(fixture) = %v, want %s only (the inbox head's record)", got, agent)
	}

	heads := ev
	heads.Records = slices.Clone(ev.Records)
	for i := range heads.Records {
		heads.Records[i].EventName = "REMOVE"
	}
	if got := streamAgents(heads); len(got) != 0 {
		t.Errorf("streamAgents(removals only) = %v, want none", got)
	}
	// A nil dispatcher: the handler must not reach it.
	if err := streamHandler(nil)(context.Background(), heads); err != nil {
		t.Errorf("streamHandler(batch without a head) = %v, want nil", err)
	}
}

// TestWebhookHandlerRoutes: the dispatcher function takes a Streams batch
// or the Redeliver schedule's event; anything else is refused before the
// dispatcher is reached (a nil one here), and a batch without an inbox
// head delivers nothing. Delivery itself: internal/webhook
// TestDeliverAgents and TestDeliverAllPending, and the real binary in
// TestWebhookRedeliveryUnderRuntimeEmulator.
func TestWebhookHandlerRoutes(t *testing.T) {
	handle := webhookHandler(nil)
	for _, bad := range []string{`{}`, `[]`, `"x"`, `{"Records": 3}`, `{"source": "aws.events", "detail-type": "Other"}`,
		`{"source": "aws.s3", "detail-type": "Scheduled Event"}`} {
		if err := handle(context.Background(), json.RawMessage(bad)); err == nil {
			t.Errorf("event %s accepted", bad)
		}
	}
	if err := handle(context.Background(), json.RawMessage(`{"Records": []}`)); err != nil {
		t.Errorf("an empty batch: %v, want nil without a delivery", err)
	}
}

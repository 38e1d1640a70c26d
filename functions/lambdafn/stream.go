package lambdafn

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/webhook"
)

// streamAgents returns the agents whose inbox head a DynamoDB Streams
// batch changed (keys only: the stream needs no item images). Every other
// record is ignored.
func streamAgents(ev events.DynamoDBEvent) map[string]bool {
	agents := map[string]bool{}
	for _, r := range ev.Records {
		if r.EventName == "REMOVE" {
			continue
		}
		pk, sk := r.Change.Keys[store.AttrPK], r.Change.Keys[store.AttrSK]
		if pk.DataType() != events.DataTypeString || sk.DataType() != events.DataTypeString {
			continue
		}
		if agent, ok := table.InboxHeadAgent(pk.String(), sk.String()); ok {
			agents[agent] = true
		}
	}
	return agents
}

// streamHandler is the webhook function: it delivers to the endpoints of
// the agents a DynamoDB Streams batch names (internal/webhook's
// Dispatcher does the delivery). A returned error makes
// Lambda retry the batch and, past the event source's retry limit, send
// it to the dead-letter queue.
func streamHandler(d *webhook.Dispatcher) func(ctx context.Context, ev events.DynamoDBEvent) error {
	return func(ctx context.Context, ev events.DynamoDBEvent) error {
		agents := streamAgents(ev)
		if len(agents) == 0 {
			return nil
		}
		return d.DeliverAgents(ctx, agents)
	}
}

// webhookHandler is the dispatcher function's one handler: a DynamoDB
// Streams batch delivers to the agents it names (streamHandler); a
// scheduled event (EventBridge, the template's Redeliver schedule) runs a
// full pass over every active endpoint. The full pass is the redelivery:
// a batch that exhausted its retries went to the dead-letter queue, but
// what it named is still pending in the table (inbox head past the
// endpoint's delivered seq), so the next scheduled pass delivers it once
// the endpoint answers. Any other event is refused.
func webhookHandler(d *webhook.Dispatcher) func(ctx context.Context, raw json.RawMessage) error {
	stream := streamHandler(d)
	return func(ctx context.Context, raw json.RawMessage) error {
		var probe struct {
			Records    []json.RawMessage `json:"Records"`
			Source     string            `json:"source"`
			DetailType string            `json:"detail-type"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return errUnknownEvent
		}
		switch {
		case probe.Records != nil:
			var ev events.DynamoDBEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return errUnknownEvent
			}
			return stream(ctx, ev)
		case probe.Source == "aws.events" && probe.DetailType == "Scheduled Event":
			return d.DeliverAgents(ctx, nil)
		}
		return errUnknownEvent
	}
}

var errUnknownEvent = errors.New("webhook: the dispatcher takes DynamoDB Streams batches and scheduled events only")

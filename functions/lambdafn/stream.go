package lambdafn

import (
	"context"
	"strings"

	"github.com/aws/aws-lambda-go/events"

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
		if pk.DataType() != events.DataTypeString || sk.DataType() != events.DataTypeString || sk.String() != "inbox" {
			continue
		}
		if agent, ok := strings.CutPrefix(pk.String(), "agent#"); ok {
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

package webhook

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
)

// StreamAgents returns the agents whose inbox head a DynamoDB Streams
// batch changed (keys only: the stream needs no item images). Every other
// record is ignored.
func StreamAgents(ev events.DynamoDBEvent) map[string]bool {
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

// StreamHandler is the Streams-driven dispatcher function: it delivers to
// the endpoints of the agents a batch names. A returned error makes
// Lambda retry the batch and, past the event source's retry limit, send
// it to the dead-letter queue.
func StreamHandler(d *Dispatcher) func(ctx context.Context, ev events.DynamoDBEvent) error {
	return func(ctx context.Context, ev events.DynamoDBEvent) error {
		agents := StreamAgents(ev)
		if len(agents) == 0 {
			return nil
		}
		return d.DeliverAgents(ctx, agents)
	}
}

package hubtest

import "github.com/agentbox/agentbox/internal/hub"

// The messages every capability's test sends: destinations, and message_send
// under an idempotency key.

// ToRoom is the destination of room's conversation.
func ToRoom(room string) hub.Destination { return hub.Destination{Kind: hub.KindRoom, RoomID: room} }

// ToDM is the destination of a direct message to agent.
func ToDM(agent string) hub.Destination {
	return hub.Destination{Kind: hub.KindDM, RecipientAgentID: agent}
}

// Send calls message_send as cr with key as its idempotency key.
func (w *World) Send(cr hub.Credentials, key string, in hub.MessageSendInput) (*hub.MessageSendOutput, error) {
	in.Mutation = hub.Mutation{IdempotencyKey: key}
	return w.Hub.MessageSend(w.Ctx, cr, in)
}

// MustSend is Send failing the test on error.
func (w *World) MustSend(cr hub.Credentials, key string, in hub.MessageSendInput) *hub.MessageSendOutput {
	w.T.Helper()
	out, err := w.Send(cr, key, in)
	if err != nil {
		w.T.Fatalf("MessageSend(%s): %v", key, err)
	}
	return out
}

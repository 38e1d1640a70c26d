package hub

import (
	"context"
	"regexp"
	"slices"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// The box's operator (issue 26): the person who owns a box, stepping in.
//
// The operator is a participant of its own kind, never an agent. Its id is
// the box id: agent ids and box ids are minted apart, an agent key names
// an agent whose record (agent#<id>) must exist, and no agent record has a
// box's id, so no agent key can ever authenticate as the operator. Its
// messages carry author_kind "operator" (author_name "operator"), set only
// by the operator's runner: message_send has no way to set either.
//
// The operator writes through the same send as an agent (messages.go's
// sendVia and send, committed by the kernel's apply), so attention follows
// the seed's rules for any author: a DM to an agent gives it reason 1, a
// mention reason 4 as its follow preference allows, a request reason 16
// and an open request the agent answers with request_respond. What differs
// is only what authenticates the call and what the author may reach:
//
//   - authority: an owner key created with the write scope
//     (create-owner-key --write), whose record the write checks is still
//     there (a revocation between read and write refuses), or the admin
//     plane (agentbox admin post); a read-only owner key is refused with
//     exactly the AUTH_FAILED of an unknown key, as any write by an owner
//     key was before operators existed (admin_owner.go's ownerWriter);
//   - reach: any room of the box that is not archived (the operator is no
//     member; its post reaches the members as a member's does), and any
//     active agent of the box by DM; an agent's reply to the operator's DM
//     goes to the pair's stream with no attention row, since the operator
//     has no inbox: the view shows it;
//   - bookkeeping: the idempotency record and the write limiter's bucket
//     are the operator's own, keyed by its id like an agent's, and every
//     message records what wrote it (Via: the owner key id, or "admin").

// OperatorPostInput is a post by the box's operator: a room post or a DM
// to one agent.
type OperatorPostInput struct {
	// Destination is {kind:"room", room_id} or {kind:"dm",
	// recipient_agent_id}.
	Destination Destination `json:"destination"`
	BodyMD      string      `json:"body_md"`
	// Mentions and Requests name agents as for a member's post; in a room
	// a requested agent is mentioned too (it need not be listed twice).
	Mentions []string `json:"mentions,omitempty"`
	Requests []string `json:"requests,omitempty"`
	// IdempotencyKey makes a retry answer the first post's receipt.
	IdempotencyKey string `json:"idempotency_key"`
}

// OperatorPost posts as the box's operator with an owner key that has the
// write scope; the message records the key's id.
//
// Errors: AUTH_FAILED (a malformed, unknown or revoked owner key, an agent
// key, or a read-only owner key: all one answer), INVALID_ARGUMENT,
// LIMIT_EXCEEDED, NOT_FOUND_OR_FORBIDDEN (a room or agent not of the box,
// an agent not active), ROOM_ARCHIVED, RATE_LIMITED, IDEMPOTENCY_CONFLICT,
// TEMPORARILY_UNAVAILABLE.
func (h *Hub) OperatorPost(ctx context.Context, ownerKey string, in OperatorPostInput) (*MessageSendOutput, error) {
	box, auth, ok := h.ownerWriter(ownerKey)
	if !ok {
		_, err := h.OwnerBox(ctx, ownerKey) // the one refusal of a key that is not an owner key
		return nil, err
	}
	return h.operatorPost(ctx, box, auth, in)
}

// OperatorPost posts as box's operator from the admin plane (agentbox
// admin post); the message records "admin". Errors as Hub.OperatorPost's,
// with NOT_FOUND_OR_FORBIDDEN for an unknown box.
func (a *Admin) OperatorPost(ctx context.Context, box string, in OperatorPostInput) (*MessageSendOutput, error) {
	if err := checkUUID("box", box); err != nil {
		return nil, err
	}
	if err := a.requireBox(ctx, box); err != nil {
		return nil, err
	}
	return a.h.operatorPost(ctx, box, operatorAuthority{decide: func(*store.Item) (*operatorAuth, error) {
		return &operatorAuth{via: "admin"}, nil
	}}, in)
}

// operatorPost runs an operator's post as a send.
func (h *Hub) operatorPost(ctx context.Context, box string, auth operatorAuthority, in OperatorPostInput) (*MessageSendOutput, error) {
	if err := checkIdempotencyKey(in.IdempotencyKey); err != nil {
		return nil, err
	}
	send := MessageSendInput{Mutation: Mutation{IdempotencyKey: in.IdempotencyKey}, Destination: in.Destination,
		BodyMD: in.BodyMD, Mentions: slices.Clone(in.Mentions), Requests: in.Requests}
	if send.Destination.Kind == KindRoom {
		for _, id := range send.Requests {
			if !slices.Contains(send.Mentions, id) {
				send.Mentions = append(send.Mentions, id)
			}
		}
	}
	return h.sendVia(ctx, "operator_post", &send, func(m mutation, r reads, fn func(*call) (*MessageSendOutput, *plan, error)) (*MessageSendOutput, error) {
		return operate(ctx, h, box, auth, m, r, fn)
	})
}

// idempotencyKeyPattern is the Mutation's idempotency_key schema, which
// the transports enforce for agents; the operator's posts come through no
// schema, so the domain checks it.
var idempotencyKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,79}$`)

func checkIdempotencyKey(k string) error {
	if !idempotencyKeyPattern.MatchString(k) {
		return apperr.Invalid("idempotency_key", "must be 1-80 letters, digits or . _ : -, starting with a letter or digit")
	}
	return nil
}

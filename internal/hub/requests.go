package hub

// Requests: (message, requested recipient) pairs and their declarations.
//
// Records. message_send writes, in the same atomic write as the message,
// one item per requested recipient and moves that recipient's open-request
// counter by +1:
//
//	req#<message> / to#<recipient>   the request (Version = declaration revision; 0 = open)
//	agent#R / count#requests         R's open requests (Count; auth.go reads it into every
//	                                 attention summary)
//
// request_respond is a CAS on the request item (expected_revision) written
// in ONE atomic write with the canonical reply message (messages.go's send,
// with reply_to = the request and no targets), its attention rows, the
// idempotency record and — when the declaration leaves `open` (revision
// 0 → 1) — the counter's -1. Because the CAS admits one writer per
// revision, the -1 happens exactly once per request, in the write that
// also records that the request is no longer open; the +1 happened in the
// write that created it. So the counter equals the number of open requests
// at every commit, whatever races, and never goes below zero. A replay of
// the same idempotency key answers the stored receipt: no second reply.
//
// Order. requests_list browses a keyset on (message_seq, recipient). A
// stream sequence is per stream, so message_seq here is the message's send
// time in Unix nanoseconds — one order across every room and DM — and ties
// between messages sent in the same nanosecond are broken by message id,
// ties between the recipients of one message by recipient id (seed 000:
// "outgoing requests retain (message_seq, recipient_agent_id) ties"):
//
//	GSI1 rin#<recipient> / <sent ns 20>#<message>#<recipient>   incoming
//	GSI2 rout#<author>   / <sent ns 20>#<message>#<recipient>   outgoing
//
// The keys never change after the send, so an index entry is either there
// or not yet there: index lag can delay a just-sent request from a page (a
// browse started a moment later finds it), and a request committed with a
// send time below a cursor already passed is found by browsing again — a
// browser, not an event stream. Lag can never repeat an entry (one key per
// request, never rewritten) and never shows a stale declaration: the
// status of each listed request is re-read from the table.

import (
	"context"
	"encoding/json"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
)

// Request statuses. Open is the state before any declaration; the others
// are declarations, not verified transitions (a later CAS may correct one).
const (
	StatusOpen         = "open"
	StatusAccepted     = "accepted"
	StatusNeedsContext = "needs_context"
	StatusDeclined     = "declined"
	StatusResultReady  = "result_ready"
)

// Directions of requests_list.
const (
	DirectionIncoming = "incoming"
	DirectionOutgoing = "outgoing"
)

const (
	// DefaultRequestsPage and MaxRequestsPage bound requests_list's page.
	DefaultRequestsPage = 50
	MaxRequestsPage     = 100
	// requestScanBudget bounds how many index entries one requests_list
	// call reads past ones its status filter drops.
	requestScanBudget = 1000
)

// requestOps creates msg's requests, open, and counts each in its
// recipient's open-request counter: two items per request.
func requestOps(msg *table.Message) []guardedOp {
	ops := make([]guardedOp, 0, 2*len(msg.Requests))
	for _, to := range msg.Requests {
		r := &table.Request{MessageID: msg.ID, StreamSeq: msg.Seq, AuthorID: msg.AuthorID, AuthorKind: msg.AuthorKind, RecipientID: to,
			SentAt: msg.SentAt, Status: StatusOpen,
			Destination: table.Destination{Kind: msg.Kind, RoomID: msg.RoomID, RecipientAgentID: msg.Recipient}}
		ops = append(ops,
			guardedOp{op: store.Put(r.Item(0), store.Absent)},
			guardedOp{op: store.Add(table.RequestCounterKey(to), 1, 0)})
	}
	return ops
}

// RequestDTO is a request with its current declaration.
type RequestDTO struct {
	RequestMessageID string      `json:"request_message_id" desc:"The message that carries the request."`
	MessageSeq       Revision    `json:"message_seq" desc:"The request message's place in request order: its send time in Unix nanoseconds (ties: message id, then recipient id). Not a stream sequence."`
	RecipientAgentID string      `json:"recipient_agent_id"`
	AuthorAgentID    string      `json:"author_agent_id" desc:"The requester: an agent, or for author_kind operator the box id."`
	AuthorKind       string      `json:"author_kind" desc:"agent, or operator: the box's owner, never an agent." schema:"enum=agent|operator"`
	Destination      Destination `json:"destination"`
	StreamSeq        Revision    `json:"stream_seq" desc:"The request message's position in its room or DM stream."`
	SentAt           string      `json:"sent_at"`
	Status           string      `json:"status" desc:"open (no declaration yet), accepted, needs_context, declined or result_ready (the recipient's current declaration), or recipient_removed: the owner removed the recipient from the room before it declared anything, so it can no longer answer (final; not counted as open)." schema:"enum=open|accepted|needs_context|declined|result_ready|recipient_removed"`
	Revision         Revision    `json:"revision" desc:"Declaration revision; \"0\" while open. Pass it as expected_revision to declare or correct."`
	DeclaredAt       string      `json:"declared_at,omitempty"`
	ResponseID       string      `json:"response_message_id,omitempty" desc:"The reply message of the current declaration."`
}

// requestDTO is request r at declaration revision.
func requestDTO(r *table.Request, revision uint64) RequestDTO {
	return RequestDTO{RequestMessageID: r.MessageID, MessageSeq: Revision(r.SentAt.UnixNano()), RecipientAgentID: r.RecipientID,
		AuthorAgentID: r.AuthorID, AuthorKind: authorKind(r.AuthorKind), Destination: Destination(r.Destination), StreamSeq: Revision(r.StreamSeq), SentAt: timestamp(r.SentAt),
		Status: r.Status, Revision: Revision(revision), DeclaredAt: timestampIfSet(r.DeclaredAt), ResponseID: r.ResponseID}
}

// RequestsListInput is requests_list's input.
type RequestsListInput struct {
	Auth
	Direction string `json:"direction" desc:"incoming (to you) or outgoing (yours)." schema:"enum=incoming|outgoing" example:"\"incoming\""`
	Status    string `json:"status,omitempty" desc:"Filter by current status." schema:"enum=open|accepted|needs_context|declined|result_ready|recipient_removed"`
	Cursor    string `json:"cursor,omitempty" desc:"From an earlier page." schema:"maxLength=2048"`
	Limit     int    `json:"limit,omitempty" desc:"Page size (default 50)." schema:"minimum=1,maximum=100"`
}

// RequestsListOutput is one page of requests, oldest first.
type RequestsListOutput struct {
	Requests   []RequestDTO `json:"requests"`
	NextCursor string       `json:"next_cursor,omitempty" desc:"More requests may follow: pass it to continue. Absent at the end; browse again from the start to find later corrections."`
}

type requestsPos struct {
	After string `json:"a"`
}

func validStatus(s string, open bool) bool {
	switch s {
	case StatusAccepted, StatusNeedsContext, StatusDeclined, StatusResultReady:
		return true
	case StatusOpen:
		return open
	}
	return false
}

// RequestsList browses the caller's incoming or outgoing requests in
// (message_seq, recipient) order with each one's current declaration,
// re-read from the table. See the note at the top of this file for what
// index lag can and cannot do here.
//
// Errors: INVALID_ARGUMENT, LIMIT_EXCEEDED, CURSOR_INVALID.
func (h *Hub) RequestsList(ctx context.Context, cr Credentials, in RequestsListInput) (*RequestsListOutput, error) {
	var index store.Index
	var partition func(string) string
	switch in.Direction {
	case DirectionIncoming:
		index, partition = store.GSI1, table.IncomingIndex
	case DirectionOutgoing:
		index, partition = store.GSI2, table.OutgoingIndex
	default:
		return nil, apperr.Invalid("direction", "must be incoming or outgoing")
	}
	if in.Status != "" && !validStatus(in.Status, true) && in.Status != StatusRecipientRemoved {
		return nil, apperr.Invalid("status", "must be open, accepted, needs_context, declined, result_ready or recipient_removed")
	}
	limit, err := pageSize("limit", in.Limit, DefaultRequestsPage, MaxRequestsPage)
	if err != nil {
		return nil, err
	}
	return read(ctx, h, cr, nil, func(c *call) (*RequestsListOutput, error) {
		ks := table.Keyset[requestsPos]{
			Scope: cursor.Scope{Agent: c.AgentID, Stream: "requests:" + in.Direction + ":" + in.Status, Key: c.cursorKey},
			Key:   func(p requestsPos) (string, bool) { return p.After, true },
			Pos:   func(sk string) requestsPos { return requestsPos{After: sk} },
		}
		after, err := ks.After(in.Cursor)
		if err != nil {
			return nil, err
		}
		out := &RequestsListOutput{Requests: []RequestDTO{}}
		q := store.Query{Index: index, PK: partition(c.AgentID)}
		last, scanned := after, 0
		chunk := func() int {
			if len(out.Requests) >= limit || scanned >= requestScanBudget {
				return 0
			}
			return min(max(limit-len(out.Requests), 16), requestScanBudget-scanned)
		}
		end, err := table.Scan(ctx, h.st, q, after, chunk, func(entries []*store.Item) (bool, error) {
			// The index gives the order; the table gives the current
			// declaration.
			keys := make([]store.Key, len(entries))
			for i, it := range entries {
				keys[i] = it.Key()
			}
			current, err := h.st.BatchGet(ctx, keys)
			if err != nil {
				return false, err
			}
			for i, it := range current {
				if len(out.Requests) == limit {
					return true, nil // the rest of the chunk is the next page's
				}
				scanned++
				// The key fields never change: the index entry's are the
				// table's.
				last = table.SortKey(q, entries[i])
				if it == nil {
					continue
				}
				r, err := table.Decode[table.Request](it)
				if err != nil {
					return false, err
				}
				if in.Status == "" || r.Status == in.Status {
					out.Requests = append(out.Requests, requestDTO(r, it.Version))
				}
			}
			return false, nil
		})
		if err != nil {
			return nil, storageErr(err)
		}
		if !end {
			out.NextCursor = ks.Next(last)
		}
		return out, nil
	})
}

// RequestRespondInput is request_respond's input.
type RequestRespondInput struct {
	Auth
	Mutation
	RequestMessageID string         `json:"request_message_id" desc:"The requesting message." schema:"format=uuid"`
	ExpectedRevision Revision       `json:"expected_revision" desc:"Current revision (\"0\" while open)."`
	Status           string         `json:"status" desc:"Your declaration; a later call may correct it." schema:"enum=accepted|needs_context|declined|result_ready" example:"\"accepted\""`
	BodyMD           string         `json:"body_md" desc:"Your reply, posted in the request's room or DM." schema:"minLength=1,maxLength=16384" example:"\"On it; expect a result today.\""`
	Files            []FileRefInput `json:"files,omitempty" desc:"Links; with result_ready each needs a version_label, sha256 or commit." schema:"maxItems=20"`
}

// RequestRespondOutput is the declaration and its reply message.
type RequestRespondOutput struct {
	Request RequestDTO        `json:"request"`
	Reply   MessageSendOutput `json:"reply" desc:"The canonical reply message posted with the declaration."`
	Replay
}

// RequestRespond declares the caller's response to a request addressed to
// it, by CAS on the request's revision, and posts one canonical reply to
// the request message in its room or DM (no mentions, no new requests; the
// author gets attention for a reply to its message as its preference
// allows), all in one atomic write. The first declaration lowers the
// caller's open-request count.
//
// Errors: INVALID_ARGUMENT, LIMIT_EXCEEDED, NOT_FOUND_OR_FORBIDDEN (an
// unknown message, a message that did not request your response, or one
// you can no longer see or reply in), ROOM_ARCHIVED, REVISION_CONFLICT,
// PROFILE_OUTDATED, IDEMPOTENCY_CONFLICT, TEMPORARILY_UNAVAILABLE.
func (h *Hub) RequestRespond(ctx context.Context, cr Credentials, in RequestRespondInput) (*RequestRespondOutput, error) {
	if err := uuidArg("request_message_id", &in.RequestMessageID); err != nil {
		return nil, err
	}
	if !validStatus(in.Status, false) {
		return nil, apperr.Invalid("status", "must be accepted, needs_context, declined or result_ready")
	}
	if err := checkBodyMD("body_md", in.BodyMD); err != nil {
		return nil, err
	}
	files, err := checkFiles("files", in.Files, in.Status == StatusResultReady)
	if err != nil {
		return nil, err
	}
	m := newMutation("request_respond", in.IdempotencyKey, struct {
		ID  string
		Rev Revision
		S   string
		B   string
		F   []table.File
	}{in.RequestMessageID, in.ExpectedRevision, in.Status, in.BodyMD, stripIDs(files)})
	// The reply says what it declares, for readers of the conversation.
	payload, err := json.Marshal(map[string]any{"response": map[string]string{
		"request_message_id": in.RequestMessageID, "status": in.Status}})
	if err != nil {
		return nil, apperr.Normalize(err)
	}

	// A message's pointer never changes: reading it before authentication
	// only decides which conversation's items the call reads with it.
	ptr, _, err := get[table.Pointer](ctx, h.st, table.MessagePointerKey(in.RequestMessageID), nil)
	if err != nil {
		return nil, err
	}

	var reqSlot slot
	var s slots
	var send MessageSendInput
	var to []recipient
	var late []string
	out, err := mutate(ctx, h, cr, m, func(agent string, b *batch) {
		reqSlot = b.add(table.RequestKey(in.RequestMessageID, agent))
		if dest, ok := replyDestination(ptr, agent); ok {
			send = MessageSendInput{Destination: dest, BodyMD: in.BodyMD, ReplyTo: in.RequestMessageID}
			s = declareSend(b, &send, agent, h.hot, late)
		}
	}, func(c *call) (*RequestRespondOutput, *plan, error) {
		if send.Destination.Kind == "" {
			return nil, nil, apperr.Forbidden()
		}
		it := c.item(reqSlot)
		req, err := decode[table.Request](it, apperr.Forbidden())
		if err != nil {
			return nil, nil, err
		}
		msg, err := newMessage(&send, payload, files)
		if err != nil {
			return nil, nil, err
		}
		// Access first (a room left or archived, a DM peer gone), then
		// the CAS.
		reply, p, err := h.send(ctx, c, &send, s, msg, &to, &late)
		if err != nil {
			return nil, nil, err
		}
		if it.Version != uint64(in.ExpectedRevision) {
			return nil, nil, apperr.Conflict(it.Version)
		}
		wasOpen := it.Version == 0
		req.Status, req.DeclaredAt, req.ResponseID = in.Status, c.Now, reply.MessageID
		// The declaration's CAS leads the plan: when it fails, its answer
		// (REVISION_CONFLICT with the current revision) is the call's.
		ops := []guardedOp{{op: store.Put(req.Item(it.Version+1), store.AtVersion(it.Version)), onFail: h.conflictAt(it.Key())}}
		if wasOpen {
			ops = append(ops, guardedOp{op: store.Add(table.RequestCounterKey(c.AgentID), -1, 0)})
		}
		p.ops = append(ops, p.ops...)
		if wasOpen && c.Attention != nil {
			c.Attention.OpenRequestCount = max(c.Attention.OpenRequestCount-1, 0)
		}
		return &RequestRespondOutput{Request: requestDTO(req, it.Version+1), Reply: *reply}, p, nil
	})
	if err == nil && !out.Replayed {
		h.notifySent(to)
	}
	return out, err
}

// replyDestination is where agent's reply to the message at ptr goes: the
// message's room, or the other agent of its DM pair (ok false when agent
// is not of that pair, or there is no message).
func replyDestination(ptr *table.Pointer, agent string) (Destination, bool) {
	if ptr == nil {
		return Destination{}, false
	}
	st, ok := parseStream(ptr.Stream)
	switch {
	case !ok:
		return Destination{}, false
	case st.kind == KindRoom:
		return Destination{Kind: KindRoom, RoomID: st.room}, true
	case st.pair[0] == agent:
		return Destination{Kind: KindDM, RecipientAgentID: st.pair[1]}, true
	case st.pair[1] == agent:
		return Destination{Kind: KindDM, RecipientAgentID: st.pair[0]}, true
	}
	return Destination{}, false
}

// stripIDs returns file records without their fresh ids, for the canonical
// payload of an idempotency key (a retry mints new ids).
func stripIDs(files []table.File) []table.File {
	out := make([]table.File, len(files))
	for i, f := range files {
		f.ID = ""
		out[i] = f
	}
	return out
}

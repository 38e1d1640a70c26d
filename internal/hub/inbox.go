package hub

// The inbox: attention rows, receipts and ACKs.
//
// Rows. message_send writes each recipient's attention row numbered in the
// recipient's own inbox stream (messages.go): agent#A / inbox#<seq>, with
// the inbox head's Version the last number taken. inbox_list reads that
// stream from the table, strongly consistent, ascending; like
// conversation_read it fixes an upper bound (the head) on its first page,
// continues with next_cursor after the last row it actually returned, and
// answers resume_cursor at the upper once the snapshot is exhausted. A row
// commits together with the head moving to its number, so no row can
// appear at or below an upper a reader already captured.
//
// Receipts vs ACKs. Returning a row records a retrieval receipt for the
// session (in ses#S / rcpts, receipts.go): proof that this session was
// shown it. Only inbox_ack acknowledges, and only rows with a receipt of
// the calling session. An ACK marks the row with the first acknowledging session and
// time, once; another session of the agent acknowledging it later learns
// already_acked with that first provenance.
//
// An ACK of more than ackChunk new rows continues as an intent (intent.go)
// after its first write, and its first write cannot hold a condition on
// every row it decided about. So another session's ACK could take the
// later rows just before that write, or while the intent is open, and
// both would answer "acked". The agent's ACK sequencer (agent#A / acks)
// closes both gaps: every ACK that acknowledges anything moves it by
// compare-and-set from the version it read (a concurrent ACK runs again
// and then sees the rows taken), and it names the open ACK intent, if
// any; an ACK that finds one finishes it first and runs again, and the
// intent's last step clears it. ACKs of one agent are thus serialized
// (they are rare and small), and every row has exactly one acknowledging
// call.
//
// Receipts of ACKs stay compact (≤ 1 KiB): the time, the session and a
// bitmap over the sorted request of the rows this call acknowledged; a
// replay rebuilds the already_acked results from the rows, whose first
// provenance never changes.
//
// Watermark. The ACK sequencer also keeps W, below which every row is
// acknowledged, and an unread listing starts after it (ackmark.go).
//
// Counts. unread = rows ever written (the inbox head) − rows acknowledged
// (agent#A / count#acked, moved by the ACK's own write): both are moved in
// the same atomic writes as the rows they count, so the count is exact at
// every commit.
//
// Rooms left. A row stays in the inbox after its room is left — it was
// delivered — and can still be acknowledged, so the count can always reach
// zero; but the message's content is no longer shown (a removed member
// loses access to the room's content): the row carries the message id and
// redacted: true.

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentbox/agentbox/internal/hub/table"
	"slices"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
)

// Inbox filters.
const (
	FilterUnread = "unread"
	FilterAll    = "all"
)

const (
	// DefaultInboxPage and MaxInboxPage bound inbox_list's page.
	DefaultInboxPage = 50
	MaxInboxPage     = 100
	// inboxScanBudget bounds how many rows one inbox_list call reads past
	// acknowledged ones while looking for unread rows.
	inboxScanBudget = 1000
	// MaxWaitSeconds bounds inbox_list's wait.
	MaxWaitSeconds = 20
	// ackChunk is how many rows one ACK write changes: an intent step's
	// rows, with the counter and the sequencer, stay within stepRoom; the
	// first write marks fewer when the kernel's room (call.room) is
	// smaller.
	ackChunk = 90
)

// InboxListInput is inbox_list's input.
type InboxListInput struct {
	Auth
	Filter      string `json:"filter,omitempty" desc:"unread (default) or all." schema:"enum=unread|all"`
	Cursor      string `json:"cursor,omitempty" desc:"From an earlier page." schema:"maxLength=2048"`
	Limit       int    `json:"limit,omitempty" desc:"Page size (default 50)." schema:"minimum=1,maximum=100"`
	MaxBytes    int    `json:"max_bytes,omitempty" desc:"Page byte budget (default 128 KiB)." schema:"minimum=1024,maximum=262144"`
	WaitSeconds int    `json:"wait_seconds,omitempty" desc:"Wait up to this long for new rows when there are none." schema:"minimum=0,maximum=20"`
}

// InboxRow is one attention row with its message.
type InboxRow struct {
	InboxSeq       Revision    `json:"inbox_seq" desc:"Pass it to inbox_ack once handled."`
	Reasons        int         `json:"reasons" desc:"Bits: 1 DM, 2 you follow all of the room, 4 you were mentioned, 8 a reply to your message, 16 your response is requested."`
	ReasonNames    []string    `json:"reason_names" desc:"The reasons in words: dm, all (you follow all of the room), mention, reply, request."`
	MessageID      string      `json:"message_id,omitempty" desc:"The message's id, given here only when the message itself is redacted."`
	Redacted       bool        `json:"redacted,omitempty" desc:"True when you can no longer see the message (you left its room); you can still acknowledge the row."`
	Message        *MessageDTO `json:"message,omitempty"`
	Acked          bool        `json:"acked,omitempty" desc:"True once acknowledged (filter all)."`
	AckedAt        string      `json:"acked_at,omitempty"`
	AckedBySession string      `json:"acked_by_session,omitempty"`
	At             string      `json:"at,omitempty" desc:"When the row was written; given only on redacted rows (otherwise the message's sent_at)."`
}

// InboxListOutput is one page of the inbox, oldest first.
type InboxListOutput struct {
	Rows         []InboxRow `json:"rows"`
	NextCursor   string     `json:"next_cursor,omitempty" desc:"More rows up to this listing's snapshot remain: pass it to continue."`
	ResumeCursor string     `json:"resume_cursor,omitempty" desc:"The snapshot is exhausted: pass it later (optionally with wait_seconds) to get only newer rows."`
	// The wait, when one was asked for (wait_seconds > 0).
	WaitGrantedSeconds *float64 `json:"wait_granted_seconds,omitempty" desc:"Given when you asked to wait: the longest this call would wait, which may be less than asked (the deployment's inbox_wait_max_seconds, the time the call has left)."`
	WaitedSeconds      *float64 `json:"waited_seconds,omitempty" desc:"Given when you asked to wait: how long this call waited."`
}

// ReasonNames names the reason bits of an attention row, in bit order, as
// inbox_list's reason_names does: dm, all (the agent follows all of the
// room), mention, reply, request. Every reader that shows reasons in words
// (the operator view too) uses these names.
func ReasonNames(r int) []string {
	names := []string{}
	for _, n := range []struct {
		bit  int
		name string
	}{{ReasonDM, "dm"}, {ReasonFollowAll, "all"}, {ReasonMention, "mention"}, {ReasonReply, "reply"}, {ReasonRequest, "request"}} {
		if r&n.bit != 0 {
			names = append(names, n.name)
		}
	}
	return names
}

// InboxList lists the caller's attention rows with their messages,
// ascending, and records a receipt for this session for every row it
// returns (never an ACK). See the note at the top of this file.
//
// Errors: INVALID_ARGUMENT, LIMIT_EXCEEDED (limit, max_bytes, wait_seconds
// over their maximum), CURSOR_INVALID (a cursor of
// another agent or filter, or tampered with).
func (h *Hub) InboxList(ctx context.Context, cr Credentials, in InboxListInput) (*InboxListOutput, error) {
	if in.Filter == "" {
		in.Filter = FilterUnread
	}
	if in.Filter != FilterUnread && in.Filter != FilterAll {
		return nil, apperr.Invalid("filter", "must be unread or all")
	}
	limit, err := pageSize("limit", in.Limit, DefaultInboxPage, MaxInboxPage)
	if err != nil {
		return nil, err
	}
	budget, err := pageBytes(in.MaxBytes)
	if err != nil {
		return nil, err
	}
	// Like every bound the schema declares as a maximum (pageLimit,
	// registry.Invoke), over it is LIMIT_EXCEEDED; below 0 is shape.
	switch {
	case in.WaitSeconds < 0:
		return nil, apperr.Invalid("wait_seconds", "must be 0 to 20")
	case in.WaitSeconds > MaxWaitSeconds:
		return nil, apperr.Limit("wait_seconds", "at most 20")
	}
	var acks, shown slot
	return read(ctx, h, cr, func(agent string, b *batch) {
		acks = b.add(table.AckSeqKey(agent))
		shown = declareReceipts(b, cr)
	}, func(c *call) (*InboxListOutput, error) {
		hist := table.History{Scope: cursor.Scope{Agent: c.AgentID, Stream: "inbox:" + in.Filter, Key: c.cursorKey}}
		pos, err := hist.Start(in.Cursor, 0, version(c.inboxHead))
		if err != nil {
			return nil, err
		}
		if pos.Upper < pos.After {
			return nil, cursor.Invalid() // a resume cursor past the head
		}
		if in.Filter == FilterUnread {
			// Every row up to the watermark is acknowledged: start after
			// it (ackmark.go).
			w, err := ackWatermark(c.item(acks))
			if err != nil {
				return nil, err
			}
			pos.After = max(pos.After, min(w, pos.Upper))
		}
		rc := c.receiptsRead(shown)
		out, err := h.inboxPage(ctx, c, hist, in.Filter, pos, limit, budget, rc)
		if err != nil || in.WaitSeconds == 0 {
			return out, err
		}
		granted := h.grantWait(ctx, time.Duration(in.WaitSeconds)*time.Second)
		start := time.Now()
		defer func() {
			if out != nil {
				out.WaitGrantedSeconds, out.WaitedSeconds = seconds(granted), seconds(time.Since(start))
			}
		}()
		if len(out.Rows) > 0 || out.ResumeCursor == "" || granted == 0 {
			return out, nil
		}
		// Nothing to show up to the snapshot — with a resume cursor, or
		// without one when everything is read: wait for arrivals past
		// it, then page them.
		head, err := h.waitInbox(ctx, c.AgentID, pos.Upper, granted)
		if err != nil {
			return nil, err
		}
		if head > pos.Upper {
			// The first page wrote nothing (no rows): its read still holds.
			out, err = h.inboxPage(ctx, c, hist, in.Filter, table.SeqPos{After: pos.Upper, Upper: head}, limit, budget, rc)
		}
		return out, err
	})
}

// waitMargin is the time a waiting inbox_list keeps, of what its call has
// left, to page what arrived and answer.
const waitMargin = time.Second

// grantWait is the wait granted for asked: at most the deployment's cap
// and what the call has left (its context's deadline, on Lambda the
// function's timeout) less waitMargin.
func (h *Hub) grantWait(ctx context.Context, asked time.Duration) time.Duration {
	g := min(asked, h.limits.waitMax)
	if dl, ok := ctx.Deadline(); ok {
		g = min(g, time.Until(dl)-waitMargin)
	}
	return max(g, 0).Truncate(100 * time.Millisecond)
}

// seconds renders d as seconds to a tenth.
func seconds(d time.Duration) *float64 {
	s := float64(d.Truncate(100*time.Millisecond)) / float64(time.Second)
	return &s
}

// inboxPage reads rows after pos.After up to pos.Upper.
func (h *Hub) inboxPage(ctx context.Context, c *call, hist table.History, filter string, pos table.SeqPos, limit, budget int, rc receiptsRead) (*InboxListOutput, error) {
	// Collect up to limit rows of the filter, scanning at most
	// inboxScanBudget rows; last is where the listing has got to (the
	// last row returned or passed over).
	var rows []*table.Attention
	var sizes []int
	last, scanned := pos.After, 0
	chunk := func() int {
		if len(rows) >= limit || scanned >= inboxScanBudget || last >= pos.Upper {
			return 0
		}
		n := limit - len(rows)
		if filter == FilterUnread {
			n = max(n, 16)
		}
		return min(n, inboxScanBudget-scanned)
	}
	q := store.Query{PK: table.InboxHeadKey(c.AgentID).PK,
		From: table.InboxRowKey(c.AgentID, pos.After+1).SK, To: table.InboxRowKey(c.AgentID, pos.Upper).SK}
	end, err := table.Scan(ctx, h.st, q, "", chunk, func(items []*store.Item) (bool, error) {
		for _, it := range items {
			if len(rows) == limit {
				return true, nil
			}
			scanned++
			a, err := table.Decode[table.Attention](it)
			if err != nil {
				return false, err
			}
			last = a.Seq
			if filter == FilterUnread && a.AckedBy != "" {
				continue
			}
			rows, sizes = append(rows, a), append(sizes, len(it.Data))
		}
		return false, nil
	})
	if err != nil {
		return nil, storageErr(err)
	}
	if end {
		// Every row up to the upper has been read: the head moves only
		// with a row, so there is none between.
		last = pos.Upper
	}

	msgs, err := h.rowMessages(ctx, c, rows)
	if err != nil {
		return nil, err
	}
	out := &InboxListOutput{Rows: []InboxRow{}}
	rowBytes := make([]int, 0, len(rows))
	for i, r := range rows {
		row := InboxRow{InboxSeq: Revision(r.Seq), Reasons: r.Reasons, ReasonNames: ReasonNames(r.Reasons),
			Acked: r.AckedBy != ""}
		if row.Acked {
			row.AckedAt, row.AckedBySession = timestamp(r.AckedAt), r.AckedBy
		}
		sz := sizes[i]
		if m := msgs[i]; m != nil {
			d := messageDTO(m)
			row.Message = &d
			sz += len(table.Encode(&d))
		} else {
			row.Redacted, row.MessageID, row.At = true, r.MessageID, timestamp(r.At)
		}
		rowBytes = append(rowBytes, sz)
		out.Rows = append(out.Rows, row)
	}
	// The byte budget never skips a row: the page ends before the first
	// row that does not fit, and the cursor continues there.
	if n := table.Fit(len(rowBytes), budget, func(i int) int { return rowBytes[i] }); n < len(rowBytes) {
		out.Rows, last = out.Rows[:n], rows[n-1].Seq
	}
	if next, resume := hist.Next(pos, last); resume {
		out.ResumeCursor = next
	} else {
		out.NextCursor = next
	}
	if len(out.Rows) > 0 {
		// This session was shown every row after pos.After up to last,
		// but for those passed over as acknowledged (receipts.go).
		span := []shownSpan{{Lo: pos.After + 1, Hi: last, At: c.Now.UnixNano()}}
		if err := h.recordShown(ctx, c, rc, span); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rowMessages reads the messages of rows, nil where the caller can no
// longer see them, in one batched read of messages and memberships.
func (h *Hub) rowMessages(ctx context.Context, c *call, rows []*table.Attention) ([]*table.Message, error) {
	out := make([]*table.Message, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	keys := make([]store.Key, 0, len(rows)+8)
	memberAt := map[string]int{}
	msgAt := make([]int, len(rows))
	for i, r := range rows {
		st, ok := parseStream(r.Stream)
		if !ok {
			msgAt[i] = -1
			continue
		}
		msgAt[i] = len(keys)
		keys = append(keys, st.msgKey(r.StreamSeq))
		if st.kind == KindRoom {
			if _, ok := memberAt[st.room]; !ok {
				memberAt[st.room] = len(keys)
				keys = append(keys, table.RoomKey(st.room), table.RoomMemberKey(st.room, c.AgentID))
			}
		}
	}
	items, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	for i, r := range rows {
		if msgAt[i] < 0 || items[msgAt[i]] == nil {
			continue
		}
		st, _ := parseStream(r.Stream)
		if st.kind == KindRoom {
			at := memberAt[st.room]
			_, mem, err := roomAccess(c.Caller, items[at], items[at+1])
			if err != nil || r.StreamSeq < max(mem.StartSeq, 1) {
				continue
			}
		}
		m, err := table.Decode[table.Message](items[msgAt[i]])
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		out[i] = m
	}
	return out, nil
}

// InboxAckInput is inbox_ack's input.
type InboxAckInput struct {
	Auth
	Mutation
	InboxSeqs []Revision `json:"inbox_seqs" desc:"inbox_seq values shown to this session." schema:"minItems=1,maxItems=100"`
}

// AckResult is the outcome for one row.
type AckResult struct {
	InboxSeq       Revision `json:"inbox_seq"`
	Status         string   `json:"status" desc:"acked: acknowledged by this call; already_acked: acknowledged earlier, with that first ACK's session and time." schema:"enum=acked|already_acked"`
	AckedAt        string   `json:"acked_at"`
	AckedBySession string   `json:"acked_by_session"`
}

// InboxAckOutput is inbox_ack's receipt.
type InboxAckOutput struct {
	Results []AckResult `json:"results"`
	Acked   int         `json:"acked" desc:"How many rows this call acknowledged."`
	Replay
}

// ackReceipt is what an ACK's idempotency record holds: the agent, the
// session and time of the ACK, and which rows of the sorted request it
// acknowledged (hex bitmap). Rows it did not acknowledge carry their own
// immutable first provenance.
type ackReceipt struct {
	Agent   string    `json:"a"`
	Session string    `json:"s"`
	At      time.Time `json:"t"`
	Fresh   string    `json:"f"`
}

// expandAck rebuilds a replayed ACK's results for seqs (the request, in
// the caller's order) from its idempotency record: this call's rows from
// the receipt, the others from the rows' first provenance. Only a replay
// pays this extra read.
func (h *Hub) expandAck(ctx context.Context, out *InboxAckOutput, m mutation, agent string, seqs []uint64) error {
	rec, _, err := get[table.Idem](ctx, h.st, m.recordKey(agent), apperr.Unavailable(errors.New("ACK receipt vanished after its replay")))
	if err != nil {
		return err
	}
	var stored struct {
		R *ackReceipt `json:"r"`
	}
	if err := json.Unmarshal(rec.Response, &stored); err != nil || stored.R == nil {
		return apperr.Normalize(fmt.Errorf("hub: ACK receipt without its rows: %v", err))
	}
	r := stored.R
	sorted := slices.Clone(seqs)
	slices.Sort(sorted)
	bits, err := hex.DecodeString(r.Fresh)
	if err != nil {
		return apperr.Normalize(err)
	}
	fresh := func(s uint64) bool {
		i, _ := slices.BinarySearch(sorted, s)
		return i/8 < len(bits) && bits[i/8]&(1<<(i%8)) != 0
	}
	keys := make([]store.Key, len(seqs))
	for i, s := range seqs {
		keys[i] = table.InboxRowKey(r.Agent, s)
	}
	items, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return storageErr(err)
	}
	out.Results = make([]AckResult, len(seqs))
	for i, s := range seqs {
		res := AckResult{InboxSeq: Revision(s), Status: "acked", AckedAt: timestamp(r.At), AckedBySession: r.Session}
		if !fresh(s) && items[i] != nil {
			row, err := table.Decode[table.Attention](items[i])
			if err != nil {
				return apperr.Normalize(err)
			}
			res.Status, res.AckedAt, res.AckedBySession = "already_acked", timestamp(row.AckedAt), row.AckedBy
		}
		out.Results[i] = res
	}
	return nil
}

// ackPayload is an ACK intent's remaining rows.
type ackPayload struct {
	Agent   string    `json:"a"`
	Session string    `json:"s"`
	At      time.Time `json:"t"`
	Seqs    []uint64  `json:"q"`
}

// InboxAck acknowledges up to 100 explicit rows, all or nothing: each must
// be one of the caller's rows and have been returned to this session; one
// invalid member rejects the batch with nothing written. A row another
// session of the agent acknowledged first answers already_acked with that
// first provenance, unchanged.
//
// Errors: INVALID_ARGUMENT (duplicates, a row not returned to this
// session), LIMIT_EXCEEDED (over 100), NOT_FOUND_OR_FORBIDDEN (a sequence
// that is not one of your rows), IDEMPOTENCY_CONFLICT, PROFILE_OUTDATED.
func (h *Hub) InboxAck(ctx context.Context, cr Credentials, in InboxAckInput) (*InboxAckOutput, error) {
	if len(in.InboxSeqs) == 0 {
		return nil, apperr.Invalid("inbox_seqs", "must name at least one row")
	}
	if len(in.InboxSeqs) > MaxAckSeqs {
		return nil, apperr.Limit("inbox_seqs", "100 rows")
	}
	seqs := make([]uint64, len(in.InboxSeqs))
	seen := map[uint64]bool{}
	for i, s := range in.InboxSeqs {
		if seen[uint64(s)] {
			return nil, apperr.Invalid("inbox_seqs", "must not repeat a row")
		}
		seen[uint64(s)] = true
		seqs[i] = uint64(s)
	}
	sorted := slices.Clone(seqs)
	slices.Sort(sorted)
	m := newMutation("inbox_ack", in.IdempotencyKey, sorted)
	rowSlots := make([]slot, len(seqs))
	var open slot
	var acked int
	var agentID string
	var shown slot
	out, err := mutate(ctx, h, cr, m, func(agent string, b *batch) {
		agentID = agent
		open = b.add(table.AckSeqKey(agent))
		shown = declareReceipts(b, cr)
		for i, s := range seqs {
			rowSlots[i] = b.add(table.InboxRowKey(agent, s))
		}
	}, func(c *call) (*InboxAckOutput, *plan, error) {
		var o ackOpen
		if it := c.item(open); it != nil {
			if err := json.Unmarshal(it.Data, &o); err != nil {
				return nil, nil, apperr.Normalize(err)
			}
			if o.Mark == nil {
				// Written before watermarks: any row up to the head may
				// be acknowledged already.
				o.Unsure = version(c.inboxHead)
			}
		}
		if o.Intent != "" {
			// Another ACK of this agent is still marking rows: finish
			// it, then decide against the rows it marked.
			if err := h.finish(ctx, o.Intent); err != nil {
				return nil, nil, err
			}
			return nil, nil, errContended
		}
		rcpts, err := h.shownTo(ctx, c, c.item(shown), seqs)
		if err != nil {
			return nil, nil, err
		}
		out := &InboxAckOutput{Results: make([]AckResult, len(seqs))}
		var fresh, known []uint64 // known: acknowledged once this write commits
		bits := make([]byte, (len(sorted)+7)/8)
		p := &plan{}
		// The first write marks as many rows as the kernel leaves room
		// for beside the counter and the sequencer, at most ackChunk;
		// the rest are intent steps of ackChunk rows.
		first := min(ackChunk, c.room(p)-2)
		for i, s := range seqs {
			it := c.item(rowSlots[i])
			if it == nil || s == 0 {
				return nil, nil, apperr.Forbidden().WithNext("Every inbox_seq must be one of your inbox rows; list them with inbox_list.")
			}
			if !rcpts[i] {
				return nil, nil, apperr.Invalid("inbox_seqs", "every row must have been returned to this session first (inbox_list, message_get or conversation_read)")
			}
			row, err := table.Decode[table.Attention](it)
			if err != nil {
				return nil, nil, apperr.Normalize(err)
			}
			res := AckResult{InboxSeq: Revision(s)}
			if row.AckedBy != "" {
				res.Status, res.AckedAt, res.AckedBySession = "already_acked", timestamp(row.AckedAt), row.AckedBy
				known = append(known, s)
			} else {
				res.Status, res.AckedAt, res.AckedBySession = "acked", timestamp(c.Now), c.Session.ID
				fresh = append(fresh, s)
				j, _ := slices.BinarySearch(sorted, s)
				bits[j/8] |= 1 << (j % 8)
				if len(fresh) <= first {
					p.add(ackOp(c.AgentID, it, row, c.Session.ID, c.Now))
					known = append(known, s)
				}
			}
			out.Results[i] = res
		}
		out.Acked = len(fresh)
		p.receipt = struct {
			Acked   int        `json:"acked"`
			Receipt ackReceipt `json:"r"`
		}{out.Acked, ackReceipt{Agent: c.AgentID, Session: c.Session.ID, At: c.Now, Fresh: hex.EncodeToString(bits)}}
		if len(fresh) > 0 {
			n := min(len(fresh), first)
			p.add(guardedOp{op: store.Add(table.AckedCounterKey(c.AgentID), int64(n), 0)})
			if len(fresh) > first {
				rest := fresh[first:]
				p.intent = newIntent(intentAck, uint64((len(rest)+ackChunk-1)/ackChunk),
					ackPayload{Agent: c.AgentID, Session: c.Session.ID, At: c.Now, Seqs: rest}, c.Now, c.BoxID)
				o.Intent = p.intent.ID
			}
			// The rest of an intent joins the watermark at its last
			// step, once those rows are acknowledged.
			o.learn(known)
			if err := h.repairMark(ctx, c.AgentID, &o); err != nil {
				return nil, nil, err
			}
			k := table.AckSeqKey(c.AgentID)
			next, cond := store.Item{PK: k.PK, SK: k.SK}, store.Absent
			if cur := c.item(open); cur != nil {
				next, cond = *cur, store.AtVersion(cur.Version)
			}
			next.Version++
			next.Data = table.Encode(o)
			p.put(&next, cond, contended)
		}
		acked = len(fresh)
		return out, p, nil
	})
	if err == nil && out.Replayed {
		if err := h.expandAck(ctx, out, m, agentID, seqs); err != nil {
			return nil, err
		}
	}
	if err == nil && !out.Replayed && cr.Info != nil && cr.Info.Attention != nil {
		cr.Info.Attention.UnreadCount = max(cr.Info.Attention.UnreadCount-int64(acked), 0)
	}
	return out, err
}

// ackOpen is the ACK sequencer's data: the agent's open ACK intent and
// the acknowledged watermark (ackmark.go).
type ackOpen struct {
	Intent string `json:"i"`
	// Mark is W: every row at or below it is acknowledged; nil on a
	// sequencer written before watermarks.
	Mark *uint64 `json:"w,omitempty"`
	// Known are acknowledged spans above W+1, ascending and disjoint.
	Known []span `json:"k,omitempty"`
	// Unsure, when above W, is the highest row whose acknowledgement the
	// sequencer may have forgotten.
	Unsure uint64 `json:"u,omitempty"`
}

// ackOp marks row (read as it) acknowledged by session at now, once.
func ackOp(agent string, it *store.Item, row *table.Attention, session string, now time.Time) guardedOp {
	next := *it
	r := *row
	r.AckedBy, r.AckedAt = session, now
	next.Data = table.Encode(&r)
	next.Version = it.Version + 1
	// Another session acknowledged it meanwhile: run again, and it is
	// already_acked.
	return guardedOp{op: store.Put(&next, store.AtVersion(it.Version)), onFail: contended}
}

// ackStep is step n of an ACK intent: the next chunk of rows. A row
// another session acknowledged meanwhile keeps its first provenance and
// is not counted again.
func (h *Hub) ackStep(ctx context.Context, rec *table.Intent, n uint64) ([]guardedOp, error) {
	var p ackPayload
	if err := json.Unmarshal(rec.Payload, &p); err != nil {
		return nil, apperr.Normalize(err)
	}
	lo := min(int(n)*ackChunk, len(p.Seqs))
	hi := min(lo+ackChunk, len(p.Seqs))
	var ops []guardedOp
	if n+1 >= rec.Steps {
		// The last step clears the intent from the agent's sequencer;
		// no ACK of the agent moves it while the intent is open.
		seqr, err := h.st.Get(ctx, table.AckSeqKey(p.Agent))
		if err != nil {
			return nil, storageErr(err)
		}
		if seqr != nil {
			var o ackOpen
			if err := json.Unmarshal(seqr.Data, &o); err != nil {
				return nil, apperr.Normalize(err)
			}
			o.Intent = ""
			if o.Mark != nil {
				// Every row of the intent is acknowledged once this
				// step commits (earlier steps did theirs).
				o.learn(p.Seqs)
			}
			next := *seqr
			next.Version++
			next.Data = table.Encode(o)
			ops = append(ops, guardedOp{op: store.Put(&next, store.AtVersion(seqr.Version)), onFail: contended})
		}
	}
	keys := make([]store.Key, 0, hi-lo)
	for _, s := range p.Seqs[lo:hi] {
		keys = append(keys, table.InboxRowKey(p.Agent, s))
	}
	if len(keys) == 0 {
		return ops, nil
	}
	rows, items, err := getMany[table.Attention](ctx, h.st, keys, nil)
	if err != nil {
		return nil, err
	}
	fresh := 0
	for i, row := range rows {
		if row == nil || row.AckedBy != "" {
			continue
		}
		ops = append(ops, ackOp(p.Agent, items[i], row, p.Session, p.At))
		fresh++
	}
	if fresh > 0 {
		ops = append(ops, guardedOp{op: store.Add(table.AckedCounterKey(p.Agent), int64(fresh), 0)})
	}
	return ops, nil
}

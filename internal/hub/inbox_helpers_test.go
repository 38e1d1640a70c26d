package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
)

// Helpers of the inbox tests, on top of hub_test.go's fixture. Prefixed
// ib so they never collide with the message tests' helpers.

// ibDM sends a DM from cr to agent.
func ibDM(f *fixture, cr hub.Credentials, key, to, body string) (*hub.MessageSendOutput, error) {
	return ibSend(f, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: key}, Destination: toDM(to), BodyMD: body})
}

// ibPost posts in a room.
func ibPost(f *fixture, cr hub.Credentials, key, room, body string) (*hub.MessageSendOutput, error) {
	return ibSend(f, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: key}, Destination: toRoom(room), BodyMD: body})
}

// ibSend sends as a client does: a TEMPORARILY_UNAVAILABLE (nothing
// written; many senders contending for one recipient's inbox head) is
// retried with the same idempotency key.
func ibSend(f *fixture, cr hub.Credentials, in hub.MessageSendInput) (*hub.MessageSendOutput, error) {
	for attempt := 0; ; attempt++ {
		out, err := f.h.MessageSend(f.ctx, cr, in)
		if e, ok := apperr.As(err); !ok || e.Code != apperr.TemporarilyUnavailable || attempt == 20 {
			return out, err
		}
	}
}

// ibMustDMs sends n DMs from cr to agent and returns their message ids.
func ibMustDMs(f *fixture, cr hub.Credentials, prefix, to string, n int) []string {
	f.t.Helper()
	return ibMustDMsOf(f, cr, prefix, to, "", n)
}

// ibMustDMsOf is ibMustDMs with every body body (when not empty; the
// bodies are "prefix i" otherwise).
func ibMustDMsOf(f *fixture, cr hub.Credentials, prefix, to, body string, n int) []string {
	f.t.Helper()
	ids := make([]string, n)
	for i := range n {
		b := body
		if b == "" {
			b = fmt.Sprintf("%s %d", prefix, i)
		}
		out, err := ibDM(f, cr, fmt.Sprintf("%s-%d", prefix, i), to, b)
		if err != nil {
			f.t.Fatalf("MessageSend(%s %d): %v", prefix, i, err)
		}
		ids[i] = out.MessageID
	}
	return ids
}

// ibListAll pages through the whole current inbox of cr with filter, and
// returns the rows (recording receipts for all of them).
func ibListAll(f *fixture, cr hub.Credentials, filter string) []hub.InboxRow {
	f.t.Helper()
	var rows []hub.InboxRow
	cur := ""
	pages := loopLimit(f.t, "InboxList("+filter+") pages", 1000, time.Minute)
	for {
		pages.must()
		out, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Filter: filter, Cursor: cur, Limit: 100})
		if err != nil {
			f.t.Fatalf("InboxList(%s): %v", filter, err)
		}
		rows = append(rows, out.Rows...)
		if out.NextCursor == "" {
			return rows
		}
		cur = out.NextCursor
	}
}

// ibShownToBob sends n DMs from a to b and returns a session of b that
// has listed them all under filter, so that it may ACK every row.
func ibShownToBob(f *fixture, n int, filter string) hub.Credentials {
	f.t.Helper()
	ibMustDMs(f, f.prime(f.a), "dm", f.b.AgentID, n)
	cr := f.prime(f.b)
	ibListAll(f, cr, filter)
	return cr
}

// ibShownTwice sends n DMs from a to b and returns two sessions of b that
// have each listed them all, so that either may ACK every row.
func ibShownTwice(f *fixture, n int) []hub.Credentials {
	f.t.Helper()
	ibMustDMs(f, f.prime(f.a), "dm", f.b.AgentID, n)
	crs := []hub.Credentials{f.prime(f.b), f.prime(f.b)}
	for _, cr := range crs {
		ibListAll(f, cr, hub.FilterUnread)
	}
	return crs
}

// ibAcksAtOnce has session crs[i] ACK batches[i] under key "ack-i", all at
// once with every read before any write (b), and returns their outputs. A
// failed ACK fails the test (its output is nil).
func ibAcksAtOnce(f *fixture, b armer, crs []hub.Credentials, batches [][]uint64) []*hub.InboxAckOutput {
	outs := make([]*hub.InboxAckOutput, len(crs))
	atOnce(b, len(crs), func(i int) {
		out, err := ibAck(f, crs[i], fmt.Sprintf("ack-%d", i), batches[i]...)
		if err != nil {
			f.t.Errorf("session %d: InboxAck: %v", i, err)
		}
		outs[i] = out
	})
	return outs
}

// ibAck acknowledges seqs.
func ibAck(f *fixture, cr hub.Credentials, key string, seqs ...uint64) (*hub.InboxAckOutput, error) {
	in := hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: key}}
	for _, s := range seqs {
		in.InboxSeqs = append(in.InboxSeqs, hub.Revision(s))
	}
	return f.h.InboxAck(f.ctx, cr, in)
}

// rowSeqs lists the inbox sequence of each row, in order.
func rowSeqs(rows []hub.InboxRow) []uint64 {
	out := make([]uint64, 0, len(rows))
	for _, r := range rows {
		out = append(out, uint64(r.InboxSeq))
	}
	return out
}

// ibSeqs returns lo..hi.
func ibSeqs(lo, hi uint64) []uint64 {
	var s []uint64
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// storedRow is an inbox row as the store holds it, read past the hub.
type storedRow struct {
	Seq     uint64 `json:"seq"`
	AckedBy string `json:"acked_by"`
	Message string `json:"message_id"`
}

// ibStoredRows reads agent's inbox rows straight from the store (no hub,
// no receipts): the recount every count is compared with.
func ibStoredRows(f *fixture, agent string) []storedRow {
	f.t.Helper()
	items, err := f.raw.Query(f.ctx, store.Query{PK: "agent#" + agent, From: "inbox#", To: store.PrefixEnd("inbox#")})
	if err != nil {
		f.t.Fatalf("Query(inbox rows): %v", err)
	}
	rows := make([]storedRow, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it.Data, &rows[i]); err != nil {
			f.t.Fatalf("decode row %s: %v", it.SK, err)
		}
	}
	return rows
}

// ibRecount counts agent's stored rows and unacknowledged ones.
func ibRecount(f *fixture, agent string) (total, unread int64) {
	for _, r := range ibStoredRows(f, agent) {
		total++
		if r.AckedBy == "" {
			unread++
		}
	}
	return total, unread
}

// ibUnread is agent_prime's live unread count for ag (a fresh session),
// which must be the stored counters' exact difference: the reading shows a
// miscount below zero as 0, the stored counters do not.
func ibUnread(f *fixture, ag *hub.AgentInfo) int64 {
	f.t.Helper()
	p, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
	if err != nil {
		f.t.Fatalf("Prime(%s): %v", ag.Name, err)
	}
	if raw := rawUnread(f, ag.AgentID); raw != p.UnreadCount {
		f.t.Fatalf("Prime(%s): unread_count %d, but the stored head less the ACK counter is %d", ag.Name, p.UnreadCount, raw)
	}
	return p.UnreadCount
}

// failingWrites lets the next `pass` writes through once armed and fails
// every later one as a crashed process would (no write happens), until
// disarmed: the fault between an ACK's chunks that a real engine cannot be
// asked to produce.
type failingWrites struct {
	store.Store
	mu    sync.Mutex
	armed bool
	pass  int
}

func (w *failingWrites) arm(pass int) { w.mu.Lock(); w.armed, w.pass = true, pass; w.mu.Unlock() }
func (w *failingWrites) disarm()      { w.mu.Lock(); w.armed = false; w.mu.Unlock() }

func (w *failingWrites) Write(ctx context.Context, ops []store.Op) error {
	w.mu.Lock()
	fail := w.armed && w.pass == 0
	if w.armed && w.pass > 0 {
		w.pass--
	}
	w.mu.Unlock()
	if fail {
		return fmt.Errorf("process crashed before this write")
	}
	return w.Store.Write(ctx, ops)
}

// headGets signals every read of an inbox head past authentication: a
// waiting inbox_list reads it before it blocks, so a test can send only
// once the list is waiting, without sleeping.
type headGets struct {
	store.Store
	seen chan struct{}
}

func withHeadGets(g **headGets) func(store.Store) store.Store {
	return func(s store.Store) store.Store { *g = &headGets{Store: s, seen: make(chan struct{}, 1)}; return *g }
}

func (g *headGets) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	it, err := g.Store.Get(ctx, k)
	if k.SK == "inbox" {
		select {
		case g.seen <- struct{}{}:
		default:
		}
	}
	return it, err
}

// opCounter counts the store's range queries (n), the inbox rows they
// return (inboxRows: what a listing scans), and its writes.
type opCounter struct {
	store.Store
	n, inboxRows, writes atomic.Int64
}

func (c *opCounter) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	c.n.Add(1)
	items, err := c.Store.Query(ctx, q)
	for _, it := range items {
		if len(it.SK) > len("inbox#") && strings.HasPrefix(it.SK, "inbox#") {
			c.inboxRows.Add(1)
		}
	}
	return items, err
}

func (c *opCounter) Write(ctx context.Context, ops []store.Op) error {
	c.writes.Add(1)
	return c.Store.Write(ctx, ops)
}

func withOpCounter(c **opCounter) func(store.Store) store.Store {
	return func(s store.Store) store.Store { *c = &opCounter{Store: s}; return *c }
}

// withWriteCounter wraps the fixture's store in a writeCounter kept at *c.
func withWriteCounter(c **writeCounter) func(store.Store) store.Store {
	return func(s store.Store) store.Store { *c = &writeCounter{Store: s}; return *c }
}

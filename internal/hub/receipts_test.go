package hub_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// receiptWrites counts the receipt items reads write, and their bytes.
type receiptWrites struct {
	store.Store
	mu           sync.Mutex
	items, bytes int
}

func (w *receiptWrites) Write(ctx context.Context, ops []store.Op) error {
	err := w.Store.Write(ctx, ops)
	if err == nil {
		w.mu.Lock()
		for _, op := range ops {
			if op.Kind == store.OpPut && strings.HasPrefix(op.Item.SK, "rcpt") {
				w.items++
				w.bytes += len(op.Item.Data)
			}
		}
		w.mu.Unlock()
	}
	return err
}

func (w *receiptWrites) reset() (items, bytes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	items, bytes = w.items, w.bytes
	w.items, w.bytes = 0, 0
	return items, bytes
}

// TestReceiptsBounded: reads write receipts, so they are bounded like
// writes: listing 300 new rows with a read-only key writes one small item
// per page (it wrote 300, one per row), listing them again, or reading
// them with message_get or conversation_read, writes nothing, and the
// rows stay ACKable by the session they were shown to (and only by it).
func TestReceiptsBounded(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		rw := &receiptWrites{}
		f := newFixture(t, ad, func(s store.Store) store.Store { rw.Store = s; return rw })
		reader, err := f.h.Admin().CreateAgentScoped(f.ctx, f.box, "reader", "tester", hub.ScopeRead)
		if err != nil {
			t.Fatalf("CreateAgentScoped(read): %v", err)
		}
		crA := f.prime(f.a)
		// 150 DMs to each, the last one to b after all others.
		ibSendTo(f, 299, func(i int) string {
			if i%2 == 1 {
				return f.b.AgentID
			}
			return reader.AgentID
		})
		last, err := ibDM(f, crA, "r-last", f.b.AgentID, "work")
		if err != nil {
			t.Fatalf("MessageSend(last): %v", err)
		}
		for _, ag := range []*hub.AgentInfo{reader, f.b} {
			cr := f.prime(ag)
			rw.reset()
			rows := ibListAll(f, cr, hub.FilterUnread)
			items, bytes := rw.reset()
			t.Logf("%s: listing %d rows wrote %d receipt items, %d bytes", ag.Name, len(rows), items, bytes)
			if len(rows) != 150 || items > 2 || bytes > 1024 {
				t.Errorf("%s: listing %d rows (want 150) wrote %d receipt items of %d bytes; want at most one per page, under 1 KiB", ag.Name, len(rows), items, bytes)
			}
			for range 3 {
				ibListAll(f, cr, hub.FilterUnread)
				ibListAll(f, cr, hub.FilterAll)
			}
			if _, err := f.h.ConversationRead(f.ctx, cr, hub.ConversationReadInput{Conversation: hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.a.AgentID}, Limit: 100}); err != nil {
				t.Fatalf("ConversationRead: %v", err)
			}
			if items, _ := rw.reset(); items != 0 {
				t.Errorf("%s: listing and reading the shown rows again wrote %d receipt items, want none", ag.Name, items)
			}
		}

		// ACKs still need the rows shown to the session that ACKs.
		crB := f.prime(f.b)
		_, err = ibAck(f, crB, "not-shown", 1)
		wantCode(t, "InboxAck(a row not shown to this session)", err, apperr.InvalidArgument)
		got, err := f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: last.MessageID})
		if err != nil || got.InboxSeq == nil {
			t.Fatalf("MessageGet(the last DM) = %+v, %v; want its inbox row", got, err)
		}
		if _, err := ibAck(f, crB, "after-get", uint64(*got.InboxSeq)); err != nil {
			t.Fatalf("InboxAck(the row message_get showed): %v", err)
		}
		_, err = ibAck(f, crB, "before-list", 1)
		wantCode(t, "InboxAck(a row message_get did not show)", err, apperr.InvalidArgument)
		ibListAll(f, crB, hub.FilterUnread)
		if out, err := ibAck(f, crB, "listed", ibSeqs(1, 100)...); err != nil || out.Acked != 100 {
			t.Fatalf("InboxAck(rows 1-100 listed) = %v acked, %v; want 100", out != nil && out.Acked == 100, err)
		}
		if _, err := ibAck(f, crB, "beyond", 151); err == nil {
			t.Errorf("InboxAck(row 151, which does not exist) succeeded")
		}
	})
}

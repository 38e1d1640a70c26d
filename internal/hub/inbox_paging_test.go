package hub_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestInboxReasonNames: a row's reason_names spell out exactly its reason
// bits.
func TestInboxReasonNames(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room, crA := f.roomOfAliceAndBob(), f.prime(f.a)
		ibMustDMs(f, crA, "dm", f.b.AgentID, 1)
		if _, err := ibSend(f, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "mention"},
			Destination: toRoom(room.RoomID), BodyMD: "look", Mentions: []string{f.b.AgentID}, Requests: []string{f.b.AgentID}}); err != nil {
			t.Fatalf("MessageSend(mention and request): %v", err)
		}
		rows := ibListAll(f, f.prime(f.b), hub.FilterUnread)
		want := []struct {
			reasons int
			names   []string
		}{{hub.ReasonDM, []string{"dm"}}, {hub.ReasonMention | hub.ReasonRequest, []string{"mention", "request"}}}
		if len(rows) != len(want) {
			t.Fatalf("inbox has %d rows, want %d", len(rows), len(want))
		}
		for i, w := range want {
			if rows[i].Reasons != w.reasons || !slices.Equal(rows[i].ReasonNames, w.names) {
				t.Errorf("row %d: reasons %d %v, want %d %v", rows[i].InboxSeq, rows[i].Reasons, rows[i].ReasonNames, w.reasons, w.names)
			}
		}
	})
}

// TestInboxByteBudgetExactFit: a page holds the next row when it fits the
// byte budget exactly, and not one byte less. A row's size is its stored
// row plus its message as returned.
func TestInboxByteBudgetExactFit(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		ibMustDMsOf(f, f.prime(f.a), "dm", f.b.AgentID, strings.Repeat("y", 600), 2)
		cr := f.prime(f.b)
		all, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{})
		if err != nil || len(all.Rows) != 2 {
			t.Fatalf("InboxList = %+v, %v; want both rows", all, err)
		}
		size := 0
		for _, r := range all.Rows {
			it := rawItem(f, "agent#"+f.b.AgentID, fmt.Sprintf("inbox#%020d", r.InboxSeq))
			msg, err := json.Marshal(r.Message)
			if err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			size += len(it.Data) + len(msg)
		}
		for _, tc := range []struct {
			budget, rows int
		}{{size, 2}, {size - 1, 1}} {
			page, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Filter: hub.FilterAll, MaxBytes: tc.budget})
			if err != nil || len(page.Rows) != tc.rows {
				t.Errorf("InboxList(max_bytes %d, both rows %d bytes) = %d rows, %v; want %d", tc.budget, size, len(page.Rows), err, tc.rows)
			}
		}
	})
}

// TestInboxScanBudget: looking for unread rows, one inbox_list reads at
// most 1,000 rows past acknowledged ones; a page that found none by then
// is empty and continues with next_cursor after the last row it read.
// The 1,000 acknowledged rows are written straight to the store (the
// state 1,000 DMs and their ACKs leave, without 1,000 sends).
func TestInboxScanBudget(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		const acked = 1000
		pk := "agent#" + f.b.AgentID
		at := f.clock.Now().UTC()
		var ops []store.Op
		flush := func() {
			if err := f.raw.Write(f.ctx, ops); err != nil {
				t.Fatalf("seed rows: %v", err)
			}
			ops = ops[:0]
		}
		for s := uint64(1); s <= acked; s++ {
			data, _ := json.Marshal(map[string]any{"seq": s, "message_id": "seeded", "stream": "seeded",
				"stream_seq": s, "reasons": hub.ReasonDM, "at": at, "acked_by": "s_seeded", "acked_at": at})
			ops = append(ops, store.Put(&store.Item{PK: pk, SK: fmt.Sprintf("inbox#%020d", s), Version: 2, Data: data}, store.Absent))
			if len(ops) == store.MaxWriteItems {
				flush()
			}
		}
		ops = append(ops, store.Put(&store.Item{PK: pk, SK: "inbox", Version: acked}, store.Absent))
		flush()
		ibMustDMs(f, f.prime(f.a), "after", f.b.AgentID, 1)

		cr := f.prime(f.b)
		// Limits that do not divide 1,000 make the last read of the
		// budget a short one.
		for _, limit := range []int{30, 100} {
			page, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Limit: limit})
			if err != nil {
				t.Fatalf("InboxList(limit %d): %v", limit, err)
			}
			if len(page.Rows) != 0 || page.NextCursor == "" {
				t.Fatalf("InboxList(limit %d) over 1,000 acknowledged rows = %d rows (first %d), next cursor %t; want no rows and a next cursor",
					limit, len(page.Rows), firstSeq(page.Rows), page.NextCursor != "")
			}
			next, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Limit: limit, Cursor: page.NextCursor})
			if err != nil {
				t.Fatalf("InboxList(limit %d, next): %v", limit, err)
			}
			if len(next.Rows) != 1 || next.Rows[0].InboxSeq != acked+1 || next.ResumeCursor == "" {
				t.Errorf("InboxList(limit %d, next) = %d rows (first %d), resume cursor %t; want row %d and a resume cursor",
					limit, len(next.Rows), firstSeq(next.Rows), next.ResumeCursor != "", acked+1)
			}
		}
	})
}

// firstSeq is the first row's inbox_seq, 0 without rows.
func firstSeq(rows []hub.InboxRow) hub.Revision {
	if len(rows) == 0 {
		return 0
	}
	return rows[0].InboxSeq
}

// TestInboxUnreadReadsInChunks: looking for unread rows past acknowledged
// ones, inbox_list reads at least 16 rows per query whatever its limit, so
// a page of one row past 20 acknowledged rows takes two queries, not 21.
func TestInboxUnreadReadsInChunks(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var qc *opCounter
		f := newFixture(t, ad, withOpCounter(&qc))
		crA := f.prime(f.a)
		ibMustDMs(f, crA, "old", f.b.AgentID, 20)
		cr := f.prime(f.b)
		ibListAll(f, cr, hub.FilterUnread)
		if _, err := ibAck(f, cr, "old", ibSeqs(1, 20)...); err != nil {
			t.Fatalf("InboxAck: %v", err)
		}
		ibMustDMs(f, crA, "new", f.b.AgentID, 1)
		qc.n.Store(0)
		page, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Limit: 1})
		if err != nil || len(page.Rows) != 1 || page.Rows[0].InboxSeq != 21 {
			t.Fatalf("InboxList(limit 1) = %d rows (first %d), %v; want row 21", len(page.Rows), firstSeq(page.Rows), err)
		}
		if n := qc.n.Load(); n > 2 {
			t.Errorf("InboxList(limit 1) past 20 acknowledged rows ran %d queries, want at most 2", n)
		}
	})
}

// TestInboxAckWrites: what each ACK writes. One that acknowledges nothing
// and has no key writes nothing; up to 90 new rows are one write and the
// 10 more of a 100-row ACK one more (the intent's single step). Each ACK
// that acknowledged rows moves the agent's ACK sequencer one version (and
// an intent's last step once more, clearing it), and each row it marked
// one version (an item's version counts its writes).
func TestInboxAckWrites(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var oc *opCounter
		f := newFixture(t, ad, withOpCounter(&oc))
		cr := ibShownToBob(f, 190, hub.FilterUnread)
		pk := "agent#" + f.b.AgentID
		for i, tc := range []struct {
			name      string
			key       string
			lo, hi    uint64
			writes    int64
			sequencer uint64
		}{
			{"90 rows", "a", 1, 90, 1, 1},
			{"no-op without a key", "", 1, 90, 0, 1},
			{"100 rows", "b", 91, 190, 2, 3},
		} {
			oc.writes.Store(0)
			if _, err := ibAck(f, cr, tc.key, ibSeqs(tc.lo, tc.hi)...); err != nil {
				t.Fatalf("InboxAck(%s): %v", tc.name, err)
			}
			if n := oc.writes.Load(); n != tc.writes {
				t.Errorf("InboxAck(%s) made %d writes, want %d", tc.name, n, tc.writes)
			}
			if it := rawItem(f, pk, "acks"); it == nil || it.Version != tc.sequencer {
				t.Errorf("after ACK %d (%s): ACK sequencer %v, want version %d", i, tc.name, itemVersion(it), tc.sequencer)
			}
		}
		for _, s := range []uint64{1, 90, 91, 190} {
			if it := rawItem(f, pk, fmt.Sprintf("inbox#%020d", s)); it == nil || it.Version != 2 {
				t.Errorf("row %d after its ACK at version %v, want 2 (written, then acknowledged)", s, itemVersion(it))
			}
		}
		if n := rawCount(f, pk, "count#acked"); n != 190 {
			t.Errorf("ACK counter %d, want 190", n)
		}
	})
}

// itemVersion is it's version, or "absent".
func itemVersion(it *store.Item) any {
	if it == nil {
		return "absent"
	}
	return it.Version
}

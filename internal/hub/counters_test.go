package hub_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// The counters' tests read the stored counters themselves, unclamped: a
// reading through agent_prime turns a miscount below zero into 0, which
// is also what most tests expect.

// rawItem reads one item straight from the store (nil when absent).
func rawItem(f *fixture, pk, sk string) *store.Item {
	f.t.Helper()
	it, err := f.raw.Get(f.ctx, store.Key{PK: pk, SK: sk})
	if err != nil {
		f.t.Fatalf("Get(%s/%s): %v", pk, sk, err)
	}
	return it
}

// rawCount is the stored count of a counter item (0 when absent).
func rawCount(f *fixture, pk, sk string) int64 {
	f.t.Helper()
	if it := rawItem(f, pk, sk); it != nil {
		return it.Count
	}
	return 0
}

// rawInbox is agent's stored inbox head (rows ever written) and ACK
// counter (rows acknowledged).
func rawInbox(f *fixture, agent string) (head uint64, acked int64) {
	f.t.Helper()
	if it := rawItem(f, "agent#"+agent, "inbox"); it != nil {
		head = it.Version
	}
	return head, rawCount(f, "agent#"+agent, "count#acked")
}

// rawUnread is agent's unread count from the stored counters.
func rawUnread(f *fixture, agent string) int64 {
	f.t.Helper()
	head, acked := rawInbox(f, agent)
	return int64(head) - acked
}

// rawOpenRequests is agent's stored count of open requests.
func rawOpenRequests(f *fixture, agent string) int64 {
	f.t.Helper()
	return rawCount(f, "agent#"+agent, "count#requests")
}

// rawReceipts lists the inbox seqs session holds retrieval receipts for.
func rawReceipts(f *fixture, session string) []uint64 {
	f.t.Helper()
	// A session's receipts are one item of shown spans (receipts.go):
	// {"s":[{"l":lo,"h":hi,"t":unix nanoseconds}]}.
	it, err := f.raw.Get(f.ctx, store.Key{PK: "ses#" + session, SK: "rcpts"})
	if err != nil {
		f.t.Fatalf("Get(receipts): %v", err)
	}
	if it == nil {
		return nil
	}
	var set struct {
		Spans []struct {
			Lo uint64 `json:"l"`
			Hi uint64 `json:"h"`
		} `json:"s"`
	}
	if err := json.Unmarshal(it.Data, &set); err != nil {
		f.t.Fatalf("receipts item %s: %v", it.Data, err)
	}
	var seqs []uint64
	for _, sp := range set.Spans {
		for n := sp.Lo; n <= sp.Hi && n-sp.Lo < 1<<16; n++ {
			seqs = append(seqs, n)
		}
	}
	slices.Sort(seqs)
	return seqs
}

// TestInboxAckPastFirstChunk ACKs 100 of 120 rows — more than one ACK
// write holds, so the last 10 continue as an intent — and checks the
// stored counter after each ACK: it moves by exactly the rows each write
// acknowledged (the first chunk's 90, then the intent's 10), never by the
// whole request twice.
func TestInboxAckPastFirstChunk(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		ibMustDMs(f, f.prime(f.a), "dm", f.b.AgentID, 120)
		cr := f.prime(f.b)
		if rows := ibListAll(f, cr, hub.FilterUnread); len(rows) != 120 {
			t.Fatalf("listed %d rows, want 120", len(rows))
		}
		for _, tc := range []struct {
			lo, hi       uint64
			acked, left  int64
			attentionNow int64
		}{{1, 100, 100, 20, 20}, {101, 120, 120, 0, 0}} {
			cr.Info = &hub.CallInfo{}
			out, err := ibAck(f, cr, fmt.Sprintf("ack-%d", tc.lo), ibSeqs(tc.lo, tc.hi)...)
			if err != nil || out.Acked != int(tc.hi-tc.lo+1) {
				t.Fatalf("InboxAck(%d..%d) = %+v, %v; want %d acked", tc.lo, tc.hi, out, err, tc.hi-tc.lo+1)
			}
			if head, acked := rawInbox(f, f.b.AgentID); head != 120 || acked != tc.acked {
				t.Errorf("after ACK %d..%d: stored head %d, ACK counter %d; want 120 and %d", tc.lo, tc.hi, head, acked, tc.acked)
			}
			if got := ibUnread(f, f.b); got != tc.left {
				t.Errorf("after ACK %d..%d: unread_count %d, want %d", tc.lo, tc.hi, got, tc.left)
			}
			if a := cr.Info.Attention; a == nil || a.UnreadCount != tc.attentionNow {
				t.Errorf("after ACK %d..%d: the call's attention summary = %+v, want unread %d", tc.lo, tc.hi, a, tc.attentionNow)
			}
		}
	})
}

// TestInboxByteCutNoReceipt: a row the byte budget cut from a page is not
// returned, so it gets no receipt and cannot be ACKed by that session
// until a later page returns it (seed 000: no receipt is inserted for a
// dropped row).
func TestInboxByteCutNoReceipt(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		ibMustDMsOf(f, f.prime(f.a), "big", f.b.AgentID, strings.Repeat("x", 1100), 2)
		cr := f.prime(f.b)
		page, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{MaxBytes: 1024})
		if err != nil || len(page.Rows) != 1 || page.Rows[0].InboxSeq != 1 || page.NextCursor == "" {
			t.Fatalf("InboxList(max_bytes 1024) = %+v, %v; want row 1 alone with a next cursor", page, err)
		}
		if got := rawReceipts(f, cr.SessionID); !slices.Equal(got, []uint64{1}) {
			t.Errorf("receipts after a page holding row 1 = %v, want [1] (row 2 was cut by the budget)", got)
		}
		_, err = ibAck(f, cr, "early", 2)
		wantCode(t, "InboxAck of the row the budget cut", err, apperr.InvalidArgument)
		if _, acked := rawInbox(f, f.b.AgentID); acked != 0 {
			t.Errorf("ACK counter after a rejected ACK = %d, want 0", acked)
		}
		next, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Cursor: page.NextCursor, MaxBytes: 1024})
		if err != nil || len(next.Rows) != 1 || next.Rows[0].InboxSeq != 2 {
			t.Fatalf("InboxList(next) = %+v, %v; want row 2", next, err)
		}
		if got := rawReceipts(f, cr.SessionID); !slices.Equal(got, []uint64{1, 2}) {
			t.Errorf("receipts once row 2 was returned = %v, want [1 2]", got)
		}
		if out, err := ibAck(f, cr, "later", 2); err != nil || out.Acked != 1 {
			t.Errorf("InboxAck(2) once returned = %+v, %v; want acked", out, err)
		}
	})
}

// TestInboxNextCursorKeepsUpper: with a message arriving after every page,
// a client following next_cursor still reaches resume_cursor after exactly
// the rows of its first page's snapshot; the arrivals come after resuming
// (seed 000: a fixed first-page upper).
func TestInboxNextCursorKeepsUpper(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA := f.prime(f.a)
		ibMustDMs(f, crA, "before", f.b.AgentID, 5)
		cr := f.prime(f.b)
		var snapshot, after []uint64
		cur, sent := "", 0
		const maxPages = 10
		for page := 0; ; page++ {
			if page == maxPages {
				t.Fatalf("no resume_cursor after %d pages of 2 rows over a snapshot of 5: seen %v", maxPages, snapshot)
			}
			out, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Cursor: cur, Limit: 2})
			if err != nil {
				t.Fatalf("page %d: InboxList: %v", page, err)
			}
			for _, r := range out.Rows {
				snapshot = append(snapshot, uint64(r.InboxSeq))
			}
			// Steady arrivals: one more row after every page.
			sent++
			ibMustDMs(f, crA, fmt.Sprintf("during-%d", sent), f.b.AgentID, 1)
			if out.ResumeCursor != "" {
				cur = out.ResumeCursor
				break
			}
			cur = out.NextCursor
		}
		if !slices.Equal(snapshot, ibSeqs(1, 5)) {
			t.Errorf("rows up to resume_cursor = %v, want the first page's snapshot 1..5", snapshot)
		}
		rest, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Cursor: cur, Limit: 100})
		if err != nil {
			t.Fatalf("InboxList(resume): %v", err)
		}
		for _, r := range rest.Rows {
			after = append(after, uint64(r.InboxSeq))
		}
		if want := ibSeqs(6, uint64(5+sent)); !slices.Equal(after, want) {
			t.Errorf("rows after resuming = %v, want the %d arrivals %v", after, sent, want)
		}
	})
}

// TestInboxNoopAckProfileOutdated: an ACK that changes nothing (its rows
// already acknowledged) writes nothing when it has no idempotency key, so
// no write's profile check would refuse it: the kernel must answer
// PROFILE_OUTDATED to a session whose profile changed, keyless or not.
func TestInboxNoopAckProfileOutdated(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		ibMustDMs(f, f.prime(f.a), "dm", f.b.AgentID, 1)
		cr := f.prime(f.b)
		ibListAll(f, cr, hub.FilterUnread)
		if _, err := ibAck(f, cr, "first", 1); err != nil {
			t.Fatalf("InboxAck: %v", err)
		}
		if out, err := ibAck(f, cr, "", 1); err != nil || out.Acked != 0 || out.Results[0].Status != "already_acked" {
			t.Fatalf("keyless no-op InboxAck = %+v, %v; want already_acked", out, err)
		}
		if _, err := f.h.Admin().SetProfile(f.ctx, f.b.AgentID, []byte(`{"role":"reviewer","instructions_md":"Review."}`)); err != nil {
			t.Fatalf("SetProfile: %v", err)
		}
		for _, key := range []string{"", "after-change"} {
			_, err := ibAck(f, cr, key, 1)
			wantCode(t, fmt.Sprintf("no-op InboxAck (key %q) after a profile change", key), err, apperr.ProfileOutdated)
		}
		// A fresh prime observes the new profile: the same ACK is a no-op
		// again.
		cr = f.prime(f.b)
		ibListAll(f, cr, hub.FilterAll)
		if out, err := ibAck(f, cr, "", 1); err != nil || out.Acked != 0 {
			t.Errorf("keyless no-op InboxAck after priming again = %+v, %v; want already_acked", out, err)
		}
	})
}

// TestCounterBelowZero: a counter stored below zero (a miscount) is read
// as 0 and logged at error level with its key, never shown to an agent
// as a negative count.
func TestCounterBelowZero(t *testing.T) {
	// Serial: the hub logs a miscount through slog's default logger, which
	// the test swaps to read the line; parallel tests would log into it.
	forEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		pk := "agent#" + f.b.AgentID
		// Two open requests too few, and two rows acknowledged of none
		// written.
		for sk, n := range map[string]int64{"count#requests": -2, "count#acked": 2} {
			if err := f.raw.Write(f.ctx, []store.Op{store.Add(store.Key{PK: pk, SK: sk}, n, 0)}); err != nil {
				t.Fatalf("Write(%s %d): %v", sk, n, err)
			}
		}
		var buf bytes.Buffer
		prev := slog.Default()
		slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError})))
		p, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.b.BoxKey}, hub.PrimeInput{})
		slog.SetDefault(prev)
		if err != nil {
			t.Fatalf("Prime: %v", err)
		}
		if p.UnreadCount != 0 || p.OpenRequestCount != 0 {
			t.Errorf("Prime with counters at -2 = unread %d, requests %d; want 0 and 0", p.UnreadCount, p.OpenRequestCount)
		}
		if got, unread := rawOpenRequests(f, f.b.AgentID), rawUnread(f, f.b.AgentID); got != -2 || unread != -2 {
			t.Fatalf("stored counters read requests %d, unread %d; want the test's miscounts -2 and -2", got, unread)
		}
		for _, want := range []string{`"sk":"count#requests","count":-2`, `"sk":"count#acked","count":-2`} {
			if !strings.Contains(buf.String(), `"level":"ERROR","msg":"hub: counter below zero","pk":"`+pk+`",`+want) {
				t.Errorf("error log lacks the counter %s; log:\n%s", want, buf.String())
			}
		}
	})
}

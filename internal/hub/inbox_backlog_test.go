package hub_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// ibSendMany sends n DMs from a to b, 8 senders at once.
func ibSendMany(f *fixture, n int) {
	f.t.Helper()
	ibSendTo(f, n, func(int) string { return f.b.AgentID })
}

// ibSendTo sends n DMs from a, the i-th to to(i), 8 senders at once (in
// no particular order).
func ibSendTo(f *fixture, n int, to func(i int) string) {
	f.t.Helper()
	const senders = 8
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := range senders {
		cr := f.prime(f.a)
		wg.Go(func() {
			for i := s; i < n; i += senders {
				if _, err := ibDM(f, cr, fmt.Sprintf("bl-%d", i), to(i), "old"); err != nil {
					errs <- fmt.Errorf("MessageSend(backlog %d): %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		f.t.Fatal(err)
	}
}

// ibBacklog sends n DMs from a to b, lists them all in one session of b,
// and acknowledges them a page of 100 at a time, each pair of pages in
// reverse order (2, 1, 4, 3, …) so that the watermark must carry over
// spans acknowledged ahead of it.
func ibBacklog(f *fixture, n int) {
	f.t.Helper()
	ibSendMany(f, n)
	crB := f.prime(f.b)
	if rows := ibListAll(f, crB, hub.FilterUnread); len(rows) != n {
		f.t.Fatalf("listing the backlog gave %d rows, want %d", len(rows), n)
	}
	pages := (n + 99) / 100
	for p := range pages {
		q := p ^ 1 // 1, 0, 3, 2, …
		if q >= pages {
			q = p
		}
		lo := uint64(q*100 + 1)
		hi := min(lo+99, uint64(n))
		if _, err := ibAck(f, crB, fmt.Sprintf("bl-ack-%d", q), ibSeqs(lo, hi)...); err != nil {
			f.t.Fatalf("InboxAck(%d..%d): %v", lo, hi, err)
		}
	}
	if u := ibUnread(f, f.b); u != 0 {
		f.t.Fatalf("unread after acknowledging the backlog = %d, want 0", u)
	}
}

// ibInboxItems returns the inbox of f's b as stored: head, rows, ACK
// counter and sequencer.
func ibInboxItems(t *testing.T, f *fixture) []*store.Item {
	t.Helper()
	items, err := f.raw.Query(f.ctx, store.Query{PK: "agent#" + f.b.AgentID, From: "", To: ""})
	if err != nil {
		t.Fatalf("Query(inbox of the source): %v", err)
	}
	var out []*store.Item
	for _, it := range items {
		if it.SK == "inbox" || it.SK == "count#acked" || it.SK == "acks" || strings.HasPrefix(it.SK, "inbox#") {
			out = append(out, it)
		}
	}
	return out
}

// ibCopyInbox stores items of src's b (ibInboxItems) as dst's b's, one
// item per write (a plain put, not a transaction: minidyn's transactions
// slow down as its table grows, and one of 100 items takes seconds on a
// busy machine, past the adapter's attempt timeout), from a few writers at
// once.
func ibCopyInbox(t *testing.T, items []*store.Item, src, dst *fixture) {
	t.Helper()
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < len(items); i += writers {
				cp := *items[i]
				cp.PK = "agent#" + dst.b.AgentID
				cp.GSI1PK = strings.Replace(cp.GSI1PK, src.b.AgentID, dst.b.AgentID, 1)
				if err := dst.raw.Write(dst.ctx, []store.Op{store.Put(&cp, store.Unconditional)}); err != nil {
					errs <- fmt.Errorf("Write(inbox copy of %s): %w", cp.SK, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestInboxLongAckedHistory: after 10,000 acknowledged rows, a fresh
// session's first inbox_list holds the 5 unread rows, scanning only them
// (its reads do not grow with the history); once they are acknowledged too,
// a cursor-less inbox_list with wait_seconds waits for the next arrival.
// Before the watermark, the first page of such a listing was empty (with a
// next_cursor) and the wait answered at once. The history is made through
// the hub on the embedded store; minidyn takes about ten minutes for that
// many sends, so the DynamoDB adapter gets a copy of the inbox as stored.
func TestInboxLongAckedHistory(t *testing.T) {
	t.Parallel()
	const history = 10_000
	var g0 *headGets
	var rr0 *opCounter
	src := newFixture(t, boltAdapter(), withOpCounter(&rr0), withHeadGets(&g0))
	ibBacklog(src, history)
	stored := ibInboxItems(t, src)
	// The adapters one after the other: the embedded run uses src itself,
	// which the DynamoDB run copies from. The test runs alongside others.
	forEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		f, g, rr := src, g0, rr0
		if ad.Name != "bolt" {
			f = newFixture(t, ad, withOpCounter(&rr), withHeadGets(&g))
			ibCopyInbox(t, stored, src, f)
		}
		f.t = t
		crA := f.prime(f.a)
		for i := range 5 {
			if _, err := ibDM(f, crA, fmt.Sprintf("new-%d", i), f.b.AgentID, "new"); err != nil {
				t.Fatalf("MessageSend(new %d): %v", i, err)
			}
		}

		crB := f.prime(f.b) // a fresh session, as after a restart
		rr.inboxRows.Store(0)
		f.st.Reset()
		first, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Limit: 100})
		if err != nil {
			t.Fatalf("InboxList(limit 100): %v", err)
		}
		var seqs []uint64
		for _, r := range first.Rows {
			seqs = append(seqs, uint64(r.InboxSeq))
		}
		if fmt.Sprint(seqs) != fmt.Sprint(ibSeqs(history+1, history+5)) || first.NextCursor != "" || first.ResumeCursor == "" {
			t.Fatalf("first InboxList(limit 100) after %d acknowledged rows = rows %v, next %q; want rows %d..%d and a resume cursor",
				history, seqs, first.NextCursor, history+1, history+5)
		}
		if n := rr.inboxRows.Load(); n > 5 {
			t.Errorf("first InboxList read %d inbox rows, want only the 5 unread", n)
		}
		if n := f.st.Reset(); n > 4 {
			t.Errorf("first InboxList made %d store round trips, want at most 4", n)
		}
		if _, err := ibAck(f, crB, "new-ack", ibSeqs(history+1, history+5)...); err != nil {
			t.Fatalf("InboxAck(new rows): %v", err)
		}

		// Nothing unread: a fresh session's cursor-less list with a wait
		// waits until the next row arrives.
		crB = f.prime(f.b)
		got := make(chan *hub.InboxListOutput, 1)
		go func() {
			out, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Limit: 100, WaitSeconds: 20})
			if err != nil {
				t.Errorf("waiting InboxList: %v", err)
			}
			got <- out
		}()
		select {
		case <-g.seen: // it read the head and waits
		case out := <-got:
			t.Fatalf("InboxList(wait_seconds 20) with nothing unread answered without waiting: %+v", out)
		}
		if _, err := ibDM(f, crA, "wake", f.b.AgentID, "wake"); err != nil {
			t.Fatalf("MessageSend(wake): %v", err)
		}
		out := <-got
		if out == nil || len(out.Rows) != 1 || out.Rows[0].InboxSeq != history+6 {
			t.Fatalf("waiting InboxList = %+v; want row %d", out, history+6)
		}
	})
}

// boltAdapter is the embedded store whatever AGENTBOX_TEST_ADAPTERS
// says.
func boltAdapter() teststores.Adapter {
	return teststores.Adapter{Name: "bolt", OrderedWrites: true, Open: func(t testing.TB, now func() time.Time) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "agentbox.db"), bolt.Options{Now: now})
		if err != nil {
			t.Fatalf("bolt.Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}}
}

// TestInboxWaitNothingUnread: with a long acknowledged history and nothing
// unread, a cursor-less inbox_list with wait_seconds 20 answers after 20
// seconds (fake time), empty with a resume cursor. Long is past one
// listing's scan budget (1,000 rows): a listing that scanned the
// acknowledged rows would stop on an empty page with a next_cursor and
// answer at once.
func TestInboxWaitNothingUnread(t *testing.T) {
	t.Parallel()
	// The embedded store only: minidyn is served over a socket, where the
	// fake clock of a bubble cannot wait.
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, boltAdapter())
		ibBacklog(f, 1_200)
		crB := f.prime(f.b)
		start := time.Now()
		out, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Limit: 100, WaitSeconds: 20})
		if err != nil || len(out.Rows) != 0 || out.ResumeCursor == "" {
			t.Fatalf("InboxList(wait_seconds 20, nothing unread) = %+v, %v; want no rows and a resume cursor", out, err)
		}
		if d := time.Since(start); d < 20*time.Second {
			t.Errorf("InboxList(wait_seconds 20, nothing unread) answered after %v, want 20s", d)
		}
	})
}

// TestInboxWatermarkScatteredAcks: 600 rows acknowledged 6 at a time,
// first every other chunk (more gaps than the sequencer remembers spans
// for), then the rest in order; the watermark still reaches the end, so a
// fresh listing's first page holds the next rows and scans only them.
func TestInboxWatermarkScatteredAcks(t *testing.T) {
	const n, chunk = 600, 6
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		rr := &opCounter{}
		f := newFixture(t, ad, func(s store.Store) store.Store { rr.Store = s; return rr })
		crA := f.prime(f.a)
		ibSendMany(f, n)
		crB := f.prime(f.b)
		ibListAll(f, crB, hub.FilterUnread)
		var order []int
		for c := 0; c < n/chunk; c += 2 {
			order = append(order, c)
		}
		for c := 1; c < n/chunk; c += 2 {
			order = append(order, c)
		}
		for _, c := range order {
			lo := uint64(c*chunk + 1)
			if _, err := ibAck(f, crB, fmt.Sprintf("sc-%d", c), ibSeqs(lo, lo+chunk-1)...); err != nil {
				t.Fatalf("InboxAck(%d..%d): %v", lo, lo+chunk-1, err)
			}
		}
		if _, err := ibDM(f, crA, "next", f.b.AgentID, "next"); err != nil {
			t.Fatalf("MessageSend(next): %v", err)
		}
		rr.inboxRows.Store(0)
		out, err := f.h.InboxList(f.ctx, f.prime(f.b), hub.InboxListInput{Limit: 100})
		if err != nil || len(out.Rows) != 1 || out.Rows[0].InboxSeq != n+1 {
			t.Fatalf("InboxList after scattered ACKs = %+v, %v; want row %d", out, err, n+1)
		}
		if got := rr.inboxRows.Load(); got > 1 {
			t.Errorf("InboxList after scattered ACKs read %d inbox rows, want 1", got)
		}
	})
}

// TestInboxWatermarkFromOldSequencer: an ACK sequencer written before
// watermarks (no "w") gets one: each ACK carries W over at most 200 rows
// already acknowledged, so a listing scans less after every ACK until it
// reads only the unread rows again.
func TestInboxWatermarkFromOldSequencer(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		rr := &opCounter{}
		f := newFixture(t, ad, func(s store.Store) store.Store { rr.Store = s; return rr })
		crA := f.prime(f.a)
		ibBacklog(f, 300)
		k := store.Key{PK: "agent#" + f.b.AgentID, SK: "acks"}
		old, err := f.raw.Get(f.ctx, k)
		if err != nil || old == nil {
			t.Fatalf("Get(ACK sequencer) = %v, %v", old, err)
		}
		legacy := *old
		legacy.Version++
		legacy.Data = []byte(`{"i":""}`)
		if err := f.raw.Write(f.ctx, []store.Op{store.Put(&legacy, store.AtVersion(old.Version))}); err != nil {
			t.Fatalf("Write(ACK sequencer without a watermark): %v", err)
		}
		scanned := []int64{}
		for i := range 3 {
			if _, err := ibDM(f, crA, fmt.Sprintf("old-%d", i), f.b.AgentID, "new"); err != nil {
				t.Fatalf("MessageSend: %v", err)
			}
			crB := f.prime(f.b)
			rr.inboxRows.Store(0)
			out, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Limit: 100})
			if err != nil || len(out.Rows) != 1 {
				t.Fatalf("InboxList after %d ACKs = %+v, %v; want the one new row", i, out, err)
			}
			scanned = append(scanned, rr.inboxRows.Load())
			if _, err := ibAck(f, crB, fmt.Sprintf("old-ack-%d", i), uint64(out.Rows[0].InboxSeq)); err != nil {
				t.Fatalf("InboxAck: %v", err)
			}
		}
		if fmt.Sprint(scanned) != "[301 102 1]" {
			t.Errorf("rows each listing read, one ACK apart = %v, want [301 102 1]", scanned)
		}
	})
}

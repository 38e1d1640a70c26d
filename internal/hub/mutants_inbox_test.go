package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// Tests for inbox mutants that survived make mutate: the size of each
// read of an unread page, and the wait granted in whole tenths.

// inboxShownToBob is a fixture where alice sent bob n DMs and bob's
// session cr listed them all; ql records the Limit of each read of bob's
// inbox rows.
func inboxShownToBob(t *testing.T, ad teststores.Adapter, n int) (f *fixture, ql *queryLimits, cr hub.Credentials) {
	t.Helper()
	var bob string
	f = newFixture(t, ad, recordLimits(&ql, func(q store.Query) bool {
		return q.PK == "agent#"+bob && strings.HasPrefix(q.From, "inbox#")
	}))
	bob = f.b.AgentID
	return f, ql, ibShownToBob(f, n, hub.FilterAll)
}

// TestInboxUnreadReadsWhatThePageNeeds: looking for unread rows,
// inbox_list reads in chunks of what the page still needs, at least 16
// rows. Of bob's 40 rows the odd ones are acknowledged, so a page of 15
// unread rows reads rows 2..17 (8 unread), then 16 more for the 7 it
// still needs — never a chunk larger than it can use.
func TestInboxUnreadReadsWhatThePageNeeds(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f, ql, cr := inboxShownToBob(t, ad, 40)
		var odd []uint64
		for s := uint64(1); s < 40; s += 2 {
			odd = append(odd, s)
		}
		if _, err := ibAck(f, cr, "odd", odd...); err != nil {
			t.Fatalf("InboxAck(odd rows): %v", err)
		}
		ql.take()
		page, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Filter: hub.FilterUnread, Limit: 15})
		if err != nil {
			t.Fatalf("InboxList(unread, limit 15): %v", err)
		}
		got := rowSeqs(page.Rows)
		var want []uint64
		for s := uint64(2); s <= 30; s += 2 {
			want = append(want, s)
		}
		if !slices.Equal(got, want) || page.NextCursor == "" {
			t.Fatalf("InboxList(unread, limit 15) = rows %v, next cursor %t; want %v and a next cursor", got, page.NextCursor != "", want)
		}
		if limits := ql.take(); !slices.Equal(limits, []int{16, 16}) {
			t.Errorf("InboxList(unread, limit 15) read the inbox with limits %v, want [16 16] (what the page still needs, at least 16)", limits)
		}
	})
}

// TestInboxWaitGrantedInTenths: the wait granted is a whole number of
// tenths of a second, so what wait_granted_seconds says (to a tenth) is
// what the call waits: with 9.55 s left a call waits 8.5 s (9.55 less the
// 1 s margin, truncated), not 8.55. waited_seconds is truncated to a
// tenth too: a wait that a message ends after 1.25 s says 1.2. In fake
// time (testing/synctest).
func TestInboxWaitGrantedInTenths(t *testing.T) {
	ad := teststores.All()[0]
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, ad)
		crB := f.prime(f.b)
		ctx, cancel := context.WithTimeout(f.ctx, 9550*time.Millisecond)
		defer cancel()
		start := time.Now()
		out, err := f.h.InboxList(ctx, crB, hub.InboxListInput{WaitSeconds: 20})
		took := time.Since(start)
		if err != nil || out.WaitGrantedSeconds == nil || out.WaitedSeconds == nil {
			t.Fatalf("InboxList(wait 20, 9.55 s left) = %+v, %v; want the wait's figures", out, err)
		}
		if g, w := *out.WaitGrantedSeconds, *out.WaitedSeconds; g != 8.5 || w != 8.5 || took != 8500*time.Millisecond {
			t.Errorf("wait 20 with 9.55 s left: granted %g, waited %g, took %v; want 8.5, 8.5, 8.5s", g, w, took)
		}

		crA := f.prime(f.a)
		sent := make(chan error, 1)
		go func() {
			time.Sleep(1250 * time.Millisecond)
			_, err := ibDM(f, crA, "wake", f.b.AgentID, "wake up")
			sent <- err
		}()
		start = time.Now()
		out, err = f.h.InboxList(f.ctx, crB, hub.InboxListInput{WaitSeconds: 20})
		took = time.Since(start)
		if err := <-sent; err != nil {
			t.Fatalf("MessageSend: %v", err)
		}
		if err != nil || len(out.Rows) != 1 || out.WaitedSeconds == nil {
			t.Fatalf("InboxList(wait 20) with a message after 1.25 s = %+v, %v; want its row and the wait's figures", out, err)
		}
		if w := *out.WaitedSeconds; w != 1.2 || took != 1250*time.Millisecond {
			t.Errorf("wait ended by a message after 1.25 s: waited %g, took %v; want 1.2 and 1.25s", w, took)
		}
	})
}

// TestInboxPageEndsAtItsUpper: a page whose index read ends on the
// snapshot's upper reads no further, even when the read came back full:
// of bob's 20 rows 2 to 6 are acknowledged (so no watermark skips them),
// and a page of 20 unread reads 20 rows once and shows 1 and 7 to 20.
func TestInboxPageEndsAtItsUpper(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f, ql, cr := inboxShownToBob(t, ad, 20)
		if _, err := ibAck(f, cr, "two to six", ibSeqs(2, 6)...); err != nil {
			t.Fatalf("InboxAck(2..6): %v", err)
		}
		ql.take()
		page, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Filter: hub.FilterUnread, Limit: 20})
		if err != nil {
			t.Fatalf("InboxList(unread, limit 20): %v", err)
		}
		got := rowSeqs(page.Rows)
		if want := append([]uint64{1}, ibSeqs(7, 20)...); !slices.Equal(got, want) {
			t.Fatalf("InboxList(unread, limit 20) = rows %v, want %v", got, want)
		}
		if limits := ql.take(); !slices.Equal(limits, []int{20}) {
			t.Errorf("InboxList(unread, limit 20) read the inbox with limits %v, want [20] (the read reached the page's upper)", limits)
		}
	})
}

// TestInboxEmptyPageWritesNothing: a page that shows no row records no
// receipt, even when it passed over acknowledged rows: bob acknowledges
// rows 11 to 20, then 1 to 10, and an unread listing in a new session
// then writes nothing.
func TestInboxEmptyPageWritesNothing(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var wc *writeCounter
		f := newFixture(t, ad, withWriteCounter(&wc))
		cr := ibShownToBob(f, 20, hub.FilterAll)
		for _, r := range [][2]uint64{{11, 20}, {1, 10}} {
			if _, err := ibAck(f, cr, fmt.Sprintf("ack-%d", r[0]), ibSeqs(r[0], r[1])...); err != nil {
				t.Fatalf("InboxAck(%d..%d): %v", r[0], r[1], err)
			}
		}
		fresh := f.prime(f.b) // a session whose receipts cover nothing yet
		wc.items.Store(0)
		page, err := f.h.InboxList(f.ctx, fresh, hub.InboxListInput{Filter: hub.FilterUnread})
		if err != nil || len(page.Rows) != 0 {
			t.Fatalf("InboxList(unread) after acknowledging all = %+v, %v; want no rows", page, err)
		}
		if n := wc.items.Load(); n != 0 {
			t.Errorf("an empty unread page wrote %d items, want none (no row shown, no receipt)", n)
		}
	})
}

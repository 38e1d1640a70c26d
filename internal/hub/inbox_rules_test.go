package hub_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestInboxLoop is the catch-up-and-respond loop: a DM arrives, is listed
// (a receipt), and is acknowledged; counts follow.
func TestInboxLoop(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.prime(f.a), f.prime(f.b)
		sent, err := f.h.MessageSend(f.ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "m1"},
			Destination: toDM(f.b.AgentID), BodyMD: "hello"})
		if err != nil || sent.AttentionCount != 1 || sent.StreamSeq != 1 {
			t.Fatalf("MessageSend = %+v, %v; want seq 1 with one attention row", sent, err)
		}
		info := &hub.CallInfo{}
		crB.Info = info
		list, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{})
		if err != nil || len(list.Rows) != 1 || list.Rows[0].Reasons != hub.ReasonDM || list.Rows[0].Message == nil ||
			list.Rows[0].Message.BodyMD != "hello" || list.ResumeCursor == "" {
			t.Fatalf("InboxList = %+v, %v; want the DM with a resume cursor", list, err)
		}
		if info.Attention == nil || info.Attention.UnreadCount != 1 {
			t.Errorf("attention after one DM = %+v, want 1 unread", info.Attention)
		}
		// Another session has no receipt: it may not ACK.
		crB2 := f.prime(f.b)
		_, err = ibAck(f, crB2, "a0", uint64(list.Rows[0].InboxSeq))
		wantCode(t, "InboxAck without a receipt", err, apperr.InvalidArgument)
		ack, err := ibAck(f, crB, "a1", uint64(list.Rows[0].InboxSeq))
		if err != nil || ack.Acked != 1 || ack.Results[0].Status != "acked" {
			t.Fatalf("InboxAck = %+v, %v; want acked", ack, err)
		}
		p, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.b.BoxKey}, hub.PrimeInput{})
		if err != nil || p.UnreadCount != 0 {
			t.Fatalf("Prime after ACK = unread %v, %v; want 0", p.UnreadCount, err)
		}
		again, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Cursor: list.ResumeCursor})
		if err != nil || len(again.Rows) != 0 || again.ResumeCursor == "" {
			t.Fatalf("InboxList with resume = %+v, %v; want nothing new", again, err)
		}
	})
}

// TestInboxWait: a waiting inbox_list returns early when a message
// arrives — woken in process, or by its poll of the inbox head when the
// message is sent through another hub on the same table (another Lambda
// instance), and also when it has no cursor and everything is read — and
// returns empty at its limit; the bound is 0-20. Time is a synctest
// bubble's: the waits and the one-second polls take none.
func TestInboxWait(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"same hub", "other hub", "no cursor, all read"} {
		t.Run(via, func(t *testing.T) {
			forEachAdapterInBubble(t, func(t *testing.T, ad teststores.Adapter) {
				var g *headGets
				f := newFixture(t, ad, withHeadGets(&g))
				crA, crB := f.prime(f.a), f.prime(f.b)
				waitCursor := ""
				if via == "no cursor, all read" {
					// Everything there is read: a list without a cursor
					// has nothing to show and waits too.
					ibMustDMs(f, crA, "old", f.b.AgentID, 2)
					ibListAll(f, crB, hub.FilterUnread)
					if _, err := ibAck(f, crB, "old", 1, 2); err != nil {
						t.Fatalf("InboxAck: %v", err)
					}
				}
				first, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{})
				if err != nil || len(first.Rows) != 0 || first.ResumeCursor == "" {
					t.Fatalf("InboxList(nothing unread) = %+v, %v; want no rows and a resume cursor", first, err)
				}
				if via != "no cursor, all read" {
					waitCursor = first.ResumeCursor
				}
				sender := f.h
				if via == "other hub" {
					sender = hub.New(f.st, hub.Options{Now: f.clock.Now})
				}
				type result struct {
					out *hub.InboxListOutput
					err error
				}
				got := make(chan result, 1)
				go func() {
					out, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Cursor: waitCursor, WaitSeconds: 20})
					got <- result{out, err}
				}()
				select {
				case <-g.seen: // the list read the head and is waiting
				case r := <-got:
					t.Fatalf("InboxList with wait_seconds returned without waiting: %+v, %v", r.out, r.err)
				}
				sentAt := time.Now()
				sent, err := sender.MessageSend(f.ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "w"},
					Destination: toDM(f.b.AgentID), BodyMD: "wake up"})
				if err != nil {
					t.Fatalf("MessageSend: %v", err)
				}
				r := <-got
				// Woken at once in process; through another hub, by the
				// next poll of the head, a second on.
				if d, want := time.Since(sentAt), map[bool]time.Duration{false: 0, true: time.Second}[via == "other hub"]; d != want {
					t.Errorf("waiting InboxList answered %v after the send, want %v", d, want)
				}
				if r.err != nil || len(r.out.Rows) != 1 || r.out.Rows[0].Message == nil || r.out.Rows[0].Message.MessageID != sent.MessageID || r.out.ResumeCursor == "" {
					t.Fatalf("waiting InboxList = %+v, %v; want the new message and a resume cursor", r.out, r.err)
				}
				// Nothing arrives: the wait ends at its limit, empty.
				start := time.Now()
				empty, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Cursor: r.out.ResumeCursor, WaitSeconds: 1})
				if err != nil || len(empty.Rows) != 0 || empty.ResumeCursor == "" {
					t.Fatalf("InboxList waiting 1 s for nothing = %+v, %v; want no rows and a resume cursor", empty, err)
				}
				if d := time.Since(start); d != time.Second {
					t.Errorf("InboxList waiting 1 s for nothing answered after %v", d)
				}
			})
		})
	}
	t.Run("bounds", func(t *testing.T) {
		forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
			f := newFixture(t, ad)
			crB := f.prime(f.b)
			_, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{WaitSeconds: 21})
			wantCode(t, "InboxList with wait_seconds 21", err, apperr.LimitExceeded)
			_, err = f.h.InboxList(f.ctx, crB, hub.InboxListInput{WaitSeconds: -1})
			wantCode(t, "InboxList with wait_seconds -1", err, apperr.InvalidArgument)
		})
	})
}

// TestInboxRoomsLeft: rows of a room the agent has left stay listed,
// redacted (no content), and stay ACKable, so the count can reach zero; a
// re-added member's rows of its old epoch likewise, while its new epoch's
// rows show. Nothing said while it was out reaches it.
func TestInboxRoomsLeft(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.roomOfAliceAndBob()
		crA, crB := f.prime(f.a), f.prime(f.b)
		send := func(key string, mentions ...string) {
			t.Helper()
			if _, err := ibSend(f, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: key},
				Destination: toRoom(room.RoomID), BodyMD: "secret " + key, Mentions: mentions}); err != nil {
				t.Fatalf("MessageSend(%s): %v", key, err)
			}
		}
		mention := func(key string) { t.Helper(); send(key, f.b.AgentID) }
		mention("e1-1")
		mention("e1-2")
		rows := ibListAll(f, crB, hub.FilterUnread)
		if len(rows) != 2 || rows[0].Message == nil || rows[0].Redacted {
			t.Fatalf("rows while a member = %+v; want 2 with their messages", rows)
		}
		f.mustRemove(room.RoomID, f.b)
		send("gap") // b is out: no row
		left := ibListAll(f, crB, hub.FilterAll)
		if len(left) != 2 {
			t.Fatalf("rows after leaving = %d, want the 2 delivered rows", len(left))
		}
		for _, r := range left {
			if !r.Redacted || r.Message != nil || r.MessageID == "" {
				t.Errorf("row %d after leaving = %+v; want redacted with its message id and no content", r.InboxSeq, r)
			}
			b, _ := json.Marshal(r)
			if strings.Contains(string(b), "secret") {
				t.Errorf("row %d after leaving shows content: %s", r.InboxSeq, b)
			}
		}
		ack, err := ibAck(f, crB, "left", uint64(left[0].InboxSeq))
		if err != nil || ack.Acked != 1 {
			t.Fatalf("InboxAck of a left room's row = %+v, %v; want acked", ack, err)
		}
		// Re-added: the old epoch's row stays redacted and ACKable; the
		// new epoch's rows show.
		f.mustAdd(room.RoomID, f.b)
		mention("e2-1")
		rows = ibListAll(f, crB, hub.FilterUnread)
		if len(rows) != 2 || !rows[0].Redacted || rows[0].Message != nil || rows[1].Redacted || rows[1].Message == nil ||
			rows[1].Message.BodyMD != "secret e2-1" {
			t.Fatalf("rows after re-adding = %+v; want the old epoch's row redacted, then the new one", rows)
		}
		if _, err := ibAck(f, crB, "readded", uint64(rows[0].InboxSeq), uint64(rows[1].InboxSeq)); err != nil {
			t.Fatalf("InboxAck across epochs: %v", err)
		}
		if total, unread := ibRecount(f, f.b.AgentID); total != 3 || unread != 0 || ibUnread(f, f.b) != 0 {
			t.Errorf("after acknowledging everything: %d rows, %d unread, prime says %d; want 3, 0, 0", total, unread, ibUnread(f, f.b))
		}
	})
}

// TestInboxAuthorization: every agent sees only its own inbox — another
// agent's rows, seqs and cursors are not reachable, within the box or from
// another box.
func TestInboxAuthorization(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB, crM := f.prime(f.a), f.prime(f.b), f.prime(f.other)
		ibMustDMs(f, crA, "to-b", f.b.AgentID, 3)
		for _, who := range []struct {
			name string
			cr   hub.Credentials
		}{{"the sender", crA}, {"an agent of another box", crM}} {
			out, err := f.h.InboxList(f.ctx, who.cr, hub.InboxListInput{Filter: hub.FilterAll})
			if err != nil || len(out.Rows) != 0 {
				t.Errorf("InboxList by %s = %+v, %v; want an empty inbox of its own", who.name, out, err)
			}
			_, err = ibAck(f, who.cr, "steal", 1)
			wantCode(t, "InboxAck of b's row by "+who.name, err, apperr.NotFoundOrForbidden)
		}
		if got := ibUnread(f, f.b); got != 3 {
			t.Errorf("b's unread after others' attempts = %d, want 3", got)
		}
		if rows := ibListAll(f, crB, hub.FilterUnread); len(rows) != 3 {
			t.Errorf("b's rows = %d, want 3", len(rows))
		}
	})
}

// TestInboxAckRejectsWholeBatch: one invalid member rejects the batch and
// nothing is written — no row acknowledged, no count moved, no
// idempotency record (the same key then works for a valid batch).
func TestInboxAckRejectsWholeBatch(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.prime(f.a), f.prime(f.b)
		ibMustDMs(f, crA, "to-b", f.b.AgentID, 5)
		ibMustDMs(f, crB, "to-a", f.a.AgentID, 9) // a has rows 1..9; b only 1..5
		first, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Limit: 3})
		if err != nil || len(first.Rows) != 3 {
			t.Fatalf("InboxList(limit 3) = %+v, %v; want rows 1..3", first, err)
		}
		over := ibSeqs(1, 101)
		for _, tc := range []struct {
			name string
			seqs []uint64
			want apperr.Code
		}{
			{"a row never returned to this session", []uint64{1, 2, 4}, apperr.InvalidArgument},
			{"another agent's row (seqs are per agent)", []uint64{1, 8}, apperr.NotFoundOrForbidden},
			{"an unknown seq", []uint64{2, 99}, apperr.NotFoundOrForbidden},
			{"seq 0", []uint64{0, 1}, apperr.NotFoundOrForbidden},
			{"101 seqs", over, apperr.LimitExceeded},
			{"a duplicate in one batch", []uint64{1, 3, 1}, apperr.InvalidArgument},
			{"none", nil, apperr.InvalidArgument},
		} {
			_, err := ibAck(f, crB, "k", tc.seqs...)
			wantCode(t, "InboxAck with "+tc.name, err, tc.want)
			for _, r := range ibStoredRows(f, f.b.AgentID) {
				if r.AckedBy != "" {
					t.Fatalf("after InboxAck with %s: row %d acknowledged, want nothing written", tc.name, r.Seq)
				}
			}
			if got := ibUnread(f, f.b); got != 5 {
				t.Fatalf("after InboxAck with %s: unread = %d, want 5", tc.name, got)
			}
		}
		// Nothing was remembered under the key either.
		out, err := ibAck(f, crB, "k", 1, 2, 3)
		if err != nil || out.Replayed || out.Acked != 3 {
			t.Fatalf("InboxAck(1,2,3) with the rejected batches' key = %+v, %v; want a fresh ACK of 3", out, err)
		}
		if got := ibUnread(f, f.b); got != 2 {
			t.Errorf("unread after acknowledging 3 of 5 = %d, want 2", got)
		}
		// A replay answers the original receipt; another payload under
		// the key is a conflict.
		again, err := ibAck(f, crB, "k", 3, 2, 1)
		if err != nil || !again.Replayed || again.Acked != 3 {
			t.Errorf("replay = %+v, %v; want the original receipt", again, err)
		}
		_, err = ibAck(f, crB, "k", 1)
		wantCode(t, "InboxAck with a reused key", err, apperr.IdempotencyConflict)
		// mallory of another box has no rows of b's.
		crM := f.prime(f.other)
		_, err = ibAck(f, crM, "m", 4)
		wantCode(t, "InboxAck of another box's agent", err, apperr.NotFoundOrForbidden)
	})
}

// TestInboxCursorBinding: a cursor is bound to its agent and its filter;
// any other use, or a tampered cursor, is CURSOR_INVALID.
func TestInboxCursorBinding(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.prime(f.a), f.prime(f.b)
		ibMustDMs(f, crA, "to-b", f.b.AgentID, 3)
		ibMustDMs(f, crB, "to-a", f.a.AgentID, 3)
		page, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Limit: 1})
		if err != nil || page.NextCursor == "" {
			t.Fatalf("InboxList(limit 1) = %+v, %v; want a next cursor", page, err)
		}
		all, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Filter: hub.FilterAll, Limit: 1})
		if err != nil || all.NextCursor == "" {
			t.Fatalf("InboxList(all, limit 1) = %+v, %v; want a next cursor", all, err)
		}
		tampered := []byte(page.NextCursor)
		tampered[len(tampered)/2] ^= 1
		for _, tc := range []struct {
			name   string
			cr     hub.Credentials
			filter string
			cursor string
		}{
			{"another agent's cursor", crA, hub.FilterUnread, page.NextCursor},
			{"the unread filter's cursor with all", crB, hub.FilterAll, page.NextCursor},
			{"the all filter's cursor with unread", crB, hub.FilterUnread, all.NextCursor},
			{"a tampered cursor", crB, hub.FilterUnread, string(tampered)},
			{"a conversation's shape", crB, hub.FilterUnread, "bm90IGEgY3Vyc29y"},
		} {
			_, err := f.h.InboxList(f.ctx, tc.cr, hub.InboxListInput{Filter: tc.filter, Cursor: tc.cursor})
			wantCode(t, "InboxList with "+tc.name, err, apperr.CursorInvalid)
		}
		// The cursor still works for its owner and filter.
		next, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{Cursor: page.NextCursor})
		if err != nil || len(next.Rows) != 2 || next.Rows[0].InboxSeq != 2 {
			t.Fatalf("InboxList with its own cursor = %+v, %v; want rows 2 and 3", next, err)
		}
	})
}

// TestAttentionWithAuthentication: the attention summary is read in the
// batch that authenticates, so a read tool costs the same single round
// trip with it, and it is exact.
func TestAttentionWithAuthentication(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.prime(f.a), f.prime(f.b)
		ibMustDMs(f, crA, "to-b", f.b.AgentID, 2)
		// Prime the session's touch, so the counted call does no
		// bookkeeping write.
		if _, err := f.h.CheckpointGet(f.ctx, crB, hub.CheckpointGetInput{}); err != nil {
			t.Fatalf("CheckpointGet: %v", err)
		}
		info := &hub.CallInfo{}
		crB.Info = info
		f.st.Reset()
		if _, err := f.h.CheckpointGet(f.ctx, crB, hub.CheckpointGetInput{}); err != nil {
			t.Fatalf("CheckpointGet: %v", err)
		}
		if n := f.st.Reset(); n != 1 {
			t.Errorf("CheckpointGet with the attention summary took %d store round trips, want 1", n)
		}
		if info.Attention == nil || info.Attention.UnreadCount != 2 || info.Attention.OpenRequestCount != 0 {
			t.Errorf("attention = %+v, want 2 unread and no requests", info.Attention)
		}
	})
}

// TestInboxRowSize: an unread row without its message body is at most 625
// bytes of JSON: a DM, and a room post mentioning the reader. The bound
// was 600 before every message carried author_kind (issue 26), which adds
// at most 25 bytes ("author_kind":"operator",). Fields a
// message may add beyond these are logged, not bounded: a reply adds
// reply_to and thread_root_id (~100 bytes), each mention or request an
// agent id (39 bytes), a longer author name its length.
func TestInboxRowSize(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.mustRoom("ops", "")
		writer := f.mustAgent(f.box, "release-manager1")
		f.mustAdd(room.RoomID, writer)
		mb := f.mustAdd(room.RoomID, f.b)
		crW, crB := f.prime(writer), f.prime(f.b)
		if _, err := follow(f, crB, "f", room.RoomID, mb.FollowRevision, hub.FollowAll); err != nil {
			t.Fatalf("RoomFollow: %v", err)
		}
		if _, err := ibDM(f, crW, "dm", f.b.AgentID, strings.Repeat("b", 16000)); err != nil {
			t.Fatalf("MessageSend(dm): %v", err)
		}
		root, err := ibPost(f, crB, "root", room.RoomID, "root")
		if err != nil {
			t.Fatalf("MessageSend(root): %v", err)
		}
		for _, in := range []hub.MessageSendInput{
			{Mutation: hub.Mutation{IdempotencyKey: "mention"}, Mentions: []string{f.b.AgentID}},
			{Mutation: hub.Mutation{IdempotencyKey: "reply"}, Mentions: []string{f.b.AgentID}, Requests: []string{f.b.AgentID},
				ReplyTo: root.MessageID},
		} {
			in.Destination, in.BodyMD = toRoom(room.RoomID), strings.Repeat("b", 16000)
			if _, err := ibSend(f, crW, in); err != nil {
				t.Fatalf("MessageSend(%s): %v", in.IdempotencyKey, err)
			}
		}
		rows := ibListAll(f, crB, hub.FilterUnread)
		if len(rows) != 3 || rows[0].Message == nil || rows[1].Message == nil || rows[2].Message == nil ||
			rows[2].Reasons != hub.ReasonFollowAll|hub.ReasonMention|hub.ReasonReply|hub.ReasonRequest {
			t.Fatalf("rows = %+v; want the DM, the mention and the reply with four reasons", rows)
		}
		for _, r := range rows {
			r.Message.BodyMD = ""
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("json.Marshal(row): %v", err)
			}
			if len(b) > 625 {
				t.Errorf("an unread row without its body is %d bytes of JSON, want at most 625: %s", len(b), b)
			}
			t.Logf("row %d (reasons %v) without body: %d bytes", r.InboxSeq, r.ReasonNames, len(b))
		}
	})
}

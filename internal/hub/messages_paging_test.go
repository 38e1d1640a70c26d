package hub_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestConversationPaging walks a conversation page by page: a byte budget
// that fits one message per page never skips one, next_cursor continues
// after the last message returned, resume_cursor at the snapshot's upper
// bound returns only newer messages, and a cursor works only for the agent,
// conversation and epoch it was issued for.
func TestConversationPaging(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room, other := f.roomOf("paging", f.a, f.b), f.roomOf("other", f.a, f.b)
		crA, crB := f.prime(f.a), f.prime(f.b)
		dest := toRoom(room.RoomID)
		body := strings.Repeat("m", 700) // two never fit in 1 KiB
		sent := 0
		post := func(n int) {
			for range n {
				sent++
				f.mustSend(crA, fmt.Sprintf("p%d", sent), hub.MessageSendInput{Destination: dest, BodyMD: body})
			}
		}
		post(5)

		// walk reads from cur until a resume cursor, and returns the
		// sequences read, page by page.
		walk := func(cr hub.Credentials, cur string, limit, maxBytes int) (pages [][]uint64, resume string) {
			t.Helper()
			for range 50 {
				page, err := f.read(cr, dest, cur, limit, maxBytes)
				if err != nil {
					t.Fatalf("ConversationRead: %v", err)
				}
				if (page.NextCursor == "") == (page.ResumeCursor == "") {
					t.Fatalf("page %v: next %q resume %q, want exactly one", seqs(page.Messages), page.NextCursor, page.ResumeCursor)
				}
				pages = append(pages, seqs(page.Messages))
				if page.ResumeCursor != "" {
					return pages, page.ResumeCursor
				}
				cur = page.NextCursor
			}
			t.Fatalf("no resume cursor after 50 pages")
			return nil, ""
		}
		flat := func(pages [][]uint64) []uint64 { return slices.Concat(pages...) }

		pages, resume := walk(crB, "", 0, hub.MinPageBytes)
		if want := [][]uint64{{1}, {2}, {3}, {4}, {5}}; !slices.EqualFunc(pages, want, slices.Equal) {
			t.Fatalf("pages under a 1 KiB budget = %v, want one message each, none skipped: %v", pages, want)
		}
		pages, _ = walk(crB, "", 2, 0)
		if want := [][]uint64{{1, 2}, {3, 4}, {5}}; !slices.EqualFunc(pages, want, slices.Equal) {
			t.Fatalf("pages of 2 = %v, want %v", pages, want)
		}

		// The first page fixes the upper bound: a message sent while
		// paging waits for the resume cursor.
		first, err := f.read(crB, dest, "", 2, 0)
		if err != nil {
			t.Fatalf("ConversationRead: %v", err)
		}
		post(1) // 6
		pages, resume2 := walk(crB, first.NextCursor, 2, 0)
		if got := flat(pages); !slices.Equal(got, []uint64{3, 4, 5}) {
			t.Fatalf("rest of the snapshot = %v, want [3 4 5] (6 came after the upper bound)", got)
		}
		pages, _ = walk(crB, resume2, 0, 0)
		if got := flat(pages); !slices.Equal(got, []uint64{6}) {
			t.Fatalf("from the resume cursor = %v, want [6]", got)
		}
		post(2) // 7, 8
		pages, resume = walk(crB, resume, 0, 0)
		if got := flat(pages); !slices.Equal(got, []uint64{6, 7, 8}) {
			t.Fatalf("from the first resume cursor = %v, want [6 7 8]", got)
		}
		empty, err := f.read(crB, dest, resume, 0, 0)
		if err != nil || len(empty.Messages) != 0 || empty.ResumeCursor == "" || empty.NextCursor != "" {
			t.Fatalf("resume with nothing new = %+v, %v; want no messages and a resume cursor", empty, err)
		}

		// Cursors are bound to agent, conversation and epoch.
		_, err = f.read(crA, dest, resume, 0, 0)
		wantCode(t, "another agent's cursor", err, apperr.CursorInvalid)
		_, err = f.read(crB, toRoom(other.RoomID), resume, 0, 0)
		wantCode(t, "another room's cursor", err, apperr.CursorInvalid)
		_, err = f.read(crB, toDM(f.a.AgentID), resume, 0, 0)
		wantCode(t, "a room cursor on a DM", err, apperr.CursorInvalid)
		_, err = f.read(crB, dest, resume[:len(resume)-2]+"xx", 0, 0)
		wantCode(t, "a tampered cursor", err, apperr.CursorInvalid)
		f.mustRemove(room.RoomID, f.b)
		f.mustAdd(room.RoomID, f.b)
		_, err = f.read(crB, dest, resume, 0, 0)
		wantCode(t, "a cursor of an earlier epoch", err, apperr.CursorInvalid)

		for _, tc := range []struct {
			limit, maxBytes int
		}{{0, hub.MinPageBytes - 1}, {0, hub.MaxPageBytes + 1}, {hub.MaxConversationPage + 1, 0}, {-1, 0}} {
			if _, err := f.read(crB, dest, "", tc.limit, tc.maxBytes); err == nil {
				t.Errorf("ConversationRead(limit %d, max_bytes %d): success, want refused", tc.limit, tc.maxBytes)
			}
		}
	})
}

// TestMessageGetReceipt checks that message_get reports the caller's inbox
// row and conversation_read and message_get never ACK (the row stays
// unacked).
func TestMessageGetReceipt(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		crA, crB := f.prime(f.a), f.prime(f.b)
		sent := f.mustSend(crA, "dm", hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "hello", Mentions: []string{f.b.AgentID}})
		got, err := f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: sent.MessageID})
		if err != nil {
			t.Fatalf("MessageGet: %v", err)
		}
		m := got.Message
		if m.MessageID != sent.MessageID || m.BodyMD != "hello" || m.AuthorAgentID != f.a.AgentID || m.AuthorName != "alice" ||
			m.Destination.Kind != hub.KindDM || m.Destination.RecipientAgentID != f.b.AgentID || m.ThreadRootID != sent.MessageID ||
			m.StreamSeq != 1 || m.SentAt != sent.SentAt {
			t.Fatalf("MessageGet = %+v, want the message as sent", m)
		}
		if got.InboxSeq == nil || *got.InboxSeq != 1 {
			t.Fatalf("MessageGet by the recipient: inbox_seq %v, want 1", got.InboxSeq)
		}
		own, err := f.h.MessageGet(f.ctx, crA, hub.MessageGetInput{MessageID: sent.MessageID})
		if err != nil || own.InboxSeq != nil {
			t.Fatalf("MessageGet by the author = %+v, %v; want the message without an inbox row", own, err)
		}
		if _, err := f.read(crB, toDM(f.a.AgentID), "", 0, 0); err != nil {
			t.Fatalf("ConversationRead: %v", err)
		}
		rows := f.attention(f.b.AgentID)
		if len(rows) != 1 || rows[0].Reasons != hub.ReasonDM|hub.ReasonMention {
			t.Fatalf("bob's inbox = %+v, want one row with reasons 5", rows)
		}
		if rows[0].AckedBy != "" {
			t.Fatalf("reading acked the row (%+v): a receipt is not an ACK", rows[0])
		}
	})
}

package hub_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestMessageSendTargetsKeepTheRest: a message with mentions, requests
// (given in upper case) and a reply_to keeps its payload, and its targets
// are stored in canonical lower case; only messages carrying requests
// enter the box's requests index.
func TestMessageSendTargetsKeepTheRest(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room, crA := f.roomOfAliceAndBob(), f.prime(f.a)
		first := f.mustSend(crA, "plain", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "plain"})
		payload := hub.Object(`{"task":"review"}`)
		upper := strings.ToUpper(f.b.AgentID)
		sent := f.mustSend(crA, "targets", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "please",
			Payload: payload, Mentions: []string{upper}, Requests: []string{upper}, ReplyTo: strings.ToUpper(first.MessageID)})
		got, err := f.h.MessageGet(f.ctx, crA, hub.MessageGetInput{MessageID: sent.MessageID})
		if err != nil {
			t.Fatalf("MessageGet: %v", err)
		}
		m := got.Message
		if string(m.Payload) != string(payload) || m.ReplyTo != first.MessageID ||
			len(m.Mentions) != 1 || m.Mentions[0] != f.b.AgentID || len(m.Requests) != 1 || m.Requests[0] != f.b.AgentID {
			t.Errorf("message = payload %s, reply_to %q, mentions %v, requests %v; want %s, %q and bob in lower case",
				m.Payload, m.ReplyTo, m.Mentions, m.Requests, payload, first.MessageID)
		}
		index, err := f.raw.Query(f.ctx, store.Query{Index: store.GSI1, PK: "box#" + f.box + "#requests"})
		if err != nil {
			t.Fatalf("Query(requests index): %v", err)
		}
		if len(index) != 1 || index[0].PK != "msg#"+sent.MessageID {
			keys := make([]string, len(index))
			for i, it := range index {
				keys[i] = it.PK
			}
			t.Errorf("requests index holds %v, want only msg#%s", keys, sent.MessageID)
		}
	})
}

// roomOfAliceAndBob creates room "ops" with alice and bob as members.
func (f *fixture) roomOfAliceAndBob() *hub.RoomInfo {
	f.t.Helper()
	return f.roomOf("ops", f.a, f.b)
}

// TestFanoutWrites: a post to 89 other members, too many for the message's
// own write, writes its recipient list once (fanout.go) and continues as
// an intent of two steps of at most 45 recipients: four writes in all, and
// one row for each recipient.
func TestFanoutWrites(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var oc *opCounter
		f := newFixture(t, ad, withOpCounter(&oc))
		room, seeded := f.bigRoom("fan", 88)
		cr := f.prime(f.a)
		oc.writes.Store(0)
		sent := f.mustSend(cr, "post", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "all hands"})
		if n := oc.writes.Load(); n != 4 {
			t.Errorf("a post to 89 members made %d writes, want 4 (the recipient list, the message, two steps of 45 and 44)", n)
		}
		f.wantOneRowEach(append([]string{f.b.AgentID}, seeded...), sent.MessageID, hub.ReasonFollowAll)
	})
}

// TestConversationReadBounds: a page holds the next message when it fits
// the byte budget exactly and not one byte less (a message's size is its
// stored item); a read at the snapshot's end queries nothing; thread_read
// flags truncation only past 200 messages.
func TestConversationReadBounds(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var oc *opCounter
		f := newFixture(t, ad, withOpCounter(&oc))
		room, crA := f.roomOfAliceAndBob(), f.prime(f.a)
		dest := toRoom(room.RoomID)
		root := f.mustSend(crA, "root", hub.MessageSendInput{Destination: dest, BodyMD: strings.Repeat("r", 600)})
		f.mustSend(crA, "second", hub.MessageSendInput{Destination: dest, BodyMD: strings.Repeat("s", 600)})
		items, err := f.raw.Query(f.ctx, store.Query{PK: "room#" + room.RoomID, From: "msg#", To: store.PrefixEnd("msg#")})
		if err != nil || len(items) != 2 {
			t.Fatalf("Query(messages) = %d items, %v; want 2", len(items), err)
		}
		size := len(items[0].Data) + len(items[1].Data)
		for _, tc := range []struct{ budget, msgs int }{{size, 2}, {size - 1, 1}} {
			page, err := f.read(crA, dest, "", 0, tc.budget)
			if err != nil {
				t.Fatalf("ConversationRead(max_bytes %d): %v", tc.budget, err)
			}
			if len(page.Messages) != tc.msgs {
				t.Errorf("ConversationRead(max_bytes %d, both messages %d bytes) = %d messages, want %d", tc.budget, size, len(page.Messages), tc.msgs)
			}
		}
		page, err := f.read(crA, dest, "", 0, 0)
		if err != nil || page.ResumeCursor == "" {
			t.Fatalf("ConversationRead: %v, or no resume cursor", err)
		}
		oc.n.Store(0)
		if again, err := f.read(crA, dest, page.ResumeCursor, 0, 0); err != nil || len(again.Messages) != 0 {
			t.Fatalf("ConversationRead(resume, nothing new): %v, or messages; want none", err)
		}
		if n := oc.n.Load(); n != 0 {
			t.Errorf("ConversationRead at the snapshot's end ran %d queries, want 0", n)
		}

		for i := range hub.MaxThreadMessages - 1 {
			f.mustSend(crA, fmt.Sprintf("reply-%d", i), hub.MessageSendInput{Destination: dest, BodyMD: "re", ReplyTo: root.MessageID})
		}
		for _, tc := range []struct {
			replies   int
			truncated bool
		}{{hub.MaxThreadMessages - 1, false}, {hub.MaxThreadMessages, true}} {
			if tc.truncated {
				f.mustSend(crA, "one more", hub.MessageSendInput{Destination: dest, BodyMD: "re", ReplyTo: root.MessageID})
			}
			th, err := f.h.ThreadRead(f.ctx, crA, hub.ThreadReadInput{MessageID: root.MessageID})
			if err != nil || len(th.Entries) != hub.MaxThreadMessages || th.Truncated != tc.truncated {
				t.Errorf("ThreadRead of a root with %d replies = %d entries, truncated %t, %v; want %d, %t",
					tc.replies, len(th.Entries), th.Truncated, err, hub.MaxThreadMessages, tc.truncated)
			}
		}
	})
}

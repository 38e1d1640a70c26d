package hub_test

import (
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
	room := f.mustRoom("ops", "")
	f.mustAdd(room.RoomID, f.a)
	f.mustAdd(room.RoomID, f.b)
	return room
}

// TestFanoutWrites: a post to 89 other members, too many for the message's
// own write, continues as an intent of two steps of at most 45 recipients:
// three writes in all, and one row for each recipient.
func TestFanoutWrites(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var oc *opCounter
		f := newFixture(t, ad, withOpCounter(&oc))
		room, seeded := f.bigRoom("fan", 88)
		cr := f.prime(f.a)
		oc.writes.Store(0)
		sent := f.mustSend(cr, "post", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "all hands"})
		if n := oc.writes.Load(); n != 3 {
			t.Errorf("a post to 89 members made %d writes, want 3 (the message, two steps of 45 and 44)", n)
		}
		f.wantOneRowEach(append([]string{f.b.AgentID}, seeded...), sent.MessageID, hub.ReasonFollowAll)
	})
}

package hub_test

import (
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestAttentionMatrix sends every kind of message to bob under every
// follow preference and checks the reasons of his row against seed 000's
// table: all ⊇ mentions ⊇ replies, mute suppresses everything (requests
// included), DMs ignore room preferences, the author never gets a row.
func TestAttentionMatrix(t *testing.T) {
	const (
		dm, all, mention, reply, request = hub.ReasonDM, hub.ReasonFollowAll, hub.ReasonMention, hub.ReasonReply, hub.ReasonRequest
	)
	events := []string{"Post", "Mention", "ReplyToOwn", "Request", "ReplyAndMention", "DM", "DMMention", "DMRequest", "DMReplyToOwn"}
	want := map[string][]int{ // per preference, in events' order; 0 = no row
		hub.FollowAll:      {all, all | mention, all | reply, all | mention | request, all | mention | reply, dm, dm | mention, dm | request, dm | reply},
		hub.FollowMentions: {0, mention, reply, mention | request, mention | reply, dm, dm | mention, dm | request, dm | reply},
		hub.FollowReplies:  {0, 0, reply, request, reply, dm, dm | mention, dm | request, dm | reply},
		hub.FollowMute:     {0, 0, 0, 0, 0, dm, dm | mention, dm | request, dm | reply},
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.roomOf("matrix", f.a)
		memB := f.mustAdd(room.RoomID, f.b)
		crA, crB := f.prime(f.a), f.prime(f.b)
		rev := memB.FollowRevision
		bob := f.b.AgentID
		n := 0
		key := func() string { n++; return fmt.Sprintf("m%d", n) }

		// Bob's own messages, for alice to reply to.
		bobsRoomMsg := f.mustSend(crB, key(), hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "bob's post"})
		bobsDM := f.mustSend(crB, key(), hub.MessageSendInput{Destination: toDM(f.a.AgentID), BodyMD: "bob's DM"})

		inRoom := func(in hub.MessageSendInput) hub.MessageSendInput {
			in.Destination, in.BodyMD = toRoom(room.RoomID), "hello @bob" // textual @Name has no effect
			return in
		}
		inDM := func(in hub.MessageSendInput) hub.MessageSendInput {
			in.Destination, in.BodyMD = toDM(bob), "hello"
			return in
		}
		inputs := map[string]hub.MessageSendInput{
			"Post":            inRoom(hub.MessageSendInput{}),
			"Mention":         inRoom(hub.MessageSendInput{Mentions: []string{bob}}),
			"ReplyToOwn":      inRoom(hub.MessageSendInput{ReplyTo: bobsRoomMsg.MessageID}),
			"Request":         inRoom(hub.MessageSendInput{Mentions: []string{bob}, Requests: []string{bob}}),
			"ReplyAndMention": inRoom(hub.MessageSendInput{Mentions: []string{bob}, ReplyTo: bobsRoomMsg.MessageID}),
			"DM":              inDM(hub.MessageSendInput{}),
			"DMMention":       inDM(hub.MessageSendInput{Mentions: []string{bob}}),
			"DMRequest":       inDM(hub.MessageSendInput{Requests: []string{bob}}),
			"DMReplyToOwn":    inDM(hub.MessageSendInput{ReplyTo: bobsDM.MessageID}),
		}
		for _, pref := range []string{hub.FollowAll, hub.FollowMentions, hub.FollowReplies, hub.FollowMute} {
			t.Run(pref, func(t *testing.T) {
				fo, err := follow(f, crB, key(), room.RoomID, rev, pref)
				if err != nil {
					t.Fatalf("RoomFollow(%s): %v", pref, err)
				}
				rev = fo.Membership.FollowRevision
				for i, ev := range events {
					out := f.mustSend(crA, key(), inputs[ev])
					got, rows := f.reasonsFor(bob, out.MessageID)
					wantRows := 0
					if want[pref][i] != 0 {
						wantRows = 1
					}
					if rows != wantRows || got != want[pref][i] {
						t.Errorf("%s under %s: %d rows with reasons %d, want %d rows with reasons %d",
							ev, pref, rows, got, wantRows, want[pref][i])
					}
					if out.AttentionCount != wantRows {
						t.Errorf("%s under %s: attention_count %d, want %d", ev, pref, out.AttentionCount, wantRows)
					}
					if wantReq := len(inputs[ev].Requests); out.RequestCount != wantReq {
						t.Errorf("%s: request_count %d, want %d", ev, out.RequestCount, wantReq)
					}
				}
			})
		}
		// The author never gets a row: alice's inbox holds only bob's
		// two messages.
		rows := f.attention(f.a.AgentID)
		if len(rows) != 1 || rows[0].MessageID != bobsDM.MessageID || rows[0].Reasons != dm {
			t.Errorf("alice's inbox = %+v; want only bob's DM (reasons 1): an author gets no row for its own messages", rows)
		}
	})
}

// TestFollowChangesAreProspective checks that a preference change applies
// to messages sent after it, and never rewrites or adds rows for earlier
// ones.
func TestFollowChangesAreProspective(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.roomOf("prospective", f.a)
		memB := f.mustAdd(room.RoomID, f.b)
		crA, crB := f.prime(f.a), f.prime(f.b)
		post := func(key string) string {
			return f.mustSend(crA, key, hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: key}).MessageID
		}
		fo, err := follow(f, crB, "f1", room.RoomID, memB.FollowRevision, hub.FollowMute)
		if err != nil {
			t.Fatalf("RoomFollow(mute): %v", err)
		}
		muted := post("p1")
		if _, err := follow(f, crB, "f2", room.RoomID, fo.Membership.FollowRevision, hub.FollowAll); err != nil {
			t.Fatalf("RoomFollow(all): %v", err)
		}
		followed := post("p2")
		if _, err := follow(f, crB, "f3", room.RoomID, fo.Membership.FollowRevision+1, hub.FollowMute); err != nil {
			t.Fatalf("RoomFollow(mute again): %v", err)
		}
		post("p3")
		rows := f.attention(f.b.AgentID)
		if len(rows) != 1 || rows[0].MessageID != followed || rows[0].Reasons != hub.ReasonFollowAll {
			t.Fatalf("bob's inbox = %+v; want exactly one row, for the post sent while following all (not %s, sent while muted)", rows, muted)
		}
	})
}

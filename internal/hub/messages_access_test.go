package hub_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/google/uuid"
)

// TestMessageAuthorization checks that every caller who may not see a
// room's message — a non-member of the box, a removed member, an agent of
// another box — gets, from each of the four tools, exactly the bytes an
// unknown id gets, and none of the ids.
func TestMessageAuthorization(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		outsider := f.mustAgent(f.box, "outsider")
		removed := f.mustAgent(f.box, "removed")
		room := f.roomOf("secret", f.a, removed)
		crA := f.prime(f.a)
		msg := f.mustSend(crA, "m1", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "for members"})
		f.mustRemove(room.RoomID, removed)
		unknownRoom, unknownMsg := uuid.NewString(), uuid.NewString()

		type tool struct {
			name string
			call func(cr hub.Credentials, room, msg string) error
		}
		tools := []tool{
			{"message_get", func(cr hub.Credentials, _, msg string) error {
				_, err := f.h.MessageGet(f.ctx, cr, hub.MessageGetInput{MessageID: msg})
				return err
			}},
			{"thread_read", func(cr hub.Credentials, _, msg string) error {
				_, err := f.h.ThreadRead(f.ctx, cr, hub.ThreadReadInput{MessageID: msg})
				return err
			}},
			{"conversation_read", func(cr hub.Credentials, room, _ string) error {
				_, err := f.read(cr, toRoom(room), "", 0, 0)
				return err
			}},
			{"message_send", func(cr hub.Credentials, room, _ string) error {
				_, err := send(f, cr, uuid.NewString(), hub.MessageSendInput{Destination: toRoom(room), BodyMD: "hi"})
				return err
			}},
			{"message_send reply", func(cr hub.Credentials, room, msg string) error {
				// A reply in a room of one's own to the hidden message.
				_, err := send(f, cr, uuid.NewString(), hub.MessageSendInput{Destination: toRoom(room), BodyMD: "hi", ReplyTo: msg})
				return err
			}},
		}
		callers := []struct {
			name string
			ag   *hub.AgentInfo
		}{{"NonMember", outsider}, {"RemovedMember", removed}, {"OtherBox", f.other}}
		for _, tl := range tools {
			t.Run(tl.name, func(t *testing.T) {
				for _, c := range callers {
					cr := f.prime(c.ag)
					rm := room.RoomID
					if tl.name == "message_send reply" {
						own := f.mustRoom("own-"+c.name, "")
						if c.ag == f.other {
							own, _ = f.h.Admin().CreateRoom(f.ctx, c.ag.BoxID, "own", "")
						}
						f.mustAdd(own.RoomID, c.ag)
						rm = own.RoomID
					}
					ref := envelope(t, wantCode(t, tl.name+" of unknown ids", tl.call(cr, unknownRoom, unknownMsg), apperr.NotFoundOrForbidden))
					if tl.name == "message_send reply" {
						ref = envelope(t, tl.call(cr, rm, unknownMsg))
					}
					wantSameError(t, tl.name+" by "+c.name, tl.call(cr, rm, msg.MessageID), ref, room.RoomID, msg.MessageID, room.Name)
				}
			})
		}

		// A member still sees it all.
		if _, err := f.h.MessageGet(f.ctx, crA, hub.MessageGetInput{MessageID: msg.MessageID}); err != nil {
			t.Fatalf("MessageGet by a member: %v", err)
		}
	})
}

// TestDirectMessageRecipients checks that a DM to an unknown agent, another
// box's agent and a deactivated agent are refused with the same bytes, and
// a DM to oneself is INVALID_ARGUMENT.
func TestDirectMessageRecipients(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		gone := f.mustAgent(f.box, "gone")
		// No admin command deactivates an agent yet: edit its record.
		f.editRecord(store.Key{PK: "agent#" + gone.AgentID, SK: "agent"}, func(m map[string]any) { m["status"] = "deactivated" })
		cr := f.prime(f.a)
		dm := func(to string) error {
			_, err := send(f, cr, uuid.NewString(), hub.MessageSendInput{Destination: toDM(to), BodyMD: "psst"})
			return err
		}
		ref := envelope(t, wantCode(t, "DM to an unknown agent", dm(uuid.NewString()), apperr.NotFoundOrForbidden))
		wantSameError(t, "DM to another box's agent", dm(f.other.AgentID), ref, f.other.AgentID, f.other.Name)
		wantSameError(t, "DM to a deactivated agent", dm(gone.AgentID), ref, gone.AgentID, gone.Name)
		wantCode(t, "DM to yourself", dm(f.a.AgentID), apperr.InvalidArgument)
		sent, err := send(f, cr, "to-bob", hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "psst"})
		if err != nil {
			t.Fatalf("DM to an active agent of the box: %v", err)
		}
		// A third agent of the box cannot read the pair's DM.
		crC := f.prime(f.mustAgent(f.box, "carol"))
		_, err = f.h.MessageGet(f.ctx, crC, hub.MessageGetInput{MessageID: uuid.NewString()})
		unknown := envelope(t, wantCode(t, "MessageGet of an unknown id", err, apperr.NotFoundOrForbidden))
		_, err = f.h.MessageGet(f.ctx, crC, hub.MessageGetInput{MessageID: sent.MessageID})
		wantSameError(t, "MessageGet of another pair's DM", err, unknown, sent.MessageID)
		_, err = f.h.ThreadRead(f.ctx, crC, hub.ThreadReadInput{MessageID: sent.MessageID})
		wantSameError(t, "ThreadRead of another pair's DM", err, unknown, sent.MessageID)
		// Reading a DM "pair" with oneself is refused the same way.
		_, err = f.read(cr, toDM(f.a.AgentID), "", 0, 0)
		wantCode(t, "conversation_read of a DM with yourself", err, apperr.InvalidArgument)
	})
}

// TestReplyToInvisibleParent refuses replies to a message the sender cannot
// see — sent before its epoch began, or in another stream — with the bytes
// of an unknown parent.
func TestReplyToInvisibleParent(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room, other := f.mustRoom("room", ""), f.mustRoom("other", "")
		f.mustAdd(room.RoomID, f.a)
		f.mustAdd(other.RoomID, f.a)
		f.mustAdd(other.RoomID, f.b)
		crA, crB := f.prime(f.a), f.prime(f.b)
		before := f.mustSend(crA, "before", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "before bob"})
		f.mustAdd(room.RoomID, f.b)
		after := f.mustSend(crA, "after", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "after bob"})
		inOther := f.mustSend(crA, "other", hub.MessageSendInput{Destination: toRoom(other.RoomID), BodyMD: "elsewhere"})
		dm := f.mustSend(crA, "dm", hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "private"})

		reply := func(dest hub.Destination, parent string) error {
			_, err := send(f, crB, uuid.NewString(), hub.MessageSendInput{Destination: dest, BodyMD: "re", ReplyTo: parent})
			return err
		}
		ref := envelope(t, wantCode(t, "reply to an unknown message", reply(toRoom(room.RoomID), uuid.NewString()), apperr.NotFoundOrForbidden))
		wantSameError(t, "reply to a message before the epoch", reply(toRoom(room.RoomID), before.MessageID), ref, before.MessageID)
		wantSameError(t, "reply in a room to another room's message", reply(toRoom(room.RoomID), inOther.MessageID), ref, inOther.MessageID)
		wantSameError(t, "reply in a room to a DM", reply(toRoom(room.RoomID), dm.MessageID), ref, dm.MessageID)
		wantSameError(t, "reply in a DM to a room message", reply(toDM(f.a.AgentID), after.MessageID), ref, after.MessageID)
		if err := reply(toRoom(room.RoomID), after.MessageID); err != nil {
			t.Fatalf("reply to a visible message: %v", err)
		}
		if err := reply(toDM(f.a.AgentID), dm.MessageID); err != nil {
			t.Fatalf("reply to a DM of the pair: %v", err)
		}
	})
}

// TestMessageEpochs checks that a member reads a room from its epoch's
// start, a removed member reads nothing, and a re-added member starts at its
// new epoch with the gap hidden — in conversation_read, message_get and
// thread_read, where hidden ancestors show as redacted ids.
func TestMessageEpochs(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.roomOf("epochs", f.a)
		crA, crB := f.prime(f.a), f.prime(f.b)
		dest := toRoom(room.RoomID)
		post := func(key, replyTo string) *hub.MessageSendOutput {
			return f.mustSend(crA, key, hub.MessageSendInput{Destination: dest, BodyMD: key, ReplyTo: replyTo})
		}
		ids := func(msgs []hub.MessageDTO) []string {
			out := []string{}
			for _, m := range msgs {
				out = append(out, m.BodyMD)
			}
			return out
		}
		wantRead := func(when string, want ...string) {
			t.Helper()
			page, err := f.read(crB, dest, "", 0, 0)
			if err != nil {
				t.Fatalf("%s: ConversationRead: %v", when, err)
			}
			if got := ids(page.Messages); !equalStrings(got, want) {
				t.Fatalf("%s: bob reads %q, want %q", when, got, want)
			}
		}

		root := post("root", "")               // before bob
		sibling := post("sib", root.MessageID) // before bob, not an ancestor of what he will see
		f.mustAdd(room.RoomID, f.b)
		child := post("child", root.MessageID)
		grandchild := post("grandchild", child.MessageID)
		wantRead("first epoch", "child", "grandchild")

		_, err := f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: root.MessageID})
		ref := envelope(t, wantCode(t, "MessageGet before the epoch", err, apperr.NotFoundOrForbidden))
		th, err := f.h.ThreadRead(f.ctx, crB, hub.ThreadReadInput{MessageID: grandchild.MessageID})
		if err != nil {
			t.Fatalf("ThreadRead: %v", err)
		}
		if th.ThreadRootID != root.MessageID || len(th.Entries) != 3 ||
			th.Entries[0].MessageID != root.MessageID || !th.Entries[0].Redacted || th.Entries[0].Message != nil ||
			th.Entries[1].Message == nil || th.Entries[1].MessageID != child.MessageID ||
			th.Entries[2].Message == nil || th.Entries[2].MessageID != grandchild.MessageID {
			t.Fatalf("ThreadRead = %+v; want root redacted (id only), then child and grandchild, and no %s", th, sibling.MessageID)
		}
		_, err = f.h.ThreadRead(f.ctx, crB, hub.ThreadReadInput{MessageID: root.MessageID})
		wantSameError(t, "ThreadRead anchored before the epoch", err, ref)

		f.mustRemove(room.RoomID, f.b)
		_, err = f.read(crB, dest, "", 0, 0)
		wantSameError(t, "ConversationRead after removal", err, ref)
		_, err = f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: child.MessageID})
		wantSameError(t, "MessageGet after removal", err, ref)
		_, err = f.h.ThreadRead(f.ctx, crB, hub.ThreadReadInput{MessageID: child.MessageID})
		wantSameError(t, "ThreadRead after removal", err, ref)
		gap := post("gap", child.MessageID)

		f.mustAdd(room.RoomID, f.b)
		wantRead("second epoch, nothing new yet")
		post("back", "")
		wantRead("second epoch", "back")
		for _, id := range []string{child.MessageID, gap.MessageID} {
			_, err = f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: id})
			wantCode(t, "MessageGet of the first epoch or the gap", err, apperr.NotFoundOrForbidden)
		}
		late := post("late", gap.MessageID)
		th, err = f.h.ThreadRead(f.ctx, crB, hub.ThreadReadInput{MessageID: late.MessageID})
		if err != nil {
			t.Fatalf("ThreadRead in the second epoch: %v", err)
		}
		var shown, redacted []string
		for _, e := range th.Entries {
			if e.Redacted {
				redacted = append(redacted, e.MessageID)
			} else {
				shown = append(shown, e.MessageID)
			}
		}
		if !equalStrings(redacted, []string{root.MessageID, child.MessageID, gap.MessageID}) || !equalStrings(shown, []string{late.MessageID}) {
			t.Fatalf("ThreadRead in the second epoch: redacted %v shown %v; want the three ancestors redacted and only %s shown", redacted, shown, late.MessageID)
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestArchivedRoomMessages: an archived room refuses posts with
// ROOM_ARCHIVED (to its members; others still get the unknown-id answer)
// and stays readable.
func TestArchivedRoomMessages(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.roomOf("archive", f.a)
		crA, crB := f.prime(f.a), f.prime(f.b)
		msg := f.mustSend(crA, "before", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "before"})
		if _, err := f.h.Admin().ArchiveRoom(f.ctx, room.RoomID); err != nil {
			t.Fatalf("ArchiveRoom: %v", err)
		}
		_, err := send(f, crA, "after", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "after"})
		wantCode(t, "MessageSend to an archived room", err, apperr.RoomArchived)
		_, err = send(f, crB, "after", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "after"})
		wantCode(t, "MessageSend to an archived room by a non-member", err, apperr.NotFoundOrForbidden)
		page, err := f.read(crA, toRoom(room.RoomID), "", 0, 0)
		if err != nil || len(page.Messages) != 1 || page.Messages[0].MessageID != msg.MessageID {
			t.Fatalf("ConversationRead of an archived room = %+v, %v; want its one message", page, err)
		}
	})
}

// TestTargetRemovedBetweenReadAndWrite removes a mentioned member after
// message_send read the roster and before it writes: the send must not
// commit a mention of an agent that is no longer a member.
func TestTargetRemovedBetweenReadAndWrite(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var hook func()
		f := newFixture(t, ad, func(s store.Store) store.Store {
			return &beforeWrite{Store: s, hook: func() {
				if hook != nil {
					h := hook
					hook = nil
					h()
				}
			}}
		})
		room := f.roomOf("race", f.a, f.b)
		cr := f.prime(f.a)
		hook = func() { f.mustRemove(room.RoomID, f.b) }
		_, err := send(f, cr, "m", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "hi", Mentions: []string{f.b.AgentID}})
		wantCode(t, "MessageSend mentioning an agent removed before the write", err, apperr.InvalidArgument)
		if rows := f.attention(f.b.AgentID); len(rows) != 0 {
			t.Fatalf("the removed agent got rows %+v", rows)
		}
		page, err := f.read(cr, toRoom(room.RoomID), "", 0, 0)
		if err != nil || len(page.Messages) != 0 {
			t.Fatalf("room after the refused send = %+v, %v; want no message", page, err)
		}
	})
}

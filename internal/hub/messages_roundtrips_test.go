package hub_test

import (
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestMessageRoundTrips counts store round trips per call of the four
// message tools once the session is primed, and bounds them so a change
// that adds one shows up here. The figures are in the msgtests note.
func TestMessageRoundTrips(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		room := f.roomOf("rt", f.a, f.b)
		crA, crB := f.prime(f.a), f.prime(f.b)
		root := f.mustSend(crA, "root", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "root", Mentions: []string{f.b.AgentID}})
		var reply *hub.MessageSendOutput
		calls := []struct {
			name string
			max  int64
			call func() error
		}{
			{"message_send dm", 2, func() error {
				_, err := send(f, crA, "rt-dm", hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "x"})
				return err
			}},
			{"message_send dm replay", 1, func() error {
				_, err := send(f, crA, "rt-dm", hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "x"})
				return err
			}},
			{"message_send room (2 members, 1 row)", 4, func() error {
				var err error
				reply, err = send(f, crA, "rt-room", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "x",
					ReplyTo: root.MessageID, Mentions: []string{f.b.AgentID}})
				return err
			}},
			{"message_get (in the inbox: receipt)", 4, func() error {
				_, err := f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: root.MessageID})
				return err
			}},
			{"message_get (author: no row)", 3, func() error {
				_, err := f.h.MessageGet(f.ctx, crA, hub.MessageGetInput{MessageID: root.MessageID})
				return err
			}},
			{"conversation_read (2 rows: receipts)", 4, func() error {
				_, err := f.read(crB, toRoom(room.RoomID), "", 0, 0)
				return err
			}},
			{"conversation_read (author: no rows)", 3, func() error {
				_, err := f.read(crA, toRoom(room.RoomID), "", 0, 0)
				return err
			}},
			{"thread_read", 5, func() error {
				_, err := f.h.ThreadRead(f.ctx, crB, hub.ThreadReadInput{MessageID: reply.MessageID})
				return err
			}},
		}
		for _, c := range calls {
			f.st.Reset()
			if err := c.call(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := f.st.Reset(); got > c.max {
				t.Errorf("%s: %d store round trips, want at most %d", c.name, got, c.max)
			} else {
				t.Logf("%s: %d round trips", c.name, got)
			}
		}
	})
}

package hub_test

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
)

// TestUpperCaseIDs: UUIDs are case-insensitive (RFC 9562). Every id a tool
// or the admin plane accepts, spelled in upper case, must address the same
// resource as its canonical lower-case form, field by field.
func TestUpperCaseIDs(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		up := strings.ToUpper
		adm := f.h.Admin()
		room := f.mustRoom("ops", "")
		if _, err := adm.AddMember(f.ctx, up(room.RoomID), up(f.a.AgentID)); err != nil {
			t.Fatalf("AddMember(upper room, upper agent): %v", err)
		}
		f.mustAdd(room.RoomID, f.b)
		f.mustList(f.b, true)
		crA := f.prime(f.a)
		sp := mustCreateSpace(f, crA, "private", "plans")
		msg, err := sendRoom(f, crA, "m1", up(room.RoomID), "hello", []string{up(f.b.AgentID)}, []string{up(f.b.AgentID)})
		if err != nil {
			t.Fatalf("MessageSend(upper room_id, mentions, requests): %v", err)
		}
		calls := []struct {
			field string
			call  func() error
		}{
			{"directory_get agent_id", func() error { return directoryGet(f, crA, up(f.b.AgentID)) }},
			{"room_get room_id", func() error { return errOf(f.h.RoomGet(f.ctx, crA, hub.RoomIDInput{RoomID: up(room.RoomID)})) }},
			{"room_brief_get room_id", func() error { return errOf(f.h.RoomBriefGet(f.ctx, crA, hub.RoomIDInput{RoomID: up(room.RoomID)})) }},
			{"room_follow room_id", func() error { return errOf(follow(f, crA, "f1", up(room.RoomID), 1, "all")) }},
			{"room_brief_update room_id", func() error { return errOf(appendBrief(f, crA, "b1", up(room.RoomID), 0, "note")) }},
			{"message_get message_id", func() error {
				return errOf(f.h.MessageGet(f.ctx, crA, hub.MessageGetInput{MessageID: up(msg.MessageID)}))
			}},
			{"thread_read message_id", func() error {
				return errOf(f.h.ThreadRead(f.ctx, crA, hub.ThreadReadInput{MessageID: up(msg.MessageID)}))
			}},
			{"message_send reply_to", func() error {
				_, err := f.h.MessageSend(f.ctx, crA, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "m2"},
					Destination: hub.Destination{Kind: "room", RoomID: room.RoomID}, BodyMD: "re", ReplyTo: up(msg.MessageID)})
				return err
			}},
			{"message_send recipient_agent_id", func() error { return errOf(sendDM(f, crA, "m3", up(f.b.AgentID), "dm")) }},
			{"get_space id", func() error { return errOf(getSpace(f, crA, up(sp.ID))) }},
			{"add_space_member id and agent_id", func() error { return errOf(addMember(f, crA, up(sp.ID), up(f.b.AgentID))) }},
			{"update_space id", func() error { return errOf(updateSpace(f, crA, up(sp.ID), 1, "plans v2", "active", "")) }},
			{"remove_space_member id and agent_id", func() error { return errOf(removeMember(f, crA, up(sp.ID), up(f.b.AgentID))) }},
			{"admin set-profile agent", func() error { return errOf(adm.SetProfile(f.ctx, up(f.b.AgentID), []byte(`{"role":"r"}`))) }},
			{"admin directory-listing agent", func() error { return errOf(adm.SetDirectoryListed(f.ctx, up(f.b.AgentID), true)) }},
			{"admin list-agents box", func() error { return errOf(adm.ListAgents(f.ctx, up(f.box))) }},
			{"admin list-rooms box", func() error { return errOf(adm.ListRooms(f.ctx, up(f.box))) }},
			{"admin create-agent box", func() error { return errOf(adm.CreateAgent(f.ctx, up(f.box), "carol", "")) }},
			{"admin remove-member room and agent", func() error { return errOf(adm.RemoveMember(f.ctx, up(room.RoomID), up(f.b.AgentID))) }},
			{"admin archive-room room", func() error { return errOf(adm.ArchiveRoom(f.ctx, up(room.RoomID))) }},
			{"admin revoke-key key", func() error {
				info, err := adm.RotateKey(f.ctx, up(f.b.AgentID))
				if err != nil {
					return err
				}
				_, err = adm.RevokeKey(f.ctx, up(f.b.AgentID), up(info.KeyIDs[0]))
				return err
			}},
		}
		for _, c := range calls {
			if err := c.call(); err != nil {
				t.Errorf("%s in upper case: %v, want the same resource as in lower case", c.field, err)
			}
		}
	})
}

package hub_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestCostPerTool measures what one typical call of each tool costs on
// DynamoDB in request units (teststores.Metered applies DynamoDB's
// documented rules to every store call), prints the table the README
// shows, and fails when a call grows past its bound: a cost regression is
// a test failure, not a surprise on the bill. The embedded store is used
// only as a fast, deterministic engine; the units are DynamoDB's.
func TestCostPerTool(t *testing.T) {
	var m *teststores.Metered
	f := newFixture(t, teststores.All()[0], func(s store.Store) store.Store { m = teststores.NewMetered(s); return m })
	room := f.mustRoom("general", "The brief.")
	f.mustAdd(room.RoomID, f.a)
	f.mustAdd(room.RoomID, f.b)
	crA, crB := f.prime(f.a), f.prime(f.b)
	body := strings.Repeat("x", 1000)
	var sent *hub.MessageSendOutput
	calls := []struct {
		name        string
		read, write float64 // bounds, in units
		call        func() error
	}{
		{"agent_prime", 14, 3, func() error {
			_, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey, SessionID: crA.SessionID}, hub.PrimeInput{})
			return err
		}},
		{"agent_prime (binding a new MCP session)", 14, 5, func() error {
			id, err := f.h.OpenSession(f.ctx, "")
			if err != nil {
				return err
			}
			_, err = f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, Transport: "mcp"}, hub.PrimeInput{})
			return err
		}},
		{"profile_get", 9, 1, func() error { _, err := f.h.ProfileGet(f.ctx, crA, hub.ProfileInput{}); return err }},
		{"checkpoint_get", 10, 1, func() error { _, err := f.h.CheckpointGet(f.ctx, crA, hub.CheckpointGetInput{}); return err }},
		{"checkpoint_save (1 KB)", 11, 12, func() error { _, err := save(f, crA, "cost-cp", 0, body); return err }},
		{"room_get", 14, 1, func() error { _, err := f.h.RoomGet(f.ctx, crA, hub.RoomIDInput{RoomID: room.RoomID}); return err }},
		{"message_send (DM, 1 KB)", 13, 26, func() error {
			var err error
			sent, err = ibDM(f, crA, "cost-dm", f.b.AgentID, body)
			return err
		}},
		{"message_send (room of 2, 1 KB)", 14, 23, func() error { _, err := ibPost(f, crA, "cost-post", room.RoomID, body); return err }},
		{"inbox_list (1 row)", 11, 3, func() error { _, err := f.h.InboxList(f.ctx, crB, hub.InboxListInput{}); return err }},
		{"inbox_ack (1 row)", 13, 15, func() error {
			_, err := f.h.InboxAck(f.ctx, crB, hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: "cost-ack"},
				InboxSeqs: []hub.Revision{1}})
			return err
		}},
		{"message_get", 11, 3, func() error {
			_, err := f.h.MessageGet(f.ctx, crB, hub.MessageGetInput{MessageID: sent.MessageID})
			return err
		}},
		{"conversation_read (1 message)", 11, 3, func() error {
			_, err := f.h.ConversationRead(f.ctx, crB, hub.ConversationReadInput{
				Conversation: hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.a.AgentID}})
			return err
		}},
		{"create_space", 10, 13, func() error { _, err := createSpace(f, crA, "public", "Cost", "cost-space"); return err }},
	}
	var table strings.Builder
	table.WriteString("| call | read units | write units |\n|---|---|---|\n")
	for _, c := range calls {
		m.Reset()
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tb, ix := m.Reset()
		r, w := tb.Read+ix.Read, tb.Write+ix.Write
		fmt.Fprintf(&table, "| %s | %g | %g |\n", c.name, r, w)
		if r > c.read || w > c.write {
			t.Errorf("%s costs %g read and %g write units, want at most %g and %g", c.name, r, w, c.read, c.write)
		}
	}
	t.Logf("cost per call on DynamoDB (request units):\n%s", table.String())
}

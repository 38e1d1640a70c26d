package hub_test

import (
	"testing"

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
			Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.b.AgentID}, BodyMD: "hello"})
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
		_, err = f.h.InboxAck(f.ctx, crB2, hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: "a0"},
			InboxSeqs: []hub.Revision{list.Rows[0].InboxSeq}})
		wantCode(t, "InboxAck without a receipt", err, apperr.InvalidArgument)
		ack, err := f.h.InboxAck(f.ctx, crB, hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: "a1"},
			InboxSeqs: []hub.Revision{list.Rows[0].InboxSeq}})
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

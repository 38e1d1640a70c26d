package hub_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
)

// TestLimitsCountTheBytesSent: a body of 16 KiB of "<" with a payload of
// "<>&" near its 8 KiB is within the limits, 16 KiB and the 64 KiB
// envelope, because they count the bytes the agent sent: the store keeps
// "<", ">" and "&" as sent, not HTML-escaped into six bytes each (which put
// such a message at about 150 KiB and refused it). The checkpoint keeps
// them likewise.
func TestLimitsCountTheBytesSent(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("html", "", f.a)
		cr := f.prime(f.a)
		body := strings.Repeat("<", hub.MaxBodyMDBytes)
		payload := `{"x":"` + strings.Repeat("<>&", (hub.MaxPayloadBytes-16)/3) + `"}`
		sent, err := f.h.MessageSend(f.ctx, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "lt"},
			Destination: hub.Destination{Kind: hub.KindRoom, RoomID: room.RoomID}, BodyMD: body, Payload: hub.Object(payload)})
		if err != nil {
			t.Fatalf("MessageSend(16 KiB of '<', %d-byte payload of '<>&'): %v", len(payload), err)
		}
		got, err := f.h.MessageGet(f.ctx, cr, hub.MessageGetInput{MessageID: sent.MessageID})
		if err != nil || got.Message.BodyMD != body {
			t.Fatalf("MessageGet = %v; want the body as sent", err)
		}
		it, err := f.raw.Get(f.ctx, store.Key{PK: "room#" + room.RoomID, SK: "msg#00000000000000000001"})
		if err != nil || it == nil {
			t.Fatalf("raw Get(message) = %v, %v", it, err)
		}
		if bytes.Contains(it.Data, []byte(`\u003c`)) || bytes.Contains(it.Data, []byte(`\u0026`)) || !bytes.Contains(it.Data, []byte(body)) {
			t.Errorf("stored message of %d bytes escapes '<' or '&'; want them as sent", len(it.Data))
		}
		if _, err := save(f, cr, "cp", 0, body); err != nil {
			t.Fatalf("CheckpointSave(16 KiB of '<'): %v", err)
		}
		cp, err := f.raw.Get(f.ctx, store.Key{PK: "agent#" + f.a.AgentID, SK: "checkpoint"})
		if err != nil || cp == nil || bytes.Contains(cp.Data, []byte(`\u003c`)) {
			t.Errorf("stored checkpoint escapes '<' (%v); want it as sent", err)
		}
	})
}

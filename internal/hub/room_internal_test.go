package hub

import "testing"

// TestStepRoom keeps each intent step's largest write within one
// transaction: a fan-out step writes two items per recipient, an ACK step
// its rows, the counter and the sequencer, each beside the intent's
// advance.
func TestStepRoom(t *testing.T) {
	if n := 2 * fanoutChunk; n > stepRoom {
		t.Errorf("a fan-out step writes %d ops, over stepRoom %d", n, stepRoom)
	}
	if n := ackChunk + 2; n > stepRoom {
		t.Errorf("an ACK step writes %d ops, over stepRoom %d", n, stepRoom)
	}
}

// TestCallRoom counts the kernel's own ops out of a first write's room.
func TestCallRoom(t *testing.T) {
	c := &call{Caller: &Caller{creds: make([]credCheck, 2)}, rateOps: make([]guardedOp, 2)}
	p := &plan{}
	p.add(make([]guardedOp, 10)...)
	// 100 - 10 tool ops - idempotency - intent - profile check - 2 keys - 2 shards
	if got, want := c.room(p), 100-10-1-1-1-2-2; got != want {
		t.Errorf("room = %d, want %d", got, want)
	}
}

package hub_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// faultyWrite injects one fault into a mutation's sequence of writes: once
// armed, it lets pass writes through and then faults the next one, either
// refusing it (a process killed before its write: nothing committed) or
// committing it and reporting a failure (a reply lost after the commit).
type faultyWrite struct {
	store.Store
	mu   sync.Mutex
	pass int // writes to let through before the fault; < 0: disarmed
	lose bool
}

var errKilled = errors.New("injected: process killed")

func (w *faultyWrite) arm(pass int, lose bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pass, w.lose = pass, lose
}

func (w *faultyWrite) Write(ctx context.Context, ops []store.Op) error {
	w.mu.Lock()
	fault, lose := w.pass == 0, w.lose
	if w.pass >= 0 {
		w.pass--
	}
	w.mu.Unlock()
	switch {
	case !fault:
		return w.Store.Write(ctx, ops)
	case lose:
		if err := w.Store.Write(ctx, ops); err != nil {
			return err
		}
		return context.DeadlineExceeded
	}
	return errKilled
}

// fanoutRoom is the size of the fan-out tests' room: with alice and bob,
// more than 100 members, so a post needs three intent chunks.
const fanoutRoom = 108

// TestFanoutSurvivesFaults kills or loses the reply of each write of a
// fan-out in turn — the first write (message, record, intent) and the
// writes between chunks — and checks that a retry with the same key or the
// sweep finishes it: every recipient ends with exactly one row, none twice,
// and the receipt is the one the first write committed.
func TestFanoutSurvivesFaults(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var fw *faultyWrite
		f := newFixture(t, ad, func(s store.Store) store.Store { fw = &faultyWrite{Store: s, pass: -1}; return fw })
		room, seeded := f.bigRoom("fanout", fanoutRoom)
		recipients := append([]string{f.b.AgentID}, seeded...)
		cr := f.prime(f.a)
		dest := toRoom(room.RoomID)

		// Unfaulted, for the reference: three chunks, every row once.
		ok := f.mustSend(cr, "clean", hub.MessageSendInput{Destination: dest, BodyMD: "clean"})
		if ok.AttentionCount != len(recipients) {
			t.Fatalf("attention_count %d, want %d", ok.AttentionCount, len(recipients))
		}
		f.wantOneRowEach(recipients, ok.MessageID, hub.ReasonFollowAll)

		// The writes of a post: its recipient parts, the first write
		// (message, record, intent), then one per chunk.
		const wParts, wFirst, wLast = 0, 1, 4
		cases := []struct {
			name   string
			pass   int  // writes before the fault: wParts, wFirst, wFirst+1 the first chunk, ...
			lose   bool // the faulted write commits and its reply is lost
			finish string
		}{
			{"KilledWritingParts", wParts, false, "retry"},
			{"PartsReplyLost", wParts, true, "retry"},
			{"KilledBeforeFirstWrite", wFirst, false, "retry"},
			{"ReplyLostAfterFirstWrite", wFirst, true, "retry"},
			{"ReplyLostAfterFirstWriteSwept", wFirst, true, "sweep"},
			{"KilledBeforeFirstChunk", wFirst + 1, false, "retry"},
			{"KilledBetweenChunks", wFirst + 2, false, "sweep"},
			{"KilledBeforeLastChunk", wLast, false, "retry"},
			{"ChunkReplyLost", wFirst + 2, true, "sweep"},
			{"LastChunkReplyLost", wLast, true, "retry"},
		}
		for _, tc := range cases {
			committed := tc.pass > wFirst || tc.pass == wFirst && tc.lose
			t.Run(tc.name, func(t *testing.T) {
				key := "fault-" + tc.name
				in := hub.MessageSendInput{Destination: dest, BodyMD: tc.name}
				fw.arm(tc.pass, tc.lose)
				first, err := send(f, cr, key, in)
				fw.arm(-1, false)
				if tc.pass <= wFirst {
					// The first write faulted, or a write before it: the
					// caller learns nothing committed for sure, and must
					// retry.
					if err == nil {
						t.Fatalf("MessageSend with a faulted first write: got success %+v", first)
					}
				} else if err != nil {
					// The first write committed: the message is durable,
					// the caller has its receipt.
					t.Fatalf("MessageSend with a faulted chunk: %v; want the durable receipt", err)
				}

				if first != nil && !(tc.lose && tc.pass == wLast) {
					if got := f.countRows(recipients, first.MessageID); got >= len(recipients) {
						t.Fatalf("fan-out complete despite the fault at chunk %d", tc.pass)
					}
				}
				switch tc.finish {
				case "sweep":
					// An intent younger than the grace is its caller's.
					if n, err := f.h.Sweep(f.ctx, hub.SweepGrace, 10); err != nil || n != 0 {
						t.Fatalf("Sweep(grace) of a fresh intent = %d, %v; want 0", n, err)
					}
					f.clock.Advance(time.Second)
					n, err := f.h.Sweep(f.ctx, 0, 10)
					if err != nil || committed && n != 1 {
						t.Fatalf("Sweep = %d, %v; want 1 intent finished", n, err)
					}
				}
				again, err := send(f, cr, key, in)
				if err != nil {
					t.Fatalf("retry with the same key: %v", err)
				}
				if committed != again.Replayed {
					t.Errorf("retry: replayed=%v, want %v", again.Replayed, committed)
				}
				if first != nil {
					want := *first
					want.Replayed = true
					if *again != want {
						t.Errorf("retry receipt %+v, want the original %+v", *again, want)
					}
				}
				f.wantOneRowEach(recipients, again.MessageID, hub.ReasonFollowAll)
				if n, err := f.h.Sweep(f.ctx, 0, 10); err != nil || n != 0 {
					t.Errorf("Sweep after completion = %d, %v; want nothing left", n, err)
				}
				// A third call changes nothing more.
				third, err := send(f, cr, key, in)
				if err != nil || !third.Replayed || third.MessageID != again.MessageID {
					t.Fatalf("third call = %+v, %v; want the same receipt replayed", third, err)
				}
				f.wantOneRowEach(recipients, again.MessageID, hub.ReasonFollowAll)
			})
		}
	})
}

// TestFanoutRacesDirectMessages races a chunked room fan-out against DMs
// to one of its recipients: both move that recipient's inbox head, so
// chunks and DMs contend. Every message still ends with exactly one row per
// recipient, and the recipient's inbox stays hole-free. Then several
// processes finish one intent at once: duplicates of a post and a sweeper.
func TestFanoutRacesDirectMessages(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var barrier *writeBarrier
		f := newFixture(t, ad, withBarrier(&barrier))
		room, seeded := f.bigRoom("contended", fanoutRoom)
		recipients := append([]string{f.b.AgentID}, seeded...)
		crA := f.prime(f.a)
		dmers := []*hub.AgentInfo{f.mustAgent(f.box, "carol"), f.mustAgent(f.box, "dave")}
		const posts, dms = 2, 4
		var wg sync.WaitGroup
		var mu sync.Mutex
		var roomMsgs, dmMsgs []string
		retrying := func(cr hub.Credentials, key string, in hub.MessageSendInput) {
			defer wg.Done()
			for range 20 {
				out, err := send(f, cr, key, in)
				if e, _ := apperr.As(err); e != nil && e.Code == apperr.TemporarilyUnavailable {
					continue
				}
				if err != nil {
					t.Errorf("MessageSend(%s): %v", key, err)
					return
				}
				mu.Lock()
				if in.Destination.Kind == hub.KindRoom {
					roomMsgs = append(roomMsgs, out.MessageID)
				} else {
					dmMsgs = append(dmMsgs, out.MessageID)
				}
				mu.Unlock()
				return
			}
			t.Errorf("MessageSend(%s): still unavailable after 20 tries", key)
		}
		for i := range posts {
			wg.Add(1)
			go retrying(crA, fmt.Sprintf("post-%d", i), hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "post"})
		}
		for _, ag := range dmers {
			cr := f.prime(ag)
			for i := range dms {
				wg.Add(1)
				go retrying(cr, fmt.Sprintf("dm-%d", i), hub.MessageSendInput{Destination: toDM(f.b.AgentID), BodyMD: "dm"})
			}
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		// A fan-out whose finishing lost too many races is the sweep's.
		if _, err := f.h.Sweep(f.ctx, 0, 10); err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		for _, id := range roomMsgs {
			f.wantOneRowEach(recipients, id, hub.ReasonFollowAll)
		}
		for _, id := range dmMsgs {
			f.wantOneRowEach([]string{f.b.AgentID}, id, hub.ReasonDM)
		}
		if got, want := len(f.attention(f.b.AgentID)), posts+dms*len(dmers); got != want {
			t.Fatalf("bob has %d rows, want %d", got, want)
		}

		// Concurrent duplicates of one big post, all reading before any
		// writes, and a sweeper: one commits, the others answer its
		// receipt after finishing the same intent, racing the winner and
		// the sweeper step by step.
		const n = 3
		outs := make([]*hub.MessageSendOutput, n)
		errs := make([]error, n)
		barrier.arm(n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i], errs[i] = send(f, crA, "dup-post", hub.MessageSendInput{Destination: toRoom(room.RoomID), BodyMD: "dup"})
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.h.Sweep(f.ctx, 0, 10); err != nil {
				t.Errorf("Sweep: %v", err)
			}
		}()
		wg.Wait()
		id := ""
		for i := range n {
			if errs[i] != nil {
				wantCode(t, fmt.Sprintf("duplicate %d", i), errs[i], apperr.TemporarilyUnavailable)
				continue
			}
			if id != "" && outs[i].MessageID != id {
				t.Fatalf("duplicates answered messages %s and %s, want one", id, outs[i].MessageID)
			}
			id = outs[i].MessageID
		}
		if _, err := f.h.Sweep(f.ctx, 0, 10); err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		f.wantOneRowEach(recipients, id, hub.ReasonFollowAll)
	})
}

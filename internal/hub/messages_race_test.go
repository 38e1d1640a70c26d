package hub_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestSendersRace races senders in one room and in one DM pair against
// readers that poll conversation_read with resume cursors. Sequences must
// come out hole-free and unique, and every reader must see every committed
// message exactly once, in order: no message may commit at or below an
// upper bound a reader already captured.
func TestSendersRace(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		c := f.mustAgent(f.box, "carol")
		d := f.mustAgent(f.box, "dave")
		senders := []*hub.AgentInfo{f.a, f.b, c, d}
		room := f.roomOf("race", senders...)
		creds := make([]hub.Credentials, len(senders))
		for i, ag := range senders {
			creds[i] = f.prime(ag)
		}
		const perSender = 6

		type conv struct {
			name    string
			senders []int // indexes into senders
			dest    func(i int) hub.Destination
			readers []int // who reads, and through which destination
		}
		convs := []conv{
			{"Room", []int{0, 1, 2, 3}, func(int) hub.Destination { return toRoom(room.RoomID) }, []int{0, 2}},
			{"DMPair", []int{0, 1}, func(i int) hub.Destination {
				if i == 0 {
					return toDM(f.b.AgentID)
				}
				return toDM(f.a.AgentID)
			}, []int{0, 1}},
		}
		for _, cv := range convs {
			t.Run(cv.name, func(t *testing.T) {
				var wg sync.WaitGroup
				var mu sync.Mutex
				sent := map[string]uint64{} // message id -> stream seq
				var sending atomic.Int32
				sending.Store(int32(len(cv.senders)))
				for _, si := range cv.senders {
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer sending.Add(-1)
						for n := range perSender {
							key := fmt.Sprintf("%s-%d-%d", cv.name, si, n)
							in := hub.MessageSendInput{Destination: cv.dest(si), BodyMD: key}
							for attempt := 0; ; attempt++ {
								out, err := send(f, creds[si], key, in)
								if e, _ := apperr.As(err); e != nil && e.Code == apperr.TemporarilyUnavailable && attempt < 20 {
									continue // the documented client reaction: retry with the same key
								}
								if err != nil {
									t.Errorf("sender %d message %d: %v", si, n, err)
									return
								}
								mu.Lock()
								sent[out.MessageID] = uint64(out.StreamSeq)
								mu.Unlock()
								break
							}
						}
					}()
				}
				seen := make([][]hub.MessageDTO, len(cv.readers))
				for ri, who := range cv.readers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						cur, last := "", false
						// Readers poll without waiting while the
						// senders run: the time bound is the one
						// that matters.
						pages := loopLimit(t, fmt.Sprintf("reader %d", who), 1_000_000, 2*time.Minute)
						for !last {
							// One more full poll after the senders are done.
							last = sending.Load() == 0
							for {
								if !pages.next() {
									return
								}
								page, err := f.read(creds[who], cv.dest(who), cur, 3, 0)
								if err != nil {
									t.Errorf("reader %d: %v", who, err)
									return
								}
								seen[ri] = append(seen[ri], page.Messages...)
								if page.NextCursor == "" {
									if page.ResumeCursor == "" {
										t.Errorf("reader %d: a page with neither cursor", who)
										return
									}
									cur = page.ResumeCursor
									break
								}
								cur = page.NextCursor
							}
						}
					}()
				}
				wg.Wait()
				if t.Failed() {
					return
				}

				total := perSender * len(cv.senders)
				if len(sent) != total {
					t.Fatalf("%d messages sent, want %d", len(sent), total)
				}
				bySeq := map[uint64]string{}
				for id, seq := range sent {
					if other, dup := bySeq[seq]; dup {
						t.Fatalf("messages %s and %s share stream sequence %d", id, other, seq)
					}
					bySeq[seq] = id
				}
				for n := uint64(1); n <= uint64(total); n++ {
					if _, ok := bySeq[n]; !ok {
						t.Fatalf("stream sequence %d missing among 1..%d (a hole)", n, total)
					}
				}
				for ri, msgs := range seen {
					if len(msgs) != total {
						t.Errorf("reader %d saw %d messages, want each of %d exactly once", cv.readers[ri], len(msgs), total)
					}
					for i, m := range msgs {
						if uint64(m.StreamSeq) != uint64(i+1) || bySeq[uint64(m.StreamSeq)] != m.MessageID {
							t.Fatalf("reader %d: message %d is %s at seq %d; want seq %d (%s)",
								cv.readers[ri], i, m.MessageID, m.StreamSeq, i+1, bySeq[uint64(i+1)])
						}
					}
				}
			})
		}
	})
}

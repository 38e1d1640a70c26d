package hub_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// rateRTT is the round trip of one store call in TestRateBounds: about
// what DynamoDB answers in from a function in the same region.
const rateRTT = 10 * time.Millisecond

// TestRateBounds derives the rate one room and one receiving agent
// sustain from the round trips of a call, and checks it with senders that
// do nothing but post, on a store adding a fixed round trip per call
// (teststores.Latency, in fake time: testing/synctest), as calls in
// separate processes (Lambda instances) make them.
//
// Posts to one room serialize on the room's head: a post reads it in its
// first call and moves it by compare-and-set in its last, so between two
// posts' commits lie at least the round trips from one's read to its write,
// (calls − 1) × RTT (the read and the write each take effect halfway
// through their round trip). The same holds for DMs to one agent, whose
// inbox head every DM moves. A box has no such item: its rate is the
// write limit (limits.Default: 100 writes per second, burst 600).
func TestRateBounds(t *testing.T) {
	t.Parallel()
	ad := teststores.Bubbled()[0] // opened inside the bubble
	for _, tc := range []struct {
		name string
		dm   bool
	}{{"room", false}, {"receiving agent", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each in its own bubble, on its own store
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, ad, func(s store.Store) store.Store { return teststores.NewLatency(s, rateRTT) })
				f.h = hub.New(f.st, hub.Options{Now: f.clock.Now, IndependentCalls: true})
				room := f.mustRoom("busy", "", f.b)
				cr := f.prime(f.b)
				if _, err := follow(f, cr, "bob-all", room.RoomID, 1, hub.FollowAll); err != nil {
					t.Fatalf("RoomFollow: %v", err)
				}
				const senders = 8
				crs := make([]hub.Credentials, senders)
				for i := range crs {
					ag := f.mustAgent(f.box, fmt.Sprintf("sender %d", i))
					f.mustAdd(room.RoomID, ag)
					crs[i] = f.prime(ag)
				}
				send := func(cr hub.Credentials, key string) error {
					in := hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: key},
						Destination: hub.Destination{Kind: hub.KindRoom, RoomID: room.RoomID}, BodyMD: "tick"}
					if tc.dm {
						in.Destination = hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.b.AgentID}
					}
					_, err := f.h.MessageSend(f.ctx, cr, in)
					return err
				}

				// The round trips of one post, uncontended.
				f.st.Reset()
				if err := send(crs[0], "probe"); err != nil {
					t.Fatalf("probe: %v", err)
				}
				calls := f.st.Reset()
				bound := float64(time.Second) / float64(time.Duration(calls-1)*rateRTT)

				const window = 5 * time.Second
				start := time.Now()
				var mu sync.Mutex
				done, failed := 0, 0
				var wg sync.WaitGroup
				for i, cr := range crs {
					wg.Go(func() {
						for n := 0; time.Since(start) < window; n++ {
							err := send(cr, fmt.Sprintf("s%d-%d", i, n))
							mu.Lock()
							if err == nil && time.Since(start) <= window {
								done++
							} else if err != nil {
								failed++
							}
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				rate := float64(done) / window.Seconds()
				t.Logf("%s: %d store calls per send, bound %.1f/s at %v per call; %d senders: %.1f/s (%d refused busy)",
					tc.name, calls, bound, rateRTT, senders, rate, failed)
				if rate > bound {
					t.Errorf("%.1f sends/s beat the derived bound %.1f/s: the bound is wrong", rate, bound)
				}
				if rate < bound/3 {
					t.Errorf("%.1f sends/s, far below the derived bound %.1f/s: the bound is not what the design sustains", rate, bound)
				}
			})
		})
	}
}

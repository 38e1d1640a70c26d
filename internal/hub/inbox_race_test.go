package hub_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// TestInboxNoSkip races senders — DMs from two agents and posts of two
// others in a room the receiver follows in full — against two pollers of
// the receiver (two sessions) paging with next and resume cursors: each
// poller must see every row exactly once, in inbox order, none missing,
// none repeated; again with a byte budget that holds one row per page.
func TestInboxNoSkip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxBytes int
		body     string
	}{
		{"pages", 0, "short"},
		{"one row per page", 1024, strings.Repeat("x", 1100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
				f := newFixture(t, ad)
				c, d := f.mustAgent(f.box, "carol"), f.mustAgent(f.box, "dave")
				room := f.mustRoom("ops", "")
				for _, ag := range []*hub.AgentInfo{f.a, c, d} {
					f.mustAdd(room.RoomID, ag)
				}
				mb := f.mustAdd(room.RoomID, f.b)
				crB1, crB2 := f.prime(f.b), f.prime(f.b)
				if _, err := follow(f, crB1, "follow", room.RoomID, mb.FollowRevision, hub.FollowAll); err != nil {
					t.Fatalf("RoomFollow(all): %v", err)
				}

				const perSender = 5
				senders := []struct {
					ag   *hub.AgentInfo
					room bool
				}{{f.a, false}, {c, false}, {d, true}, {f.a, true}}
				var sent sync.Map // message id → true
				var sendErrs atomic.Int64
				var wg sync.WaitGroup
				done := make(chan struct{})
				for i, s := range senders {
					cr := f.prime(s.ag)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := range perSender {
							key := fmt.Sprintf("s%d-%d", i, j)
							var out *hub.MessageSendOutput
							var err error
							if s.room {
								out, err = ibPost(f, cr, key, room.RoomID, tc.body)
							} else {
								out, err = ibDM(f, cr, key, f.b.AgentID, tc.body)
							}
							if err != nil {
								t.Errorf("sender %d message %d: %v", i, j, err)
								sendErrs.Add(1)
								continue
							}
							sent.Store(out.MessageID, true)
						}
					}()
				}
				go func() { wg.Wait(); close(done) }()

				type seen struct {
					seqs []uint64
					ids  map[string]int
				}
				results := make([]seen, 2)
				var pw sync.WaitGroup
				for p, cr := range []hub.Credentials{crB1, crB2} {
					pw.Add(1)
					go func() {
						defer pw.Done()
						res := seen{ids: map[string]int{}}
						cur, resuming := "", false
						// A page per row, a wait per resume, and
						// the empty pages of waits that found
						// nothing: far fewer than this.
						pages := loopLimit(t, fmt.Sprintf("poller %d", p), 20*len(senders)*perSender, time.Minute)
						for {
							if !pages.next() {
								return
							}
							finished := false
							select {
							case <-done:
								finished = true
							default:
							}
							in := hub.InboxListInput{Cursor: cur, MaxBytes: tc.maxBytes}
							if resuming && !finished {
								in.WaitSeconds = 1
							}
							out, err := f.h.InboxList(f.ctx, cr, in)
							if err != nil {
								t.Errorf("poller %d: InboxList: %v", p, err)
								return
							}
							if tc.maxBytes > 0 && len(out.Rows) > 1 {
								t.Errorf("poller %d: page of %d rows under a 1 KiB budget, want 1", p, len(out.Rows))
							}
							for _, r := range out.Rows {
								res.seqs = append(res.seqs, uint64(r.InboxSeq))
								if r.Message == nil {
									t.Errorf("poller %d: row %d without its message", p, r.InboxSeq)
									continue
								}
								res.ids[r.Message.MessageID]++
							}
							switch {
							case out.NextCursor != "":
								cur, resuming = out.NextCursor, false
							case out.ResumeCursor != "":
								cur, resuming = out.ResumeCursor, true
								if finished && len(out.Rows) == 0 {
									results[p] = res
									return
								}
							default:
								t.Errorf("poller %d: page without a cursor", p)
								return
							}
						}
					}()
				}
				pw.Wait()
				<-done // a poller that gave up must not outlive the senders
				if t.Failed() {
					return
				}
				total := len(senders)*perSender - int(sendErrs.Load())
				want := ibSeqs(1, uint64(total))
				for p, res := range results {
					if !slices.Equal(res.seqs, want) {
						t.Errorf("poller %d saw inbox seqs %v, want exactly 1..%d once each in order", p, res.seqs, total)
					}
					sent.Range(func(k, _ any) bool {
						if n := res.ids[k.(string)]; n != 1 {
							t.Errorf("poller %d saw message %s %d times, want once", p, k, n)
						}
						return true
					})
					if len(res.ids) != total {
						t.Errorf("poller %d saw %d distinct messages, want %d", p, len(res.ids), total)
					}
				}
			})
		})
	}
}

// TestInboxAckRace makes two sessions of one agent ACK overlapping batches
// with both reads done before either write: every row is acknowledged
// once, by the session whose write committed first; the other is told
// already_acked with that first provenance; the unread count is exact.
// The large case spans ACK chunks (an intent), where the overlap lies in
// the part a later chunk writes.
func TestInboxAckRace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows       uint64
		one, other [2]uint64 // inclusive ranges of seqs
	}{
		{"one chunk", 30, [2]uint64{1, 20}, [2]uint64{11, 30}},
		{"across chunks", 100, [2]uint64{1, 100}, [2]uint64{91, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
				var b *writeBarrier
				f := newFixture(t, ad, withBarrier(&b))
				crs := ibShownTwice(f, int(tc.rows))
				batches := [][]uint64{ibSeqs(tc.one[0], tc.one[1]), ibSeqs(tc.other[0], tc.other[1])}
				outs := ibAcksAtOnce(f, b, crs, batches)
				if t.Failed() {
					return
				}
				stored := map[uint64]string{}
				for _, r := range ibStoredRows(f, f.b.AgentID) {
					stored[r.Seq] = r.AckedBy
				}
				ackedBy := map[uint64][]int{}
				total := 0
				for i, out := range outs {
					n := 0
					for _, r := range out.Results {
						switch r.Status {
						case "acked":
							n++
							ackedBy[uint64(r.InboxSeq)] = append(ackedBy[uint64(r.InboxSeq)], i)
							if r.AckedBySession != crs[i].SessionID {
								t.Errorf("session %d: row %d acked by %q, want itself", i, r.InboxSeq, r.AckedBySession)
							}
						case "already_acked":
						default:
							t.Errorf("session %d: row %d status %q", i, r.InboxSeq, r.Status)
						}
						if got := stored[uint64(r.InboxSeq)]; r.AckedBySession != got {
							t.Errorf("session %d: row %d answered provenance %q, stored %q", i, r.InboxSeq, r.AckedBySession, got)
						}
					}
					if out.Acked != n {
						t.Errorf("session %d: acked = %d, but %d results say acked", i, out.Acked, n)
					}
					total += n
				}
				for s := uint64(1); s <= tc.rows; s++ {
					if len(ackedBy[s]) != 1 {
						t.Errorf("row %d acknowledged by sessions %v, want exactly one", s, ackedBy[s])
					}
					if stored[s] == "" {
						t.Errorf("row %d not acknowledged in the store", s)
					}
				}
				if total != int(tc.rows) {
					t.Errorf("%d rows acknowledged in all, want %d", total, tc.rows)
				}
				if got := ibUnread(f, f.b); got != 0 {
					t.Errorf("unread after acknowledging everything = %d, want 0", got)
				}
				// A replay answers each call's original results, not a new
				// decision (which would now be already_acked throughout).
				for i := range 2 {
					again, err := ibAck(f, crs[i], fmt.Sprintf("ack-%d", i), batches[i]...)
					if err != nil || !again.Replayed || again.Acked != outs[i].Acked || !slices.Equal(again.Results, outs[i].Results) {
						t.Errorf("session %d: replay = %+v, %v; want the original %+v", i, again, err, outs[i])
					}
				}
			})
		})
	}
}

// TestInboxCountsMatchRecount runs a random interleaving of sends (DMs
// and room posts, some mentioning the receiver), lists and ACKs by two
// sessions, and after every step compares agent_prime's unread_count and
// the attention summary of the last call with a recount of the stored
// rows.
func TestInboxCountsMatchRecount(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad)
		c := f.mustAgent(f.box, "carol")
		room := f.mustRoom("ops", "")
		f.mustAdd(room.RoomID, f.a)
		f.mustAdd(room.RoomID, c)
		mb := f.mustAdd(room.RoomID, f.b)
		crA, crC := f.prime(f.a), f.prime(c)
		crs := []hub.Credentials{f.prime(f.b), f.prime(f.b)}
		if _, err := follow(f, crs[0], "follow", room.RoomID, mb.FollowRevision, hub.FollowMentions); err != nil {
			t.Fatalf("RoomFollow: %v", err)
		}
		rng := rand.New(rand.NewPCG(9, 9))
		shown := [2][]uint64{}
		for step := range 50 {
			info := &hub.CallInfo{}
			var err error
			switch op := rng.IntN(5); op {
			case 0:
				_, err = ibDM(f, crA, fmt.Sprintf("d%d", step), f.b.AgentID, "hi")
			case 1:
				in := hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("p%d", step)},
					Destination: toRoom(room.RoomID), BodyMD: "post"}
				if rng.IntN(2) == 0 {
					in.Mentions = []string{f.b.AgentID}
				}
				_, err = f.h.MessageSend(f.ctx, crC, in)
			case 2, 3:
				s := rng.IntN(2)
				cr := crs[s]
				cr.Info = info
				var out *hub.InboxListOutput
				out, err = f.h.InboxList(f.ctx, cr, hub.InboxListInput{Limit: 1 + rng.IntN(5)})
				if err == nil {
					for _, r := range out.Rows {
						if !slices.Contains(shown[s], uint64(r.InboxSeq)) {
							shown[s] = append(shown[s], uint64(r.InboxSeq))
						}
					}
				}
			case 4:
				s := rng.IntN(2)
				if len(shown[s]) == 0 {
					continue
				}
				n := 1 + rng.IntN(len(shown[s]))
				batch := shown[s][:n]
				shown[s] = shown[s][n:]
				cr := crs[s]
				cr.Info = info
				_, err = ibAck(f, cr, fmt.Sprintf("a%d", step), batch...)
			}
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			_, want := ibRecount(f, f.b.AgentID)
			if got := ibUnread(f, f.b); got != want {
				t.Fatalf("step %d: agent_prime unread_count = %d, recount of rows = %d", step, got, want)
			}
			if info.Attention != nil && info.Attention.UnreadCount != want {
				t.Fatalf("step %d: attention unread_count = %d, recount of rows = %d", step, info.Attention.UnreadCount, want)
			}
		}
		total, _ := ibRecount(f, f.b.AgentID)
		if total == 0 {
			t.Fatalf("the interleaving wrote no rows; the test proves nothing")
		}
	})
}

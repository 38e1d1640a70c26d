package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// noSequencer removes the agents' ACK sequencers (agent#A / acks) from the
// store the hub sees: reads find none, and writes of one are dropped. ACKs
// of one agent are then no longer serialized, and only the row-level
// guards (an ACK marks a row at the version it read) keep every row
// acknowledged once. before, when set, runs before each write, with its
// ops.
type noSequencer struct {
	store.Store
	before func(ops []store.Op)
}

func isSequencer(k store.Key) bool { return k.SK == "acks" && strings.HasPrefix(k.PK, "agent#") }

func (s *noSequencer) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	if isSequencer(k) {
		return nil, nil
	}
	return s.Store.Get(ctx, k)
}

func (s *noSequencer) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	items, err := s.Store.BatchGet(ctx, keys)
	for i, k := range keys {
		if err == nil && isSequencer(k) {
			items[i] = nil
		}
	}
	return items, err
}

func (s *noSequencer) Write(ctx context.Context, ops []store.Op) error {
	if s.before != nil {
		s.before(ops)
	}
	kept, at := make([]store.Op, 0, len(ops)), make([]int, 0, len(ops))
	for i, op := range ops {
		if !isSequencer(op.OpKey()) {
			kept, at = append(kept, op), append(at, i)
		}
	}
	err := s.Store.Write(ctx, kept)
	cf, ok := store.ConditionFailed(err)
	if !ok {
		return err
	}
	// Name the failing ops by their places in the hub's write.
	failed := make([]int, len(cf.Failed))
	for i, f := range cf.Failed {
		failed[i] = at[f]
	}
	return store.NewConditionFailed(ops, failed)
}

// TestAckRowGuards checks the row-level ACK guards on their own, with the
// ACK sequencer bypassed: two sessions' overlapping ACKs that both read the
// rows before either writes (one ACK chunk), and a session's ACK committed
// between an ACK intent's read of its step and that step's write. Every row
// is acknowledged once, by the write that committed first, and the ACK
// counter counts it once.
func TestAckRowGuards(t *testing.T) {
	t.Run("OneChunk", func(t *testing.T) {
		forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
			var b *writeBarrier
			f := newFixture(t, ad, func(s store.Store) store.Store { return &noSequencer{Store: s} }, withBarrier(&b))
			crs := ibShownTwice(f, 10)
			outs := ibAcksAtOnce(f, b, crs, [][]uint64{ibSeqs(1, 10), ibSeqs(1, 10)})
			if t.Failed() {
				return
			}
			if n := outs[0].Acked + outs[1].Acked; n != 10 {
				t.Errorf("the two ACKs acknowledged %d and %d rows, want 10 in all", outs[0].Acked, outs[1].Acked)
			}
			wantAckedOnce(t, f, 10, 10)
		})
	})

	t.Run("IntentStep", func(t *testing.T) {
		forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
			ns := &noSequencer{}
			f := newFixture(t, ad, func(s store.Store) store.Store { ns.Store = s; return ns })
			crs := ibShownTwice(f, 100)
			// The first write touching row 91 is the intent's step (the
			// first ACK write holds rows 1..90): just before it, the
			// other session ACKs rows 91..100.
			row91 := fmt.Sprintf("inbox#%020d", 91)
			var fired bool // the other ACK's own write touches row 91 too
			var other *hub.InboxAckOutput
			var otherErr error
			ns.before = func(ops []store.Op) {
				for _, op := range ops {
					if op.OpKey().SK == row91 && !fired {
						fired = true
						other, otherErr = ibAck(f, crs[1], "other", ibSeqs(91, 100)...)
						return
					}
				}
			}
			out, err := ibAck(f, crs[0], "all", ibSeqs(1, 100)...)
			ns.before = nil
			if err != nil || otherErr != nil {
				t.Fatalf("InboxAck(1..100) = %v; InboxAck(91..100) in its step = %v", err, otherErr)
			}
			if other == nil || other.Acked != 10 {
				t.Fatalf("the ACK inside the intent's step = %+v; want rows 91..100 acked", other)
			}
			// Both calls answer "acked" for rows 91..100 — the gap the
			// sequencer closes (inbox.go) — but the rows keep the first
			// provenance to commit, and the counter counts each row once.
			if out.Acked != 100 {
				t.Errorf("InboxAck(1..100).acked = %d, want 100", out.Acked)
			}
			for _, r := range ibStoredRows(f, f.b.AgentID) {
				want := crs[0].SessionID
				if r.Seq > 90 {
					want = crs[1].SessionID
				}
				if r.AckedBy != want {
					t.Errorf("row %d acknowledged by %q, want %q (the first write to commit)", r.Seq, r.AckedBy, want)
				}
			}
			wantAckedOnce(t, f, 100, 100)
		})
	})
}

// TestInboxAckCrashBetweenChunks crashes an ACK of 100 rows after its
// first write (90 rows and the intent): a retry with the same key, or the
// sweep, finishes it; every row is acknowledged once and the count is
// exact.
func TestInboxAckCrashBetweenChunks(t *testing.T) {
	for _, finisher := range []string{"retry", "sweep"} {
		t.Run(finisher, func(t *testing.T) {
			forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
				var fw *failingWrites
				f := newFixture(t, ad, func(s store.Store) store.Store { fw = &failingWrites{Store: s}; return fw })
				crB := ibShownToBob(f, 100, hub.FilterUnread)
				fw.arm(1)
				out, err := ibAck(f, crB, "big", ibSeqs(1, 100)...)
				fw.disarm()
				if err != nil || out.Acked != 100 {
					t.Fatalf("InboxAck(100) crashing after its first write = %+v, %v; want the committed receipt of 100", out, err)
				}
				_, unread := ibRecount(f, f.b.AgentID)
				if unread != 10 {
					t.Fatalf("after the crash %d rows unacknowledged, want 10 (the crash is not simulated)", unread)
				}
				switch finisher {
				case "retry":
					again, err := ibAck(f, crB, "big", ibSeqs(1, 100)...)
					if err != nil || !again.Replayed || again.Acked != 100 {
						t.Fatalf("retry = %+v, %v; want the original receipt", again, err)
					}
				case "sweep":
					n, err := f.h.Sweep(f.ctx, 0, 10)
					if err != nil || n != 1 {
						t.Fatalf("Sweep = %d, %v; want the ACK's intent finished", n, err)
					}
				}
				for _, r := range ibStoredRows(f, f.b.AgentID) {
					if r.AckedBy != crB.SessionID {
						t.Errorf("row %d acknowledged by %q, want %q", r.Seq, r.AckedBy, crB.SessionID)
					}
				}
				if got := ibUnread(f, f.b); got != 0 {
					t.Errorf("unread after the ACK completed = %d, want 0", got)
				}
				if n, err := f.h.Sweep(f.ctx, 0, 10); err != nil || n != 0 {
					t.Errorf("Sweep after completion = %d, %v; want nothing left", n, err)
				}
			})
		})
	}
}

// wantAckedOnce checks bob's stored inbox: rows written, every one
// acknowledged, and the ACK counter at acked.
func wantAckedOnce(t *testing.T, f *fixture, rows uint64, acked int64) {
	t.Helper()
	for _, r := range ibStoredRows(f, f.b.AgentID) {
		if r.AckedBy == "" {
			t.Errorf("row %d not acknowledged", r.Seq)
		}
	}
	if head, n := rawInbox(f, f.b.AgentID); head != rows || n != acked {
		t.Errorf("stored head %d, ACK counter %d; want %d and %d", head, n, rows, acked)
	}
}

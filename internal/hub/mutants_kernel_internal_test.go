package hub

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// Tests for kernel mutants that survived make mutate: the receipt bound
// and the mapping of a write that failed on several conditions. Both sit
// below every tool (no tool's receipt comes near 1 KiB, and a single
// call rarely loses two conditions at once), so they are tested on the
// kernel itself.

// sizedReceipt is a receipt of a chosen encoded size.
type sizedReceipt struct {
	Pad string `json:"p"`
	Replay
}

// TestCommitReceiptBound: an idempotency record stores a receipt of at
// most maxReceiptBytes encoded bytes: exactly 1 KiB commits, one byte more
// is refused as STORAGE_FAILURE and writes nothing.
func TestCommitReceiptBound(t *testing.T) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			clock := teststores.NewClock()
			st := ad.Open(t, clock.Now)
			h := New(st, Options{Now: clock.Now, OrderedWrites: ad.OrderedWrites})
			ctx := context.Background()
			box, err := h.Admin().CreateBox(ctx, "main")
			if err != nil {
				t.Fatalf("CreateBox: %v", err)
			}
			ag, err := h.Admin().CreateAgent(ctx, box.BoxID, "alice", "")
			if err != nil {
				t.Fatalf("CreateAgent: %v", err)
			}
			p, err := h.Prime(ctx, Credentials{Bearer: ag.BoxKey}, PrimeInput{})
			if err != nil {
				t.Fatalf("Prime: %v", err)
			}
			cr := Credentials{Bearer: ag.BoxKey, SessionID: p.SessionID}
			empty := len(table.Encode(&sizedReceipt{}))
			for _, tc := range []struct {
				key  string
				size int
				ok   bool
			}{{"at-bound", maxReceiptBytes, true}, {"over-bound", maxReceiptBytes + 1, false}} {
				receipt := &sizedReceipt{Pad: strings.Repeat("r", tc.size-empty)}
				if n := len(table.Encode(receipt)); n != tc.size {
					t.Fatalf("test setup: receipt of %d bytes, want %d", n, tc.size)
				}
				c, err := h.start(ctx, cr, sessionPrimed, nil)
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				m := mutation{tool: "test_receipt", key: tc.key, hash: "h-" + tc.key}
				_, err = commit(ctx, h, c, m, &plan{receipt: receipt}, &sizedReceipt{})
				c.done()
				rec, gerr := st.Get(ctx, m.recordKey(ag.AgentID))
				if gerr != nil {
					t.Fatalf("Get(idempotency record): %v", gerr)
				}
				if tc.ok {
					if err != nil || rec == nil {
						t.Errorf("commit with a receipt of exactly %d bytes = %v, record stored %t; want committed", tc.size, err, rec != nil)
					}
					continue
				}
				if e, ok := apperr.As(err); !ok || e.Code != apperr.StorageFailure || rec != nil {
					t.Errorf("commit with a receipt of %d bytes = %v, record stored %t; want STORAGE_FAILURE and nothing written", tc.size, err, rec != nil)
				}
			}
		})
	}
}

// TestWriteAnswersInPlanOrder: when several conditions of one write fail,
// the first with a domain answer decides, whatever precedes it: a moved
// counter first (contention, on its own a reason to run the call again)
// and a domain conflict second answer the conflict, and contention is the
// answer only when every failing op is contention.
func TestWriteAnswersInPlanOrder(t *testing.T) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			clock := teststores.NewClock()
			st := ad.Open(t, clock.Now)
			h := New(st, Options{Now: clock.Now, OrderedWrites: ad.OrderedWrites})
			ctx := context.Background()
			a, b := store.Key{PK: "test#w", SK: "a"}, store.Key{PK: "test#w", SK: "b"}
			if err := st.Write(ctx, []store.Op{store.Put(&store.Item{PK: a.PK, SK: a.SK, Version: 1}, store.Absent),
				store.Put(&store.Item{PK: b.PK, SK: b.SK, Version: 1}, store.Absent)}); err != nil {
				t.Fatalf("seed: %v", err)
			}
			conflict := errors.New("domain conflict")
			taken := func(k store.Key, onFail failure) guardedOp {
				return guardedOp{op: store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: 2}, store.Absent), onFail: onFail}
			}
			if err := h.write(ctx, []guardedOp{taken(a, contended), taken(b, answer(func() error { return conflict }))}, -1); !errors.Is(err, conflict) {
				t.Errorf("write failing on a moved counter and a domain condition = %v, want the domain answer", err)
			}
			if err := h.write(ctx, []guardedOp{taken(a, contended), taken(b, contended)}, -1); !errors.Is(err, errContended) {
				t.Errorf("write failing on two moved counters = %v, want contention", err)
			}
			if err := h.write(ctx, []guardedOp{taken(a, contended), taken(b, nil)}, -1); !isCode(err, apperr.StorageFailure) {
				t.Errorf("write failing on a moved counter and a condition without an answer = %v, want STORAGE_FAILURE", err)
			}
		})
	}
}

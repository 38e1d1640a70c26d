package hub_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/reqlog/reqlogtest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// Tests for kernel mutants that survived make mutate: the warning of an
// intent the call could not finish.

// stepFailure fails, while armed, every write that advances an intent
// (deletes or replaces its record): the call's own finish then fails
// after its first write committed.
type stepFailure struct {
	store.Store
	armed atomic.Bool
}

func (s *stepFailure) Write(ctx context.Context, ops []store.Op) error {
	if s.armed.Load() {
		for _, op := range ops {
			if strings.HasPrefix(op.OpKey().PK, "intent#") && op.Kind != store.OpPut {
				return fmt.Errorf("injected: %w", store.ErrTimeout)
			}
		}
	}
	return s.Store.Write(ctx, ops)
}

// TestIntentLeftForTheSweepIsLogged: an ACK of 100 rows continues as an
// intent that the call finishes before answering. A finish that succeeds
// logs nothing; one that fails leaves the intent for the sweep with a
// warning naming it, and the ACK still answers success (its first write
// committed).
func TestIntentLeftForTheSweepIsLogged(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		sf := &stepFailure{}
		f := newFixture(t, ad, func(s store.Store) store.Store { sf.Store = s; return sf })
		logs := &reqlogtest.Buffer{}
		f.h = hub.New(f.st, hub.Options{Now: f.clock.Now, OrderedWrites: ad.OrderedWrites,
			Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		cr := ibShownToBob(f, 200, hub.FilterAll)
		const warning = `"msg":"intent left for the sweep"`

		if out, err := ibAck(f, cr, "finished", ibSeqs(1, 100)...); err != nil || out.Acked != 100 {
			t.Fatalf("InboxAck(1..100) = %+v, %v; want 100 acked", out, err)
		}
		if strings.Contains(logs.String(), warning) {
			t.Errorf("an ACK whose intent finished logged it as left for the sweep:\n%s", logs.String())
		}

		sf.armed.Store(true)
		out, err := ibAck(f, cr, "left", ibSeqs(101, 200)...)
		sf.armed.Store(false)
		if err != nil || out.Acked != 100 {
			t.Fatalf("InboxAck(101..200) with its intent's step failing = %+v, %v; want 100 acked (the first write committed)", out, err)
		}
		if n := strings.Count(logs.String(), warning); n != 1 || !strings.Contains(logs.String(), `"level":"WARN"`) {
			t.Errorf("an ACK whose intent could not finish logged %d warnings, want 1:\n%s", n, logs.String())
		}
	})
}

// outOfRangeFailure answers, while armed, every write with a condition
// failure naming an operation the write does not have: a store breaking
// its contract, which no real adapter does (a fault for a wrapper).
type outOfRangeFailure struct {
	store.Store
	armed atomic.Bool
}

func (s *outOfRangeFailure) Write(ctx context.Context, ops []store.Op) error {
	if s.armed.Load() {
		return &store.ConditionFailedError{Index: len(ops), Failed: []int{len(ops)}}
	}
	return s.Store.Write(ctx, ops)
}

// TestWriteFailureOutOfRange: a condition failure that names no operation
// of the write is STORAGE_FAILURE, never a panic or another op's answer.
func TestWriteFailureOutOfRange(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var w *outOfRangeFailure
		f := newFixture(t, ad, func(s store.Store) store.Store { w = &outOfRangeFailure{Store: s}; return w })
		cr := f.prime(f.a)
		w.armed.Store(true)
		_, err := f.h.MessageSend(f.ctx, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "dm"},
			Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.b.AgentID}, BodyMD: "hello"})
		wantCode(t, "MessageSend(a failure index past the write)", err, apperr.StorageFailure)
	})
}

// TestAckFinishesALeftIntent: an ACK that finds another ACK's intent still
// open finishes it first, then decides against the rows it marked: bob's
// ACK of 101..200 leaves its last 10 rows to an intent (its step fails);
// his next ACK of 191..200 completes that intent and answers
// already_acked for all 10, with the ACK counter at exactly 200.
func TestAckFinishesALeftIntent(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		sf := &stepFailure{}
		f := newFixture(t, ad, func(s store.Store) store.Store { sf.Store = s; return sf })
		cr := ibShownToBob(f, 200, hub.FilterAll)
		if _, err := ibAck(f, cr, "first", ibSeqs(1, 100)...); err != nil {
			t.Fatalf("InboxAck(1..100): %v", err)
		}
		sf.armed.Store(true)
		if _, err := ibAck(f, cr, "left", ibSeqs(101, 200)...); err != nil {
			t.Fatalf("InboxAck(101..200) with its intent's step failing: %v", err)
		}
		sf.armed.Store(false)
		out, err := ibAck(f, cr, "after", ibSeqs(191, 200)...)
		if err != nil || out == nil || len(out.Results) != 10 {
			t.Fatalf("InboxAck(191..200) after the left intent = %+v, %v; want 10 results", out, err)
		}
		for _, r := range out.Results {
			if r.Status != "already_acked" {
				t.Errorf("row %d = %s, want already_acked (the left intent acknowledged it)", r.InboxSeq, r.Status)
			}
		}
		if head, acked := rawInbox(f, f.b.AgentID); head != 200 || acked != 200 {
			t.Errorf("stored head %d, ACK counter %d; want 200 and 200", head, acked)
		}
	})
}

package hub

import (
	"context"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/metrics/metricstest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/google/uuid"
)

// failingQuery is a store whose queries fail: the sweep itself cannot run.
type failingQuery struct{ store.Store }

func (failingQuery) Query(context.Context, store.Query) ([]*store.Item, error) {
	return nil, store.ErrUnavailable
}

// TestSweepReportsStuckIntents: an intent the sweep cannot finish is
// counted as stuck, in the report and on the metrics port, next to the
// intents it finished; it stays for the next run. A sweep that cannot
// query fails with an error and records nothing.
func TestSweepReportsStuckIntents(t *testing.T) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			clock := teststores.NewClock()
			st := ad.Open(t, clock.Now)
			rec := &metricstest.Recorder{}
			h := New(st, Options{Now: clock.Now, Metrics: rec})
			ctx := context.Background()
			put := func(it *store.Item) {
				t.Helper()
				if err := st.Write(ctx, []store.Op{store.Put(it, store.Absent)}); err != nil {
					t.Fatalf("Write(intent): %v", err)
				}
			}
			agent := uuid.NewString()
			fan := fanoutPayload{MessageID: uuid.NewString(), Stream: "room#r", Seq: 1, At: clock.Now(),
				To: []recipient{{Agent: agent, Reasons: ReasonFollowAll}}}
			put(newIntent(intentFanout, 1, fan, clock.Now(), uuid.NewString()).Item())
			// An intent of a kind this version cannot run never finishes.
			stuck := newIntent("no-such-kind", 1, fan, clock.Now(), uuid.NewString())
			put(stuck.Item())
			clock.Advance(time.Second)

			for run := range 2 {
				r, err := h.SweepReport(ctx, 0, 10)
				if err != nil {
					t.Fatalf("run %d: SweepReport: %v", run, err)
				}
				want := metrics.Sweep{Due: 2 - run, Finished: 1 - run, Stuck: 1}
				if r != want {
					t.Fatalf("run %d: report = %+v, want %+v", run, r, want)
				}
				if got := rec.Sweeps(); len(got) != run+1 || got[run] != want {
					t.Fatalf("run %d: recorded %+v, want %+v last", run, got, want)
				}
			}

			broken := New(failingQuery{st}, Options{Now: clock.Now, Metrics: rec})
			if _, err := broken.SweepReport(ctx, 0, 10); err == nil {
				t.Fatal("a sweep whose query fails returned no error")
			}
			if got := rec.Sweeps(); len(got) != 2 {
				t.Fatalf("failed sweep recorded %+v", got)
			}
		})
	}
}

// TestRetryCountsOnTheCallsTally: each contention retry of the kernel
// counts on the call's tally.
func TestRetryCountsOnTheCallsTally(t *testing.T) {
	t.Parallel()
	ctx, tally := metrics.Begin(context.Background())
	runs := 0
	if _, err := retry(ctx, func() (int, error) {
		runs++
		if runs < 3 {
			return 0, errContended
		}
		return 1, nil
	}); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if c := tally.Call("t", "OK", 0); c.Retries != 2 {
		t.Fatalf("retries = %d after %d runs, want 2", c.Retries, runs)
	}
}

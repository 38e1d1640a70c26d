package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/metrics"
)

func TestTallyCountsOnlyItsCall(t *testing.T) {
	t.Parallel()
	// Outside a call the counters go nowhere and do not panic.
	metrics.AddRetry(context.Background())
	metrics.AddFanoutStep(context.Background())

	ctx, tally := metrics.Begin(context.Background())
	metrics.AddRetry(ctx)
	metrics.AddRetry(ctx)
	metrics.AddFanoutStep(ctx)
	other, otherTally := metrics.Begin(context.Background())
	metrics.AddRetry(other)

	got := tally.Call("message_send", "OK", 5*time.Millisecond)
	want := metrics.Call{Tool: "message_send", Code: "OK", Duration: 5 * time.Millisecond, Retries: 2, FanoutSteps: 1}
	if got != want {
		t.Fatalf("call = %+v, want %+v", got, want)
	}
	if c := otherTally.Call("x", "OK", 0); c.Retries != 1 || c.FanoutSteps != 0 {
		t.Fatalf("other call = %+v, want its own single retry", c)
	}
	var none *metrics.Tally
	if c := none.Call("x", "OK", 0); c.Retries != 0 {
		t.Fatalf("nil tally = %+v", c)
	}
	var r metrics.Recorder = metrics.Nop{}
	r.Call(ctx, got)
	r.Sweep(ctx, metrics.Sweep{})
}

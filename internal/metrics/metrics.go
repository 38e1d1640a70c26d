// Package metrics is the port through which the domain and the transports
// report what an operator counts: one record per tool call (tool, outcome
// code, latency, and what the call cost in contention retries and fan-out
// steps) and one per intent sweep. It knows nothing of CloudWatch: the
// Lambda functions implement Recorder with the Embedded Metric Format
// (functions/lambdafn); everything else uses Nop.
//
// A call's counters travel in its context (Begin), so code deep in a call
// (the kernel's retry loop) adds to them without a recorder of its own.
package metrics

import (
	"context"
	"sync/atomic"
	"time"
)

// Call is one tool call as the transport saw it.
type Call struct {
	// Tool is the registry name, or "" for a request no tool served.
	Tool string
	// Code is the outcome: "OK" or the error envelope's code.
	Code     string
	Duration time.Duration
	// Retries counts the contention retries the call ran (the kernel's
	// retry loop: a lost compare-and-set, a throttled or conflicting
	// write that wrote nothing).
	Retries int64
	// FanoutSteps counts the fan-out intent steps the call committed.
	FanoutSteps int64
}

// Sweep is one run of the intent sweep.
type Sweep struct {
	// Due is how many intents older than the grace the run found, at most
	// its batch.
	Due int
	// Finished is how many of them it finished.
	Finished int
	// Stuck is how many it could not finish: they stay, and the next run
	// tries again.
	Stuck int
}

// Recorder receives the records. Implementations must be safe for
// concurrent use and must not block the call for long.
type Recorder interface {
	Call(ctx context.Context, c Call)
	Sweep(ctx context.Context, s Sweep)
}

// Nop records nothing.
type Nop struct{}

func (Nop) Call(context.Context, Call)   {}
func (Nop) Sweep(context.Context, Sweep) {}

// Tally holds one call's counters.
type Tally struct {
	retries, fanoutSteps atomic.Int64
}

type ctxKey struct{}

// Begin returns ctx carrying a fresh tally for one call.
func Begin(ctx context.Context) (context.Context, *Tally) {
	t := &Tally{}
	return context.WithValue(ctx, ctxKey{}, t), t
}

func from(ctx context.Context) *Tally {
	t, _ := ctx.Value(ctxKey{}).(*Tally)
	return t
}

// AddRetry counts one contention retry on ctx's call, if any.
func AddRetry(ctx context.Context) {
	if t := from(ctx); t != nil {
		t.retries.Add(1)
	}
}

// AddFanoutStep counts one committed fan-out step on ctx's call, if any.
func AddFanoutStep(ctx context.Context) {
	if t := from(ctx); t != nil {
		t.fanoutSteps.Add(1)
	}
}

// Call returns the record of the finished call. A nil tally has no
// counters.
func (t *Tally) Call(tool, code string, d time.Duration) Call {
	c := Call{Tool: tool, Code: code, Duration: d}
	if t != nil {
		c.Retries, c.FanoutSteps = t.retries.Load(), t.fanoutSteps.Load()
	}
	return c
}

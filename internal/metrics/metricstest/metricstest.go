// Package metricstest is a metrics.Recorder that keeps what it receives,
// for tests.
package metricstest

import (
	"context"
	"slices"
	"sync"

	"github.com/agentbox/agentbox/internal/metrics"
)

// Recorder keeps every record; safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	calls  []metrics.Call
	sweeps []metrics.Sweep
}

func (r *Recorder) Call(_ context.Context, c metrics.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *Recorder) Sweep(_ context.Context, s metrics.Sweep) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweeps = append(r.sweeps, s)
}

// Calls returns the calls recorded so far.
func (r *Recorder) Calls() []metrics.Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Sweeps returns the sweep runs recorded so far.
func (r *Recorder) Sweeps() []metrics.Sweep {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sweeps)
}

// Package ctxtime is how the service and its tests wait on the clock
// within a context: between retries, for a duration or until the caller's
// context ends, whichever comes first, and for how long (a full-jitter
// exponential backoff); and a periodic task that stops with its context.
// Every retry loop (the hub's kernel, the DynamoDB adapter, the
// conformance suite, the test stores) and every server sweep waits
// through it, so a cancelled call never sleeps on.
package ctxtime

import (
	"context"
	"math/rand/v2"
	"time"
)

// Sleep waits for d, or until ctx ends; then it returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff is the delay before retry round n (0 for the first retry): a
// random duration below a ceiling of base doubled per round (at most 64
// times base, and at most limit when limit > 0), plus floor, so that
// writers colliding on one item spread out instead of colliding again in
// lockstep, and no retry runs at once.
func Backoff(base, limit, floor time.Duration, n int) time.Duration {
	ceiling := base << min(max(n, 0), 6)
	if limit > 0 {
		ceiling = min(ceiling, limit)
	}
	return time.Duration(rand.Int64N(int64(ceiling))) + floor
}

// Every runs fn every interval, the first time one interval from now,
// until ctx ends; it returns then. The server's sweeps run on it.
func Every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

package ctxtime_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbox/agentbox/internal/ctxtime"
)

// TestSleep: Sleep returns nil after the whole duration, and the context's
// error as soon as the context ends first.
func TestSleep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := ctxtime.Sleep(t.Context(), time.Hour); err != nil || time.Since(start) != time.Hour {
			t.Errorf("Sleep(1h) = %v after %v, want nil after 1h", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start = time.Now()
		if err := ctxtime.Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Minute {
			t.Errorf("Sleep(1h) under a 1m deadline = %v after %v, want DeadlineExceeded after 1m", err, time.Since(start))
		}
	})
}

// TestBackoff: every delay lies in [floor, floor+ceiling), the ceiling
// doubling per round from base up to 64×base or limit.
func TestBackoff(t *testing.T) {
	t.Parallel()
	const floor = time.Microsecond
	for _, tc := range []struct {
		base, limit time.Duration
		round       int
		ceiling     time.Duration
	}{
		{time.Millisecond, 0, -1, time.Millisecond},
		{time.Millisecond, 0, 0, time.Millisecond},
		{time.Millisecond, 0, 3, 8 * time.Millisecond},
		{time.Millisecond, 0, 100, 64 * time.Millisecond},
		{25 * time.Millisecond, time.Second, 5, 800 * time.Millisecond},
		{25 * time.Millisecond, time.Second, 6, time.Second},
	} {
		var top time.Duration
		for range 2000 {
			d := ctxtime.Backoff(tc.base, tc.limit, floor, tc.round)
			if d < floor || d >= floor+tc.ceiling {
				t.Fatalf("Backoff(%v, %v, %v, %d) = %v, want in [%v, %v)", tc.base, tc.limit, floor, tc.round, d, floor, floor+tc.ceiling)
			}
			top = max(top, d)
		}
		if top < floor+tc.ceiling/2 {
			t.Errorf("Backoff(%v, %v, %v, %d): largest of 2000 delays %v, want the ceiling %v reached for", tc.base, tc.limit, floor, tc.round, top, tc.ceiling)
		}
	}
}

// TestEvery: fn runs once per interval, the first time one interval in, and
// Every returns when the context ends.
func TestEvery(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute+time.Second)
		defer cancel()
		start := time.Now()
		var at []time.Duration
		ctxtime.Every(ctx, time.Minute, func(context.Context) { at = append(at, time.Since(start)) })
		if want := []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute}; !slices.Equal(at, want) {
			t.Errorf("Every(1m) over 3m1s ran at %v, want %v", at, want)
		}
		if time.Since(start) != 3*time.Minute+time.Second {
			t.Errorf("Every returned after %v, want when the context ended (3m1s)", time.Since(start))
		}
	})
}

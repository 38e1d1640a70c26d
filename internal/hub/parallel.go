package hub

import (
	"context"
	"sync"
)

// viewParallelism bounds the reads one operator-view page runs at once: a
// box page reads a query per room and per agent, which one after another
// take a round trip each on DynamoDB.
const viewParallelism = 8

// eachLimit calls fn for 0 ≤ i < n, at most limit at a time, and returns
// the error of the lowest i that failed (nil when none did). fn must write
// only to what belongs to i.
func eachLimit(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	errs := make([]error, n)
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if ctx.Err() == nil {
				errs[i] = fn(ctx, i)
			} else {
				errs[i] = ctx.Err()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

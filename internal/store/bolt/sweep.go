package bolt

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	bbolt "go.etcd.io/bbolt"
)

// sweepBatch bounds one sweeping transaction, so the single bbolt writer is
// never held long enough to stall requests.
const sweepBatch = 500

// Sweep deletes up to limit expired items (and their index entries),
// playing the part of DynamoDB's TTL process for the embedded store.
// Reads already treat expired items as absent, so sweeping changes no
// answer; it only reclaims space. It returns how many items it removed.
func (s *Store) Sweep(ctx context.Context, limit int) (int, error) {
	removed := 0
	var after []byte
	for removed < limit {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		now := s.now().Unix()
		n, next, err := s.sweepOnce(now, after, min(sweepBatch, limit-removed))
		removed += n
		if err != nil {
			return removed, err
		}
		if next == nil {
			return removed, nil
		}
		after = next
	}
	return removed, nil
}

// sweepOnce scans from after (exclusive), deleting expired items until it
// has removed max of them or scanned a bounded number of keys; next is
// where to resume, nil at the end of the bucket. It holds the lead and
// checkpoints first, so that it changes bbolt with no overlay above it.
func (s *Store) sweepOnce(now int64, after []byte, max int) (removed int, next []byte, err error) {
	c := s.group
	c.lead <- struct{}{}
	defer func() { <-c.lead }()
	if err := c.checkpoint(); err != nil {
		return 0, nil, fmt.Errorf("bolt: sweep: %w", err)
	}
	err = s.db.Update(func(tx *bbolt.Tx) error {
		w := writer{items: tx.Bucket(bucketItems), gsi1: tx.Bucket(bucketGSI1), gsi2: tx.Bucket(bucketGSI2)}
		c := w.items.Cursor()
		k, v := c.First()
		if after != nil {
			k, v = c.Seek(after)
			if k != nil && string(k) == string(after) {
				k, v = c.Next()
			}
		}
		var dead []*store.Item
		scanned := 0
		for ; k != nil && len(dead) < max && scanned < 20*sweepBatch; k, v = c.Next() {
			scanned++
			pk, sk, err := splitTableKey(k)
			if err != nil {
				return err
			}
			it, err := decodeItem(pk, sk, v)
			if err != nil {
				return err
			}
			if !store.Live(it.ExpiresAt, now) {
				dead = append(dead, it)
			}
			next = append(next[:0], k...)
		}
		if k == nil {
			next = nil
		}
		for _, it := range dead {
			if err := w.replace(it, nil); err != nil {
				return err
			}
		}
		removed = len(dead)
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("bolt: sweep: %w", err)
	}
	return removed, next, nil
}

// SweepEvery runs Sweep every interval until ctx ends; the local server
// starts it beside the HTTP listener.
func (s *Store) SweepEvery(ctx context.Context, interval time.Duration, onErr func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Sweep(ctx, 1<<20); err != nil && ctx.Err() == nil && onErr != nil {
				onErr(err)
			}
		}
	}
}

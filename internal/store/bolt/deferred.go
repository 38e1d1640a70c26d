package bolt

// Deferred Writes (store.Deferred).
//
// A deferred Write is decided when it is made: its conditions are
// evaluated against the committed state and the deferred Writes not yet
// committed (the overlay), and a failure is answered at once. It is then
// queued like any Write, but its caller does not wait: the next group
// commit carries it (a Write queued after it lands in the same group or a
// later one, so it is durable no later than that Write's answer), and when
// no Write comes within deferredWait, a flusher commits it alone. Until it
// is committed, Get and BatchGet answer from the overlay, and a Query of
// its partition waits for its commit, so every later read sees it.
//
// Only puts of items outside the indexes, over items outside them, are
// deferred: an index read never needs the overlay. When the group that
// carries a deferred Write finds its condition no longer holds (a Write
// to the same key was queued before it), the Write is dropped, as a crash
// before its commit would drop it.

import (
	"context"
	"strings"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	bbolt "go.etcd.io/bbolt"
)

// deferredWait is how long a deferred Write waits for another Write's
// commit to carry it before the flusher commits it alone.
const deferredWait = 20 * time.Millisecond

// pendingItem is an item of a deferred Write not yet committed.
type pendingItem struct {
	it *store.Item
	r  *request
}

// deferrable reports whether ops may be deferred, as far as the ops alone
// tell (writeDeferred checks the items they replace).
func deferrable(ops []store.Op) bool {
	for _, op := range ops {
		if op.Kind != store.OpPut || op.Item == nil || indexed(op.Item) {
			return false
		}
	}
	return len(ops) > 0
}

func indexed(it *store.Item) bool { return it.GSI1PK != "" || it.GSI2PK != "" }

// writeDeferred runs ops as a deferred Write, or as a Write when they
// cannot be deferred.
func (c *committer) writeDeferred(ctx context.Context, ops []store.Op) error {
	if c.serial || !deferrable(ops) {
		return c.write(ctx, ops)
	}
	queued, err := c.queueDeferred(ctx, ops)
	if err != nil || queued {
		return err
	}
	// An op replaces an indexed item: an index read must see it, so it
	// waits for its commit like any Write.
	return c.write(ctx, ops)
}

// queueDeferred decides ops against the overlay and the file and queues
// them without waiting; queued is false, with nothing done, when an op
// replaces an indexed item.
func (c *committer) queueDeferred(ctx context.Context, ops []store.Op) (queued bool, err error) {
	now := c.now().Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	live := make([]*store.Item, len(ops))
	var fromFile []int
	for i, op := range ops {
		if p, ok := c.pending[string(tableKey(op.Item.PK, op.Item.SK))]; ok {
			live[i] = p.it
		} else {
			fromFile = append(fromFile, i)
		}
	}
	if len(fromFile) > 0 {
		replacesIndexed := false
		err := c.db.View(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketItems)
			for _, i := range fromFile {
				it, err := load(b, ops[i].Item.Key())
				if err != nil {
					return err
				}
				replacesIndexed = replacesIndexed || (it != nil && indexed(it))
				live[i] = it
			}
			return nil
		})
		if err != nil || replacesIndexed {
			return false, err
		}
	}
	var failed []int
	for i, op := range ops {
		if live[i] != nil && !store.Live(live[i].ExpiresAt, now) {
			live[i] = nil
		}
		if !store.Holds(op.Cond, live[i]) {
			failed = append(failed, i)
		}
	}
	if len(failed) > 0 {
		return false, store.NewConditionFailed(ops, failed)
	}
	r := &request{ctx: context.WithoutCancel(ctx), ops: ops, done: make(chan error, 1), deferred: true}
	for _, op := range ops {
		c.pending[string(tableKey(op.Item.PK, op.Item.SK))] = pendingItem{it: op.Item, r: r}
	}
	c.queue = append(c.queue, r)
	if !c.flushArmed {
		c.flushArmed = true
		go func() {
			select {
			case <-time.After(deferredWait):
			case <-c.closing:
			}
			c.flush()
		}()
	}
	return true, nil
}

// close commits what is queued and ends the flushers' waits.
func (c *committer) close() {
	c.closeOnce.Do(func() { close(c.closing) })
	c.flush()
}

// flush takes the lead and commits everything queued, deferred Writes
// included.
func (c *committer) flush() {
	c.lead <- struct{}{}
	defer func() { <-c.lead }()
	c.mu.Lock()
	c.flushArmed = false
	c.mu.Unlock()
	for c.queued() > 0 {
		c.runQueued()
	}
}

// settle forgets the overlay items of group's deferred Writes, once the
// group is committed or has failed: reads find them in the file, or not
// at all.
func (c *committer) settle(group []*request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range group {
		if !r.deferred {
			continue
		}
		for _, op := range r.ops {
			k := string(tableKey(op.Item.PK, op.Item.SK))
			if p, ok := c.pending[k]; ok && p.r == r {
				delete(c.pending, k)
			}
		}
	}
}

// overlay returns, for each key, the item of a deferred Write not yet
// committed, or nil; nil when there is none at all. Readers take it before
// their snapshot: an item settled after it is in the snapshot.
func (c *committer) overlay(keys []store.Key) []*store.Item {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	var out []*store.Item
	for i, k := range keys {
		if p, ok := c.pending[string(tableKey(k.PK, k.SK))]; ok {
			if out == nil {
				out = make([]*store.Item, len(keys))
			}
			cp := *p.it
			out[i] = &cp
		}
	}
	return out
}

// settlePartition commits the deferred Writes pending in partition pk,
// so that a Query of it reads them from the file.
func (c *committer) settlePartition(pk string) {
	prefix := pk + "\x00"
	for range maxGroup {
		c.mu.Lock()
		found := false
		for k := range c.pending {
			if strings.HasPrefix(k, prefix) {
				found = true
				break
			}
		}
		c.mu.Unlock()
		if !found {
			return
		}
		c.flush()
	}
}

package bolt

// Deferred Writes (store.Deferred).
//
// A deferred Write is decided when it is made: its conditions are
// evaluated against the committed state (bbolt and the overlay) and the
// deferred Writes not yet committed (pending), and a failure is answered
// at once. It is then
// queued like any Write, but its caller does not wait: the next group
// commit carries it (a Write queued after it lands in the same group or a
// later one, so it is durable no later than that Write's answer), and when
// no Write comes within deferredWait, a flusher commits it alone. Until it
// is journaled, every read merges it from pending above the overlay
// (overlay.go), so every later read sees it.
//
// Only puts of items outside the indexes, over items outside them, are
// deferred: an index read never needs pending. When the group that
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
// commit to carry it before the flusher commits it alone: at one sender
// and one polling receiver, the sender's next DM carries the receiver's
// receipt, so a poll costs no sync of its own.
const deferredWait = 100 * time.Millisecond

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

// queueDeferred decides ops against the overlays and the file and queues
// them without waiting; queued is false, with nothing done, when an op
// replaces an indexed item.
func (c *committer) queueDeferred(ctx context.Context, ops []store.Op) (queued bool, err error) {
	now := c.now().Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.failure(); err != nil {
		return false, err
	}
	live := make([]*store.Item, len(ops))
	var fromFile []int
	for i, op := range ops {
		tk := string(tableKey(op.Item.PK, op.Item.SK))
		if p, ok := c.pending[tk]; ok {
			live[i] = p.it
		} else if it, ok := c.lookup(tk); ok {
			if it != nil && indexed(it) {
				return false, nil
			}
			live[i] = it
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
		c.pending[string(tableKey(op.Item.PK, op.Item.SK))] = pendingItem{it: cloneItem(op.Item), r: r}
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

// close commits what is queued, waits for the checkpoint in flight,
// checkpoints the rest and ends the flushers' waits.
func (c *committer) close() error {
	c.closeOnce.Do(func() { close(c.closing) })
	c.flush()
	c.lead <- struct{}{}
	defer func() { <-c.lead }()
	return c.checkpoint()
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

// settle forgets the pending items of group's deferred Writes, once the
// group is journaled or has failed: reads find them in the overlay, or
// not at all.
func (c *committer) settle(group []*request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settleLocked(group)
}

func (c *committer) settleLocked(group []*request) {
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

// layered is one key's state above bbolt: ok when pending or the overlay
// decides it (it nil: deleted).
type layered struct {
	it *store.Item
	ok bool
}

// lookup returns the state of tk in the overlay, else in the frozen
// layer, and whether either decides it. The caller holds mu.
func (c *committer) lookup(tk string) (*store.Item, bool) {
	if it, ok := c.ov.lookup(tk); ok || c.frozen == nil {
		return it, ok
	}
	return c.frozen.lookup(tk)
}

// above returns, for each key, its state in pending, the overlay or the
// frozen layer; nil when none decides any. Readers take it before their
// snapshot: an item checkpointed after it is in the snapshot.
func (c *committer) above(keys []store.Key) []layered {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 && len(c.ov.items) == 0 && c.frozen == nil {
		return nil
	}
	var out []layered
	for i, k := range keys {
		tk := string(tableKey(k.PK, k.SK))
		var l layered
		if p, ok := c.pending[tk]; ok {
			l = layered{p.it, true}
		} else {
			l.it, l.ok = c.lookup(tk)
		}
		if !l.ok {
			continue
		}
		if out == nil {
			out = make([]layered, len(keys))
		}
		if l.it != nil {
			l.it = cloneItem(l.it)
		}
		out[i] = l
	}
	return out
}

// partition returns what a Query of p between from and to (inclusive,
// empty: open) takes from pending, the overlay and the frozen layer,
// before its snapshot as above: every key they decide in p, and copies
// of their items in range. A key the frozen layer decides in p takes its
// state from the overlay when the overlay holds it: the key may have
// moved out of p, or back into it, since the layer froze.
func (c *committer) partition(p partKey, from, to string) partView {
	c.mu.Lock()
	defer c.mu.Unlock()
	var v partView
	consider := func(tk string, it *store.Item) {
		if v.hidden == nil {
			v.hidden = map[string]struct{}{}
		}
		if _, seen := v.hidden[tk]; seen {
			return
		}
		v.hidden[tk] = struct{}{}
		if it == nil {
			return
		}
		if sk, ok := inPartition(it, p); ok && sk >= from && (to == "" || sk <= to) {
			v.items = append(v.items, cloneItem(it))
		}
	}
	if p.ix == store.Table {
		prefix := p.pk + "\x00"
		for tk, pi := range c.pending {
			if strings.HasPrefix(tk, prefix) {
				consider(tk, pi.it)
			}
		}
	}
	for tk := range c.ov.parts[p] {
		consider(tk, c.ov.items[tk])
	}
	if c.frozen != nil {
		for tk := range c.frozen.parts[p] {
			it, _ := c.lookup(tk)
			consider(tk, it)
		}
	}
	return v
}

package hub

// # Serializing writers of one hot counter in this process
//
// A sequence counter (a receiver's inbox head, a stream's head) moves by
// compare-and-set (plan.next): every writer reads it, and the write moves
// it from the version read. When W callers in one process send to one
// receiver at once, they all read the same version; one commit wins and the
// others fail their condition, back off and run their whole call again —
// W−1 wasted reads, plans and validations per message, plus the backoff
// sleeps, which is what capped the messaging loop (BenchmarkInboxLoop).
//
// So a mutation declares the counters it will move (batch.addHot) and the
// kernel holds an in-process lock on each from just before its read until
// its commit has answered. Writers of one counter in this process then
// queue instead of colliding, and each reads the version its predecessor
// wrote. Writers of different counters are not ordered by one another (a
// striped set of mutexes; a collision of two counters on one stripe only
// orders them), and across processes (Lambda) nothing changes: the CAS
// still decides, and the retry still handles a lost race. The lock is an
// optimization, never what correctness rests on.
//
// Pipelining (Options.OrderedWrites): on a store whose concurrent Writes
// commit in the order they were called (bbolt's group commit), a holder
// need not keep the lock through its commit's fdatasync. Just before it
// calls Write it publishes the counter items it is about to write as
// pending and hands the lock on; the next writer reads, sees the pending
// version above the committed one, plans on top of it, and its Write,
// called later, lands after its predecessor's — often in the same group
// commit. If the predecessor fails, the successor's compare-and-set fails
// too and it runs again, as without any of this. So writers of one counter
// share commits instead of paying one each, and nothing but the CAS
// decides what commits.
//
// Deadlock: a call takes all its stripes at once, in ascending order, and
// takes no other stripe while it holds them (no mutation runs inside
// another's commit).

import (
	"hash/maphash"
	"slices"
	"sync"

	"github.com/agentbox/agentbox/internal/store"
)

// hotStripes is the number of striped locks: enough that two busy
// receivers rarely share one.
const hotStripes = 1024

// hotLocks are the striped locks of hot counters.
type hotLocks struct {
	seed    maphash.Seed
	stripes [hotStripes]sync.Mutex
	// off disables the locks (Options.IndependentCalls); pipeline
	// enables the hand-off before commit (Options.OrderedWrites).
	off, pipeline bool

	mu      sync.Mutex
	pending map[store.Key]*store.Item
	// rooms are the recipients of each room's last post (recipients).
	rooms map[string][]string
}

func newHotLocks(on, pipeline bool) *hotLocks {
	return &hotLocks{seed: maphash.MakeSeed(), off: !on, pipeline: on && pipeline, pending: make(map[store.Key]*store.Item),
		rooms: make(map[string][]string)}
}

// latest replaces, among keys read as items, each hot one with what a
// predecessor is writing when that is newer than what the store returned
// (pipelining). The caller holds the hot keys' stripes. Only hot keys: a
// plain read never sees an uncommitted item.
func (l *hotLocks) latest(keys, hot []store.Key, items []*store.Item) {
	if !l.pipeline || len(hot) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, k := range keys {
		if !slices.Contains(hot, k) {
			continue
		}
		if p := l.pending[k]; p != nil && (items[i] == nil || p.Version > items[i].Version) {
			cp := *p
			items[i] = &cp
		}
	}
}

// publish records the puts among ops that move one of hot as pending, and
// returns the function that withdraws them once the write has answered.
func (l *hotLocks) publish(hot []store.Key, ops []guardedOp) (withdraw func()) {
	if !l.pipeline {
		return func() {}
	}
	var mine []*store.Item
	l.mu.Lock()
	for _, g := range ops {
		it := g.op.Item
		if g.op.Kind != store.OpPut || it == nil || !slices.Contains(hot, it.Key()) {
			continue
		}
		cp := *it
		l.pending[it.Key()] = &cp
		mine = append(mine, &cp)
	}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, it := range mine {
			k := it.Key()
			if l.pending[k] == it {
				delete(l.pending, k)
			}
		}
	}
}

// stripesOf returns the stripes of keys, ascending, without repeats.
func (l *hotLocks) stripesOf(keys []store.Key) []int {
	idx := make([]int, 0, len(keys))
	for _, k := range keys {
		var h maphash.Hash
		h.SetSeed(l.seed)
		h.WriteString(k.PK)
		h.WriteByte(0)
		h.WriteString(k.SK)
		idx = append(idx, int(h.Sum64()%hotStripes))
	}
	slices.Sort(idx)
	return slices.Compact(idx)
}

// lock takes the stripes of keys, in ascending order, and returns the
// function that releases them.
func (l *hotLocks) lock(keys []store.Key) (unlock func()) {
	if l.off {
		return nil
	}
	idx := l.stripesOf(keys)
	for _, i := range idx {
		l.stripes[i].Lock()
	}
	return l.unlocker(idx)
}

func (l *hotLocks) unlocker(idx []int) func() {
	return func() {
		for _, i := range slices.Backward(idx) {
			l.stripes[i].Unlock()
		}
	}
}

// tryLock takes, without waiting, the stripes of keys that a call holding
// held's does not hold yet: a counter the call found it must move only
// after its read (a room post's recipients). Not waiting keeps the
// deadlock rule: a call waits for stripes only all at once, holding none.
// ok is false, with nothing taken, when one is busy; the call then runs
// again declaring the keys up front.
func (l *hotLocks) tryLock(keys, held []store.Key) (unlock func(), ok bool) {
	if l.off {
		return func() {}, true
	}
	have := l.stripesOf(held)
	var idx []int
	for _, i := range l.stripesOf(keys) {
		if _, found := slices.BinarySearch(have, i); !found {
			idx = append(idx, i)
		}
	}
	for j, i := range idx {
		if !l.stripes[i].TryLock() {
			l.unlocker(idx[:j])()
			return nil, false
		}
	}
	return l.unlocker(idx), true
}

// Room recipients. A room post's recipients are known only once its roster
// is read, after the locks are taken; so the locks remember, per room, the
// recipients of its last post in this process, and the next post declares
// their inbox heads hot up front (messages.go). A wrong guess costs only a
// lock taken for nothing or one taken late (tryLock).

// maxRememberedRooms bounds the rooms whose recipients are remembered.
const maxRememberedRooms = 4096

// recipients returns the remembered recipients of room's last post.
func (l *hotLocks) recipients(room string) []string {
	if l.off {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rooms[room]
}

// remember records the recipients of a post in room.
func (l *hotLocks) remember(room string, agents []string) {
	if l.off {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.Equal(l.rooms[room], agents) {
		return
	}
	if len(l.rooms) >= maxRememberedRooms {
		clear(l.rooms)
	}
	l.rooms[room] = agents
}

// holdLate adds keys to the counters the call holds, taking their stripes
// without waiting (tryLock); false when one is busy.
func (c *call) holdLate(keys []store.Key) bool {
	unlock, ok := c.h.hot.tryLock(keys, c.hot)
	if !ok {
		return false
	}
	c.hot = append(c.hot, keys...)
	prev := c.release
	c.release = func() {
		unlock()
		if prev != nil {
			prev()
		}
	}
	return true
}

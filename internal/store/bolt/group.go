package bolt

// Group commit.
//
// bbolt runs one read-write transaction at a time and pays two fdatasyncs
// for each commit, so one commit per Write caps the store at the disk's
// sync rate however many callers wait. Concurrent Writes therefore share
// commits: each Write queues a request and then either receives its result
// or becomes the leader. The leader (whoever takes the lead slot, a
// one-place channel) takes every queued request, runs them in queue order
// inside one bbolt transaction, commits once and hands each request its own
// result. Meanwhile the next writers queue up behind it; the next leader
// takes them all (after yielding while the queue still grows, see
// gather). An idle store has no batching delay: a lone Write leads at once
// and commits only itself.
//
// Atomicity stays per Write: writer.apply evaluates all of a request's
// conditions against the transaction's state (earlier members' effects
// included) and then applies all its operations, or none and records its
// *store.ConditionFailedError as that request's result. A failed condition
// is a result, never a group error, so it cannot fail another member. Any
// other error inside the transaction (or from the commit) rolls the whole
// group back and runs each member alone, so that the error reaches only
// the Write it belongs to. A group that changed nothing (every member
// failed its conditions or only checked) is rolled back, which costs no
// sync.
//
// Cancellation: a request whose context has ended before its group starts
// is dropped with ctx.Err(), by the leader or by the waiter withdrawing
// itself; once a leader has taken it, it gets the group's result (the
// outcome is decided by then).

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	bbolt "go.etcd.io/bbolt"
)

// maxGroup bounds the Writes in one transaction, so that a burst does not
// build one huge commit; the rest wait for the next leader.
const maxGroup = 128

// request is one Write waiting for a commit.
type request struct {
	ctx  context.Context
	ops  []store.Op
	done chan error // capacity 1; receives the request's result once
	// deferred: nobody waits for done, and the request's items are in the
	// overlay until it settles (deferred.go).
	deferred bool
}

// committer runs Writes, grouped or one by one.
type committer struct {
	db     *bbolt.DB
	now    func() time.Time
	serial bool // Options.SerialCommit

	lead chan struct{} // capacity 1; holding it makes a goroutine the leader

	mu    sync.Mutex
	queue []*request
	// pending is the overlay: by table key, the items of deferred Writes
	// not yet committed (deferred.go). flushArmed: a flusher will run.
	pending    map[string]pendingItem
	flushArmed bool
	closing    chan struct{} // closed by close: flushers stop waiting
	closeOnce  sync.Once

	commits atomic.Uint64 // bbolt commits made, for tests and benchmarks
	// lastGroup is the size of the last group run: above 1, the store is
	// busy (linger).
	lastGroup atomic.Int64
	// beforeGroup, when set, runs in the leader before it takes the queue
	// (tests use it to force a group deterministically).
	beforeGroup func(c *committer)
	// inGroup, when set, runs inside each group's transaction before its
	// members are applied (tests use it to fail a group).
	inGroup func()
}

func newCommitter(db *bbolt.DB, now func() time.Time, serial bool) *committer {
	return &committer{db: db, now: now, serial: serial, lead: make(chan struct{}, 1), pending: map[string]pendingItem{}, closing: make(chan struct{})}
}

// write runs ops as one atomic Write, sharing a commit with concurrent
// ones, and returns its own result.
func (c *committer) write(ctx context.Context, ops []store.Op) error {
	r := &request{ctx: ctx, ops: ops, done: make(chan error, 1)}
	if c.serial {
		c.run([]*request{r})
		return <-r.done
	}
	c.mu.Lock()
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	select {
	case err := <-r.done:
		return err
	case c.lead <- struct{}{}:
		c.leadUntilAnswered(r)
		return <-r.done
	case <-ctx.Done():
		if c.withdraw(r) {
			return ctx.Err()
		}
		return <-r.done
	}
}

// leadUntilAnswered runs groups until r has its answer, then gives up the
// lead. One group may not reach r (maxGroup of them queued ahead of it),
// and nobody else may be left to lead. r was queued before this leader
// started, so each group moves it forward or answers it. The lead is given
// up even when a panic unwinds through here: net/http recovers a handler's
// panic, and a lead held forever would stop every later Write.
func (c *committer) leadUntilAnswered(r *request) {
	defer func() { <-c.lead }()
	for len(r.done) == 0 {
		c.runQueued()
	}
}

// withdraw removes r from the queue and reports whether it was still
// there (no leader has taken it).
func (c *committer) withdraw(r *request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, q := range c.queue {
		if q == r {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			return true
		}
	}
	return false
}

// runQueued takes up to maxGroup queued requests, drops those whose
// context has ended, and runs the rest as one group. The caller holds the
// lead.
func (c *committer) runQueued() {
	if c.beforeGroup != nil {
		c.beforeGroup(c)
	}
	c.gather()
	c.mu.Lock()
	n := min(len(c.queue), maxGroup)
	taken := make([]*request, n)
	copy(taken, c.queue)
	c.queue = append(c.queue[:0], c.queue[n:]...)
	c.mu.Unlock()
	group := taken[:0]
	for _, r := range taken {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		group = append(group, r)
	}
	if len(group) > 0 {
		c.run(group)
	}
}

// maxYields bounds how often gather yields.
const maxYields = 8

// gather yields the processor while the queue keeps growing, so that
// writers already runnable (typically the members of the group just
// answered, coming back with their next Write) join this group instead of
// forming the next one. Without it, W busy writers split into two cohorts
// taking turns, and groups average W/2. It waits for nothing that is not
// ready to run: on an idle store the queue does not grow and the leader
// goes on after one yield.
func (c *committer) gather() {
	n := c.queued()
	for range maxYields {
		runtime.Gosched()
		m := c.queued()
		if m == n || m >= maxGroup {
			break
		}
		n = m
	}
	c.linger(n)
}

// lingerStep and maxLinger bound linger's waits.
const (
	lingerStep = 20 * time.Microsecond
	maxLinger  = 600 * time.Microsecond
)

// linger is gather under load. Writers that come back over HTTP take far
// longer than a yield to queue their next Write (the response, the next
// request, its reads), so busy writers still split into cohorts that take
// turns, and a group holds about half of them. When the last group had
// company — the store is busy — the leader waits in short sleeps while the
// queue keeps growing, for at most maxLinger, short beside the two
// fdatasyncs the members it gathers would otherwise pay each. A lone
// writer's last group was itself, so an idle store never lingers.
func (c *committer) linger(n int) {
	last := int(c.lastGroup.Load())
	if last < 2 {
		return
	}
	deadline := time.Now().Add(maxLinger)
	still := 0
	for n < last && time.Now().Before(deadline) {
		time.Sleep(lingerStep)
		m := c.queued()
		if m == n {
			if still++; still == 2 {
				return
			}
			continue
		}
		still, n = 0, m
	}
}

// queued returns how many requests wait for a leader.
func (c *committer) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// errAborted answers the requests of a group that a panic interrupted;
// their outcome is unknown.
var errAborted = errors.New("bolt: write aborted by a panic in its commit group")

// errUnchanged rolls back a transaction that changed nothing.
var errUnchanged = errors.New("bolt: nothing to commit")

// run applies group in one transaction and answers every request. On an
// error other than a failed condition it rolls back and runs each request
// alone.
func (c *committer) run(group []*request) {
	defer c.settle(group)
	defer func() {
		if p := recover(); p != nil {
			// Answer whoever is still waiting (a full buffer already holds
			// its answer), then go on panicking.
			for _, r := range group {
				select {
				case r.done <- errAborted:
				default:
				}
			}
			panic(p)
		}
	}()
	// Deferred members have no caller coming back with a next Write:
	// they are no sign of a busy store (linger).
	waiting := 0
	for _, r := range group {
		if !r.deferred {
			waiting++
		}
	}
	c.lastGroup.Store(int64(waiting))
	results := make([]error, len(group))
	err := c.db.Update(func(tx *bbolt.Tx) error {
		if c.inGroup != nil {
			c.inGroup()
		}
		w := newWriter(tx)
		now := c.now().Unix()
		changed := false
		for i, r := range group {
			ch, err := w.apply(r.ops, now)
			if _, ok := store.ConditionFailed(err); ok {
				results[i] = err
				continue
			}
			if err != nil {
				return err
			}
			changed = changed || ch
		}
		if !changed {
			return errUnchanged
		}
		return nil
	})
	switch {
	case err == nil:
		c.commits.Add(1)
	case errors.Is(err, errUnchanged):
	case len(group) > 1:
		for _, r := range group {
			c.run([]*request{r})
		}
		return
	default:
		results[0] = err
	}
	for i, r := range group {
		r.done <- results[i]
	}
}

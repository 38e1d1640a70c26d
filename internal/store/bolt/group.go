package bolt

// Group commit.
//
// Every Write is made durable by a journal append and its fdatasync
// (journal.go), and one append can carry many Writes. Concurrent Writes
// therefore share one: each Write queues a request and then either
// receives its result or becomes the leader. The leader (whoever takes
// the lead slot, a one-place channel) takes every queued request, applies
// them in queue order to a stage above the overlay and one bbolt read
// snapshot, appends the stage's changes as one record, syncs once, merges
// them into the overlay and hands each request its own result. Meanwhile
// the next writers queue up behind it; the next leader takes them all
// (after lingering while more are due, see gather). An idle store has no
// batching delay: a lone Write leads at once and commits only itself.
//
// Atomicity stays per Write: writer.apply evaluates all of a request's
// conditions against the stage (earlier members' effects included) and
// then stages all its operations, or none and records its
// *store.ConditionFailedError as that request's result. A failed
// condition is a result, never a group error, so it cannot fail another
// member, and neither can a store error (a corrupt item) met by one
// member. A group that changed nothing (every member failed its
// conditions or only checked) appends nothing, which costs no sync. A
// failed append fails every member that changed something (the outcome
// is unknown) and every later Write (journal.go).
//
// Cancellation: a request whose context has ended before its group starts
// is dropped with ctx.Err(), by the leader or by the waiter withdrawing
// itself; once a leader has taken it, it gets the group's result (the
// outcome is decided by then).

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	bbolt "go.etcd.io/bbolt"
)

// maxGroup bounds the Writes in one group, so that a burst does not build
// one huge record; the rest wait for the next leader.
const maxGroup = 128

// request is one Write waiting for a commit.
type request struct {
	ctx  context.Context
	ops  []store.Op
	done chan error // capacity 1; receives the request's result once
	// deferred: nobody waits for done, and the request's items are in
	// pending until it settles (deferred.go).
	deferred bool
}

// committer runs Writes, grouped or one by one.
type committer struct {
	db     *bbolt.DB
	now    func() time.Time
	serial bool // Options.SerialCommit

	lead chan struct{} // capacity 1; holding it makes a goroutine the leader

	// Held by the leader: the journal appended to, the other one (empty,
	// or holding the records of the checkpoint in flight) and the last
	// sequence number.
	journal, spare *journal
	seq            uint64
	// checkpointAt is the journal size that triggers a checkpoint
	// (checkpointBytes; tests lower it).
	checkpointAt int64
	// inFlight, held by the leader, is closed when the background
	// checkpoint started last has ended; nil when none was started since
	// the last wait.
	inFlight chan struct{}
	// checkpointHook, when set, runs in each background checkpoint before
	// its bbolt transaction (committed false) and after its commit, before
	// the frozen layer is dropped (committed true); an error returned
	// before the transaction fails the checkpoint. Tests use it to hold a
	// checkpoint in flight and to fail one.
	checkpointHook func(committed bool) error
	// failed, once set, refuses every later Write (journal.go).
	failed atomic.Pointer[error]

	mu    sync.Mutex
	queue []*request
	// ov is the overlay (overlay.go): changed only by the leader, under mu.
	// frozen, when not nil, is the overlay of the checkpoint in flight,
	// read-only, below ov: set by the leader and dropped by the checkpoint
	// once in bbolt, under mu.
	ov, frozen *overlay
	// pending: by table key, the items of deferred Writes not yet
	// journaled (deferred.go). flushArmed: a flusher will run.
	pending    map[string]pendingItem
	flushArmed bool
	closing    chan struct{} // closed by close: flushers stop waiting
	closeOnce  sync.Once
	// Arrivals, for linger: when the last waited-for Write queued, the
	// mean gap between them, how many Writes are inside write now and
	// the most seen since the last group was taken.
	lastArrival time.Time
	meanGap     time.Duration
	inflight    int
	peak        int
	arrived     chan struct{} // capacity 1; a Write queued

	commits     atomic.Uint64 // journal appends made, for tests and benchmarks
	checkpoints atomic.Uint64 // checkpoints committed to bbolt
	// lastGroup is the size of the last group run, deferred members left
	// out: above 1, the store is busy (linger). contended: a waited-for
	// member of it failed its condition.
	lastGroup atomic.Int64
	contended atomic.Bool
	// beforeGroup, when set, runs in the leader before it takes the queue
	// (tests use it to force a group deterministically).
	beforeGroup func(c *committer)
	// inGroup, when set, runs in each group before its members are
	// applied (tests use it to fail a group).
	inGroup func()
}

func newCommitter(db *bbolt.DB, j, spare *journal, seq uint64, now func() time.Time, serial bool) *committer {
	return &committer{db: db, journal: j, spare: spare, seq: seq, checkpointAt: checkpointBytes, now: now, serial: serial, lead: make(chan struct{}, 1),
		ov: newOverlay(), pending: map[string]pendingItem{}, closing: make(chan struct{}), arrived: make(chan struct{}, 1)}
}

// errFailed refuses Writes after a failed append or checkpoint.
var errFailed = errors.New("bolt: the store refuses writes after a failed journal append or checkpoint; restart the server to recover from the journal")

// failure returns the error that stopped the store's writes, or nil.
func (c *committer) failure() error {
	if p := c.failed.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *committer) fail(err error) {
	wrapped := fmt.Errorf("%w (%w)", errFailed, err)
	c.failed.CompareAndSwap(nil, &wrapped)
}

// write runs ops as one atomic Write, sharing a commit with concurrent
// ones, and returns its own result.
func (c *committer) write(ctx context.Context, ops []store.Op) error {
	if err := c.failure(); err != nil {
		return err
	}
	r := &request{ctx: ctx, ops: ops, done: make(chan error, 1)}
	if c.serial {
		c.lead <- struct{}{}
		defer func() { <-c.lead }()
		c.run([]*request{r})
		c.checkpointIfFull()
		return <-r.done
	}
	c.enqueue(r)
	defer func() {
		c.mu.Lock()
		c.inflight--
		c.mu.Unlock()
	}()
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

// enqueue queues a waited-for request and records its arrival.
func (c *committer) enqueue(r *request) {
	now := time.Now()
	c.mu.Lock()
	c.queue = append(c.queue, r)
	if !c.lastArrival.IsZero() {
		gap := min(now.Sub(c.lastArrival), 50*time.Millisecond)
		c.meanGap += (gap - c.meanGap) / 8
	}
	c.lastArrival = now
	c.inflight++
	c.peak = max(c.peak, c.inflight)
	c.mu.Unlock()
	select {
	case c.arrived <- struct{}{}:
	default:
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
// context has ended, and runs the rest as one group, then starts a
// checkpoint when the journal has grown past checkpointAt. The caller
// holds the lead.
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
	c.peak = c.inflight
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
	c.checkpointIfFull()
}

// checkpointIfFull starts a checkpoint once the journal has grown past
// checkpointAt, first waiting for the one in flight, if any: the leader
// holds the next group meanwhile, which bounds the overlay and the
// journals when bbolt's commits fall behind the appends. The caller holds
// the lead.
func (c *committer) checkpointIfFull() {
	if c.journal.off >= c.checkpointAt {
		c.waitCheckpoint()
		c.startCheckpoint() // a failure refuses later Writes
	}
}

// maxYields bounds how often gather yields.
const maxYields = 8

// gather yields the processor while the queue keeps growing, so that
// writers already runnable (typically the members of the group just
// answered, coming back with their next Write) join this group instead of
// forming the next one. It waits for nothing that is not ready to run: on
// an idle store the queue does not grow and the leader goes on after one
// yield. Under load it lingers.
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

// Linger's bounds.
const (
	minLinger = 500 * time.Microsecond
	maxLinger = 5 * time.Millisecond
)

// linger is gather under load. Writers that come back over HTTP take far
// longer than a yield to queue their next Write (the response, the next
// request, its reads), so without it busy writers split into cohorts that
// take turns, each paying its own sync. When the store is busy — the last
// group, or the Writes in flight since it was taken, had company — the
// leader waits for about two mean gaps between arrivals (clamped to
// minLinger..maxLinger), or until as many Writes are queued as that
// company. A lone writer is never busy, so it never lingers. Nor does a
// leader after a group in which a waited-for member failed its condition:
// writers racing for one item by compare-and-set (not the hub's senders,
// which hand their counter on in order) would only be lined up to lose
// together, one winner per commit.
func (c *committer) linger(n int) {
	if c.contended.Load() {
		return
	}
	c.mu.Lock()
	want := max(int(c.lastGroup.Load()), c.peak)
	wait := min(max(2*c.meanGap, minLinger), maxLinger)
	c.mu.Unlock()
	if want < 2 || n >= want {
		return
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for c.queued() < want {
		select {
		case <-c.arrived:
		case <-timer.C:
			return
		}
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

// stage is a group's changes above the overlay and a bbolt snapshot.
type stage struct {
	items      *bbolt.Bucket
	ov, frozen *overlay // frozen may be nil
	changes    map[string]*store.Item
	order      []string
	// base holds what lies below the overlay (the frozen layer, else
	// bbolt) at the changed keys the overlay does not decide, for the
	// overlay's partition lists.
	base map[string]*store.Item
}

// stored returns what tk holds now, expired or not.
func (s *stage) stored(tk string, k store.Key) (*store.Item, error) {
	if it, ok := s.changes[tk]; ok {
		return it, nil
	}
	if it, ok := s.ov.lookup(tk); ok {
		return it, nil
	}
	if it, ok := s.base[tk]; ok {
		return it, nil
	}
	if s.frozen != nil {
		if it, ok := s.frozen.lookup(tk); ok {
			s.base[tk] = it
			return it, nil
		}
	}
	it, err := load(s.items, k)
	if err == nil {
		s.base[tk] = it
	}
	return it, err
}

func (s *stage) set(changes []change) {
	for _, ch := range changes {
		if _, ok := s.changes[ch.tk]; !ok {
			s.order = append(s.order, ch.tk)
		}
		s.changes[ch.tk] = ch.it
	}
}

// run applies group to a stage, journals it and answers every request.
// The caller holds the lead (or is a serial Write).
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
	if err := c.failure(); err != nil {
		for _, r := range group {
			r.done <- err
		}
		return
	}
	// The frozen layer is taken before the snapshot, as readers do
	// (overlay.go): once it is dropped, bbolt holds it.
	c.mu.Lock()
	frozen := c.frozen
	c.mu.Unlock()
	st := &stage{ov: c.ov, frozen: frozen, changes: map[string]*store.Item{}, base: map[string]*store.Item{}}
	wrote := make([]bool, len(group))
	err := c.db.View(func(tx *bbolt.Tx) error {
		if c.inGroup != nil {
			c.inGroup()
		}
		st.items = tx.Bucket(bucketItems)
		now := c.now().Unix()
		for i, r := range group {
			changes, err := apply(st, r.ops, now)
			if err != nil {
				results[i] = err
				continue
			}
			st.set(changes)
			wrote[i] = len(changes) > 0
		}
		return nil
	})
	if err != nil {
		for _, r := range group {
			r.done <- fmt.Errorf("bolt: read snapshot: %w", err)
		}
		return
	}
	contended := false
	for i, r := range group {
		if _, ok := store.ConditionFailed(results[i]); ok && !r.deferred {
			contended = true
		}
	}
	c.contended.Store(contended)
	if len(st.order) > 0 {
		changes := make([]change, len(st.order))
		for i, tk := range st.order {
			changes[i] = change{tk: tk, it: st.changes[tk]}
		}
		if err := c.journal.append(encodeRecord(c.seq+1, changes)); err != nil {
			c.fail(err)
			for i := range group {
				if wrote[i] {
					results[i] = err
				}
			}
		} else {
			c.seq++
			c.commits.Add(1)
			c.mu.Lock()
			for _, ch := range changes {
				c.ov.set(ch.tk, ch.it, func() *store.Item { return st.base[ch.tk] })
			}
			c.settleLocked(group)
			c.mu.Unlock()
		}
	}
	for i, r := range group {
		r.done <- results[i]
	}
}

// checkpoint moves everything journaled into bbolt and waits for it:
// the checkpoint in flight, then one of the overlay. Close, Sweep and
// Open use it; the caller holds the lead.
func (c *committer) checkpoint() error {
	c.waitCheckpoint()
	c.startCheckpoint()
	c.waitCheckpoint()
	return c.failure()
}

// waitCheckpoint waits for the checkpoint in flight, if any. The caller
// holds the lead.
func (c *committer) waitCheckpoint() {
	if c.inFlight != nil {
		<-c.inFlight
		c.inFlight = nil
	}
}

// startCheckpoint freezes the overlay, switches the appends to the spare
// journal and starts the checkpoint of the frozen layer in the
// background. The caller holds the lead, with no checkpoint in flight
// (so the spare journal is empty).
func (c *committer) startCheckpoint() {
	if c.failure() != nil || len(c.ov.items) == 0 {
		return
	}
	c.mu.Lock()
	frozen := c.ov
	c.frozen, c.ov = frozen, newOverlay()
	c.mu.Unlock()
	full := c.journal
	c.journal, c.spare = c.spare, full
	done := make(chan struct{})
	c.inFlight = done
	go c.checkpointFrozen(frozen, c.seq, full, done)
}

// checkpointFrozen applies the frozen layer frozen, whose last record is
// seq, to bbolt in one transaction that records seq, then drops the
// layer and truncates its journal full, and closes done. A failure
// refuses every later Write; the layer stays, so reads go on, and the
// journals keep every record for the next Open.
func (c *committer) checkpointFrozen(frozen *overlay, seq uint64, full *journal, done chan struct{}) {
	defer close(done)
	defer func() {
		// No caller to hand a panic to: the store fails instead, as on
		// any failed checkpoint, rather than take the process down.
		if p := recover(); p != nil {
			c.fail(fmt.Errorf("bolt: checkpoint: panic: %v", p))
		}
	}()
	if err := c.commitLayer(frozen, seq); err != nil {
		c.fail(fmt.Errorf("bolt: checkpoint: %w", err))
		return
	}
	c.checkpoints.Add(1)
	if c.checkpointHook != nil {
		_ = c.checkpointHook(true)
	}
	c.mu.Lock()
	c.frozen = nil
	c.mu.Unlock()
	if err := full.rewind(); err != nil {
		c.fail(err)
	}
}

// commitLayer writes the layer's items to bbolt, with seq as the last
// checkpointed record, in one transaction.
func (c *committer) commitLayer(layer *overlay, seq uint64) error {
	if c.checkpointHook != nil {
		if err := c.checkpointHook(false); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(layer.items))
	for tk := range layer.items {
		keys = append(keys, tk)
	}
	slices.Sort(keys) // bbolt puts in key order touch each page once
	return c.db.Update(func(tx *bbolt.Tx) error {
		w := newWriter(tx)
		for _, tk := range keys {
			pk, sk, err := splitTableKey([]byte(tk))
			if err != nil {
				return err
			}
			old, err := load(w.items, store.Key{PK: pk, SK: sk})
			if err != nil {
				return err
			}
			if err := w.replace(old, layer.items[tk]); err != nil {
				return err
			}
		}
		return putSeq(tx, seq)
	})
}

package hub

// The kernel: how every tool call runs.
//
// A tool file holds only that tool's rules. What every call shares — the
// authenticated batched read, the session, replays, the profile check, the
// commit, mapping failed conditions to domain errors, retrying contention and
// the session touch — lives here, in two runners:
//
//	read(ctx, h, cr, reads, fn)        a read tool
//	mutate(ctx, h, cr, m, reads, fn)   a mutation
//
// reads declares what the call needs besides authentication, as named slots
// of the first batched read (batch.add returns a slot; call.item reads it),
// so a tool never indexes positional results. fn applies the tool's rules to
// what was read and returns its output and, for a mutation, the plan to
// commit.
//
//	     ┌──────── one BatchGet ────────┐
//	key ─┤ agent, profile, key records, │─ fn(call) ─ plan ─ one Write ─ touch
//	     │ session, idempotency record, │             │
//	     │ the tool's slots             │             └─ intent chunks (plan.go)
//	     └──────────────────────────────┘
//
// A mutation's plan is committed in one atomic write together with its
// idempotency record (compact receipt, at most maxReceiptBytes), the write
// limiter's bucket shards (limits.go; read as slots of the same batch) and
// the auth checks (the presented keys still exist, the profile is still the one the
// session observed). Work too big for one write continues as an intent
// (intent.go). A write that fails only on contention — a sequence counter
// another writer moved, an engine transaction conflict — runs the whole call
// again from its read, with bounded jittered backoff; every other failed
// condition is answered by the domain error its op names, in plan order.

import (
	"context"
	"errors"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/store"
)

// slot names one item of a call's batched read. The zero slot names
// nothing.
type slot struct{ i int }

// batch collects the keys of a call's first read.
type batch struct {
	keys []store.Key
	// hot are the counters among keys that the call will move by
	// compare-and-set (serial.go).
	hot []store.Key
}

// add appends k to the read and returns its slot.
func (b *batch) add(k store.Key) slot {
	b.keys = append(b.keys, k)
	return slot{len(b.keys)}
}

// addHot is add for a counter the mutation will move with plan.next: the
// call holds this process's lock on it from its read to its commit
// (serial.go), so that writers of one counter queue instead of colliding.
func (b *batch) addHot(k store.Key) slot {
	b.hot = append(b.hot, k)
	return b.add(k)
}

// call is one authenticated call: the caller and what its batch read.
type call struct {
	*Caller
	h     *Hub
	keys  []store.Key
	items []*store.Item
	// rateOps count a write-limited call (limits.go); commit appends them
	// last, so a tool's own failed condition answers first.
	rateOps []guardedOp
	// hot are the counters the call holds locks on, and release gives
	// them up (serial.go); nil when the call holds none.
	hot     []store.Key
	release func()
}

// done releases what the call holds; the runners defer it.
func (c *call) done() {
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

// item returns what the batch read at s (nil when absent).
func (c *call) item(s slot) *store.Item {
	if s.i == 0 {
		return nil
	}
	return c.items[s.i-1]
}

// reads declares a call's slots once the agent is known.
type reads func(agent string, b *batch)

// start authenticates cr and reads the declared slots in the same batch.
func (h *Hub) start(ctx context.Context, cr Credentials, mode sessionMode, r reads) (*call, error) {
	var extra func(agent string) []store.Key
	var b batch
	var release func()
	if r != nil {
		extra = func(agent string) []store.Key {
			r(agent, &b)
			if len(b.hot) > 0 {
				// Taken just before the read, so the read sees what the
				// previous holder committed.
				release = h.hot.lock(b.hot)
			}
			return b.keys
		}
	}
	c, items, err := h.begin(ctx, cr, mode, extra)
	if err == nil {
		err = h.callAllowed(c)
	}
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	h.hot.latest(b.keys, b.hot, items)
	return &call{Caller: c, h: h, keys: b.keys, items: items, hot: b.hot, release: release}, nil
}

// read runs a read tool: authenticate with a primed session, read the
// slots, apply fn, and refresh the session when due.
func read[Out any](ctx context.Context, h *Hub, cr Credentials, r reads, fn func(c *call) (*Out, error)) (*Out, error) {
	c, err := h.start(ctx, cr, sessionPrimed, r)
	if err != nil {
		return nil, err
	}
	defer c.done()
	out, err := fn(c)
	if err != nil {
		return nil, err
	}
	h.touch(ctx, c.Caller)
	return out, nil
}

// plan is what a mutation commits.
type plan struct {
	// ops are the tool's operations, in precedence order: when several
	// conditions fail, the first op's answer is the call's.
	ops []guardedOp
	// receipt is what a replay of this call answers: a compact value of
	// ids, sequences, revisions, times and counts (nil: the output itself,
	// which must then be compact). Never a copy of a large body.
	receipt any
	// intent, when set, is work that continues after the first write
	// (intent.go); the first write commits the intent record with the
	// tool's ops, and the call finishes it before answering.
	intent *table.Intent
	// parts are items the intent reads and never changes (a fan-out's
	// recipients, fanout.go), written before the first write.
	parts []*store.Item
}

// add appends guarded operations.
func (p *plan) add(ops ...guardedOp) { p.ops = append(p.ops, ops...) }

// put, check and del append the common operations with their answer.
func (p *plan) put(it *store.Item, cond store.Condition, onFail failure) {
	p.add(guardedOp{op: store.Put(it, cond), onFail: onFail})
}
func (p *plan) check(k store.Key, cond store.Condition, onFail failure) {
	p.add(guardedOp{op: store.Check(k, cond), onFail: onFail})
}
func (p *plan) del(k store.Key, cond store.Condition, onFail failure) {
	p.add(guardedOp{op: store.Delete(k, cond), onFail: onFail})
}

// room is how many ops the tool may still add to p's first write, after
// the ops commit adds of its own: the idempotency record and an intent
// record (counted whether or not the call has them, so a plan's shape
// does not depend on its key), the auth checks and the rate shards.
func (c *call) room(p *plan) int {
	kernel := 1 + 1 + 1 + len(c.creds) + len(c.rateOps)
	return store.MaxWriteItems - len(p.ops) - kernel
}

// next allocates the next number of the sequence whose counter the call
// read at s: the write moves the counter from the version read to that
// number, so two writers cannot take one number, and a writer that lost
// the counter runs again (contention, retried by the runner). The counter
// keeps its other fields.
func (p *plan) next(c *call, s slot) uint64 {
	cur := c.item(s)
	k := c.keys[s.i-1]
	next := store.Item{PK: k.PK, SK: k.SK}
	cond := store.Absent
	if cur != nil {
		next = *cur
		cond = store.AtVersion(cur.Version)
	}
	next.Version++
	p.put(&next, cond, contended)
	return next.Version
}

// failure answers a failed condition with the domain error it means.
type failure func(ctx context.Context) error

// guardedOp is a store operation with the domain error its failed condition
// means (nil: STORAGE_FAILURE, a condition that should never fail).
type guardedOp struct {
	op     store.Op
	onFail failure
}

// answer returns a fixed error for a failed condition.
func answer(err func() error) failure { return func(context.Context) error { return err() } }

// contended is the answer of a condition on bookkeeping that a concurrent
// call moved (a sequence counter): run the call again.
func contended(context.Context) error { return errContended }

// errContended means "a concurrent call changed an item this call read;
// run it again". It never leaves the kernel: exhaustion is
// TEMPORARILY_UNAVAILABLE.
var errContended = errors.New("hub: item changed concurrently")

// written is what a write of a retried attempt (retry) answers: a failed
// condition is errContended (the attempt reads again), any other failure
// storageErr's.
func written(err error) error {
	if _, ok := store.ConditionFailed(err); ok {
		return errContended
	}
	if err != nil {
		return storageErr(err)
	}
	return nil
}

// mutate runs a mutation: authenticate with a primed session, read the
// idempotency record and the slots in one batch, answer a replay, apply fn,
// check the profile, commit the plan, finish its intent, touch the session.
// Contention runs the whole call again (retry).
//
// The profile check sits between the tool's access rules and its CAS: fn's
// NOT_FOUND_OR_FORBIDDEN or ROOM_ARCHIVED is answered as is, but a stale
// session gets PROFILE_OUTDATED rather than a REVISION_CONFLICT inviting a
// merge it has not the context for.
func mutate[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, cr Credentials, m mutation, r reads, fn func(c *call) (P, *plan, error)) (P, error) {
	return retry(ctx, func() (P, error) {
		var idem slot
		var rr *rateRead
		c, err := h.start(ctx, cr, sessionPrimed, declareMutation(h, m, &idem, &rr, r))
		if err != nil {
			return nil, err
		}
		defer c.done()
		if c.ReadOnly {
			return nil, insufficientScope()
		}
		return apply(ctx, h, c, m, idem, rr, fn)
	})
}

// declareMutation is the read of a mutation: its idempotency record and
// rate shards (left in *idem and *rr), then the tool's slots.
func declareMutation(h *Hub, m mutation, idem *slot, rr **rateRead, r reads) reads {
	return func(agent string, b *batch) {
		if m.key != "" {
			*idem = b.add(m.recordKey(agent))
		}
		*rr = h.limits.declare(agent, b)
		if r != nil {
			r(agent, b)
		}
	}
}

// apply runs an authenticated mutation's call once: answer a replay, admit
// it past the write limiter, apply fn, check the profile (an agent's; the
// operator has none, operate.go) and commit.
func apply[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, c *call, m mutation, idem slot, rr *rateRead, fn func(c *call) (P, *plan, error)) (P, error) {
	if m.key != "" {
		if out, done, err := replay[Out, P](ctx, h, m, c.item(idem)); done {
			return out, err
		}
	}
	var err error
	if c.rateOps, err = h.admit(ctx, c, rr); err != nil {
		return nil, err
	}
	stale := c.Session != nil && c.Session.ProfileVersion != c.ProfileVersion
	out, p, err := fn(c)
	if err != nil {
		if stale && isCode(err, apperr.RevisionConflict) {
			return nil, profileOutdated()
		}
		return nil, err
	}
	if stale {
		return nil, profileOutdated()
	}
	return commit(ctx, h, c, m, p, out)
}

// operate is mutate for the box's operator (operate.go): the same read,
// replay, write limit (the operator's own bucket, keyed by its id), plan
// and commit, with the authority in place of an agent's key and session
// checked on what the call's one batch read.
func operate[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, box string, auth operatorAuthority, m mutation, r reads, fn func(c *call) (P, *plan, error)) (P, error) {
	return retry(ctx, func() (P, error) {
		var idem, authAt slot
		var rr *rateRead
		declare := declareMutation(h, m, &idem, &rr, r)
		c, err := h.startOperator(ctx, box, func(agent string, b *batch) {
			if auth.key.PK != "" {
				authAt = b.add(auth.key)
			}
			declare(agent, b)
		})
		if err != nil {
			return nil, err
		}
		defer c.done()
		if c.operator, err = auth.decide(c.item(authAt)); err != nil {
			return nil, err
		}
		if err := h.callAllowed(c.Caller); err != nil {
			return nil, err
		}
		return apply(ctx, h, c, m, idem, rr, fn)
	})
}

// startOperator is start for the box's operator, whose id is the box's:
// one batched read of the declared slots, holding the counter locks they
// name. Authority is the runner's to decide on what was read.
func (h *Hub) startOperator(ctx context.Context, box string, r reads) (*call, error) {
	var b batch
	r(box, &b)
	var release func()
	if len(b.hot) > 0 {
		release = h.hot.lock(b.hot)
	}
	items, err := h.st.BatchGet(ctx, b.keys)
	if err != nil {
		if release != nil {
			release()
		}
		return nil, storageErr(err)
	}
	h.hot.latest(b.keys, b.hot, items)
	c := &Caller{BoxID: box, AgentID: box, Now: h.clock(),
		Agent: &table.Agent{ID: box, BoxID: box, Name: OperatorName, Status: statusActive}}
	return &call{Caller: c, h: h, keys: b.keys, items: items, hot: b.hot, release: release}, nil
}

// retryAttempts bounds retry. Contention needs concurrent writers of one
// item (a busy receiver's inbox head); attempts with doubling jitter, capped
// at 64 ms, spread them out within about half a second in the worst case.
const retryAttempts = 14

// retry runs fn until it returns something other than errContended or a
// store refusal that wrote nothing (ErrUnavailable: throttling, or on
// DynamoDB a transaction conflict — which concurrent transactions touching
// one item produce even by condition check), at most retryAttempts times,
// with jittered exponential backoff. An uncertain failure (a timeout) is
// never retried here: its outcome is the caller's to resolve, with its
// idempotency key.
func retry[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	var zero T
	var last error
	for attempt := range retryAttempts {
		if attempt > 0 {
			metrics.AddRetry(ctx)
			if err := sleepBackoff(ctx, attempt); err != nil {
				return zero, err
			}
		}
		out, err := fn()
		if !errors.Is(err, errContended) && !errors.Is(err, store.ErrUnavailable) {
			return out, err
		}
		last = err
	}
	return zero, apperr.Unavailable(last)
}

// commit writes the plan with the idempotency record and the auth checks,
// maps failed conditions to domain errors, finishes an intent, and touches
// the session. On a lost race with a concurrent duplicate it answers that
// duplicate's receipt.
func commit[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, c *call, m mutation, p *plan, out P) (P, error) {
	if len(p.ops) == 0 && p.intent == nil && m.key == "" {
		// Nothing to change and nothing to remember (a no-op without a
		// key): no write at all.
		h.touch(ctx, c.Caller)
		return out, nil
	}
	if err := h.writeParts(ctx, p.parts); err != nil {
		return nil, err
	}
	all := make([]guardedOp, 0, len(p.ops)+5+len(c.rateOps))
	idemAt := -1
	if m.key != "" {
		receipt := p.receipt
		if receipt == nil {
			receipt = out
		}
		rec := table.Idem{Tool: m.tool, RequestHash: m.hash, Response: table.Encode(receipt), At: c.Now}
		if p.intent != nil {
			rec.Intent = p.intent.ID
		}
		if len(rec.Response) > maxReceiptBytes {
			// A programming error: a tool that stores a body as its
			// receipt. Refuse rather than grow the table.
			h.log.ErrorContext(ctx, "receipt over bound", "tool", m.tool, "bytes", len(rec.Response))
			return nil, apperr.New(apperr.StorageFailure, "The request could not be completed.")
		}
		rk := m.recordKey(c.AgentID)
		idemAt = 0
		all = append(all, guardedOp{op: store.Put(&store.Item{
			PK: rk.PK, SK: rk.SK, Version: 1,
			ExpiresAt: c.Now.Add(h.idemTT).Unix(),
			Data:      table.Encode(rec),
		}, store.Absent)})
	}
	all = append(all, p.ops...)
	if p.intent != nil {
		all = append(all, guardedOp{op: store.Put(p.intent.Item(), store.Absent)})
	}
	all = append(all, authChecks(c.Caller, all)...)
	all = append(all, c.rateOps...)

	if c.release != nil && h.hot.pipeline {
		// Hand the counters on before the commit (serial.go).
		withdraw := h.hot.publish(c.hot, all)
		defer withdraw()
		c.done()
	}
	if err := h.write(ctx, all, idemAt); err != nil {
		if errors.Is(err, errDuplicate) {
			return rereadReceipt[Out, P](ctx, h, c, m)
		}
		return nil, err
	}
	if p.intent != nil {
		if err := h.finish(ctx, p.intent.ID); err != nil {
			// The first write committed: the effect is durable and the
			// sweep (or a retry with the same key) completes it.
			h.log.WarnContext(ctx, "intent left for the sweep", "intent", p.intent.ID, "err", err)
		}
	}
	h.touch(ctx, c.Caller)
	return out, nil
}

// errDuplicate reports that the idempotency record's condition failed: a
// concurrent call with the same key committed first.
var errDuplicate = errors.New("hub: concurrent duplicate")

// write commits ops and maps a failure: a failed condition at dupAt is
// errDuplicate; otherwise the failing ops are answered in plan order, the
// first with a domain answer deciding, contention (errContended) only when
// every failing op is contention.
func (h *Hub) write(ctx context.Context, all []guardedOp, dupAt int) error {
	sops := make([]store.Op, len(all))
	for i, g := range all {
		sops[i] = g.op
	}
	err := h.st.Write(ctx, sops)
	if err == nil {
		return nil
	}
	cf, ok := store.ConditionFailed(err)
	if !ok {
		return storageErr(err)
	}
	// Failed is never empty (store.NewConditionFailed).
	failed := cf.Failed
	var contention bool
	for _, i := range failed {
		if i == dupAt {
			return errDuplicate
		}
	}
	for _, i := range failed {
		if i < 0 || i >= len(all) || all[i].onFail == nil {
			return apperr.Wrap(apperr.StorageFailure, "The request could not be completed.", err)
		}
		ferr := all[i].onFail(ctx)
		if errors.Is(ferr, errContended) {
			contention = true
			continue
		}
		return ferr
	}
	if contention {
		return errContended
	}
	return apperr.Wrap(apperr.StorageFailure, "The request could not be completed.", err)
}

// storageErr maps a store error to the envelope: load and contention are
// retryable TEMPORARILY_UNAVAILABLE (nothing was written), and so is any
// failed read (readerr.go); anything else is STORAGE_FAILURE of unknown
// outcome.
func storageErr(err error) error {
	var re *readError
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return apperr.Unavailable(err)
	case errors.As(err, &re):
		return readUnavailable(err)
	case errors.Is(err, store.ErrTimeout):
		// Nothing for a read, unknown for a write: the next action, in the
		// tool's words, says how to retry.
		return apperr.Wrap(apperr.TemporarilyUnavailable, "The service did not answer in time.", err)
	case errors.Is(err, store.ErrTooLarge):
		return apperr.Wrap(apperr.LimitExceeded, "The request is too large to store in one operation.", err)
	}
	return apperr.Normalize(err)
}

// isCode reports whether err is a domain error with code.
func isCode(err error, code apperr.Code) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == code
}

// get reads the item at k and decodes it, so a call site says what it
// reads and what its absence means, not the read's skeleton. A store fault
// is storageErr's, a damaged record is table.Decode's storage failure, and
// an absent item is absent (the domain error the tool owes, e.g.
// apperr.Forbidden()), or, when absent is nil, a nil record and no error.
// The item comes back too, for its Version.
func get[T any](ctx context.Context, st store.Store, k store.Key, absent error) (*T, *store.Item, error) {
	it, err := st.Get(ctx, k)
	if err != nil {
		return nil, nil, storageErr(err)
	}
	v, err := decode[T](it, absent)
	if err != nil || v == nil {
		return nil, nil, err
	}
	return v, it, nil
}

// getMany is get for a BatchGet of records of one type: the records in
// the order of keys, with their items, and an absent one absent (or, when
// absent is nil, a nil record in its place).
func getMany[T any](ctx context.Context, st store.Store, keys []store.Key, absent error) ([]*T, []*store.Item, error) {
	items, err := st.BatchGet(ctx, keys)
	return decoded[T](items, err, absent)
}

// query is getMany for a query: the records of the items q reads, in
// their order, with the items.
func query[T any](ctx context.Context, st store.Store, q store.Query) ([]*T, []*store.Item, error) {
	items, err := st.Query(ctx, q)
	return decoded[T](items, err, nil)
}

// decoded is what getMany and query answer for the items a read returned,
// or for its error.
func decoded[T any](items []*store.Item, err, absent error) ([]*T, []*store.Item, error) {
	if err != nil {
		return nil, nil, storageErr(err)
	}
	recs, err := decodeAll[T](items, absent)
	if err != nil {
		return nil, nil, err
	}
	return recs, items, nil
}

// decodeAll decodes items in order, each as decode: the records of a
// BatchGet, or of a query page (whose items are never absent).
func decodeAll[T any](items []*store.Item, absent error) ([]*T, error) {
	recs := make([]*T, len(items))
	for i, it := range items {
		var err error
		if recs[i], err = decode[T](it, absent); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// decode is get for an item already read, in a call's batch or a
// BatchGet: an absent item is absent (or, when absent is nil, a nil record
// and no error), a damaged one table.Decode's storage failure.
func decode[T any](it *store.Item, absent error) (*T, error) {
	if it == nil {
		return nil, absent
	}
	return table.Decode[T](it)
}

// unread, count and version are the table's counter readings
// (table.Unread, table.Count, table.Version: a count below zero is logged
// there and read as 0), named short for the kernel and every tool.
func unread(head, acked *store.Item) int64 { return table.Unread(head, acked) }
func count(it *store.Item) int64           { return table.Count(it) }
func version(it *store.Item) uint64        { return table.Version(it) }

// casCond is the CAS condition on an item as read: still absent, or still
// at the version read.
func casCond(it *store.Item) store.Condition {
	if it == nil {
		return store.Absent
	}
	return store.AtVersion(it.Version)
}

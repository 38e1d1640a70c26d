package hub

// Rate limits and quotas.
//
// Design note. Two kinds of limiter, because reads and writes cost the
// store differently:
//
//   - Writes (mutations, and agent_prime, which writes the session) are
//     limited per agent and per box by buckets kept in the store, so every
//     Lambda instance and the local server share them. A bucket is a GCRA
//     (internal/limits) split into shards: items rate#<id>#m#<i> whose Count
//     is the shard's theoretical arrival time. The call's first batched read
//     fetches the agent's shards (and two random shards of its box), the
//     call picks a random shard that has room, and its one atomic write
//     moves that shard by CAS (Version) together with the tool's own ops.
//     So counting costs no extra round trip and one (agent) or two (agent
//     and box) items in the transaction; the call has no effect unless it
//     is counted, and it is counted only if it commits. A CAS lost to a
//     concurrent call of the same agent on the same shard is contention:
//     the runner reads again and picks again. Shards are why one agent's
//     parallel calls rarely collide.
//
//     Bound guaranteed: each shard i admits at most burst_i + rate_i·T
//     calls in any interval T (GCRA, and the CAS makes each shard's
//     sequence of admissions serial), and the shards split rate and burst
//     exactly, so an agent's applied writes over any T are at most
//     burst + rate·T, whatever the concurrency and the number of instances
//     (clocks of instances assumed in sync; a skew of d admits at most
//     rate·d more). The box ceiling reads only two of its shards, so it may
//     refuse while unread shards still have room (never admit more); each
//     shard holds at least boxShardBurst calls, so that needs both probes
//     drained, which random picks make likely only when most shards are.
//
//   - Every call (reads included) is also limited per agent and per box by
//     a per-instance bucket in memory: a read never becomes a write. With N
//     instances an agent may read at N times the figure; N is bounded by the
//     functions' concurrency and the API Gateway stage throttle bounds the
//     whole stack, which is what protects the table's read capacity.
//
// The box id is not known before the first read (the key names the agent
// only); this instance remembers each agent's box (agents never move), so
// only the first write of an agent on an instance reads its box's shards in
// a second round trip.
//
// Quotas are counted in the writes that create what they bound: an agent's
// session index (agent#A / sessions) lists its live sessions and a new one
// beyond the cap ends the oldest in the same write; a counter
// (agent#A / count#spaces) numbers the spaces an agent created.
// Idempotency records need no cap of their own: each is a compact receipt
// (at most 1 KiB), written only by a mutation the write limit admitted, and
// expires after the TTL, so an agent holds at most
// (burst + rate·TTL) · 1 KiB of them.

import (
	"context"
	"fmt"
	"github.com/agentbox/agentbox/internal/hub/table"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/store"
)

// Shards of the store-kept buckets: an agent's parallel calls spread over
// agentShards items (all read), a box's agents over boxShards (boxProbes
// of them read per call). A probed shard holds at least boxShardBurst
// calls of burst, so that two drained probes mean a mostly drained bucket
// rather than bad luck (a smaller box burst gets fewer shards, down to one
// read whole).
const (
	agentShards   = 4
	boxShards     = 8
	boxProbes     = 2
	boxShardBurst = 8
)

// limiter is a Hub's rate limits and quotas.
type limiter struct {
	cfg            limits.Config
	agentM, boxM   sharded
	agentC, boxC   *limits.Local
	mu             sync.Mutex
	boxOf          map[string]string
	sessionsPerAgt int
	spacesPerAgt   int
	roomMembers    int
	// waitMax caps inbox_list's wait (inbox.go).
	waitMax time.Duration
}

// boxOfMax bounds the agent→box memo.
const boxOfMax = 100_000

func newLimiter(cfg *limits.Config) *limiter {
	l := &limiter{boxOf: map[string]string{}, waitMax: MaxWaitSeconds * time.Second}
	if cfg == nil {
		return l
	}
	l.waitMax = time.Duration(min(max(cfg.InboxWaitSeconds, 0), MaxWaitSeconds)) * time.Second
	l.cfg = *cfg
	l.agentM = newSharded(cfg.AgentMutations, "a", min(agentShards, cfg.AgentMutations.Burst), agentShards)
	l.boxM = newSharded(cfg.BoxMutations, "b", min(boxShards, cfg.BoxMutations.Burst/boxShardBurst), boxProbes)
	l.agentC, l.boxC = limits.NewLocal(cfg.AgentCalls), limits.NewLocal(cfg.BoxCalls)
	l.sessionsPerAgt, l.spacesPerAgt, l.roomMembers = cfg.SessionsPerAgent, cfg.SpacesPerAgent, cfg.RoomMembers
	return l
}

// sharded is one store-kept bucket family.
type sharded struct {
	on     bool
	g      limits.GCRA
	kind   string
	shards int
	probes int
}

// newSharded splits r over shards items (at least one), probes of which
// a call reads.
func newSharded(r limits.Rate, kind string, shards, probes int) sharded {
	if !r.On() {
		return sharded{}
	}
	shards = max(shards, 1)
	return sharded{on: true, g: limits.NewGCRA(r, shards), kind: kind, shards: shards, probes: min(probes, shards)}
}

// keys names the shards one call reads: all of them, or probes distinct
// random ones.
func (s sharded) keys(id string) []store.Key {
	idx := rand.Perm(s.shards)[:s.probes]
	out := make([]store.Key, len(idx))
	for i, n := range idx {
		out[i] = table.RateShardKey(s.kind, id, n)
	}
	return out
}

// rateRead is what a write-limited call read of its buckets.
type rateRead struct {
	agent, box []slot
	boxKeys    []store.Key
	boxItems   []*store.Item
	boxKnown   bool
}

// declare adds the agent's shards, and its box's when this instance knows
// the box, to a call's batch.
func (l *limiter) declare(agent string, b *batch) *rateRead {
	rr := &rateRead{}
	if l.agentM.on {
		for _, k := range l.agentM.keys(agent) {
			rr.agent = append(rr.agent, b.add(k))
		}
	}
	if l.boxM.on {
		if box, ok := l.knownBox(agent); ok {
			rr.boxKnown = true
			for _, k := range l.boxM.keys(box) {
				rr.box = append(rr.box, b.add(k))
			}
		}
	}
	return rr
}

func (l *limiter) knownBox(agent string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	box, ok := l.boxOf[agent]
	return box, ok
}

func (l *limiter) rememberBox(agent, box string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.boxOf[agent]; ok {
		return
	}
	if len(l.boxOf) >= boxOfMax {
		clear(l.boxOf)
	}
	l.boxOf[agent] = box
}

// admit decides a write-limited call: the ops that count it (to commit
// with the call's write), or RATE_LIMITED when a bucket has no room.
func (h *Hub) admit(ctx context.Context, c *call, rr *rateRead) ([]guardedOp, error) {
	l := h.limits
	if rr == nil || (!l.agentM.on && !l.boxM.on) {
		return nil, nil
	}
	if l.boxM.on && !rr.boxKnown {
		// First write of this agent on this instance: its box's shards
		// need a read of their own.
		rr.boxKeys = l.boxM.keys(c.BoxID)
		items, err := h.st.BatchGet(ctx, rr.boxKeys)
		if err != nil {
			return nil, storageErr(err)
		}
		rr.boxItems = items
	}
	now := c.Now.UnixNano()
	var ops []guardedOp
	var wait time.Duration
	if l.agentM.on {
		keys, items := make([]store.Key, len(rr.agent)), make([]*store.Item, len(rr.agent))
		for i, s := range rr.agent {
			keys[i], items[i] = c.keys[s.i-1], c.item(s)
		}
		op, w := l.agentM.take(keys, items, now)
		if op == nil {
			wait = w
		} else {
			ops = append(ops, *op)
		}
	}
	if l.boxM.on {
		keys, items := rr.boxKeys, rr.boxItems
		if rr.boxKnown {
			keys, items = make([]store.Key, len(rr.box)), make([]*store.Item, len(rr.box))
			for i, s := range rr.box {
				keys[i], items[i] = c.keys[s.i-1], c.item(s)
			}
		}
		op, w := l.boxM.take(keys, items, now)
		if op == nil {
			wait = max(wait, w)
		} else {
			ops = append(ops, *op)
		}
	}
	if wait > 0 {
		return nil, rateLimited(wait)
	}
	return ops, nil
}

// take picks a random shard with room among those read and returns the
// CAS that spends one call of it, or nil and the shortest wait.
func (s sharded) take(keys []store.Key, items []*store.Item, now int64) (*guardedOp, time.Duration) {
	var open []int
	wait := time.Duration(-1)
	for i, it := range items {
		tat := now
		if it != nil {
			tat = it.Count
		}
		ok, w := s.g.Conforms(tat, now)
		if ok {
			open = append(open, i)
		} else if wait < 0 || w < wait {
			wait = w
		}
	}
	if len(open) == 0 {
		return nil, wait
	}
	i := open[rand.IntN(len(open))]
	k, cur := keys[i], items[i]
	tat, cond, version := now, store.Absent, uint64(1)
	if cur != nil {
		tat, cond, version = cur.Count, store.AtVersion(cur.Version), cur.Version+1
	}
	next := s.g.Next(tat, now)
	// The item expires once its bucket is full again: absent and full are
	// the same state, so no sweep is needed and a quiet agent costs nothing.
	// The second of slack keeps it from vanishing before its TAT.
	exp := next/int64(time.Second) + 2
	return &guardedOp{op: store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: version, Count: next, ExpiresAt: exp}, cond),
		onFail: contended}, 0
}

// opsOf strips the answers from guarded ops, for the writes (a session's)
// that commit outside the mutation runner.
func opsOf(gs []guardedOp) []store.Op {
	out := make([]store.Op, len(gs))
	for i, g := range gs {
		out[i] = g.op
	}
	return out
}

// rateLimited is RATE_LIMITED with the wait rounded up to seconds.
func rateLimited(wait time.Duration) error {
	e := apperr.New(apperr.RateLimited, "Too many calls in a short time; nothing was done.")
	e.RetryAfter = limits.RetryAfter(wait)
	return e
}

// callAllowed charges one call to the per-instance buckets of the caller
// and its box, and remembers the agent's box for the write limiter.
func (h *Hub) callAllowed(c *Caller) error {
	l := h.limits
	l.rememberBox(c.AgentID, c.BoxID)
	if ok, wait := l.boxC.Blocked(c.BoxID, c.Now); ok {
		return rateLimited(wait)
	}
	if ok, wait := l.agentC.Allow(c.AgentID, c.Now); !ok {
		return rateLimited(wait)
	}
	if ok, wait := l.boxC.Allow(c.BoxID, c.Now); !ok {
		return rateLimited(wait)
	}
	return nil
}

// RateLimitDTO is one rate limit in force; both zero when it is off.
type RateLimitDTO struct {
	PerSecond float64 `json:"per_second" desc:"Sustained calls per second; 0 when this limit is off."`
	Burst     int     `json:"burst" desc:"Calls allowed at once after a quiet spell."`
}

// RateLimits are the rate limits in force, reported by agent_prime.
type RateLimits struct {
	AgentMutations RateLimitDTO `json:"agent_mutations" desc:"Your writes (mutations and agent_prime), shared by every instance of the service."`
	BoxMutations   RateLimitDTO `json:"box_mutations" desc:"The writes of every agent of your box together."`
	AgentCalls     RateLimitDTO `json:"agent_calls" desc:"Your calls of any kind, per service instance."`
	BoxCalls       RateLimitDTO `json:"box_calls" desc:"The calls of every agent of your box, per service instance."`
}

func rateDTO(r limits.Rate) RateLimitDTO {
	if !r.On() {
		return RateLimitDTO{}
	}
	return RateLimitDTO{PerSecond: r.PerSecond, Burst: r.Burst}
}

// rateLimits reports the figures in force.
func (l *limiter) rateLimits() RateLimits {
	return RateLimits{
		AgentMutations: rateDTO(l.cfg.AgentMutations), BoxMutations: rateDTO(l.cfg.BoxMutations),
		AgentCalls: rateDTO(l.cfg.AgentCalls), BoxCalls: rateDTO(l.cfg.BoxCalls),
	}
}

// LimitConfig returns the limits this hub enforces (nil: none), for the
// transports' own limiters.
func (h *Hub) LimitConfig() *limits.Config {
	if h.limits.cfg == (limits.Config{}) {
		return nil
	}
	c := h.limits.cfg
	return &c
}

// PresentedKeyID returns the key id a presented agent key names, or ""
// when s is not shaped like a key. It proves nothing (the secret is not
// checked); transports use it to count failed authentications per key.
func PresentedKeyID(s string) string {
	p, ok := parseKey(s)
	if !ok {
		return ""
	}
	return p.keyID
}

// Session quota.

// sessionSlot adds the session index to a batch when sessions are capped.
func (l *limiter) sessionSlot(agent string, b *batch) slot {
	if l.sessionsPerAgt <= 0 {
		return slot{}
	}
	return b.add(table.SessionListKey(agent))
}

// registerSession returns the ops that add id to the agent's session index
// read as idx and end the oldest sessions beyond the cap, all conditioned
// so that a concurrent registration runs the call again.
func (l *limiter) registerSession(agent, id string, idx *store.Item) ([]store.Op, error) {
	if l.sessionsPerAgt <= 0 {
		return nil, nil
	}
	var ix table.SessionList
	cond, version := store.Absent, uint64(1)
	if idx != nil {
		rec, err := table.Decode[table.SessionList](idx)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		ix, cond, version = *rec, store.AtVersion(idx.Version), idx.Version+1
	}
	// A signed id bound again after an idle expiry is listed once, so that
	// evicting its older entry cannot end the session just bound.
	ix.IDs = append(slices.DeleteFunc(ix.IDs, func(s string) bool { return s == id }), id)
	var ops []store.Op
	if over := len(ix.IDs) - l.sessionsPerAgt; over > 0 {
		for _, old := range ix.IDs[:over] {
			if old != id {
				ops = append(ops, store.Delete(table.SessionKey(old), store.Unconditional))
			}
		}
		ix.IDs = ix.IDs[over:]
	}
	k := table.SessionListKey(agent)
	return append(ops, store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: version, Data: table.Encode(ix)}, cond)), nil
}

// Spaces quota.

// spacesSlot adds the agent's created-spaces counter to a batch when
// spaces are capped.
func (l *limiter) spacesSlot(agent string, b *batch) slot {
	if l.spacesPerAgt <= 0 {
		return slot{}
	}
	return b.add(table.SpacesCreatedKey(agent))
}

// countSpace adds one created space to the counter read at s, or answers
// LIMIT_EXCEEDED at the cap.
func (l *limiter) countSpace(c *call, p *plan, s slot) error {
	if l.spacesPerAgt <= 0 {
		return nil
	}
	if version(c.item(s)) >= uint64(l.spacesPerAgt) {
		return apperr.Limit("spaces_per_agent_max", fmt.Sprintf("%d spaces created per agent", l.spacesPerAgt))
	}
	p.next(c, s)
	return nil
}

// roomFull refuses one more member of a room that has members active ones
// (the owner's add-member).
func (l *limiter) roomFull(members int64) error {
	if l.roomMembers <= 0 || members < int64(l.roomMembers) {
		return nil
	}
	return apperr.Limit("room_members_max", fmt.Sprintf("%d members per room", l.roomMembers)).
		WithNext("Remove a member first (admin remove-member), or use another room; the cap is the stack's room member quota.")
}

package hub_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// limited returns the fixture with a hub enforcing cfg over the same store
// and clock (a second instance of the service, as another Lambda instance
// would be), taking the tokens the fixture's hub takes.
func (f *fixture) limited(cfg limits.Config) *fixture {
	lf := *f
	lf.h = hub.New(f.st, hub.Options{Now: f.clock.Now, Limits: &cfg, Tokens: f.opts.Tokens})
	return &lf
}

// burstOutcome is what W goroutines of one agent got.
type burstOutcome struct {
	applied, limited, busy, quota atomic.Int64
	ids                           sync.Map
}

// createBurst runs w goroutines creating spaces as cr with unique operation
// keys, n calls each, while the clock advances step per call made.
func createBurst(t *testing.T, f *fixture, cr hub.Credentials, tag string, w, n int, step time.Duration) *burstOutcome {
	t.Helper()
	var out burstOutcome
	var wg sync.WaitGroup
	for g := range w {
		wg.Go(func() {
			for i := range n {
				res, err := createSpace(f, cr, "public", "burst", fmt.Sprintf("%s-%d-%d", tag, g, i))
				f.clock.Advance(step)
				switch {
				case err == nil:
					if _, dup := out.ids.LoadOrStore(res.Space.ID, true); dup {
						t.Errorf("space %s reported created twice", res.Space.ID)
					}
					out.applied.Add(1)
				case isCode(err, apperr.RateLimited):
					e, _ := apperr.As(err)
					if e.RetryAfter < 1 {
						t.Errorf("RATE_LIMITED with retry_after_seconds %d, want at least 1", e.RetryAfter)
					}
					out.limited.Add(1)
				case isCode(err, apperr.LimitExceeded):
					out.quota.Add(1)
				case isCode(err, apperr.TemporarilyUnavailable):
					out.busy.Add(1) // contention exhausted: nothing written
				default:
					t.Errorf("CreateSpace: %v", err)
				}
			}
		})
	}
	wg.Wait()
	return &out
}

func isCode(err error, code apperr.Code) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == code
}

// spacesIn counts the spaces stored in box: what was applied, whatever the
// callers were told.
func spacesIn(t *testing.T, f *fixture, box string) int {
	t.Helper()
	items, err := f.raw.Query(f.ctx, store.Query{Index: store.GSI1, PK: "box#" + box + "#spaces"})
	if err != nil {
		t.Fatalf("Query spaces: %v", err)
	}
	return len(items)
}

// bound is the most a rate admits over elapsed.
func bound(r limits.Rate, elapsed time.Duration) int {
	return r.Burst + int(r.PerSecond*elapsed.Seconds())
}

// TestAgentWriteLimitUnderConcurrency: W goroutines of one agent, on two
// hub instances sharing one store, exceed the write rate. Some are
// RATE_LIMITED, nothing is applied twice, and what was applied stays within
// burst + rate × elapsed.
func TestAgentWriteLimitUnderConcurrency(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		rate := limits.Rate{PerSecond: 4, Burst: 8}
		cfg := limits.Config{AgentMutations: rate}
		one, two := f.limited(cfg), f.limited(cfg)
		cr := one.prime(f.a)
		before := spacesIn(t, f, f.box)

		const w, n = 8, 6
		var out1, out2 *burstOutcome
		start := f.clock.Now() // the prime was admitted at this instant
		var wg sync.WaitGroup
		wg.Go(func() { out1 = createBurst(t, one, cr, "one", w/2, n, 20*time.Millisecond) })
		wg.Go(func() { out2 = createBurst(t, two, cr, "two", w/2, n, 20*time.Millisecond) })
		wg.Wait()
		elapsed := f.clock.Now().Sub(start)

		applied := out1.applied.Load() + out2.applied.Load()
		limited := out1.limited.Load() + out2.limited.Load()
		stored := spacesIn(t, f, f.box) - before
		if int64(stored) != applied {
			t.Errorf("%d spaces stored, %d calls told success: a call applied twice or lost", stored, applied)
		}
		if limited == 0 {
			t.Errorf("no call was RATE_LIMITED (%d applied of %d over %v)", applied, w*n, elapsed)
		}
		// The prime counts as a write too.
		if max := bound(rate, elapsed); int(applied)+1 > max {
			t.Errorf("%d writes applied over %v (+1 prime), want at most burst + rate×T = %d", applied, elapsed, max)
		}
		t.Logf("%d applied, %d limited, %d busy over %v", applied, limited, out1.busy.Load()+out2.busy.Load(), elapsed)
	})
}

// TestRateLimitedCallHasNoEffect: a limited save writes nothing, and the
// same call with the same key succeeds after the advertised wait.
func TestRateLimitedCallHasNoEffect(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad).limited(limits.Config{AgentMutations: limits.Rate{PerSecond: 0.5, Burst: 2}})
		cr := f.prime(f.a) // one write of the burst
		if _, err := save(f, cr, "k1", 0, "one"); err != nil {
			t.Fatalf("first save: %v", err)
		}
		_, err := save(f, cr, "k2", 1, "two")
		e := wantCode(t, "save over the limit", err, apperr.RateLimited)
		if e.RetryAfter < 1 || !e.Code.Retryable() {
			t.Fatalf("RATE_LIMITED retry_after=%d retryable=%v, want ≥ 1 and retryable", e.RetryAfter, e.Code.Retryable())
		}
		got, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
		if err != nil {
			t.Fatalf("CheckpointGet: %v", err)
		}
		if got.Checkpoint.BodyMD != "one" {
			t.Fatalf("checkpoint body %q after a limited save, want %q", got.Checkpoint.BodyMD, "one")
		}
		f.clock.Advance(time.Duration(e.RetryAfter) * time.Second)
		out, err := save(f, cr, "k2", 1, "two")
		if err != nil {
			t.Fatalf("same save after retry_after: %v", err)
		}
		if out.Replayed {
			t.Errorf("save after the wait answered a replay; the limited call must not have been recorded")
		}
	})
}

// TestAgentsDoNotLimitEachOther: one agent exhausting its writes leaves
// another agent of the same box untouched.
func TestAgentsDoNotLimitEachOther(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad).limited(limits.Config{AgentMutations: limits.Rate{PerSecond: 1, Burst: 4}})
		ca, cb := f.prime(f.a), f.prime(f.b)
		out := createBurst(t, f, ca, "a", 4, 3, 0)
		if out.limited.Load() == 0 {
			t.Fatalf("agent a was never limited (%d applied)", out.applied.Load())
		}
		for i := range 3 {
			if _, err := createSpace(f, cb, "public", "b", fmt.Sprintf("b-%d", i)); err != nil {
				t.Fatalf("agent b's create %d after a's burst: %v", i, err)
			}
		}
	})
}

// TestBoxCeiling: the agents of one box together stay within the box's
// write rate, with its shards read whole and probed; another box is not
// affected.
func TestBoxCeiling(t *testing.T) {
	cases := []struct {
		name  string
		rate  limits.Rate
		calls int // per goroutine; three agents run three goroutines each
	}{
		{"shards read whole", limits.Rate{PerSecond: 2, Burst: 16}, 4},
		{"shards probed", limits.Rate{PerSecond: 1, Burst: 64}, 10},
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f := newFixture(t, ad)
				lf := f.limited(limits.Config{BoxMutations: tc.rate})
				c := f.mustAgent(f.box, "carol")
				creds := []hub.Credentials{lf.prime(f.a), lf.prime(f.b), lf.prime(c)}
				before := spacesIn(t, f, f.box)
				start := f.clock.Now() // the primes were admitted at this instant
				var applied atomic.Int64
				var wg sync.WaitGroup
				for i, cr := range creds {
					wg.Go(func() {
						out := createBurst(t, lf, cr, fmt.Sprint("box", i), 3, tc.calls, 10*time.Millisecond)
						applied.Add(out.applied.Load())
					})
				}
				wg.Wait()
				elapsed := f.clock.Now().Sub(start)
				stored := spacesIn(t, f, f.box) - before
				if int64(stored) != applied.Load() {
					t.Errorf("%d spaces stored, %d calls told success", stored, applied.Load())
				}
				// Three primes were writes of this box too.
				if max := bound(tc.rate, elapsed); stored+3 > max {
					t.Errorf("box applied %d writes (+3 primes) over %v, want at most %d", stored, elapsed, max)
				}
				if stored >= 3*3*tc.calls {
					t.Errorf("every call applied (%d): the box ceiling never bit", stored)
				}
				t.Logf("%d applied of %d over %v", stored, 3*3*tc.calls, elapsed)
				other := lf.prime(f.other)
				if _, err := createSpace(lf, other, "public", "elsewhere", "other-1"); err != nil {
					t.Errorf("another box's agent after this box's ceiling: %v", err)
				}
			})
		}
	})
}

// TestCallLimitPerInstance: reads are limited in memory per instance; a
// limited read writes nothing.
func TestCallLimitPerInstance(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		lf := f.limited(limits.Config{AgentCalls: limits.Rate{PerSecond: 1, Burst: 3}})
		for i := range 3 {
			if _, err := lf.h.ProfileGet(f.ctx, cr, hub.ProfileInput{}); err != nil {
				t.Fatalf("read %d within the burst: %v", i, err)
			}
		}
		f.st.Reset()
		_, err := lf.h.ProfileGet(f.ctx, cr, hub.ProfileInput{})
		e := wantCode(t, "read over the limit", err, apperr.RateLimited)
		if e.RetryAfter != 1 {
			t.Errorf("retry_after_seconds = %d, want 1", e.RetryAfter)
		}
		f.clock.Advance(time.Second)
		if _, err := lf.h.ProfileGet(f.ctx, cr, hub.ProfileInput{}); err != nil {
			t.Fatalf("read after the wait: %v", err)
		}
		// Another agent is untouched.
		if _, err := lf.h.ProfileGet(f.ctx, f.prime(f.b), hub.ProfileInput{}); err != nil {
			t.Fatalf("agent b: %v", err)
		}
	})
}

// writeCounter counts the items written.
type writeCounter struct {
	store.Store
	items atomic.Int64
}

func (w *writeCounter) Write(ctx context.Context, ops []store.Op) error {
	w.items.Add(int64(len(ops)))
	return w.Store.Write(ctx, ops)
}

// TestLimiterCost measures what counting a write costs: no extra round
// trip once the instance knows the agent's box, and one item per store-kept
// bucket (agent, box).
func TestLimiterCost(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var wc *writeCounter
		f := newFixture(t, ad, withWriteCounter(&wc))
		cases := []struct {
			name  string
			cfg   limits.Config
			items int64
		}{
			{"off", limits.Config{}, 0},
			{"agent", limits.Config{AgentMutations: limits.Rate{PerSecond: 100, Burst: 100}}, 1},
			{"agent+box", limits.Default(), 2},
		}
		var baseTrips, baseItems int64
		for i, tc := range cases {
			lf := f.limited(tc.cfg)
			cr := lf.prime(f.a)
			rev := hub.Revision(0)
			if i > 0 {
				got, err := lf.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
				if err != nil {
					t.Fatal(err)
				}
				rev = got.Checkpoint.Revision
			}
			f.st.Reset()
			wc.items.Store(0)
			if _, err := save(lf, cr, "cost-"+tc.name, rev, "x"); err != nil {
				t.Fatalf("%s: save: %v", tc.name, err)
			}
			trips, items := f.st.Reset(), wc.items.Load()
			if i == 0 {
				baseTrips, baseItems = trips, items
			}
			if trips != baseTrips {
				t.Errorf("%s: %d round trips, want %d as with no limits", tc.name, trips, baseTrips)
			}
			if items-baseItems != tc.items {
				t.Errorf("%s: %d extra items written, want %d", tc.name, items-baseItems, tc.items)
			}
			t.Logf("%s: %d round trips, %d items (+%d)", tc.name, trips, items, items-baseItems)
		}
	})
}

// TestLimitsReported: agent_prime reports the figures in force.
func TestLimitsReported(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad).limited(limits.Default())
		out, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey}, hub.PrimeInput{})
		if err != nil {
			t.Fatal(err)
		}
		d, l := limits.Default(), out.Limits
		if l.Rates.AgentMutations.PerSecond != d.AgentMutations.PerSecond || l.Rates.AgentMutations.Burst != d.AgentMutations.Burst ||
			l.Rates.BoxMutations.Burst != d.BoxMutations.Burst || l.Rates.AgentCalls.Burst != d.AgentCalls.Burst ||
			l.Rates.BoxCalls.Burst != d.BoxCalls.Burst ||
			l.SessionsPerAgentMax != d.SessionsPerAgent || l.SpacesPerAgentMax != d.SpacesPerAgent ||
			l.RoomMembersMax != limits.DefaultRoomMembers {
			t.Errorf("prime limits = %+v, want the defaults %+v", l, d)
		}
		off := newFixture(t, ad)
		out, err = off.h.Prime(f.ctx, hub.Credentials{Bearer: off.a.BoxKey}, hub.PrimeInput{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Limits.Rates != (hub.RateLimits{}) || out.Limits.SessionsPerAgentMax != 0 {
			t.Errorf("limits off reported as %+v, want zeros", out.Limits.Rates)
		}
	})
}

// TestSessionQuota: beyond the cap, opening a session ends the oldest.
func TestSessionQuota(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad).limited(limits.Config{SessionsPerAgent: 2})
		s1, s2, s3 := f.prime(f.a), f.prime(f.a), f.prime(f.a)
		_, err := f.h.ProfileGet(f.ctx, s1, hub.ProfileInput{})
		wantCode(t, "oldest session after the cap", err, apperr.NotPrimed)
		for name, cr := range map[string]hub.Credentials{"second": s2, "third": s3} {
			if _, err := f.h.ProfileGet(f.ctx, cr, hub.ProfileInput{}); err != nil {
				t.Errorf("%s session: %v", name, err)
			}
		}
		s4 := f.prime(f.a)
		_, err = f.h.ProfileGet(f.ctx, s2, hub.ProfileInput{})
		wantCode(t, "second session after a fourth", err, apperr.NotPrimed)
		if _, err := f.h.ProfileGet(f.ctx, s4, hub.ProfileInput{}); err != nil {
			t.Errorf("fourth session: %v", err)
		}
		// Another agent's sessions are its own.
		if _, err := f.h.ProfileGet(f.ctx, f.prime(f.b), hub.ProfileInput{}); err != nil {
			t.Errorf("agent b: %v", err)
		}
	})
}

// TestSpaceQuota: the cap on spaces an agent creates is LIMIT_EXCEEDED
// naming the field, and holds under concurrent creations.
func TestSpaceQuota(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad).limited(limits.Config{SpacesPerAgent: 3})
		cr := f.prime(f.a)
		before := spacesIn(t, f, f.box)
		out := createBurst(t, f, cr, "q", 5, 1, 0)
		if got := spacesIn(t, f, f.box) - before; got != 3 || out.applied.Load() != 3 {
			t.Fatalf("%d spaces stored, %d told success, want 3 and 3", got, out.applied.Load())
		}
		_, err := createSpace(f, cr, "public", "one too many", "q-last")
		e := wantCode(t, "create past the quota", err, apperr.LimitExceeded)
		if !strings.Contains(e.Message, "spaces_per_agent_max") {
			t.Errorf("message %q does not name spaces_per_agent_max", e.Message)
		}
		if _, err := createSpace(f, f.prime(f.b), "public", "b's", "q-b"); err != nil {
			t.Errorf("agent b under its own quota: %v", err)
		}
	})
}

// TestRoomMemberCap: the owner's add-member refuses one member past the
// stack's cap with LIMIT_EXCEEDED naming room_members_max; removing a member
// makes room again, and re-adding a current member is no addition.
func TestRoomMemberCap(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad).limited(limits.Config{RoomMembers: 2})
		room := f.mustRoom("small", "", f.a, f.b)
		f.mustAdd(room.RoomID, f.b) // already a member: unchanged, allowed
		carol := f.mustAgent(f.box, "carol")
		_, err := f.h.Admin().AddMember(f.ctx, room.RoomID, carol.AgentID)
		e := wantCode(t, "add-member past the cap", err, apperr.LimitExceeded)
		if !strings.Contains(e.Message, "room_members_max") || e.NextAction == "" {
			t.Errorf("refusal %q / %q: want it to name room_members_max and say what to do", e.Message, e.NextAction)
		}
		if _, err := f.h.Admin().RemoveMember(f.ctx, room.RoomID, f.b.AgentID); err != nil {
			t.Fatalf("RemoveMember: %v", err)
		}
		f.mustAdd(room.RoomID, carol)
		if _, err := f.h.Admin().AddMember(f.ctx, room.RoomID, f.b.AgentID); err == nil {
			t.Errorf("add-member into a full room again: got success")
		}
	})
}

// TestSessionOpeningIsAWrite: agent_prime writes a session, so it spends
// the write limit; an MCP initialize (OpenSession) writes nothing and
// spends nothing, with or without a key.
func TestSessionOpeningIsAWrite(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		f := newFixture(t, ad).limited(limits.Config{AgentMutations: limits.Rate{PerSecond: 0.5, Burst: 2}})
		f.prime(f.a)
		f.prime(f.a)
		for range 3 {
			if _, err := f.h.OpenSession(f.ctx, f.a.BoxKey); err != nil {
				t.Fatalf("OpenSession past the burst: %v, want a signed id (it writes nothing)", err)
			}
		}
		_, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey}, hub.PrimeInput{})
		wantCode(t, "Prime past the burst", err, apperr.RateLimited)
	})
}

// TestRateOpsFitTheWrite: a room message whose fan-out fills the first
// write still fits when the limiter adds its items, at every fan-out size
// around the boundary between one write and an intent.
func TestRateOpsFitTheWrite(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		huge := limits.Rate{PerSecond: 1e6, Burst: 1e6}
		lf := f.limited(limits.Config{AgentMutations: huge, BoxMutations: huge})
		room := f.mustRoom("crowd", "brief", f.a)
		cr := lf.prime(f.a)
		for i := range 52 {
			ag := f.mustAgent(f.box, fmt.Sprint("m", i))
			m := f.mustAdd(room.RoomID, ag)
			if _, err := follow(f, f.prime(ag), "all", room.RoomID, m.FollowRevision, hub.FollowAll); err != nil {
				t.Fatalf("follow %d: %v", i, err)
			}
			if i < 38 {
				continue
			}
			out, err := lf.h.MessageSend(f.ctx, cr, hub.MessageSendInput{
				Mutation:    hub.Mutation{IdempotencyKey: fmt.Sprint("crowd-", i)},
				Destination: hub.Destination{Kind: "room", RoomID: room.RoomID}, BodyMD: "hello"})
			if err != nil {
				t.Fatalf("send to %d followers: %v", i+1, err)
			}
			if out.AttentionCount != i+1 {
				t.Fatalf("send to %d followers: attention_count %d", i+1, out.AttentionCount)
			}
		}
	})
}

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
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// fixture is the shared hubtest world under the short names this
// package's tests use: a box of two agents (a, b) and a second box with
// one agent (other). A test may swap h (another instance of the service
// on the same store) or t (a subtest's); the helpers follow.
type fixture struct {
	w     *hubtest.World
	t     testing.TB
	h     *hub.Hub
	st    *teststores.Counting
	clock *teststores.Clock
	box   string
	a, b  *hub.AgentInfo // agents of box
	other *hub.AgentInfo // agent of another box
	ctx   context.Context
	raw   store.Store
	opts  hub.Options // what the hub was built with (limited keeps it)
}

// newFixture builds the world on ad with the store wrapped by wrap.
func newFixture(t testing.TB, ad teststores.Adapter, wrap ...func(store.Store) store.Store) *fixture {
	t.Helper()
	return newFixtureWith(t, ad, hub.Options{}, wrap...)
}

// newFixtureWith is newFixture with the hub built on opts (for example a
// token verifier).
func newFixtureWith(t testing.TB, ad teststores.Adapter, opts hub.Options, wrap ...func(store.Store) store.Store) *fixture {
	t.Helper()
	w := hubtest.New(t, ad, hubtest.Config{Options: opts, Wrap: wrap})
	return &fixture{w: w, t: w.T, h: w.Hub, st: w.Store, clock: w.Clock, box: w.Box,
		a: w.Alice, b: w.Bob, other: w.Mallory, ctx: w.Ctx, raw: w.Raw, opts: opts}
}

// world is the hubtest world with the fixture's current hub and test.
func (f *fixture) world() *hubtest.World {
	w := *f.w
	w.T, w.Hub, w.Admin = f.t, f.h, f.h.Admin()
	return &w
}

func (f *fixture) mustAgent(box, name string) *hub.AgentInfo {
	f.t.Helper()
	return f.world().MustAgent(box, name)
}

// mustOpenSession opens a signed session bound to no agent yet.
func (f *fixture) mustOpenSession() string {
	f.t.Helper()
	id, err := f.h.OpenSession(f.ctx, "")
	if err != nil {
		f.t.Fatalf("OpenSession: %v", err)
	}
	return id
}

// prime opens a REST session for ag and returns its credentials.
func (f *fixture) prime(ag *hub.AgentInfo) hub.Credentials {
	f.t.Helper()
	return f.world().Prime(ag)
}

// forEachAdapter runs fn on every adapter, in parallel (hubtest.ForEachAdapter).
func forEachAdapter(t *testing.T, fn func(t *testing.T, ad teststores.Adapter)) {
	hubtest.ForEachAdapter(t, fn)
}

// eachWorld runs fn on every adapter, in parallel, in the usual world
// (newFixture, the store unwrapped): most tests need nothing else.
func eachWorld(t *testing.T, fn func(t *testing.T, f *fixture)) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) { fn(t, newFixture(t, ad)) })
}

// forEachAdapterInBubble runs fn on every adapter in parallel, each inside
// a synctest bubble (hubtest.ForEachAdapterInBubble).
func forEachAdapterInBubble(t *testing.T, fn func(t *testing.T, ad teststores.Adapter)) {
	hubtest.ForEachAdapterInBubble(t, fn)
}

// forEachAdapterSerial runs fn on every adapter, one after the other and
// never alongside a parallel test: for a test that changes process-wide
// state.
func forEachAdapterSerial(t *testing.T, fn func(t *testing.T, ad teststores.Adapter)) {
	hubtest.ForEachAdapterSerial(t, fn)
}

// errOf is the error of a call's two results, for a table row whose call
// matters only by its error.
func errOf[T any](_ T, err error) error { return err }

func wantCode(t *testing.T, call string, err error, want apperr.Code) *apperr.Error {
	t.Helper()
	return hubtest.WantCode(t, call, err, want)
}

// wantLimit checks one row of a limits table: a call meant to pass (want
// "") passed, or one meant to fail failed with want, its message echoing
// none of echo (the refused value's telltales). It reports whether the
// call passed.
func wantLimit(t *testing.T, call string, err error, want apperr.Code, echo ...string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("%s: %v", call, err)
		}
		return true
	}
	e := wantCode(t, call, err, want)
	for _, s := range echo {
		if strings.Contains(e.Message, s) {
			t.Errorf("%s: error message echoes the rejected value: %q", call, e.Message)
		}
	}
	return false
}

// revisionCases runs run(i) as the subtest name(i), for i below n in order,
// on every adapter, each adapter on one fixture with alice primed: rev is
// the revision her last write that passed left (0 before any), and run
// moves it when its write passes.
func revisionCases(t *testing.T, n int, name func(i int) string, run func(t *testing.T, f *fixture, cr hub.Credentials, i int, rev *hub.Revision)) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		rev := hub.Revision(0)
		for i := range n {
			t.Run(name(i), func(t *testing.T) { run(t, f, cr, i, &rev) })
		}
	})
}

// wantCheckpointAt checks that cr's agent's checkpoint is at revision want.
func (f *fixture) wantCheckpointAt(cr hub.Credentials, want hub.Revision, why string) {
	f.t.Helper()
	got, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
	if err != nil || got.Checkpoint.Revision != want {
		f.t.Fatalf("CheckpointGet = %+v, %v; want revision %d (%s)", got, err, want, why)
	}
}

func save(f *fixture, cr hub.Credentials, key string, rev hub.Revision, body string) (*hub.CheckpointOutput, error) {
	return f.h.CheckpointSave(f.ctx, cr, hub.CheckpointSaveInput{
		Mutation:         hub.Mutation{IdempotencyKey: key},
		ExpectedRevision: rev, BodyMD: body,
	})
}

func TestPrime(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		out, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey}, hub.PrimeInput{})
		if err != nil {
			t.Fatalf("Prime: %v", err)
		}
		if out.SessionID == "" || out.SessionResumed {
			t.Errorf("Prime: session %q resumed=%v, want a new session", out.SessionID, out.SessionResumed)
		}
		if out.Agent.AgentID != f.a.AgentID || out.Agent.BoxID != f.box || out.Agent.Name != "alice" {
			t.Errorf("Prime: agent = %+v, want alice of box %s", out.Agent, f.box)
		}
		if out.Profile.Version != 1 || out.Profile.Role != "tester" {
			t.Errorf("Prime: profile = %+v, want version 1 role tester", out.Profile)
		}
		if out.Checkpoint.Revision != 0 || out.CheckpointMismatch {
			t.Errorf("Prime: checkpoint = %+v mismatch=%v, want revision 0 and no mismatch", out.Checkpoint, out.CheckpointMismatch)
		}
		if out.Rooms == nil || len(out.Rooms) != 0 || out.UnreadCount != 0 || out.OpenRequestCount != 0 {
			t.Errorf("Prime: rooms=%v unread=%d requests=%d, want empty and zero", out.Rooms, out.UnreadCount, out.OpenRequestCount)
		}
		if out.Limits.BodyMDBytes != 16384 || out.Limits.AckMax != 100 || out.Limits.TargetsMax != 20 {
			t.Errorf("Prime: limits = %+v", out.Limits)
		}

		cr := hub.Credentials{Bearer: f.a.BoxKey, SessionID: out.SessionID}
		if _, err := save(f, cr, "k1", 0, "first"); err != nil {
			t.Fatalf("CheckpointSave: %v", err)
		}
		held := hub.Revision(0)
		again, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{CheckpointRevision: &held})
		if err != nil {
			t.Fatalf("Prime(resume): %v", err)
		}
		if again.SessionID != out.SessionID || !again.SessionResumed {
			t.Errorf("Prime(resume): session %q resumed=%v, want %q resumed", again.SessionID, again.SessionResumed, out.SessionID)
		}
		if !again.CheckpointMismatch || again.Checkpoint.Revision != 1 || again.Checkpoint.BodyMD != "first" {
			t.Errorf("Prime(held 0): checkpoint %+v mismatch=%v, want revision 1 with mismatch", again.Checkpoint, again.CheckpointMismatch)
		}
		held = 1
		third, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{CheckpointRevision: &held})
		if err != nil || third.CheckpointMismatch {
			t.Errorf("Prime(held 1): mismatch=%v err=%v, want no mismatch", third != nil && third.CheckpointMismatch, err)
		}

		// Live counts: three DMs arrive, two are acknowledged.
		crB := f.prime(f.b)
		for i := range 3 {
			if _, err := f.h.MessageSend(f.ctx, crB, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("dm%d", i)},
				Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: f.a.AgentID}, BodyMD: "hi"}); err != nil {
				t.Fatalf("MessageSend: %v", err)
			}
		}
		if p, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{}); err != nil || p.UnreadCount != 3 || p.OpenRequestCount != 0 {
			t.Fatalf("Prime after 3 DMs = %+v, %v; want unread 3", p, err)
		}
		if _, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Limit: 2}); err != nil {
			t.Fatalf("InboxList: %v", err)
		}
		if _, err := f.h.InboxAck(f.ctx, cr, hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: "ack"},
			InboxSeqs: []hub.Revision{1, 2}}); err != nil {
			t.Fatalf("InboxAck: %v", err)
		}
		if p, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{}); err != nil || p.UnreadCount != 1 {
			t.Fatalf("Prime after acknowledging 2 of 3 = %+v, %v; want unread 1", p, err)
		}
	})
}

func TestSessionStaysAliveWhileUsed(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		for i := 0; i < 8; i++ { // 8 x 4h = 32h, well past one idle window
			f.clock.Advance(4 * time.Hour)
			if _, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{}); err != nil {
				t.Fatalf("CheckpointGet after %dh of regular use: %v", 4*(i+1), err)
			}
		}
	})
}

func TestAuthFailed(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA := f.prime(f.a)
		revoked := f.mustAgent(f.box, "revoked")
		if _, err := f.h.Admin().RevokeKey(f.ctx, revoked.AgentID, ""); err != nil {
			t.Fatalf("RevokeKey: %v", err)
		}
		rotated := f.mustAgent(f.box, "rotated")
		if _, err := f.h.Admin().RotateKey(f.ctx, rotated.AgentID); err != nil {
			t.Fatalf("RotateKey: %v", err)
		}
		// Same agent and key id as alice's key, different secret.
		forged := f.a.BoxKey[:len(f.a.BoxKey)-6] + "AAAAAA"
		if forged == f.a.BoxKey {
			forged = f.a.BoxKey[:len(f.a.BoxKey)-6] + "BBBBBB"
		}
		cases := []struct {
			name string
			cr   hub.Credentials
		}{
			{"NoKey", hub.Credentials{}},
			{"Garbage", hub.Credentials{Bearer: "abk_garbage"}},
			{"WrongSecret", hub.Credentials{Bearer: forged}},
			{"RevokedKey", hub.Credentials{Bearer: revoked.BoxKey}},
			{"RotatedOldKey", hub.Credentials{Bearer: rotated.BoxKey}},
			{"OtherAgentWithMySession", hub.Credentials{Bearer: f.b.BoxKey, SessionID: crA.SessionID}},
			{"OtherBoxWithMySession", hub.Credentials{Bearer: f.other.BoxKey, SessionID: crA.SessionID}},
			{"BearerAndArgDisagree", hub.Credentials{Bearer: f.a.BoxKey, ArgKey: f.b.BoxKey, SessionID: crA.SessionID}},
			// Both name alice's agent and key id, but box_key's secret is
			// wrong: every presented key must check out, not just one.
			{"ArgKeyForgedBesideValidBearer", hub.Credentials{Bearer: f.a.BoxKey, ArgKey: forged, SessionID: crA.SessionID}},
			{"BearerForgedBesideValidArgKey", hub.Credentials{Bearer: forged, ArgKey: f.a.BoxKey, SessionID: crA.SessionID}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := f.h.Prime(f.ctx, tc.cr, hub.PrimeInput{})
				e := wantCode(t, "Prime", err, apperr.AuthFailed)
				_, err = f.h.CheckpointGet(f.ctx, tc.cr, hub.CheckpointGetInput{})
				wantCode(t, "CheckpointGet", err, apperr.AuthFailed)
				for _, secret := range []string{f.a.BoxKey, f.b.BoxKey, forged, crA.SessionID} {
					if strings.Contains(e.Message+e.NextAction, secret) {
						t.Errorf("AUTH_FAILED text contains credential material")
					}
				}
			})
		}
		t.Run("ArgKeyAlone", func(t *testing.T) {
			cr := hub.Credentials{ArgKey: f.a.BoxKey, SessionID: crA.SessionID}
			if _, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{}); err != nil {
				t.Fatalf("CheckpointGet with box_key only: %v", err)
			}
		})
		t.Run("RevokedMidSessionBlocksMutation", func(t *testing.T) {
			victim := f.mustAgent(f.box, "victim")
			cr := f.prime(victim)
			if _, err := f.h.Admin().RevokeKey(f.ctx, victim.AgentID, ""); err != nil {
				t.Fatalf("RevokeKey: %v", err)
			}
			_, err := save(f, cr, "k", 0, "x")
			wantCode(t, "CheckpointSave after revocation", err, apperr.AuthFailed)
		})
	})
}

func TestUnboundSessionBinding(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		id := f.mustOpenSession()
		out, err := f.h.Prime(f.ctx, hub.Credentials{ArgKey: f.a.BoxKey, SessionID: id, Transport: "mcp"}, hub.PrimeInput{})
		if err != nil {
			t.Fatalf("Prime on unbound session: %v", err)
		}
		if out.SessionID != id {
			t.Fatalf("Prime: session %q, want the transport's %q", out.SessionID, id)
		}
		_, err = f.h.Prime(f.ctx, hub.Credentials{ArgKey: f.b.BoxKey, SessionID: id, Transport: "mcp"}, hub.PrimeInput{})
		wantCode(t, "Prime by another agent on a bound session", err, apperr.AuthFailed)
		_, err = f.h.Prime(f.ctx, hub.Credentials{ArgKey: f.a.BoxKey, SessionID: "m_" + strings.Repeat("B", 54), Transport: "mcp"}, hub.PrimeInput{})
		wantCode(t, "Prime on an unknown MCP session", err, apperr.NotPrimed)
		if err := f.h.CloseSession(f.ctx, id, hub.Credentials{Bearer: f.b.BoxKey}); err == nil {
			t.Fatalf("CloseSession by another agent: got success, want AUTH_FAILED")
		}
		if err := f.h.CloseSession(f.ctx, id, hub.Credentials{Bearer: f.a.BoxKey}); err != nil {
			t.Fatalf("CloseSession: %v", err)
		}
		err = f.h.CheckSession(f.ctx, id, "")
		wantCode(t, "CheckSession after close", err, apperr.NotPrimed)
	})
}

func TestProfileOutdated(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		if _, err := f.h.Admin().SetProfile(f.ctx, f.a.AgentID, []byte(`{"role":"reviewer","instructions_md":"Review PRs."}`)); err != nil {
			t.Fatalf("SetProfile: %v", err)
		}
		_, err := save(f, cr, "k1", 0, "x")
		wantCode(t, "CheckpointSave after profile change", err, apperr.ProfileOutdated)
		// Reads still work.
		if _, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{}); err != nil {
			t.Fatalf("CheckpointGet with outdated profile: %v", err)
		}
		p, err := f.h.ProfileGet(f.ctx, cr, hub.ProfileInput{})
		if err != nil {
			t.Fatalf("ProfileGet: %v", err)
		}
		if p.Profile.Version != 2 || p.Profile.Role != "reviewer" || p.Profile.InstructionsMD != "Review PRs." {
			t.Fatalf("ProfileGet = %+v, want version 2 reviewer", p.Profile)
		}
		out, err := save(f, cr, "k1", 0, "x")
		if err != nil {
			t.Fatalf("CheckpointSave after profile_get: %v", err)
		}
		if out.Checkpoint.ProfileVersion == nil || *out.Checkpoint.ProfileVersion != 2 || out.Checkpoint.SessionID != cr.SessionID {
			t.Errorf("CheckpointSave: provenance %+v, want session %s profile 2", out.Checkpoint, cr.SessionID)
		}
	})
}

// TestProfileChangeBetweenReadAndWrite forces the interleaving in which the
// owner changes the profile after a mutation read it and before it writes:
// the write's profile-version check must refuse it.
func TestProfileChangeBetweenReadAndWrite(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var hook onceHook
		f := newFixture(t, ad, withOnceHook(&hook))
		cr := f.prime(f.a)
		hook.set(func() {
			if _, err := f.h.Admin().SetProfile(f.ctx, f.a.AgentID, []byte(`{"role":"changed"}`)); err != nil {
				t.Errorf("SetProfile: %v", err)
			}
		})
		_, err := save(f, cr, "k1", 0, "x")
		hook.raced(t, "CheckpointSave racing a profile change")
		wantCode(t, "CheckpointSave racing a profile change", err, apperr.ProfileOutdated)
		f.wantCheckpointAt(cr, 0, "nothing written")
	})
}

// TestProfileGetRacingSessionWrite forces the interleaving in which another
// call of the same session (an agent's parallel tool calls) rewrites the
// session after profile_get read it and before profile_get records the
// observed profile version. profile_get must still record it: answering
// STORAGE_FAILURE (or leaving the session outdated) would be wrong for a
// read that nothing prevented.
func TestProfileGetRacingSessionWrite(t *testing.T) {
	racers := []struct {
		name string
		race func(f *fixture, cr hub.Credentials) error
	}{
		{"ResumedByPrime", func(f *fixture, cr hub.Credentials) error {
			_, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{})
			return err
		}},
		{"TouchedByRead", func(f *fixture, cr hub.Credentials) error {
			_, err := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
			return err
		}},
	}
	for _, rc := range racers {
		t.Run(rc.name, func(t *testing.T) {
			forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
				var hook onceHook
				f := newFixture(t, ad, withOnceHook(&hook))
				cr := f.prime(f.a)
				if _, err := f.h.Admin().SetProfile(f.ctx, f.a.AgentID, []byte(`{"role":"reviewer"}`)); err != nil {
					t.Fatalf("SetProfile: %v", err)
				}
				f.clock.Advance(4 * time.Hour) // past a quarter of the idle window: reads touch
				hook.set(func() {
					if err := rc.race(f, cr); err != nil {
						t.Errorf("racing call: %v", err)
					}
				})
				got, err := f.h.ProfileGet(f.ctx, cr, hub.ProfileInput{})
				hook.raced(t, "ProfileGet racing a session write")
				if err != nil {
					t.Fatalf("ProfileGet racing a session write: %v, want success", err)
				}
				if got.Profile.Version != 2 {
					t.Fatalf("ProfileGet racing a session write: version %d, want 2", got.Profile.Version)
				}
				if _, err := save(f, cr, "k1", 0, "x"); err != nil {
					t.Fatalf("CheckpointSave after ProfileGet: %v, want success (profile observed)", err)
				}
			})
		})
	}
}

// TestCloseSessionRacingSessionWrite forces the interleaving in which
// another call of the session rewrites it (a touch, agent_prime) after
// CloseSession read it and before it deletes it. The session must still end:
// a DELETE that answers success while the session lives on would leave the
// client believing it logged out.
func TestCloseSessionRacingSessionWrite(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var hook onceHook
		f := newFixture(t, ad, withOnceHook(&hook))
		id, err := f.h.OpenSession(f.ctx, f.a.BoxKey)
		if err != nil {
			t.Fatalf("OpenSession: %v", err)
		}
		cr := hub.Credentials{Bearer: f.a.BoxKey, SessionID: id, Transport: "mcp"}
		if _, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{}); err != nil {
			t.Fatalf("Prime: %v", err)
		}
		hook.set(func() {
			if _, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{}); err != nil {
				t.Errorf("Prime(resume) racing CloseSession: %v", err)
			}
		})
		err = f.h.CloseSession(f.ctx, id, cr)
		hook.raced(t, "CloseSession racing a session write")
		if err != nil {
			t.Fatalf("CloseSession racing a session write: %v", err)
		}
		err = f.h.CheckSession(f.ctx, id, f.a.BoxKey)
		wantCode(t, "CheckSession after CloseSession", err, apperr.NotPrimed)
		_, err = f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
		wantCode(t, "CheckpointGet after CloseSession", err, apperr.NotPrimed)
	})
}

// beforeWrite runs hook before every Write: it forces an interleaving a
// real store cannot be made to produce on demand.
type beforeWrite struct {
	store.Store
	hook func()
}

func (b *beforeWrite) Write(ctx context.Context, ops []store.Op) error {
	b.hook()
	return b.Store.Write(ctx, ops)
}

// withHook runs *hook before every write; the test sets it as it goes.
func withHook(hook *func()) func(store.Store) store.Store {
	return func(s store.Store) store.Store { return &beforeWrite{Store: s, hook: func() { (*hook)() }} }
}

// onceHook forces an interleaving a real store cannot be made to produce
// on demand: armed with a racing call (set), the next write runs the call
// first, once. A race that never fired proves nothing, so a test ends its
// race with raced, which fails unless the racing call ran and wrote.
type onceHook struct {
	fn          atomic.Pointer[func()]
	fired       atomic.Bool
	racing      atomic.Bool
	racerWrites atomic.Int32
}

// set arms fn for the next write.
func (h *onceHook) set(fn func()) {
	h.fired.Store(false)
	h.racerWrites.Store(0)
	h.fn.Store(&fn)
}

// before runs before every write: the armed call, if any, disarming it;
// a write the racing call makes itself is counted.
func (h *onceHook) before() {
	if h.racing.Load() {
		h.racerWrites.Add(1)
		return
	}
	fn := h.fn.Swap(nil)
	if fn == nil {
		return
	}
	h.fired.Store(true)
	h.racing.Store(true)
	defer h.racing.Store(false)
	(*fn)()
}

// raced disarms h and fails t unless the armed call ran before a write of
// the call under test and itself wrote: otherwise nothing raced.
func (h *onceHook) raced(t testing.TB, what string) {
	t.Helper()
	h.fn.Store(nil)
	switch {
	case !h.fired.Load():
		t.Errorf("%s: the racing call never ran (no write after it was armed)", what)
	case h.racerWrites.Load() == 0:
		t.Errorf("%s: the racing call wrote nothing, so nothing raced", what)
	}
}

// withOnceHook runs h's armed call, if any, before a write (onceHook).
func withOnceHook(h *onceHook) func(store.Store) store.Store {
	return func(s store.Store) store.Store { return &beforeWrite{Store: s, hook: h.before} }
}

func TestCheckpointCAS(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		f.wantCheckpointAt(cr, 0, "none saved yet")
		out, err := f.h.CheckpointSave(f.ctx, cr, hub.CheckpointSaveInput{
			Mutation: hub.Mutation{IdempotencyKey: "k1"}, ExpectedRevision: 0,
			BodyMD: "# state", Payload: hub.Object(`{"cursor":"abc","n":[1,2]}`),
		})
		if err != nil {
			t.Fatalf("CheckpointSave(0): %v", err)
		}
		if out.Checkpoint.Revision != 1 || out.Replayed || string(out.Checkpoint.Payload) != `{"cursor":"abc","n":[1,2]}` {
			t.Fatalf("CheckpointSave(0) = %+v, want revision 1 with payload", out)
		}
		_, err = save(f, cr, "k2", 0, "stale")
		e := wantCode(t, "CheckpointSave(stale 0)", err, apperr.RevisionConflict)
		if e.CurrentRevision == nil || *e.CurrentRevision != 1 {
			t.Fatalf("REVISION_CONFLICT current revision = %v, want 1", e.CurrentRevision)
		}
		_, err = save(f, cr, "k3", 7, "future")
		wantCode(t, "CheckpointSave(7)", err, apperr.RevisionConflict)
		if _, err := save(f, cr, "k4", 1, "second"); err != nil {
			t.Fatalf("CheckpointSave(1): %v", err)
		}
		got, _ := f.h.CheckpointGet(f.ctx, cr, hub.CheckpointGetInput{})
		if got.Checkpoint.Revision != 2 || got.Checkpoint.BodyMD != "second" || got.Checkpoint.Payload != nil {
			t.Fatalf("CheckpointGet = %+v, want revision 2 'second' without payload (no merge)", got.Checkpoint)
		}
		// Another agent's checkpoint is its own.
		crB := f.prime(f.b)
		f.wantCheckpointAt(crB, 0, "bob's own, none saved")
	})
}

func TestIdempotency(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		first, err := save(f, cr, "same", 0, "body")
		if err != nil {
			t.Fatalf("CheckpointSave: %v", err)
		}
		again, err := save(f, cr, "same", 0, "body")
		if err != nil {
			t.Fatalf("CheckpointSave(replay): %v", err)
		}
		if !again.Replayed || again.Checkpoint.Revision != first.Checkpoint.Revision || again.Checkpoint.SavedAt != first.Checkpoint.SavedAt {
			t.Fatalf("replay = %+v, want the original receipt marked replayed", again)
		}
		_, err = save(f, cr, "same", 0, "different body")
		wantCode(t, "CheckpointSave(same key, other payload)", err, apperr.IdempotencyConflict)
		// The key is scoped per agent: bob may use the same key.
		crB := f.prime(f.b)
		if out, err := save(f, crB, "same", 0, "body"); err != nil || out.Replayed {
			t.Fatalf("bob CheckpointSave(same key) = %+v, %v; want a fresh effect", out, err)
		}
		// Even after the CAS moved on, the replay answers from the record.
		if _, err := save(f, cr, "next", 1, "v2"); err != nil {
			t.Fatalf("CheckpointSave(1): %v", err)
		}
		old, err := save(f, cr, "same", 0, "body")
		if err != nil || !old.Replayed || old.Checkpoint.Revision != 1 {
			t.Fatalf("late replay = %+v, %v; want revision 1 replayed", old, err)
		}
		f.wantCheckpointAt(cr, 2, "replays have no effect")
	})
}

// TestIdempotencyCanonicalPayload: a retry carries the same logical request,
// but a JSON object's member order and spacing are not part of it (an agent
// that re-emits its arguments may reorder them). Same content is a replay;
// different content under the same key is still IDEMPOTENCY_CONFLICT.
func TestIdempotencyCanonicalPayload(t *testing.T) {
	const first = `{"a":1,"b":{"c":"x","d":[1,{"e":true,"f":null}]}}`
	cases := []struct {
		name    string
		payload string
		want    apperr.Code // "" for a replay
	}{
		{"SameBytes", first, ""},
		{"Spacing", `{ "a": 1, "b": { "c": "x", "d": [ 1, { "e": true, "f": null } ] } }`, ""},
		{"MemberOrder", `{"b":{"d":[1,{"f":null,"e":true}],"c":"x"},"a":1}`, ""},
		{"ArrayOrder", `{"a":1,"b":{"c":"x","d":[{"e":true,"f":null},1]}}`, apperr.IdempotencyConflict},
		{"OtherValue", `{"a":2,"b":{"c":"x","d":[1,{"e":true,"f":null}]}}`, apperr.IdempotencyConflict},
	}
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		in := func(payload string) hub.CheckpointSaveInput {
			return hub.CheckpointSaveInput{Mutation: hub.Mutation{IdempotencyKey: "k"},
				ExpectedRevision: 0, BodyMD: "body", Payload: hub.Object(payload)}
		}
		orig, err := f.h.CheckpointSave(f.ctx, cr, in(first))
		if err != nil {
			t.Fatalf("CheckpointSave(payload %s): %v", first, err)
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				call := fmt.Sprintf("CheckpointSave(same key, payload %s)", tc.payload)
				got, err := f.h.CheckpointSave(f.ctx, cr, in(tc.payload))
				if tc.want != "" {
					wantCode(t, call, err, tc.want)
					return
				}
				if err != nil {
					t.Fatalf("%s: %v, want the original receipt replayed", call, err)
				}
				if !got.Replayed || got.Checkpoint.Revision != orig.Checkpoint.Revision || got.Checkpoint.SavedAt != orig.Checkpoint.SavedAt {
					t.Fatalf("%s = %+v, want the original receipt replayed", call, got)
				}
			})
		}
	})
}

// faultStore injects the write faults a real engine cannot be asked for
// on demand: it refuses the next n writes as a throttled engine does
// (refuse), and it commits a write and then reports a failure, as a
// timeout after the engine committed does (loseReply).
type faultStore struct {
	store.Store
	mu       sync.Mutex
	refusals int
	lose     bool
}

// withFaults wraps the store in a faultStore, set into *w.
func withFaults(w **faultStore) func(store.Store) store.Store {
	return func(s store.Store) store.Store { *w = &faultStore{Store: s}; return *w }
}

// refuse makes the next n writes fail with nothing written (0: none).
func (w *faultStore) refuse(n int) { w.mu.Lock(); w.refusals = n; w.mu.Unlock() }

// loseReply makes the next write that is not refused commit and then fail.
func (w *faultStore) loseReply() { w.mu.Lock(); w.lose = true; w.mu.Unlock() }

func (w *faultStore) Write(ctx context.Context, ops []store.Op) error {
	w.mu.Lock()
	refuse := w.refusals > 0
	lose := !refuse && w.lose
	if refuse {
		w.refusals--
	} else {
		w.lose = false
	}
	w.mu.Unlock()
	if refuse {
		return fmt.Errorf("throttled: %w", store.ErrUnavailable)
	}
	err := w.Store.Write(ctx, ops)
	if lose && err == nil {
		return context.DeadlineExceeded
	}
	return err
}

// TestStoreFaults: for each tool, a refusal that outlasts the kernel's
// retries reaches the caller as TEMPORARILY_UNAVAILABLE, retryable with a
// hint and with nothing written, so the same call afterwards takes effect
// afresh; a short refusal is absorbed by the retries, once; a write whose
// reply is lost after it committed is TEMPORARILY_UNAVAILABLE, and its
// retry with the same key answers the committed receipt: one effect.
func TestStoreFaults(t *testing.T) {
	cases := []struct {
		tool string
		// setup returns the tool's next write under key (its answer's
		// version and whether it was a replay) and the check of the record
		// after three effects.
		setup func(t *testing.T, f *fixture, cr hub.Credentials) (write func(key string) (uint64, bool, error), check func())
	}{
		{"checkpoint_save", func(t *testing.T, f *fixture, cr hub.Credentials) (func(string) (uint64, bool, error), func()) {
			var cur hub.Revision
			return func(key string) (uint64, bool, error) {
					out, err := save(f, cr, key, cur, "body "+key)
					if err != nil {
						return 0, false, err
					}
					cur = out.Checkpoint.Revision
					return uint64(cur), out.Replayed, nil
				}, func() {
					f.wantCheckpointAt(cr, 3, "each effect once")
				}
		}},
		{"save_memory", func(t *testing.T, f *fixture, cr hub.Credentials) (func(string) (uint64, bool, error), func()) {
			var cur uint64
			return func(key string) (uint64, bool, error) {
					out, err := saveNote(f, cr, "busy", int64(cur), "x "+key, key)
					if err != nil {
						return 0, false, err
					}
					cur = out.Operation.Version
					return cur, out.Replayed, nil
				}, func() {
					if got, err := getNote(f, cr, "busy"); err != nil || got.Note.Version != 3 {
						t.Fatalf("GetMemory = %+v, %v; want version 3", got, err)
					}
				}
		}},
		{"create_space+update_space", func(t *testing.T, f *fixture, cr hub.Credentials) (func(string) (uint64, bool, error), func()) {
			var id string
			var cur uint64
			return func(key string) (uint64, bool, error) {
					var out *hub.SpaceMutationOutput
					var err error
					if id == "" {
						out, err = createSpace(f, cr, "public", "Busy", key)
					} else {
						out, err = updateSpace(f, cr, id, int64(cur), "Busy "+key, "active", key)
					}
					if err != nil {
						return 0, false, err
					}
					id, cur = out.Operation.ResourceID, out.Operation.Version
					return cur, out.Replayed, nil
				}, func() {
					if n := len(mustList(f, cr)); n != 1 {
						t.Errorf("%d spaces, want 1", n)
					}
				}
		}},
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		for _, tc := range cases {
			t.Run(tc.tool, func(t *testing.T) {
				var fw *faultStore
				f := newFixture(t, ad, withFaults(&fw))
				write, check := tc.setup(t, f, f.prime(f.a))
				wantEffect := func(call string, want uint64, replayed bool, got uint64, gotReplayed bool, err error) {
					t.Helper()
					if err != nil || got != want || gotReplayed != replayed {
						t.Fatalf("%s = version %d replayed %v, %v; want version %d replayed %v", call, got, gotReplayed, err, want, replayed)
					}
				}
				fw.refuse(1000)
				_, _, err := write("busy")
				if e := wantCode(t, "write while throttled", err, apperr.TemporarilyUnavailable); !e.Code.Retryable() || e.RetryAfter <= 0 {
					t.Errorf("throttled: retryable=%v retry_after=%d, want a retryable answer with a hint", e.Code.Retryable(), e.RetryAfter)
				}
				fw.refuse(0)
				v, replayed, err := write("busy")
				wantEffect("the same call once the refusals stop", 1, false, v, replayed, err)
				fw.refuse(2)
				v, replayed, err = write("absorbed")
				wantEffect("a write through a short refusal", 2, false, v, replayed, err)
				fw.loseReply()
				_, _, err = write("lost")
				if e := wantCode(t, "write with a lost reply", err, apperr.TemporarilyUnavailable); !e.Code.Retryable() {
					t.Errorf("uncertain failure is not retryable")
				}
				v, replayed, err = write("lost")
				wantEffect("the retry of the lost reply", 3, true, v, replayed, err)
				check()
			})
		}
	})
}

func TestCheckpointLimits(t *testing.T) {
	deep := func(n int) string {
		return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
	}
	cases := []struct {
		name    string
		body    string
		payload string
		want    apperr.Code // "" = success
	}{
		{"BodyOneByte", "x", "", ""},
		{"BodyAtLimit", strings.Repeat("é", 8192), "", ""},
		{"BodyOverLimit", strings.Repeat("é", 8192) + "x", "", apperr.LimitExceeded},
		{"BodyEmpty", "", "", apperr.InvalidArgument},
		{"PayloadDepth8", "x", deep(8), ""},
		{"PayloadDepth9", "x", deep(9), apperr.LimitExceeded},
		{"PayloadAtLimit", "x", `{"s":"` + strings.Repeat("a", 8192-8) + `"}`, ""},
		{"PayloadOverLimit", "x", `{"s":"` + strings.Repeat("a", 8192-7) + `"}`, apperr.LimitExceeded},
		{"PayloadNotObject", "x", `[1,2]`, apperr.InvalidArgument},
	}
	revisionCases(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, f *fixture, cr hub.Credentials, i int, rev *hub.Revision) {
		tc := cases[i]
		out, err := f.h.CheckpointSave(f.ctx, cr, hub.CheckpointSaveInput{
			Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("lim-%d", i)}, ExpectedRevision: *rev,
			BodyMD: tc.body, Payload: hub.Object(tc.payload),
		})
		if wantLimit(t, "CheckpointSave", err, tc.want, "aaaa", "éé") {
			*rev = out.Checkpoint.Revision
		}
	})
}

func TestAdminErrors(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		adm := f.h.Admin()
		_, err := adm.CreateAgent(f.ctx, "00000000-0000-4000-8000-000000000000", "x", "")
		wantCode(t, "CreateAgent(unknown box)", err, apperr.NotFoundOrForbidden)
		_, err = adm.CreateAgent(f.ctx, "not-a-uuid", "x", "")
		wantCode(t, "CreateAgent(bad box id)", err, apperr.InvalidArgument)
		_, err = adm.CreateBox(f.ctx, "")
		wantCode(t, "CreateBox(empty)", err, apperr.InvalidArgument)
		_, err = adm.SetProfile(f.ctx, f.a.AgentID, []byte(`{"bogus":1}`))
		wantCode(t, "SetProfile(unknown field)", err, apperr.InvalidArgument)
		list, err := adm.ListAgents(f.ctx, f.box)
		if err != nil || len(list) != 2 {
			t.Fatalf("ListAgents = %d agents, %v; want 2", len(list), err)
		}
		for _, a := range list {
			if a.BoxKey != "" {
				t.Errorf("ListAgents shows a key")
			}
		}
		rot, err := adm.RotateKey(f.ctx, f.a.AgentID)
		if err != nil || rot.BoxKey == "" || rot.BoxKey == f.a.BoxKey {
			t.Fatalf("RotateKey = %+v, %v; want a new key", rot, err)
		}
		if _, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: rot.BoxKey}, hub.PrimeInput{}); err != nil {
			t.Fatalf("Prime with rotated key: %v", err)
		}
		_, err = f.h.Prime(f.ctx, hub.Credentials{Bearer: f.a.BoxKey}, hub.PrimeInput{})
		wantCode(t, "Prime with the pre-rotation key", err, apperr.AuthFailed)
	})
}

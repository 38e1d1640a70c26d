// Package hubtest is the shared world of the domain and transport tests: a
// real hub on one storage adapter, with two boxes, three agents and (on
// request) a room, plus the few helpers every such test repeats. It is a
// normal package so that tests of several packages can share it; nothing but
// tests imports it.
//
// The world is the same everywhere: box "main" holds alice and bob, box
// "other" holds mallory, every agent has the role Config.Role ("tester"
// unless set). The hub's clock is a teststores.Clock the test moves by hand,
// and its store is wrapped in a teststores.Counting so a test can count round
// trips.
package hubtest

import (
	"context"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// Config changes the world New builds. The zero Config is the usual world.
type Config struct {
	// Options configure the hub. New sets Now to the world's clock when it
	// is nil, and sets OrderedWrites when the adapter's engine orders them.
	Options hub.Options
	// Wrap wraps the adapter's store, in order, before the counting
	// wrapper: a test observing or faulting the store puts its wrapper here.
	Wrap []func(store.Store) store.Store
	// Role is every seeded agent's role; "tester" when empty.
	Role string
	// Room, when true, seeds World.Room: a room of box main with alice and
	// bob as members.
	Room bool
}

// World is one hub on one adapter with its seeded boxes and agents.
type World struct {
	T     testing.TB
	Ctx   context.Context
	Hub   *hub.Hub
	Admin *hub.Admin
	// Store is the hub's store: Raw wrapped by Config.Wrap, then counted.
	Store *teststores.Counting
	// Raw is the adapter's own store, under every wrapper.
	Raw   store.Store
	Clock *teststores.Clock

	// Box is box "main" (alice and bob), OtherBox is box "other" (mallory).
	Box, OtherBox string
	Alice, Bob    *hub.AgentInfo
	Mallory       *hub.AgentInfo
	// Room is nil unless Config.Room is set.
	Room *hub.RoomInfo

	role string
}

// New builds the world on ad; the store closes when t ends.
func New(t testing.TB, ad teststores.Adapter, cfg Config) *World {
	t.Helper()
	clock := teststores.NewClock()
	raw := ad.Open(t, clock.Now)
	s := raw
	for _, w := range cfg.Wrap {
		s = w(s)
	}
	counting := teststores.NewCounting(s)
	opts := cfg.Options
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	opts.OrderedWrites = opts.OrderedWrites || ad.OrderedWrites
	w := &World{T: t, Ctx: context.Background(), Store: counting, Raw: raw, Clock: clock, role: cfg.Role}
	if w.role == "" {
		w.role = "tester"
	}
	w.Hub = hub.New(counting, opts)
	w.Admin = w.Hub.Admin()
	w.Box = w.MustBox("main")
	w.OtherBox = w.MustBox("other")
	w.Alice = w.MustAgent(w.Box, "alice")
	w.Bob = w.MustAgent(w.Box, "bob")
	w.Mallory = w.MustAgent(w.OtherBox, "mallory")
	if cfg.Room {
		w.Room = w.MustRoom(w.Box, "planning", w.Alice, w.Bob)
	}
	return w
}

// MustBox creates a box and returns its id.
func (w *World) MustBox(name string) string {
	w.T.Helper()
	box, err := w.Admin.CreateBox(w.Ctx, name)
	if err != nil {
		w.T.Fatalf("CreateBox(%s): %v", name, err)
	}
	return box.BoxID
}

// MustAgent creates an agent with a write key in box.
func (w *World) MustAgent(box, name string) *hub.AgentInfo {
	w.T.Helper()
	ag, err := w.Admin.CreateAgent(w.Ctx, box, name, w.role)
	if err != nil {
		w.T.Fatalf("CreateAgent(%s): %v", name, err)
	}
	return ag
}

// MustRoom creates a room in box and adds members to it.
func (w *World) MustRoom(box, name string, members ...*hub.AgentInfo) *hub.RoomInfo {
	w.T.Helper()
	room, err := w.Admin.CreateRoom(w.Ctx, box, name, "")
	if err != nil {
		w.T.Fatalf("CreateRoom(%s): %v", name, err)
	}
	for _, m := range members {
		if _, err := w.Admin.AddMember(w.Ctx, room.RoomID, m.AgentID); err != nil {
			w.T.Fatalf("AddMember(%s, %s): %v", name, m.Name, err)
		}
	}
	return room
}

// Prime opens a REST session for ag and returns its credentials.
func (w *World) Prime(ag *hub.AgentInfo) hub.Credentials {
	w.T.Helper()
	out, err := w.Hub.Prime(w.Ctx, hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
	if err != nil {
		w.T.Fatalf("Prime(%s): %v", ag.Name, err)
	}
	return hub.Credentials{Bearer: ag.BoxKey, SessionID: out.SessionID, Transport: "rest"}
}

// DM sends a direct message from cr to the agent to under idempotency key
// key and fails the test on error.
func (w *World) DM(cr hub.Credentials, to *hub.AgentInfo, key, body string) *hub.MessageSendOutput {
	w.T.Helper()
	out, err := w.Hub.MessageSend(w.Ctx, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: key},
		Destination: hub.Destination{Kind: hub.KindDM, RecipientAgentID: to.AgentID}, BodyMD: body})
	if err != nil {
		w.T.Fatalf("MessageSend(%s to %s): %v", key, to.Name, err)
	}
	return out
}

// WantCode fails t unless err is an apperr.Error of code want, and returns
// it. call names the call in the failure.
func WantCode(t testing.TB, call string, err error, want apperr.Code) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got success, want %s", call, want)
	}
	e, ok := apperr.As(err)
	if !ok {
		t.Fatalf("%s: got untyped error %v, want %s", call, err, want)
	}
	if e.Code != want {
		t.Fatalf("%s: got %s (%s), want %s", call, e.Code, e.Message, want)
	}
	return e
}

// ForEachAdapter runs fn once per adapter of teststores.All, as parallel
// subtests of a test that is itself marked parallel. A test that touches
// process-wide state (t.Setenv, slog.SetDefault, a package variable, the DNS
// resolver) must use ForEachAdapterSerial instead.
func ForEachAdapter(t *testing.T, fn func(t *testing.T, ad teststores.Adapter)) {
	t.Parallel()
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, ad)
		})
	}
}

// ForEachAdapterSerial runs fn once per adapter of teststores.All, one
// after the other, and never alongside a parallel test.
func ForEachAdapterSerial(t *testing.T, fn func(t *testing.T, ad teststores.Adapter)) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) { fn(t, ad) })
	}
}

// Adapter returns the adapter of teststores.All named name, and fails t
// when there is none (as when AGENTBOX_TEST_ADAPTERS names another).
func Adapter(t testing.TB, name string) teststores.Adapter {
	t.Helper()
	for _, ad := range teststores.All() {
		if ad.Name == name {
			return ad
		}
	}
	t.Fatalf("no storage adapter %q", name)
	return teststores.Adapter{}
}

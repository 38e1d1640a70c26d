package opview_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// The read model's fixture (model_test.go): one hub on one adapter with a
// box of two agents and a second box with one agent, driven through the
// hub's API as agents and the admin would. The HTTP tests use world
// (fixture_test.go) instead.

type fixture struct {
	t     testing.TB
	h     *hub.Hub
	clock *teststores.Clock
	box   string
	a, b  *hub.AgentInfo // agents of box
	other *hub.AgentInfo // agent of another box
	ctx   context.Context
	raw   store.Store
}

func forEachAdapter(t *testing.T, fn func(t *testing.T, ad teststores.Adapter)) {
	for _, ad := range teststores.All() {
		t.Run(ad.Name, func(t *testing.T) { fn(t, ad) })
	}
}

func newFixture(t testing.TB, ad teststores.Adapter, wrap ...func(store.Store) store.Store) *fixture {
	t.Helper()
	clock := teststores.NewClock()
	raw := ad.Open(t, clock.Now)
	var s store.Store = raw
	for _, w := range wrap {
		s = w(s)
	}
	f := &fixture{t: t, clock: clock, raw: raw, ctx: context.Background()}
	f.h = hub.New(s, hub.Options{Now: clock.Now, OrderedWrites: ad.OrderedWrites})
	box, err := f.h.Admin().CreateBox(f.ctx, "main")
	if err != nil {
		t.Fatalf("CreateBox: %v", err)
	}
	f.box = box.BoxID
	f.a = f.mustAgent(box.BoxID, "alice")
	f.b = f.mustAgent(box.BoxID, "bob")
	other, err := f.h.Admin().CreateBox(f.ctx, "other")
	if err != nil {
		t.Fatalf("CreateBox: %v", err)
	}
	f.other = f.mustAgent(other.BoxID, "mallory")
	return f
}

func (f *fixture) mustAgent(box, name string) *hub.AgentInfo {
	f.t.Helper()
	ag, err := f.h.Admin().CreateAgent(f.ctx, box, name, "tester")
	if err != nil {
		f.t.Fatalf("CreateAgent(%s): %v", name, err)
	}
	return ag
}

// prime opens a REST session for ag and returns its credentials.
func (f *fixture) prime(ag *hub.AgentInfo) hub.Credentials {
	f.t.Helper()
	out, err := f.h.Prime(f.ctx, hub.Credentials{Bearer: ag.BoxKey}, hub.PrimeInput{})
	if err != nil {
		f.t.Fatalf("Prime(%s): %v", ag.Name, err)
	}
	return hub.Credentials{Bearer: ag.BoxKey, SessionID: out.SessionID, Transport: "rest"}
}

func (f *fixture) mustRoom(name, brief string) *hub.RoomInfo {
	f.t.Helper()
	r, err := f.h.Admin().CreateRoom(f.ctx, f.box, name, brief)
	if err != nil {
		f.t.Fatalf("CreateRoom(%q): %v", name, err)
	}
	return r
}

func (f *fixture) mustAdd(room string, ag *hub.AgentInfo) *hub.MembershipInfo {
	f.t.Helper()
	m, err := f.h.Admin().AddMember(f.ctx, room, ag.AgentID)
	if err != nil {
		f.t.Fatalf("AddMember(%s): %v", ag.Name, err)
	}
	return m
}

func toRoom(room string) hub.Destination { return hub.Destination{Kind: hub.KindRoom, RoomID: room} }
func toDM(agent string) hub.Destination {
	return hub.Destination{Kind: hub.KindDM, RecipientAgentID: agent}
}

// send calls message_send with key as its idempotency key.
func send(f *fixture, cr hub.Credentials, key string, in hub.MessageSendInput) (*hub.MessageSendOutput, error) {
	in.Mutation = hub.Mutation{IdempotencyKey: key}
	return f.h.MessageSend(f.ctx, cr, in)
}

// mustSend sends a message and fails the test on error.
func (f *fixture) mustSend(cr hub.Credentials, key string, in hub.MessageSendInput) *hub.MessageSendOutput {
	f.t.Helper()
	out, err := send(f, cr, key, in)
	if err != nil {
		f.t.Fatalf("MessageSend(%s): %v", key, err)
	}
	return out
}

// ibSend sends as a client does: a TEMPORARILY_UNAVAILABLE (nothing
// written) is retried with the same idempotency key, a bounded number of
// times.
func ibSend(f *fixture, cr hub.Credentials, in hub.MessageSendInput) (*hub.MessageSendOutput, error) {
	for attempt := 0; ; attempt++ {
		out, err := f.h.MessageSend(f.ctx, cr, in)
		if e, ok := apperr.As(err); !ok || e.Code != apperr.TemporarilyUnavailable || attempt == 20 {
			return out, err
		}
	}
}

// ibMustDMs sends n DMs from cr to agent to.
func ibMustDMs(f *fixture, cr hub.Credentials, prefix, to string, n int) {
	f.t.Helper()
	for i := range n {
		if _, err := ibSend(f, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("%s-%d", prefix, i)},
			Destination: toDM(to), BodyMD: fmt.Sprintf("%s %d", prefix, i)}); err != nil {
			f.t.Fatalf("MessageSend(%s %d): %v", prefix, i, err)
		}
	}
}

// ibListAll pages through the whole current inbox of cr with filter
// (recording receipts for every row), at most 100 pages.
func ibListAll(f *fixture, cr hub.Credentials, filter string) {
	f.t.Helper()
	cur := ""
	for range 100 {
		out, err := f.h.InboxList(f.ctx, cr, hub.InboxListInput{Filter: filter, Cursor: cur, Limit: 100})
		if err != nil {
			f.t.Fatalf("InboxList(%s): %v", filter, err)
		}
		if out.NextCursor == "" {
			return
		}
		cur = out.NextCursor
	}
	f.t.Fatalf("InboxList(%s): no end after 100 pages", filter)
}

// ibAck acknowledges seqs.
func ibAck(f *fixture, cr hub.Credentials, key string, seqs ...uint64) (*hub.InboxAckOutput, error) {
	in := hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: key}}
	for _, s := range seqs {
		in.InboxSeqs = append(in.InboxSeqs, hub.Revision(s))
	}
	return f.h.InboxAck(f.ctx, cr, in)
}

func respond(f *fixture, cr hub.Credentials, key, msg string, rev hub.Revision, status string) (*hub.RequestRespondOutput, error) {
	return f.h.RequestRespond(f.ctx, cr, hub.RequestRespondInput{Mutation: hub.Mutation{IdempotencyKey: key},
		RequestMessageID: msg, ExpectedRevision: rev, Status: status, BodyMD: "re: " + status})
}

func mustCreateSpace(f *fixture, cr hub.Credentials, visibility, title string) *hub.SpaceDTO {
	f.t.Helper()
	out, err := f.h.CreateSpace(f.ctx, cr, hub.CreateSpaceInput{Data: hub.CreateSpaceData{
		RequestID: "req-1", Title: title, Goal: "Goal of " + title, Visibility: visibility}})
	if err != nil {
		f.t.Fatalf("CreateSpace(%s %q): %v", visibility, title, err)
	}
	return out.Space
}

func wantCode(t *testing.T, call string, err error, want apperr.Code) {
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
}

// ownerView is the read model of box through a new owner key.
func ownerView(t *testing.T, f *fixture, box string) *opview.Model {
	t.Helper()
	key, err := f.h.Admin().CreateOwnerKey(f.ctx, box)
	if err != nil {
		t.Fatal(err)
	}
	v, err := opview.Open(f.ctx, f.h, key.Key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// refusingWrite refuses the next n writes as a throttled engine does.
type refusingWrite struct {
	store.Store
	mu sync.Mutex
	n  int
}

func (r *refusingWrite) set(n int) { r.mu.Lock(); r.n = n; r.mu.Unlock() }

func (r *refusingWrite) Write(ctx context.Context, ops []store.Op) error {
	r.mu.Lock()
	refuse := r.n > 0
	if refuse {
		r.n--
	}
	r.mu.Unlock()
	if refuse {
		return fmt.Errorf("throttled: %w", store.ErrUnavailable)
	}
	return r.Store.Write(ctx, ops)
}

package opview_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// The read model's fixture (model_test.go): one hub on one adapter with a
// box of two agents and a second box with one agent, driven through the
// hub's API as agents and the admin would. The HTTP tests use world
// (fixture_test.go) instead.

type fixture struct{ *hubtest.World }

// forEachAdapter runs fn on every adapter, one after the other.
func forEachAdapter(t *testing.T, fn func(t *testing.T, ad teststores.Adapter)) {
	hubtest.ForEachAdapterSerial(t, fn)
}

// newFixture is the hubtest world on ad, its store wrapped by wrap.
func newFixture(t testing.TB, ad teststores.Adapter, wrap ...func(store.Store) store.Store) *fixture {
	t.Helper()
	return &fixture{hubtest.New(t, ad, hubtest.Config{Wrap: wrap})}
}

func (f *fixture) mustRoom(name, brief string) *hub.RoomInfo {
	f.T.Helper()
	r, err := f.Admin.CreateRoom(f.Ctx, f.Box, name, brief)
	if err != nil {
		f.T.Fatalf("CreateRoom(%q): %v", name, err)
	}
	return r
}

func (f *fixture) mustAdd(room string, ag *hub.AgentInfo) *hub.MembershipInfo {
	f.T.Helper()
	m, err := f.Admin.AddMember(f.Ctx, room, ag.AgentID)
	if err != nil {
		f.T.Fatalf("AddMember(%s): %v", ag.Name, err)
	}
	return m
}

// ibSend sends as a client does: a TEMPORARILY_UNAVAILABLE (nothing
// written) is retried with the same idempotency key, a bounded number of
// times.
func ibSend(f *fixture, cr hub.Credentials, in hub.MessageSendInput) (*hub.MessageSendOutput, error) {
	for attempt := 0; ; attempt++ {
		out, err := f.Hub.MessageSend(f.Ctx, cr, in)
		if e, ok := apperr.As(err); !ok || e.Code != apperr.TemporarilyUnavailable || attempt == 20 {
			return out, err
		}
	}
}

// ibMustDMs sends n DMs from cr to agent to.
func ibMustDMs(f *fixture, cr hub.Credentials, prefix, to string, n int) {
	f.T.Helper()
	for i := range n {
		if _, err := ibSend(f, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("%s-%d", prefix, i)},
			Destination: hubtest.ToDM(to), BodyMD: fmt.Sprintf("%s %d", prefix, i)}); err != nil {
			f.T.Fatalf("MessageSend(%s %d): %v", prefix, i, err)
		}
	}
}

// ibListAll pages through the whole current inbox of cr with filter
// (recording receipts for every row), at most 100 pages.
func ibListAll(f *fixture, cr hub.Credentials, filter string) {
	f.T.Helper()
	cur := ""
	for range 100 {
		out, err := f.Hub.InboxList(f.Ctx, cr, hub.InboxListInput{Filter: filter, Cursor: cur, Limit: 100})
		if err != nil {
			f.T.Fatalf("InboxList(%s): %v", filter, err)
		}
		if out.NextCursor == "" {
			return
		}
		cur = out.NextCursor
	}
	f.T.Fatalf("InboxList(%s): no end after 100 pages", filter)
}

// ibAck acknowledges seqs.
func ibAck(f *fixture, cr hub.Credentials, key string, seqs ...uint64) (*hub.InboxAckOutput, error) {
	in := hub.InboxAckInput{Mutation: hub.Mutation{IdempotencyKey: key}}
	for _, s := range seqs {
		in.InboxSeqs = append(in.InboxSeqs, hub.Revision(s))
	}
	return f.Hub.InboxAck(f.Ctx, cr, in)
}

func respond(f *fixture, cr hub.Credentials, key, msg string, rev hub.Revision, status string) (*hub.RequestRespondOutput, error) {
	return f.Hub.RequestRespond(f.Ctx, cr, hub.RequestRespondInput{Mutation: hub.Mutation{IdempotencyKey: key},
		RequestMessageID: msg, ExpectedRevision: rev, Status: status, BodyMD: "re: " + status})
}

func mustCreateSpace(f *fixture, cr hub.Credentials, visibility, title string) *hub.SpaceDTO {
	f.T.Helper()
	out, err := f.Hub.CreateSpace(f.Ctx, cr, hub.CreateSpaceInput{Data: hub.CreateSpaceData{
		RequestID: "req-1", Title: title, Goal: "Goal of " + title, Visibility: visibility}})
	if err != nil {
		f.T.Fatalf("CreateSpace(%s %q): %v", visibility, title, err)
	}
	return out.Space
}

func wantCode(t *testing.T, call string, err error, want apperr.Code) {
	t.Helper()
	hubtest.WantCode(t, call, err, want)
}

// ownerView is the read model of box through a new owner key.
func ownerView(t *testing.T, f *fixture, box string) *opview.Model {
	t.Helper()
	key, err := f.Admin.CreateOwnerKey(f.Ctx, box)
	if err != nil {
		t.Fatal(err)
	}
	v, err := opview.Open(f.Ctx, f.Hub, key.Key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// readOnly refuses every write while it is on, as a store the view must
// never write to.
type readOnly struct {
	store.Store
	on atomic.Bool
}

func (r *readOnly) Write(ctx context.Context, ops []store.Op) error {
	if r.on.Load() {
		return fmt.Errorf("read only: %w", store.ErrUnavailable)
	}
	return r.Store.Write(ctx, ops)
}

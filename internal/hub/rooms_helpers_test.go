package hub_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// Helpers for the directory and room tests, on top of hub_test.go's
// fixture.

// mustRoom creates a room of the fixture's box with brief and adds members
// to it.
func (f *fixture) mustRoom(name, brief string, members ...*hub.AgentInfo) *hub.RoomInfo {
	f.t.Helper()
	r, err := f.h.Admin().CreateRoom(f.ctx, f.box, name, brief)
	if err != nil {
		f.t.Fatalf("CreateRoom(%q): %v", name, err)
	}
	for _, m := range members {
		f.mustAdd(r.RoomID, m)
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

func (f *fixture) mustRemove(room string, ag *hub.AgentInfo) {
	f.t.Helper()
	if _, err := f.h.Admin().RemoveMember(f.ctx, room, ag.AgentID); err != nil {
		f.t.Fatalf("RemoveMember(%s): %v", ag.Name, err)
	}
}

func (f *fixture) mustList(ag *hub.AgentInfo, on bool) {
	f.t.Helper()
	if _, err := f.h.Admin().SetDirectoryListed(f.ctx, ag.AgentID, on); err != nil {
		f.t.Fatalf("SetDirectoryListed(%s, %v): %v", ag.Name, on, err)
	}
}

func follow(f *fixture, cr hub.Credentials, key, room string, rev hub.Revision, pref string) (*hub.RoomFollowOutput, error) {
	return f.h.RoomFollow(f.ctx, cr, hub.RoomFollowInput{Mutation: hub.Mutation{IdempotencyKey: key},
		RoomID: room, ExpectedRevision: rev, Follow: pref})
}

func appendBrief(f *fixture, cr hub.Credentials, key, room string, rev hub.Revision, text string) (*hub.RoomBriefOutput, error) {
	return f.h.RoomBriefUpdate(f.ctx, cr, hub.RoomBriefUpdateInput{Mutation: hub.Mutation{IdempotencyKey: key},
		RoomID: room, ExpectedRevision: rev, AppendMD: text})
}

func updateCard(f *fixture, cr hub.Credentials, key string, rev hub.Revision, role string) (*hub.DirectoryUpdateSelfOutput, error) {
	return f.h.DirectoryUpdateSelf(f.ctx, cr, hub.DirectoryUpdateSelfInput{Mutation: hub.Mutation{IdempotencyKey: key},
		ExpectedRevision: rev, Role: &role})
}

func search(f *fixture, cr hub.Credentials, query, cur string, limit int) (*hub.DirectorySearchOutput, error) {
	return f.h.DirectorySearch(f.ctx, cr, hub.DirectorySearchInput{Query: query, Cursor: cur, Limit: limit})
}

// envelope renders err as the wire envelope, so tests can compare two
// errors byte for byte as a caller would see them.
func envelope(t testing.TB, err error) string {
	t.Helper()
	if err == nil {
		t.Fatalf("envelope of a nil error")
	}
	b, merr := json.Marshal(apperr.Normalize(err).Envelope())
	if merr != nil {
		t.Fatalf("json.Marshal(envelope): %v", merr)
	}
	return string(b)
}

// wantSameError fails unless err is exactly the reference error's envelope
// and mentions none of the secrets (resource names and ids).
func wantSameError(t *testing.T, call string, err error, reference string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got success, want %s", call, reference)
	}
	got := envelope(t, err)
	if got != reference {
		t.Errorf("%s: got error %s, want exactly %s", call, got, reference)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(got, s) {
			t.Errorf("%s: error %s reveals %q", call, got, s)
		}
	}
}

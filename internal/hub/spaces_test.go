package hub_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

const unknownSpace = "00000000-0000-4000-8000-00000000beef"

func createSpace(f *fixture, cr hub.Credentials, visibility, title, opKey string) (*hub.SpaceMutationOutput, error) {
	return f.h.CreateSpace(f.ctx, cr, hub.CreateSpaceInput{Data: hub.CreateSpaceData{
		RequestID: "req-1", Title: title, Goal: "Goal of " + title, Visibility: visibility,
		OpKey: hub.OpKey{OperationKey: opKey},
	}})
}

func mustCreateSpace(f *fixture, cr hub.Credentials, visibility, title string) *hub.SpaceDTO {
	f.t.Helper()
	out, err := createSpace(f, cr, visibility, title, "")
	if err != nil {
		f.t.Fatalf("CreateSpace(%s %q): %v", visibility, title, err)
	}
	return out.Space
}

func getSpace(f *fixture, cr hub.Credentials, id string) (*hub.GetSpaceOutput, error) {
	return f.h.GetSpace(f.ctx, cr, hub.GetSpaceInput{SpaceRef: hub.SpaceRef{ID: id}})
}

func updateSpace(f *fixture, cr hub.Credentials, id string, version int64, title, status, opKey string) (*hub.SpaceMutationOutput, error) {
	return f.h.UpdateSpace(f.ctx, cr, hub.UpdateSpaceInput{SpaceRef: hub.SpaceRef{ID: id}, Data: hub.UpdateSpaceData{
		ExpectedVersion: version, Title: title, Goal: "Goal of " + title, Status: status,
		OpKey: hub.OpKey{OperationKey: opKey},
	}})
}

func addMember(f *fixture, cr hub.Credentials, space, agent string) (*hub.SpaceMemberOutput, error) {
	return f.h.AddSpaceMember(f.ctx, cr, hub.SpaceMemberInput{SpaceRef: hub.SpaceRef{ID: space}, Data: hub.SpaceMemberData{AgentID: agent}})
}

func removeMember(f *fixture, cr hub.Credentials, space, agent string) (*hub.SpaceMemberOutput, error) {
	return f.h.RemoveSpaceMember(f.ctx, cr, hub.SpaceMemberInput{SpaceRef: hub.SpaceRef{ID: space}, Data: hub.SpaceMemberData{AgentID: agent}})
}

// listAllSpaces pages through list_spaces with page size limit.
func listAllSpaces(f *fixture, cr hub.Credentials, limit int) ([]hub.SpaceSummary, int) {
	f.t.Helper()
	var all []hub.SpaceSummary
	cur, pages := "", 0
	rounds := loopLimit(f.t, "ListSpaces pages", 1000, time.Minute)
	for {
		rounds.must()
		out, err := f.h.ListSpaces(f.ctx, cr, hub.ListSpacesInput{Data: hub.ListSpacesData{Cursor: cur, Limit: limit}})
		if err != nil {
			f.t.Fatalf("ListSpaces(cursor %q, limit %d): %v", cur, limit, err)
		}
		pages++
		all = append(all, out.Items...)
		if out.NextCursor == "" {
			return all, pages
		}
		if len(out.Items) != limit {
			f.t.Fatalf("ListSpaces: a page of %d items with a next_cursor, want %d", len(out.Items), limit)
		}
		cur = out.NextCursor
	}
}

func ids(items []hub.SpaceSummary) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// envelopeJSON is what a transport would send for err.
func envelopeJSON(t *testing.T, err error) string {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok {
		t.Fatalf("untyped error %v", err)
	}
	b, _ := json.Marshal(e.Envelope())
	return string(b)
}

func TestSpaceLifecycle(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		created, err := createSpace(f, cr, "public", "PDF extraction checkpoint", "")
		if err != nil {
			t.Fatalf("CreateSpace: %v", err)
		}
		sp := created.Space
		if sp == nil || sp.Version != 1 || sp.Status != "active" || sp.Visibility != "public" || sp.CreatorID != f.a.AgentID ||
			sp.RequestID != "req-1" || sp.Members != nil || created.Replayed {
			t.Fatalf("CreateSpace = %+v, want version 1 active public by alice", created)
		}
		if op := created.Operation; op == nil || op.Tool != "create_space" || op.ResourceID != sp.ID || op.Version != 1 || op.OperationKey != "" {
			t.Errorf("CreateSpace operation = %+v, want create_space of %s at version 1", op, sp.ID)
		}

		got, err := getSpace(f, cr, sp.ID)
		if err != nil || got.Space.Title != "PDF extraction checkpoint" || got.Space.Goal != "Goal of PDF extraction checkpoint" || got.Space.Version != 1 {
			t.Fatalf("GetSpace = %+v, %v; want the created space", got, err)
		}

		// A public space's new title and goal are what every viewer sees.
		upd, err := updateSpace(f, cr, sp.ID, 1, "Renamed", "archived", "")
		if err != nil || upd.Space.Version != 2 || upd.Space.Status != "archived" || upd.Operation.Version != 2 {
			t.Fatalf("UpdateSpace(1) = %+v, %v; want version 2 archived", upd, err)
		}
		crB := f.prime(f.b)
		seen, err := getSpace(f, crB, sp.ID)
		if err != nil || seen.Space.Title != "Renamed" || seen.Space.Goal != "Goal of Renamed" || seen.Space.UpdatedBy != f.a.AgentID {
			t.Fatalf("GetSpace by bob = %+v, %v; want the renamed space", seen, err)
		}
		// Archived is a status: the space stays readable and can be revived,
		// by any agent of the box for a public space.
		if _, err := updateSpace(f, crB, sp.ID, 2, "Revived", "active", ""); err != nil {
			t.Fatalf("UpdateSpace(archived -> active) by bob: %v", err)
		}

		f.clock.Advance(time.Millisecond) // listings are in creation order
		priv := mustCreateSpace(f, cr, "private", "Secret plan")
		if priv.MemberCount != 1 || !slices.Equal(priv.Members, []string{f.a.AgentID}) {
			t.Errorf("CreateSpace(private) members = %v (%d), want [alice]", priv.Members, priv.MemberCount)
		}
		listed, _ := listAllSpaces(f, cr, 10)
		if want := []string{sp.ID, priv.ID}; !slices.Equal(ids(listed), want) {
			t.Errorf("ListSpaces(alice) = %v, want %v", ids(listed), want)
		}
		if listed[0].Title != "Revived" || listed[0].Version != 3 {
			t.Errorf("ListSpaces item = %+v, want the current title and version 3", listed[0])
		}
		listedB, _ := listAllSpaces(f, crB, 10)
		if want := []string{sp.ID}; !slices.Equal(ids(listedB), want) {
			t.Errorf("ListSpaces(bob) = %v, want only the public %v", ids(listedB), want)
		}

		if _, err := addMember(f, cr, priv.ID, f.b.AgentID); err != nil {
			t.Fatalf("AddSpaceMember(bob): %v", err)
		}
		gotB, err := getSpace(f, crB, priv.ID)
		if err != nil || gotB.Space.MemberCount != 2 || !slices.Contains(gotB.Space.Members, f.b.AgentID) {
			t.Fatalf("GetSpace(private) by new member bob = %+v, %v; want 2 members", gotB, err)
		}
		if _, err := updateSpace(f, crB, priv.ID, 1, "Member edit", "paused", ""); err != nil {
			t.Fatalf("UpdateSpace(private) by member bob: %v", err)
		}
		listedB, _ = listAllSpaces(f, crB, 10)
		if want := []string{sp.ID, priv.ID}; !slices.Equal(ids(listedB), want) {
			t.Errorf("ListSpaces(bob, member) = %v, want %v", ids(listedB), want)
		}
	})
}

// TestSpaceAuthorization: a private space the caller is not in, another
// box's space and an unknown id answer the same bytes, for every tool.
func TestSpaceAuthorization(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA, crB, crM := f.prime(f.a), f.prime(f.b), f.prime(f.other)
		priv := mustCreateSpace(f, crA, "private", "Private")
		pub := mustCreateSpace(f, crA, "public", "Public")

		_, err := getSpace(f, crB, unknownSpace)
		wantCode(t, "GetSpace(unknown)", err, apperr.NotFoundOrForbidden)
		unknown := envelopeJSON(t, err)

		cases := []struct {
			name  string
			cr    hub.Credentials
			space string
		}{
			{"NonMemberOfPrivate", crB, priv.ID},
			{"OtherBoxPublic", crM, pub.ID},
			{"OtherBoxPrivate", crM, priv.ID},
			{"Unknown", crB, unknownSpace},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				calls := map[string]func() error{
					"GetSpace":          func() error { return errOf(getSpace(f, tc.cr, tc.space)) },
					"UpdateSpace":       func() error { return errOf(updateSpace(f, tc.cr, tc.space, 1, "Hijack", "active", "")) },
					"AddSpaceMember":    func() error { return errOf(addMember(f, tc.cr, tc.space, f.b.AgentID)) },
					"RemoveSpaceMember": func() error { return errOf(removeMember(f, tc.cr, tc.space, f.a.AgentID)) },
				}
				for name, call := range calls {
					err := call()
					wantCode(t, name, err, apperr.NotFoundOrForbidden)
					if got := envelopeJSON(t, err); got != unknown {
						t.Errorf("%s(%s) envelope = %s, want exactly the unknown id's %s", name, tc.name, got, unknown)
					}
				}
			})
		}
		for _, cr := range []hub.Credentials{crB, crM} {
			for _, it := range mustList(f, cr) {
				if it.ID == priv.ID || (cr == crM && it.ID == pub.ID) {
					t.Errorf("ListSpaces shows %s to an agent that may not see it", it.ID)
				}
			}
		}
		got, _ := getSpace(f, crA, priv.ID)
		if got.Space.Title != "Private" || got.Space.Version != 1 {
			t.Errorf("after the attempts, space = %+v, want it untouched", got.Space)
		}

		t.Run("Membership", func(t *testing.T) {
			carol := f.mustAgent(f.box, "carol")
			crC := f.prime(carol)
			_, err := addMember(f, crA, pub.ID, f.b.AgentID)
			wantCode(t, "AddSpaceMember(public space)", err, apperr.InvalidArgument)
			_, err = addMember(f, crA, priv.ID, "00000000-0000-4000-8000-0000000000aa")
			wantCode(t, "AddSpaceMember(unknown agent)", err, apperr.NotFoundOrForbidden)
			unknown := envelope(t, err)
			_, err = addMember(f, crA, priv.ID, f.other.AgentID)
			wantSameError(t, "AddSpaceMember(agent of another box)", err, unknown, f.other.Name)
			_, err = addMember(f, crA, priv.ID, "not-a-uuid")
			wantCode(t, "AddSpaceMember(bad agent id)", err, apperr.InvalidArgument)

			out, err := addMember(f, crA, priv.ID, f.b.AgentID)
			if err != nil || !out.Membership.Changed || !out.Membership.Member || out.Membership.MemberCount != 2 {
				t.Fatalf("AddSpaceMember(bob) = %+v, %v; want changed, 2 members", out, err)
			}
			again, err := addMember(f, crA, priv.ID, f.b.AgentID)
			if err != nil || again.Membership.Changed || again.Membership.MemberCount != 2 {
				t.Fatalf("AddSpaceMember(bob again) = %+v, %v; want unchanged", again, err)
			}
			// Only the creator manages members, even among members.
			_, err = addMember(f, crB, priv.ID, carol.AgentID)
			wantCode(t, "AddSpaceMember by a non-creator member", err, apperr.NotFoundOrForbidden)
			_, err = removeMember(f, crA, priv.ID, f.a.AgentID)
			wantCode(t, "RemoveSpaceMember(creator)", err, apperr.InvalidArgument)

			// A removed member loses access at once, everywhere.
			out, err = removeMember(f, crA, priv.ID, f.b.AgentID)
			if err != nil || !out.Membership.Changed || out.Membership.Member || out.Membership.MemberCount != 1 {
				t.Fatalf("RemoveSpaceMember(bob) = %+v, %v; want changed, 1 member", out, err)
			}
			_, err = getSpace(f, crB, priv.ID)
			wantCode(t, "GetSpace by a removed member", err, apperr.NotFoundOrForbidden)
			_, err = updateSpace(f, crB, priv.ID, 1, "Late", "active", "")
			wantCode(t, "UpdateSpace by a removed member", err, apperr.NotFoundOrForbidden)
			if slices.Contains(ids(mustList(f, crB)), priv.ID) {
				t.Errorf("ListSpaces by a removed member still shows the space")
			}
			none, err := removeMember(f, crA, priv.ID, carol.AgentID)
			if err != nil || none.Membership.Changed {
				t.Fatalf("RemoveSpaceMember(non-member) = %+v, %v; want unchanged", none, err)
			}
			_, err = getSpace(f, crC, priv.ID)
			wantCode(t, "GetSpace by carol", err, apperr.NotFoundOrForbidden)
		})
	})
}

func mustList(f *fixture, cr hub.Credentials) []hub.SpaceSummary {
	all, _ := listAllSpaces(f, cr, 100)
	return all
}

func TestUpdateSpaceCAS(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		sp := mustCreateSpace(f, cr, "public", "v1")
		if _, err := updateSpace(f, cr, sp.ID, 1, "v2", "active", ""); err != nil {
			t.Fatalf("UpdateSpace(1): %v", err)
		}
		for _, stale := range []int64{1, 3} {
			_, err := updateSpace(f, cr, sp.ID, stale, "stale", "paused", "")
			e := wantCode(t, fmt.Sprintf("UpdateSpace(expected_version %d)", stale), err, apperr.RevisionConflict)
			if e.CurrentRevision == nil || *e.CurrentRevision != 2 {
				t.Errorf("REVISION_CONFLICT current = %v, want 2", e.CurrentRevision)
			}
		}
		got, _ := getSpace(f, cr, sp.ID)
		if got.Space.Title != "v2" || got.Space.Status != "active" || got.Space.Version != 2 {
			t.Fatalf("after stale updates: %+v, want v2 at version 2 (nothing overwritten)", got.Space)
		}
	})
}

func TestSpaceOperationKey(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		first, err := createSpace(f, cr, "public", "Once", "create-once")
		if err != nil {
			t.Fatalf("CreateSpace: %v", err)
		}
		if first.Operation.OperationKey != "create-once" || first.Space == nil {
			t.Fatalf("CreateSpace = %+v, want the space and its operation receipt", first)
		}
		// request_id is diagnostic: a retry may carry another one.
		again, err := f.h.CreateSpace(f.ctx, cr, hub.CreateSpaceInput{Data: hub.CreateSpaceData{
			RequestID: "req-2", Title: "Once", Goal: "Goal of Once", Visibility: "public",
			OpKey: hub.OpKey{OperationKey: "create-once"}}})
		if err != nil {
			t.Fatalf("CreateSpace(replay): %v", err)
		}
		b, _ := json.Marshal(again)
		want, _ := json.Marshal(map[string]any{"operation": first.Operation, "replayed": true})
		if string(b) != string(want) {
			t.Fatalf("replay = %s, want the compact receipt %s", b, want)
		}
		if n := len(mustList(f, cr)); n != 1 {
			t.Fatalf("after a replay: %d spaces, want 1", n)
		}
		_, err = createSpace(f, cr, "public", "Different", "create-once")
		wantCode(t, "CreateSpace(same key, other payload)", err, apperr.IdempotencyConflict)
		// Keys are scoped by tool and agent.
		crB := f.prime(f.b)
		if out, err := createSpace(f, crB, "public", "Once", "create-once"); err != nil || out.Replayed {
			t.Fatalf("bob CreateSpace(same key) = %+v, %v; want a fresh space", out, err)
		}

		sp := first.Space
		upd, err := updateSpace(f, cr, sp.ID, 1, "Two", "active", "update-1")
		if err != nil || upd.Replayed {
			t.Fatalf("UpdateSpace: %+v, %v", upd, err)
		}
		if _, err := updateSpace(f, cr, sp.ID, 2, "Three", "active", ""); err != nil {
			t.Fatalf("UpdateSpace(2): %v", err)
		}
		// A late replay answers the receipt, though the version moved on.
		late, err := updateSpace(f, cr, sp.ID, 1, "Two", "active", "update-1")
		if err != nil || !late.Replayed || late.Space != nil || late.Operation.Version != 2 || late.Operation.ResourceID != sp.ID {
			t.Fatalf("late replay = %+v, %v; want the receipt of version 2", late, err)
		}
		_, err = updateSpace(f, cr, sp.ID, 3, "Four", "active", "update-1")
		wantCode(t, "UpdateSpace(same key, other payload)", err, apperr.IdempotencyConflict)
		got, _ := getSpace(f, cr, sp.ID)
		if got.Space.Version != 3 || got.Space.Title != "Three" {
			t.Fatalf("space = %+v, want version 3 'Three' (replays have no effect)", got.Space)
		}
		// A failure is not remembered: the same key is evaluated afresh.
		_, err = updateSpace(f, cr, sp.ID, 1, "Stale", "active", "update-2")
		wantCode(t, "UpdateSpace(stale, new key)", err, apperr.RevisionConflict)
		if out, err := updateSpace(f, cr, sp.ID, 3, "Stale", "active", "update-2"); err != nil || out.Replayed {
			t.Fatalf("UpdateSpace(key of a failed call, new payload) = %+v, %v; want a fresh effect", out, err)
		}
	})
}

func TestSpaceLimits(t *testing.T) {
	emoji := "\U0001F600" // 4 bytes, one character
	cases := []struct {
		name, title, goal string
		want              apperr.Code
	}{
		{"Title1Char", "x", "g", ""},
		{"Title200Chars800Bytes", strings.Repeat(emoji, 200), "g", ""},
		{"Title201Chars", strings.Repeat("a", 201), "g", apperr.LimitExceeded},
		{"Title201Emoji", strings.Repeat(emoji, 201), "g", apperr.LimitExceeded},
		{"TitleEmpty", "", "g", apperr.InvalidArgument},
		{"TitleBlank", "   ", "g", apperr.InvalidArgument},
		{"TitleControl", "a\nb", "g", apperr.InvalidArgument},
		{"TitleInvalidUTF8", "a\xffb", "g", apperr.InvalidArgument},
		{"Goal1Byte", "t", "g", ""},
		{"Goal20KiB", "t", strings.Repeat("é", 10240), ""},
		{"Goal20KiBPlus1", "t", strings.Repeat("é", 10240) + "x", apperr.LimitExceeded},
		{"GoalEmpty", "t", "", apperr.InvalidArgument},
	}
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		sp := mustCreateSpace(f, cr, "public", "target")
		version := int64(1)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := f.h.CreateSpace(f.ctx, cr, hub.CreateSpaceInput{Data: hub.CreateSpaceData{
					RequestID: "req", Title: tc.title, Goal: tc.goal, Visibility: "private"}})
				upd, uerr := f.h.UpdateSpace(f.ctx, cr, hub.UpdateSpaceInput{SpaceRef: hub.SpaceRef{ID: sp.ID},
					Data: hub.UpdateSpaceData{ExpectedVersion: version, Title: tc.title, Goal: tc.goal, Status: "active"}})
				if tc.want == "" {
					if err != nil || uerr != nil {
						t.Fatalf("CreateSpace = %v, UpdateSpace = %v; want success", err, uerr)
					}
					version = int64(upd.Space.Version)
					return
				}
				for call, err := range map[string]error{"CreateSpace": err, "UpdateSpace": uerr} {
					e := wantCode(t, call, err, tc.want)
					if strings.Contains(e.Message, "aaaa") || strings.Contains(e.Message, "éé") || strings.Contains(e.Message, emoji) {
						t.Errorf("%s error echoes the rejected value: %q", call, e.Message)
					}
				}
			})
		}
		t.Run("Fields", func(t *testing.T) {
			bad := []struct {
				name string
				data hub.CreateSpaceData
				want apperr.Code
			}{
				{"NoRequestID", hub.CreateSpaceData{Title: "t", Goal: "g", Visibility: "public"}, apperr.InvalidArgument},
				{"RequestID81", hub.CreateSpaceData{RequestID: strings.Repeat("r", 81), Title: "t", Goal: "g", Visibility: "public"}, apperr.LimitExceeded},
				{"BadVisibility", hub.CreateSpaceData{RequestID: "r", Title: "t", Goal: "g", Visibility: "secret"}, apperr.InvalidArgument},
				{"BadStatus", hub.CreateSpaceData{RequestID: "r", Title: "t", Goal: "g", Visibility: "public", Status: "done"}, apperr.InvalidArgument},
				{"OperationKey81", hub.CreateSpaceData{RequestID: "r", Title: "t", Goal: "g", Visibility: "public",
					OpKey: hub.OpKey{OperationKey: strings.Repeat("k", 81)}}, apperr.LimitExceeded},
				{"OperationKeyPattern", hub.CreateSpaceData{RequestID: "r", Title: "t", Goal: "g", Visibility: "public",
					OpKey: hub.OpKey{OperationKey: "Not-Lower"}}, apperr.InvalidArgument},
			}
			for _, tc := range bad {
				_, err := f.h.CreateSpace(f.ctx, cr, hub.CreateSpaceInput{Data: tc.data})
				wantCode(t, "CreateSpace("+tc.name+")", err, tc.want)
			}
			ok80 := strings.Repeat("k", 80)
			if _, err := f.h.CreateSpace(f.ctx, cr, hub.CreateSpaceInput{Data: hub.CreateSpaceData{RequestID: strings.Repeat("r", 80),
				Title: "t", Goal: "g", Visibility: "public", OpKey: hub.OpKey{OperationKey: ok80}}}); err != nil {
				t.Errorf("CreateSpace(80-character request_id and operation_key): %v", err)
			}
			_, err := updateSpace(f, cr, sp.ID, 0, "t", "active", "")
			wantCode(t, "UpdateSpace(expected_version 0)", err, apperr.InvalidArgument)
			_, err = getSpace(f, cr, "not-a-uuid")
			wantCode(t, "GetSpace(not a uuid)", err, apperr.InvalidArgument)
			// The page size is every list's rule (TestPageSizeOneText).
		})
	})
}

// TestSpaceMemberLimit fills a private space to its bound and one past.
func TestSpaceMemberLimit(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		cr := f.prime(f.a)
		priv := mustCreateSpace(f, cr, "private", "Crowded")
		var first string
		for i := 1; i < hub.MaxSpaceMembers; i++ {
			ag := f.mustAgent(f.box, fmt.Sprintf("member-%03d", i))
			if _, err := addMember(f, cr, priv.ID, ag.AgentID); err != nil {
				t.Fatalf("AddSpaceMember(member %d): %v", i+1, err)
			}
			if first == "" {
				first = ag.AgentID
			}
		}
		got, err := getSpace(f, cr, priv.ID)
		if err != nil || got.Space.MemberCount != hub.MaxSpaceMembers || len(got.Space.Members) != hub.MaxSpaceMembers {
			t.Fatalf("GetSpace = %+v, %v; want %d members", got, err, hub.MaxSpaceMembers)
		}
		_, err = addMember(f, cr, priv.ID, f.b.AgentID)
		wantCode(t, "AddSpaceMember(member 101)", err, apperr.LimitExceeded)
		if _, err := removeMember(f, cr, priv.ID, first); err != nil {
			t.Fatalf("RemoveSpaceMember: %v", err)
		}
		if out, err := addMember(f, cr, priv.ID, f.b.AgentID); err != nil || out.Membership.MemberCount != hub.MaxSpaceMembers {
			t.Fatalf("AddSpaceMember(member 100 after a removal) = %+v, %v; want %d members", out, err, hub.MaxSpaceMembers)
		}
	})
}

func TestListSpacesPaging(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		crA, crB := f.prime(f.a), f.prime(f.b)
		var want []string
		for i := range 12 {
			// The clock moves, so creation order is list order; every third
			// space is alice's private one, every fifth bob's private one.
			f.clock.Advance(time.Millisecond)
			switch {
			case i%5 == 4:
				mustCreateSpace(f, crB, "private", fmt.Sprintf("bob %d", i))
			case i%3 == 2:
				want = append(want, mustCreateSpace(f, crA, "private", fmt.Sprintf("alice %d", i)).ID)
			default:
				want = append(want, mustCreateSpace(f, crA, "public", fmt.Sprintf("public %d", i)).ID)
			}
		}
		for _, limit := range []int{1, 3, 4, 100} {
			got, pages := listAllSpaces(f, crA, limit)
			if !slices.Equal(ids(got), want) {
				t.Errorf("ListSpaces(limit %d) = %v, want %v", limit, ids(got), want)
			}
			if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
				t.Errorf("ListSpaces(limit %d): %d pages, want %d", limit, pages, wantPages)
			}
		}
		first, err := f.h.ListSpaces(f.ctx, crA, hub.ListSpacesInput{Data: hub.ListSpacesData{Limit: 2}})
		if err != nil || first.NextCursor == "" {
			t.Fatalf("ListSpaces(limit 2) = %+v, %v; want a next_cursor", first, err)
		}
		for name, tc := range map[string]struct {
			cr     hub.Credentials
			cursor string
		}{
			"OtherAgent": {crB, first.NextCursor},
			"Tampered":   {crA, first.NextCursor[:len(first.NextCursor)-2] + "xx"},
			"Garbage":    {crA, "not a cursor"},
		} {
			_, err := f.h.ListSpaces(f.ctx, tc.cr, hub.ListSpacesInput{Data: hub.ListSpacesData{Cursor: tc.cursor}})
			wantCode(t, "ListSpaces("+name+" cursor)", err, apperr.CursorInvalid)
		}
	})
}

// TestRemovedMemberCannotOutrunRemoval forces the interleaving in which the
// creator removes a member (after updating the space, or not) after the
// member's update read the space and before it writes: the write's
// membership check refuses it. When the CAS fails too, the answer must
// still be exactly the unknown id's, not a REVISION_CONFLICT carrying the
// current version of a space the caller may no longer see.
func TestRemovedMemberCannotOutrunRemoval(t *testing.T) {
	for _, tc := range []struct {
		name      string
		update    bool // the creator updates the space before removing
		wantVer   uint64
		wantTitle string
	}{
		{"Removed", false, 1, "Private"},
		{"UpdatedAndRemoved", true, 2, "Renamed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
				var hook onceHook
				f := newFixture(t, ad, withOnceHook(&hook))
				crA, crB := f.prime(f.a), f.prime(f.b)
				priv := mustCreateSpace(f, crA, "private", "Private")
				if _, err := addMember(f, crA, priv.ID, f.b.AgentID); err != nil {
					t.Fatalf("AddSpaceMember: %v", err)
				}
				_, err := getSpace(f, crB, unknownSpace)
				unknown := envelopeJSON(t, err)
				hook.set(func() {
					if tc.update {
						if _, err := updateSpace(f, crA, priv.ID, 1, "Renamed", "active", ""); err != nil {
							t.Errorf("UpdateSpace by the creator: %v", err)
						}
					}
					if _, err := removeMember(f, crA, priv.ID, f.b.AgentID); err != nil {
						t.Errorf("RemoveSpaceMember: %v", err)
					}
				})
				_, err = updateSpace(f, crB, priv.ID, 1, "Sneaky", "active", "")
				hook.raced(t, "UpdateSpace by a member removed meanwhile")
				if err == nil {
					t.Fatalf("UpdateSpace by a member removed meanwhile: got success, want %s", unknown)
				}
				if got := envelopeJSON(t, err); got != unknown {
					t.Errorf("UpdateSpace by a member removed meanwhile: got %s, want exactly the unknown id's %s", got, unknown)
				}
				got, _ := getSpace(f, crA, priv.ID)
				if got.Space.Version != tc.wantVer || got.Space.Title != tc.wantTitle {
					t.Errorf("space = %+v, want version %d %q", got.Space, tc.wantVer, tc.wantTitle)
				}
			})
		})
	}
}

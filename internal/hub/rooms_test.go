package hub_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/google/uuid"
)

func TestRoomsHappyPath(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("design", "# Design room\nBe kind.")
		if room.BriefRevision != 1 || room.MemberCount != 0 || room.Archived {
			t.Fatalf("CreateRoom = %+v, want brief revision 1, no members, not archived", room)
		}
		m := f.mustAdd(room.RoomID, f.a)
		if m.Epoch != 1 || m.Follow != hub.DefaultFollow || !m.Changed || !m.Member {
			t.Fatalf("AddMember(alice) = %+v, want epoch 1 with the default preference", m)
		}
		f.mustAdd(room.RoomID, f.b)
		cr := f.prime(f.a)

		list, err := f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{})
		if err != nil {
			t.Fatalf("RoomsList: %v", err)
		}
		if len(list.Rooms) != 1 || list.NextCursor != "" {
			t.Fatalf("RoomsList = %+v, want one room and no cursor", list)
		}
		ref := list.Rooms[0]
		if ref.RoomID != room.RoomID || ref.Name != "design" || ref.Follow != "mentions" || ref.BriefRevision != 1 ||
			ref.Epoch != 1 || ref.FollowRevision != m.FollowRevision || ref.Archived {
			t.Errorf("RoomsList room = %+v, want design, mentions, brief 1, epoch 1, follow revision %d", ref, m.FollowRevision)
		}

		got, err := f.h.RoomGet(f.ctx, cr, hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil {
			t.Fatalf("RoomGet: %v", err)
		}
		if got.Room.Name != "design" || got.Room.BriefRevision != 1 || got.Membership.Follow != "mentions" {
			t.Errorf("RoomGet = %+v", got)
		}
		names := []string{}
		for _, e := range got.Roster.Members {
			names = append(names, e.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"alice", "bob"}) || got.Roster.Count != 2 || got.Roster.Truncated {
			t.Errorf("RoomGet roster = %+v, want alice and bob, count 2, not truncated", got.Roster)
		}

		fo, err := follow(f, cr, "f1", room.RoomID, ref.FollowRevision, "all")
		if err != nil {
			t.Fatalf("RoomFollow(all): %v", err)
		}
		if fo.Membership.Follow != "all" || fo.Membership.FollowRevision != ref.FollowRevision+1 || fo.Replayed {
			t.Errorf("RoomFollow = %+v, want all at revision %d", fo.Membership, ref.FollowRevision+1)
		}

		b, err := f.h.RoomBriefGet(f.ctx, cr, hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil || b.Brief.Revision != 1 || b.Brief.TextMD != "# Design room\nBe kind." || b.Brief.UpdatedBy != "" {
			t.Fatalf("RoomBriefGet = %+v, %v; want the owner's brief at revision 1", b, err)
		}
		up, err := appendBrief(f, cr, "b1", room.RoomID, 1, "Decision: ship it.")
		if err != nil {
			t.Fatalf("RoomBriefUpdate: %v", err)
		}
		if up.Brief.Revision != 2 || up.Brief.TextMD != "# Design room\nBe kind.\n\nDecision: ship it." || up.Brief.UpdatedBy != f.a.AgentID {
			t.Errorf("RoomBriefUpdate = %+v, want revision 2 with a new paragraph by alice", up.Brief)
		}

		pr, err := f.h.Prime(f.ctx, cr, hub.PrimeInput{})
		if err != nil {
			t.Fatalf("Prime: %v", err)
		}
		if len(pr.Rooms) != 1 || pr.Rooms[0].Follow != "all" || pr.Rooms[0].BriefRevision != 2 || pr.RoomsTruncated {
			t.Errorf("Prime rooms = %+v truncated=%v, want design following all with brief 2", pr.Rooms, pr.RoomsTruncated)
		}
		rooms, err := f.h.Admin().ListRooms(f.ctx, f.box)
		if err != nil || len(rooms) != 1 || rooms[0].MemberCount != 2 || rooms[0].BriefRevision != 2 {
			t.Errorf("ListRooms = %+v, %v; want design with 2 members and brief 2", rooms, err)
		}
	})
}

// TestRoomAuthorization: every room tool answers a caller that may not see
// the room exactly as it answers an id that does not exist.
func TestRoomAuthorization(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("secret-plans", "the brief")
		archived := f.mustRoom("old-secrets", "old brief")
		removed := f.mustAgent(f.box, "removed")
		unlisted := f.mustAgent(f.box, "unlisted")
		member := f.mustAdd(room.RoomID, f.a)
		f.mustAdd(archived.RoomID, f.a)
		f.mustAdd(room.RoomID, removed)
		f.mustRemove(room.RoomID, removed)
		if _, err := f.h.Admin().ArchiveRoom(f.ctx, archived.RoomID); err != nil {
			t.Fatalf("ArchiveRoom: %v", err)
		}
		// A mallory room exists in the other box too.
		otherRoom, err := f.h.Admin().CreateRoom(f.ctx, f.other.BoxID, "mallory-room", "")
		if err != nil {
			t.Fatalf("CreateRoom(other box): %v", err)
		}
		f.mustAdd(otherRoom.RoomID, f.other)

		tools := []struct {
			name string
			call func(cr hub.Credentials, room string) error
		}{
			{"room_get", func(cr hub.Credentials, room string) error {
				_, err := f.h.RoomGet(f.ctx, cr, hub.RoomIDInput{RoomID: room})
				return err
			}},
			{"room_brief_get", func(cr hub.Credentials, room string) error {
				_, err := f.h.RoomBriefGet(f.ctx, cr, hub.RoomIDInput{RoomID: room})
				return err
			}},
			{"room_follow", func(cr hub.Credentials, room string) error {
				_, err := follow(f, cr, "auth-"+uuid.NewString(), room, member.FollowRevision, "all")
				return err
			}},
			{"room_brief_update", func(cr hub.Credentials, room string) error {
				_, err := appendBrief(f, cr, "auth-"+uuid.NewString(), room, 1, "sneaky")
				return err
			}},
		}
		crA := f.prime(f.a)
		callers := []struct {
			name string
			cr   hub.Credentials
			room string
		}{
			{"NonMember", f.prime(f.b), room.RoomID},
			{"RemovedMember", f.prime(removed), room.RoomID},
			{"OtherBox", f.prime(f.other), room.RoomID},
			{"UnlistedNonMember", f.prime(unlisted), room.RoomID},
			{"NonMemberOfArchivedRoom", f.prime(f.b), archived.RoomID},
			{"MemberAskingForAnotherBoxRoom", crA, otherRoom.RoomID},
		}
		for _, tool := range tools {
			t.Run(tool.name, func(t *testing.T) {
				reference := envelope(t, tool.call(crA, uuid.NewString()))
				if !strings.Contains(reference, string(apperr.NotFoundOrForbidden)) {
					t.Fatalf("%s(unknown room) = %s, want NOT_FOUND_OR_FORBIDDEN", tool.name, reference)
				}
				for _, c := range callers {
					err := tool.call(c.cr, c.room)
					wantSameError(t, fmt.Sprintf("%s by %s", tool.name, c.name), err, reference,
						c.room, "secret-plans", "old-secrets", "mallory-room", "brief")
				}
			})
		}
		t.Run("rooms_list", func(t *testing.T) {
			for _, c := range callers[:4] {
				list, err := f.h.RoomsList(f.ctx, c.cr, hub.RoomsListInput{})
				if err != nil {
					t.Fatalf("RoomsList by %s: %v", c.name, err)
				}
				for _, r := range list.Rooms {
					if r.RoomID == room.RoomID || r.RoomID == archived.RoomID {
						t.Errorf("RoomsList by %s lists %s, a room it may not see", c.name, r.Name)
					}
				}
			}
		})
		t.Run("NothingWritten", func(t *testing.T) {
			b, err := f.h.RoomBriefGet(f.ctx, crA, hub.RoomIDInput{RoomID: room.RoomID})
			if err != nil || b.Brief.Revision != 1 || strings.Contains(b.Brief.TextMD, "sneaky") {
				t.Errorf("RoomBriefGet after refused updates = %+v, %v; want revision 1 unchanged", b, err)
			}
			g, err := f.h.RoomGet(f.ctx, crA, hub.RoomIDInput{RoomID: room.RoomID})
			if err != nil || g.Membership.Follow != hub.DefaultFollow {
				t.Errorf("RoomGet after refused follows = %+v, %v; want the default preference", g, err)
			}
		})
	})
}

func TestMembershipEpochs(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("epochs", "")
		f.mustRoom("other", "")
		f.mustRoom("second", "", f.a)
		first := f.mustAdd(room.RoomID, f.a)
		cr := f.prime(f.a)

		fo, err := follow(f, cr, "e1", room.RoomID, first.FollowRevision, "all")
		if err != nil {
			t.Fatalf("RoomFollow(all): %v", err)
		}
		page, err := f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{Limit: 1})
		if err != nil || page.NextCursor == "" {
			t.Fatalf("RoomsList(limit 1) = %+v, %v; want a page with a cursor", page, err)
		}

		again, err := f.h.Admin().AddMember(f.ctx, room.RoomID, f.a.AgentID)
		if err != nil || again.Changed || again.Epoch != 1 || again.Follow != "all" {
			t.Fatalf("AddMember(current member) = %+v, %v; want the unchanged epoch 1", again, err)
		}

		f.mustRemove(room.RoomID, f.a)
		_, err = f.h.RoomGet(f.ctx, cr, hub.RoomIDInput{RoomID: room.RoomID})
		wantCode(t, "RoomGet after removal", err, apperr.NotFoundOrForbidden)
		_, err = f.h.Admin().RemoveMember(f.ctx, room.RoomID, f.a.AgentID)
		wantCode(t, "RemoveMember(not a member)", err, apperr.NotFoundOrForbidden)

		re := f.mustAdd(room.RoomID, f.a)
		if re.Epoch != 2 || re.Follow != hub.DefaultFollow {
			t.Fatalf("AddMember after removal = %+v, want epoch 2 with the default preference", re)
		}
		if re.FollowRevision <= fo.Membership.FollowRevision {
			t.Fatalf("new epoch's follow revision %d, want above the old epoch's %d", re.FollowRevision, fo.Membership.FollowRevision)
		}
		got, err := f.h.RoomGet(f.ctx, cr, hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil {
			t.Fatalf("RoomGet after re-add: %v", err)
		}
		if got.Membership.Epoch != 2 || got.Membership.Follow != hub.DefaultFollow {
			t.Errorf("RoomGet membership = %+v, want epoch 2 with %s (the old preference must not come back)", got.Membership, hub.DefaultFollow)
		}

		_, err = follow(f, cr, "e2", room.RoomID, fo.Membership.FollowRevision, "mute")
		e := wantCode(t, "RoomFollow with the old epoch's revision", err, apperr.RevisionConflict)
		if e.CurrentRevision == nil || *e.CurrentRevision != uint64(re.FollowRevision) {
			t.Errorf("REVISION_CONFLICT current = %v, want %d", e.CurrentRevision, re.FollowRevision)
		}
		_, err = f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{Limit: 1, Cursor: page.NextCursor})
		wantCode(t, "RoomsList with a cursor of the old epoch", err, apperr.CursorInvalid)

		fresh, err := f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{})
		if err != nil || len(fresh.Rooms) != 2 {
			t.Fatalf("RoomsList from zero = %+v, %v; want both rooms", fresh, err)
		}
		for _, r := range fresh.Rooms {
			if r.RoomID == room.RoomID && (r.Epoch != 2 || r.Follow != hub.DefaultFollow) {
				t.Errorf("RoomsList room = %+v, want epoch 2 with the default preference", r)
			}
		}
		if _, err := follow(f, cr, "e3", room.RoomID, re.FollowRevision, "replies"); err != nil {
			t.Errorf("RoomFollow in the new epoch: %v", err)
		}
	})
}

func TestRoomsListPaging(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		var want []string
		for i := range 7 {
			r := f.mustRoom(fmt.Sprintf("room-%d", i), "")
			f.mustAdd(r.RoomID, f.a)
			want = append(want, r.RoomID)
		}
		slices.Sort(want)
		cr := f.prime(f.a)
		var got []string
		cur := ""
		for range 10 {
			page, err := f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{Limit: 3, Cursor: cur})
			if err != nil {
				t.Fatalf("RoomsList(cursor %q): %v", cur, err)
			}
			for _, r := range page.Rooms {
				got = append(got, r.RoomID)
			}
			if cur = page.NextCursor; cur == "" {
				break
			}
			// A follow change or an archive is not a membership change.
			if len(got) == 3 {
				if _, err := follow(f, cr, "p1", page.Rooms[0].RoomID, page.Rooms[0].FollowRevision, "mute"); err != nil {
					t.Fatalf("RoomFollow: %v", err)
				}
				if _, err := f.h.Admin().ArchiveRoom(f.ctx, page.Rooms[1].RoomID); err != nil {
					t.Fatalf("ArchiveRoom: %v", err)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("RoomsList pages = %v, want %v (each room once, by id)", got, want)
		}

		page, err := f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{Limit: 3})
		if err != nil {
			t.Fatalf("RoomsList: %v", err)
		}
		crB := f.prime(f.b)
		cases := []struct {
			name   string
			cr     hub.Credentials
			cursor string
		}{
			{"OtherAgent", crB, page.NextCursor},
			{"Tampered", cr, page.NextCursor[:len(page.NextCursor)-2] + "xx"},
			{"Garbage", cr, "not-a-cursor"},
		}
		for _, tc := range cases {
			_, err := f.h.RoomsList(f.ctx, tc.cr, hub.RoomsListInput{Limit: 3, Cursor: tc.cursor})
			wantCode(t, "RoomsList with cursor "+tc.name, err, apperr.CursorInvalid)
		}
		f.mustRoom("extra", "", f.a)
		_, err = f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{Limit: 3, Cursor: page.NextCursor})
		wantCode(t, "RoomsList after a membership was added", err, apperr.CursorInvalid)
		_, err = f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{Limit: 101})
		wantCode(t, "RoomsList(limit 101)", err, apperr.LimitExceeded)
	})
}

func TestRoomRoster(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("crowd", "", f.a)
		for i := range hub.MaxRosterMembers + 4 {
			f.mustAdd(room.RoomID, f.mustAgent(f.box, fmt.Sprintf("member-%02d", i)))
		}
		got, err := f.h.RoomGet(f.ctx, f.prime(f.a), hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil {
			t.Fatalf("RoomGet: %v", err)
		}
		r := got.Roster
		if len(r.Members) != hub.MaxRosterMembers || r.Count != hub.MaxRosterMembers+5 || !r.Truncated {
			t.Errorf("roster: %d members, count %d, truncated %v; want %d, %d, true",
				len(r.Members), r.Count, r.Truncated, hub.MaxRosterMembers, hub.MaxRosterMembers+5)
		}
	})
}

func TestRoomFollowCASRace(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var b *writeBarrier
		f := newFixture(t, ad, withBarrier(&b))
		room := f.mustRoom("race", "")
		m := f.mustAdd(room.RoomID, f.a)
		cr := f.prime(f.a)
		prefs := []string{"all", "replies", "mute", "all", "replies", "mute", "all", "replies"}
		winner := race(t, b, len(prefs), uint64(m.FollowRevision)+1, func(i int) error {
			_, err := follow(f, cr, fmt.Sprintf("racer-%d", i), room.RoomID, m.FollowRevision, prefs[i])
			return err
		})
		got, err := f.h.RoomGet(f.ctx, cr, hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil {
			t.Fatalf("RoomGet: %v", err)
		}
		if got.Membership.Follow != prefs[winner] || got.Membership.FollowRevision != m.FollowRevision+1 {
			t.Errorf("after race: %+v, want the winner's %s at revision %d", got.Membership, prefs[winner], m.FollowRevision+1)
		}
	})
}

func TestRoomBriefCASRace(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var bar *writeBarrier
		f := newFixture(t, ad, withBarrier(&bar))
		room := f.mustRoom("race", "base", f.a, f.b)
		crs := []hub.Credentials{f.prime(f.a), f.prime(f.b)}
		winner := race(t, bar, 8, 2, func(i int) error {
			_, err := appendBrief(f, crs[i%2], fmt.Sprintf("racer-%d", i), room.RoomID, 1, fmt.Sprintf("note from racer %d", i))
			return err
		})
		b, err := f.h.RoomBriefGet(f.ctx, crs[0], hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil {
			t.Fatalf("RoomBriefGet: %v", err)
		}
		want := fmt.Sprintf("base\n\nnote from racer %d", winner)
		if b.Brief.Revision != 2 || b.Brief.TextMD != want {
			t.Errorf("brief after race = revision %d %q, want revision 2 %q (one append, nothing merged)", b.Brief.Revision, b.Brief.TextMD, want)
		}
	})
}

func TestArchivedRoom(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("finished", "history")
		m := f.mustAdd(room.RoomID, f.a)
		cr := f.prime(f.a)
		info, err := f.h.Admin().ArchiveRoom(f.ctx, room.RoomID)
		if err != nil || !info.Archived || info.ArchivedAt == "" {
			t.Fatalf("ArchiveRoom = %+v, %v; want archived", info, err)
		}
		again, err := f.h.Admin().ArchiveRoom(f.ctx, room.RoomID)
		if err != nil || again.ArchivedAt != info.ArchivedAt {
			t.Errorf("ArchiveRoom again = %+v, %v; want the same archived room", again, err)
		}

		got, err := f.h.RoomGet(f.ctx, cr, hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil || !got.Room.Archived {
			t.Errorf("RoomGet(archived) = %+v, %v; want readable and archived", got, err)
		}
		b, err := f.h.RoomBriefGet(f.ctx, cr, hub.RoomIDInput{RoomID: room.RoomID})
		if err != nil || b.Brief.TextMD != "history" {
			t.Errorf("RoomBriefGet(archived) = %+v, %v; want the brief", b, err)
		}
		list, err := f.h.RoomsList(f.ctx, cr, hub.RoomsListInput{})
		if err != nil || len(list.Rooms) != 1 || !list.Rooms[0].Archived {
			t.Errorf("RoomsList = %+v, %v; want the room flagged archived", list, err)
		}

		_, err = follow(f, cr, "a1", room.RoomID, m.FollowRevision, "all")
		wantCode(t, "RoomFollow(archived)", err, apperr.RoomArchived)
		_, err = appendBrief(f, cr, "a2", room.RoomID, 1, "more")
		wantCode(t, "RoomBriefUpdate(archived)", err, apperr.RoomArchived)
		_, err = f.h.Admin().AddMember(f.ctx, room.RoomID, f.b.AgentID)
		wantCode(t, "AddMember(archived)", err, apperr.RoomArchived)
		if _, err := f.h.Admin().RemoveMember(f.ctx, room.RoomID, f.a.AgentID); err != nil {
			t.Errorf("RemoveMember(archived): %v; the owner must still be able to withdraw access", err)
		}
	})
}

// TestRoomChangesBetweenReadAndWrite forces the interleavings in which the
// owner archives the room, or removes the member, after a mutation read
// them and before it writes: the write's own checks must refuse it.
func TestRoomChangesBetweenReadAndWrite(t *testing.T) {
	cases := []struct {
		name   string
		change func(f *fixture, room string) error
		want   apperr.Code
	}{
		{"Archived", func(f *fixture, room string) error {
			_, err := f.h.Admin().ArchiveRoom(f.ctx, room)
			return err
		}, apperr.RoomArchived},
		{"Removed", func(f *fixture, room string) error {
			_, err := f.h.Admin().RemoveMember(f.ctx, room, f.a.AgentID)
			return err
		}, apperr.NotFoundOrForbidden},
	}
	muts := []struct {
		name string
		call func(f *fixture, cr hub.Credentials, room string, rev hub.Revision) error
	}{
		{"room_follow", func(f *fixture, cr hub.Credentials, room string, rev hub.Revision) error {
			_, err := follow(f, cr, "k", room, rev, "all")
			return err
		}},
		{"room_brief_update", func(f *fixture, cr hub.Credentials, room string, _ hub.Revision) error {
			_, err := appendBrief(f, cr, "k", room, 1, "late")
			return err
		}},
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		for _, mu := range muts {
			for _, tc := range cases {
				t.Run(mu.name+"/"+tc.name, func(t *testing.T) {
					var hook onceHook
					f := newFixture(t, ad, withOnceHook(&hook))
					room := f.mustRoom("r", "brief")
					m := f.mustAdd(room.RoomID, f.a)
					cr := f.prime(f.a)
					fn := func() {
						if err := tc.change(f, room.RoomID); err != nil {
							t.Errorf("%s: %v", tc.name, err)
						}
					}
					hook.set(fn)
					err := mu.call(f, cr, room.RoomID, m.FollowRevision)
					hook.raced(t, mu.name+" racing "+tc.name)
					wantCode(t, mu.name+" racing "+tc.name, err, tc.want)

					b, err := f.h.Store().Get(f.ctx, store.Key{PK: "room#" + room.RoomID, SK: "brief"})
					if err != nil || b == nil || b.Version != 1 {
						t.Errorf("brief after the refused write: %+v, %v; want revision 1", b, err)
					}
				})
			}
		}
	})
}

func TestRoomBriefLimits(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		room := f.mustRoom("limits", "", f.a)
		cr := f.prime(f.a)
		chunk := strings.Repeat("é", hub.MaxBodyMDBytes/2)
		cases := []struct {
			name string
			rev  hub.Revision
			text string
			want apperr.Code
		}{
			{"Empty", 0, "", apperr.InvalidArgument},
			{"OverSixteenKiB", 0, chunk + "x", apperr.LimitExceeded},
			{"FirstIntoEmptyBrief", 0, chunk, ""},
			{"Second", 1, chunk, ""},
			{"Third", 2, chunk, ""},
			{"FourthExceedsTheWholeBrief", 3, chunk, apperr.LimitExceeded},
			{"StaleRevision", 1, "x", apperr.RevisionConflict},
			{"SmallFourth", 3, "fits", ""},
		}
		for i, tc := range cases {
			out, err := appendBrief(f, cr, fmt.Sprintf("lim-%d", i), room.RoomID, tc.rev, tc.text)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%s: RoomBriefUpdate: %v", tc.name, err)
				}
				if out.Brief.Revision != tc.rev+1 {
					t.Errorf("%s: revision %d, want %d", tc.name, out.Brief.Revision, tc.rev+1)
				}
				continue
			}
			e := wantCode(t, tc.name, err, tc.want)
			if strings.Contains(e.Message, "éé") {
				t.Errorf("%s: error echoes the rejected value", tc.name)
			}
		}
		// PROFILE_OUTDATED is every mutation's rule, tested over the
		// registry (TestEveryMutationChecksTheProfile).
		_, err := f.h.RoomGet(f.ctx, cr, hub.RoomIDInput{RoomID: "not-a-uuid"})
		wantCode(t, "RoomGet(malformed id)", err, apperr.InvalidArgument)
		_, err = follow(f, cr, "bad-pref", room.RoomID, 1, "loud")
		wantCode(t, "RoomFollow(unknown preference)", err, apperr.InvalidArgument)
	})
}

// TestMutationIdempotency covers the three mutations of this issue the way
// the foundation's TestIdempotency and TestConcurrentDuplicates cover
// checkpoint_save.
func TestMutationIdempotency(t *testing.T) {
	type result struct {
		rev      hub.Revision
		replayed bool
	}
	type mut struct {
		name string
		// call runs the mutation with key and a payload variant.
		call func(f *fixture, cr hub.Credentials, env *roomEnv, key string, variant int) (result, error)
		// state reads the revision the mutation changes.
		state func(f *fixture, cr hub.Credentials, env *roomEnv) hub.Revision
	}
	muts := []mut{
		{"room_follow", func(f *fixture, cr hub.Credentials, env *roomEnv, key string, v int) (result, error) {
			out, err := follow(f, cr, key, env.room, env.followRev, []string{"all", "mute"}[v])
			if err != nil {
				return result{}, err
			}
			return result{out.Membership.FollowRevision, out.Replayed}, nil
		}, func(f *fixture, cr hub.Credentials, env *roomEnv) hub.Revision {
			g, err := f.h.RoomGet(f.ctx, cr, hub.RoomIDInput{RoomID: env.room})
			if err != nil {
				f.t.Fatalf("RoomGet: %v", err)
			}
			return g.Membership.FollowRevision
		}},
		{"room_brief_update", func(f *fixture, cr hub.Credentials, env *roomEnv, key string, v int) (result, error) {
			out, err := appendBrief(f, cr, key, env.room, 0, fmt.Sprintf("append %d", v))
			if err != nil {
				return result{}, err
			}
			return result{out.Brief.Revision, out.Replayed}, nil
		}, func(f *fixture, cr hub.Credentials, env *roomEnv) hub.Revision {
			b, err := f.h.RoomBriefGet(f.ctx, cr, hub.RoomIDInput{RoomID: env.room})
			if err != nil {
				f.t.Fatalf("RoomBriefGet: %v", err)
			}
			return b.Brief.Revision
		}},
		{"directory_update_self", func(f *fixture, cr hub.Credentials, _ *roomEnv, key string, v int) (result, error) {
			out, err := updateCard(f, cr, key, 0, fmt.Sprintf("role %d", v))
			if err != nil {
				return result{}, err
			}
			return result{out.Card.Revision, out.Replayed}, nil
		}, func(f *fixture, cr hub.Credentials, _ *roomEnv) hub.Revision {
			g, err := f.h.DirectoryGet(f.ctx, cr, hub.DirectoryGetInput{AgentID: f.a.AgentID})
			if err != nil {
				f.t.Fatalf("DirectoryGet(self): %v", err)
			}
			return g.Card.Revision
		}},
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		for _, mu := range muts {
			t.Run(mu.name, func(t *testing.T) {
				t.Run("ReplayAndConflict", func(t *testing.T) {
					f := newFixture(t, ad)
					env, cr := newRoomEnv(f)
					first, err := mu.call(f, cr, env, "same", 0)
					if err != nil || first.replayed {
						t.Fatalf("%s: %+v, %v; want a fresh effect", mu.name, first, err)
					}
					again, err := mu.call(f, cr, env, "same", 0)
					if err != nil || !again.replayed || again.rev != first.rev {
						t.Fatalf("%s(replay) = %+v, %v; want revision %d replayed", mu.name, again, err, first.rev)
					}
					_, err = mu.call(f, cr, env, "same", 1)
					wantCode(t, mu.name+"(same key, other payload)", err, apperr.IdempotencyConflict)
					if got := mu.state(f, cr, env); got != first.rev {
						t.Errorf("%s: revision %d after replays, want %d (no second effect)", mu.name, got, first.rev)
					}
				})
				t.Run("UncertainFailureRetried", func(t *testing.T) {
					var fw *faultStore
					f := newFixture(t, ad, withFaults(&fw))
					env, cr := newRoomEnv(f)
					before := mu.state(f, cr, env)
					fw.loseReply()
					_, err := mu.call(f, cr, env, "uncertain", 0)
					wantCode(t, mu.name+" with a lost reply", err, apperr.TemporarilyUnavailable)
					out, err := mu.call(f, cr, env, "uncertain", 0)
					if err != nil || !out.replayed || out.rev != before+1 {
						t.Fatalf("%s retry = %+v, %v; want the committed receipt (revision %d) replayed", mu.name, out, err, before+1)
					}
					if got := mu.state(f, cr, env); got != before+1 {
						t.Errorf("%s: revision %d after the retry, want %d (exactly once)", mu.name, got, before+1)
					}
				})
				t.Run("ConcurrentDuplicates", func(t *testing.T) {
					var b *writeBarrier
					f := newFixture(t, ad, withBarrier(&b))
					env, cr := newRoomEnv(f)
					duplicates(t, b, 8, func() (bool, error) {
						r, err := mu.call(f, cr, env, "dup", 0)
						return r.replayed, err
					})
					retry, err := mu.call(f, cr, env, "dup", 0)
					if err != nil || !retry.replayed {
						t.Fatalf("%s retry = %+v, %v; want a replay", mu.name, retry, err)
					}
				})
			})
		}
	})
}

// roomEnv is a room alice is a member of, with no brief.
type roomEnv struct {
	room      string
	followRev hub.Revision
}

func newRoomEnv(f *fixture) (*roomEnv, hub.Credentials) {
	f.t.Helper()
	r := f.mustRoom("idem", "")
	m := f.mustAdd(r.RoomID, f.a)
	return &roomEnv{room: r.RoomID, followRev: m.FollowRevision}, f.prime(f.a)
}

func TestAdminRooms(t *testing.T) {
	eachWorld(t, func(t *testing.T, f *fixture) {
		adm := f.h.Admin()
		room := f.mustRoom("admin", "")
		unknown := uuid.NewString()
		cases := []struct {
			name string
			call func() error
			want apperr.Code
		}{
			{"CreateRoomUnknownBox", func() error { return errOf(adm.CreateRoom(f.ctx, unknown, "x", "")) }, apperr.NotFoundOrForbidden},
			{"CreateRoomBadBox", func() error { return errOf(adm.CreateRoom(f.ctx, "box", "x", "")) }, apperr.InvalidArgument},
			{"CreateRoomEmptyName", func() error { return errOf(adm.CreateRoom(f.ctx, f.box, " ", "")) }, apperr.InvalidArgument},
			{"CreateRoomBriefTooLarge", func() error {
				return errOf(adm.CreateRoom(f.ctx, f.box, "x", strings.Repeat("a", hub.MaxBriefBytes+1)))
			}, apperr.LimitExceeded},
			{"AddUnknownRoom", func() error { return errOf(adm.AddMember(f.ctx, unknown, f.a.AgentID)) }, apperr.NotFoundOrForbidden},
			{"AddUnknownAgent", func() error { return errOf(adm.AddMember(f.ctx, room.RoomID, unknown)) }, apperr.NotFoundOrForbidden},
			{"AddAgentOfAnotherBox", func() error { return errOf(adm.AddMember(f.ctx, room.RoomID, f.other.AgentID)) }, apperr.NotFoundOrForbidden},
			{"RemoveNonMember", func() error { return errOf(adm.RemoveMember(f.ctx, room.RoomID, f.b.AgentID)) }, apperr.NotFoundOrForbidden},
			{"ArchiveUnknown", func() error { return errOf(adm.ArchiveRoom(f.ctx, unknown)) }, apperr.NotFoundOrForbidden},
			{"ListRoomsBadBox", func() error { return errOf(adm.ListRooms(f.ctx, "x")) }, apperr.InvalidArgument},
			{"ListingUnknownAgent", func() error { return errOf(adm.SetDirectoryListed(f.ctx, unknown, true)) }, apperr.NotFoundOrForbidden},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) { wantCode(t, tc.name, tc.call(), tc.want) })
		}

		t.Run("ConcurrentAddsStartOneEpoch", func(t *testing.T) {
			const n = 6
			outs := make([]*hub.MembershipInfo, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					outs[i], errs[i] = adm.AddMember(f.ctx, room.RoomID, f.b.AgentID)
				})
			}
			close(start)
			wg.Wait()
			changed := 0
			for i := range n {
				if errs[i] != nil {
					wantCode(t, "concurrent AddMember", errs[i], apperr.TemporarilyUnavailable)
					continue
				}
				if outs[i].Epoch != 1 {
					t.Errorf("AddMember %d: epoch %d, want 1", i, outs[i].Epoch)
				}
				if outs[i].Changed {
					changed++
				}
			}
			if changed != 1 {
				t.Errorf("concurrent AddMember: %d started an epoch, want exactly 1", changed)
			}
			rooms, err := adm.ListRooms(f.ctx, f.box)
			if err != nil || len(rooms) != 1 || rooms[0].MemberCount != 1 {
				t.Errorf("ListRooms = %+v, %v; want one room with one member", rooms, err)
			}
		})
	})
}

// TestRoomDoubleChangeBetweenReadAndWrite forces two changes between a
// mutation's read and its write: the owner removes the member (or archives
// the room) and, at the same moment, the revision the mutation expected
// moves on. The write then fails more than one check, and the answer must
// be the removal's (the same bytes as for a room that does not exist: a
// removed member learns no current revision) or the archive's, never
// REVISION_CONFLICT.
func TestRoomDoubleChangeBetweenReadAndWrite(t *testing.T) {
	type env struct {
		f        *fixture
		room     string
		rev      hub.Revision // alice's follow revision
		crA, crB hub.Credentials
		crA2     hub.Credentials // a second session of alice
	}
	muts := []struct {
		name  string
		call  func(e *env) error
		bumps func(e *env) error // moves the expected revision on
	}{
		{"room_follow",
			func(e *env) error { _, err := follow(e.f, e.crA, "mine", e.room, e.rev, "all"); return err },
			func(e *env) error { _, err := follow(e.f, e.crA2, "theirs", e.room, e.rev, "mute"); return err }},
		{"room_brief_update",
			func(e *env) error { _, err := appendBrief(e.f, e.crA, "mine", e.room, 1, "mine"); return err },
			func(e *env) error { _, err := appendBrief(e.f, e.crB, "theirs", e.room, 1, "theirs"); return err }},
	}
	changes := []struct {
		name   string
		change func(e *env) error
		want   func(e *env) string // the wanted error envelope
	}{
		{"Removed",
			func(e *env) error { _, err := e.f.h.Admin().RemoveMember(e.f.ctx, e.room, e.f.a.AgentID); return err },
			func(e *env) string {
				_, err := e.f.h.RoomBriefGet(e.f.ctx, e.crA, hub.RoomIDInput{RoomID: uuid.NewString()})
				return envelope(e.f.t, err)
			}},
		{"Archived",
			func(e *env) error { _, err := e.f.h.Admin().ArchiveRoom(e.f.ctx, e.room); return err },
			func(e *env) string {
				_, err := follow(e.f, e.crA, "after", e.room, e.rev, "all")
				return envelope(e.f.t, err)
			}},
	}
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		for _, mu := range muts {
			for _, ch := range changes {
				t.Run(mu.name+"/"+ch.name+"AndRevisionMoved", func(t *testing.T) {
					var hook onceHook
					f := newFixture(t, ad, withOnceHook(&hook))
					room := f.mustRoom("r", "brief")
					m := f.mustAdd(room.RoomID, f.a)
					f.mustAdd(room.RoomID, f.b)
					e := &env{f: f, room: room.RoomID, rev: m.FollowRevision,
						crA: f.prime(f.a), crA2: f.prime(f.a), crB: f.prime(f.b)}
					fn := func() {
						if err := mu.bumps(e); err != nil {
							t.Errorf("%s by another caller: %v", mu.name, err)
						}
						if err := ch.change(e); err != nil {
							t.Errorf("%s: %v", ch.name, err)
						}
					}
					hook.set(fn)
					err := mu.call(e)
					hook.raced(t, mu.name+" racing "+ch.name)
					if err == nil {
						t.Fatalf("%s racing a concurrent %s and %s: got success", mu.name, mu.name, ch.name)
					}
					if got, want := envelope(t, err), ch.want(e); got != want {
						t.Errorf("%s racing a concurrent %s and %s: got %s, want %s", mu.name, mu.name, ch.name, got, want)
					}
				})
			}
		}
	})
}

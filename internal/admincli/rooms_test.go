package admincli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestRoomCommands runs the owner's room and directory flow against every
// target, as TestAdminScenario does for boxes and agents.
func TestRoomCommands(t *testing.T) {
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			with := func(args ...string) []string { return append(args, e.flags...) }

			var box hub.BoxInfo
			ok(t, &box, with("create-box", "--name", "demo")...)
			var alice hub.AgentInfo
			ok(t, &alice, with("create-agent", "--box", box.BoxID, "--name", "alice")...)

			brief := filepath.Join(t.TempDir(), "brief.md")
			if err := os.WriteFile(brief, []byte("# Welcome\nRead the README first."), 0o600); err != nil {
				t.Fatal(err)
			}
			var room hub.RoomInfo
			ok(t, &room, with("create-room", "--box", box.BoxID, "--name", "design", "--brief-file", brief)...)
			if room.RoomID == "" || room.Name != "design" || room.BriefRevision != 1 || room.BoxID != box.BoxID {
				t.Fatalf("create-room = %+v, want design in the box with brief revision 1", room)
			}

			var m hub.MembershipInfo
			ok(t, &m, with("add-member", "--room", room.RoomID, "--agent", alice.AgentID)...)
			if !m.Member || !m.Changed || m.Epoch != 1 || m.Follow != "mentions" || m.AgentName != "alice" {
				t.Fatalf("add-member = %+v, want epoch 1 following mentions", m)
			}
			ok(t, &m, with("add-member", "--room", room.RoomID, "--agent", alice.AgentID)...)
			if m.Changed || m.Epoch != 1 {
				t.Errorf("add-member again = %+v, want the same epoch, unchanged", m)
			}

			var list struct {
				BoxID string          `json:"box_id"`
				Rooms []*hub.RoomInfo `json:"rooms"`
			}
			raw := ok(t, &list, with("list-rooms", "--box", box.BoxID)...)
			if list.BoxID != box.BoxID || len(list.Rooms) != 1 || list.Rooms[0].MemberCount != 1 {
				t.Errorf("list-rooms = %s, want design with one member", raw)
			}

			ok(t, &m, with("remove-member", "--room", room.RoomID, "--agent", alice.AgentID)...)
			if m.Member || m.LeftAt == "" {
				t.Errorf("remove-member = %+v, want the membership ended", m)
			}
			fails(t, admincli.ExitError, apperr.NotFoundOrForbidden, with("remove-member", "--room", room.RoomID, "--agent", alice.AgentID)...)
			ok(t, &m, with("add-member", "--room", room.RoomID, "--agent", alice.AgentID)...)
			if m.Epoch != 2 || m.Follow != "mentions" {
				t.Errorf("add-member after removal = %+v, want epoch 2 with the default preference", m)
			}

			var archived hub.RoomInfo
			ok(t, &archived, with("archive-room", "--room", room.RoomID)...)
			if !archived.Archived || archived.ArchivedAt == "" {
				t.Errorf("archive-room = %+v, want archived", archived)
			}
			var bob hub.AgentInfo
			ok(t, &bob, with("create-agent", "--box", box.BoxID, "--name", "bob")...)
			fails(t, admincli.ExitError, apperr.RoomArchived, with("add-member", "--room", room.RoomID, "--agent", bob.AgentID)...)

			var listed hub.AgentInfo
			ok(t, &listed, with("directory-listing", "--agent", alice.AgentID, "--on")...)
			if !listed.DirectoryListed {
				t.Errorf("directory-listing --on = %+v, want directory_listed", listed)
			}
			ok(t, &listed, with("directory-listing", "--agent", alice.AgentID, "--off")...)
			if listed.DirectoryListed {
				t.Errorf("directory-listing --off = %+v, want not listed", listed)
			}
			var moved hub.ListingsMigration
			ok(t, &moved, with("migrate-listings", "--box", box.BoxID)...)
			if moved != (hub.ListingsMigration{BoxID: box.BoxID}) {
				t.Errorf("migrate-listings on a box of this version = %+v, want nothing moved", moved)
			}

			fails(t, admincli.ExitError, apperr.NotFoundOrForbidden,
				with("create-room", "--box", "00000000-0000-4000-8000-000000000000", "--name", "x")...)
			fails(t, admincli.ExitError, apperr.InvalidArgument, with("archive-room", "--room", "not-a-uuid")...)
			e.after(t)
		})
	}
}

func TestRoomCommandUsageErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	agent := "00000000-0000-4000-8000-000000000000"
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ListingWithoutOnOrOff", []string{"directory-listing", "--agent", agent}},
		{"ListingOnAndOff", []string{"directory-listing", "--agent", agent, "--on", "--off"}},
		{"ListingSwitchWithValue", []string{"directory-listing", "--agent", agent, "--on=maybe"}},
		{"AddMemberWithoutAgent", []string{"add-member", "--room", agent}},
		{"CreateRoomWithoutName", []string{"create-room", "--box", agent}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fails(t, admincli.ExitUsage, apperr.InvalidArgument, append(tc.args, "--data", dir)...)
		})
	}
	if !strings.Contains(admincli.Usage(), "directory-listing --agent AGENT [--on] [--off]") {
		t.Errorf("usage does not show directory-listing's switches:\n%s", admincli.Usage())
	}
}

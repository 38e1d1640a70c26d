package mcpserver_test

import (
	"context"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestRoomTools is a smoke test of the room and directory tools over MCP
// on both storage adapters: structured results, CAS with decimal-string
// revisions, and the safe error of a room the caller may not see.
func TestRoomTools(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		adm := e.hub.Admin()
		room, err := adm.CreateRoom(ctx, e.alice.BoxID, "design", "Welcome.")
		if err != nil {
			t.Fatalf("CreateRoom: %v", err)
		}
		if _, err := adm.AddMember(ctx, room.RoomID, e.alice.AgentID); err != nil {
			t.Fatalf("AddMember: %v", err)
		}
		if _, err := adm.SetDirectoryListed(ctx, e.bob.AgentID, true); err != nil {
			t.Fatalf("SetDirectoryListed: %v", err)
		}

		cs, _ := e.connect(t, e.alice.BoxKey)
		prime := wantOK[hub.PrimeOutput](t, "agent_prime", call(t, cs, "agent_prime", map[string]any{}))
		if len(prime.Rooms) != 1 || prime.Rooms[0].RoomID != room.RoomID {
			t.Fatalf("agent_prime rooms = %+v, want design", prime.Rooms)
		}

		list := wantOK[hub.RoomsListOutput](t, "rooms_list", call(t, cs, "rooms_list", map[string]any{}))
		if len(list.Rooms) != 1 || list.Rooms[0].Follow != "mentions" {
			t.Fatalf("rooms_list = %+v, want design following mentions", list)
		}
		fo := wantOK[hub.RoomFollowOutput](t, "room_follow", call(t, cs, "room_follow", map[string]any{
			"room_id": room.RoomID, "expected_revision": list.Rooms[0].FollowRevision, "follow": "mute", "idempotency_key": "f-1"}))
		if fo.Membership.Follow != "mute" {
			t.Errorf("room_follow = %+v, want mute", fo.Membership)
		}
		got := wantOK[hub.RoomGetOutput](t, "room_get", call(t, cs, "room_get", map[string]any{"room_id": room.RoomID}))
		if got.Membership.Follow != "mute" || got.Roster.Count != 1 {
			t.Errorf("room_get = %+v, want mute and one member", got)
		}
		brief := wantOK[hub.RoomBriefOutput](t, "room_brief_update", call(t, cs, "room_brief_update", map[string]any{
			"room_id": room.RoomID, "expected_revision": "1", "append_md": "Decided.", "idempotency_key": "b-1"}))
		if brief.Brief.Revision != 2 {
			t.Errorf("room_brief_update revision = %d, want 2", brief.Brief.Revision)
		}
		env := wantCode(t, "room_brief_update stale", call(t, cs, "room_brief_update", map[string]any{
			"room_id": room.RoomID, "expected_revision": "1", "append_md": "Again.", "idempotency_key": "b-2"}), apperr.RevisionConflict)
		if env.CurrentRevision == nil || *env.CurrentRevision != "2" {
			t.Errorf("REVISION_CONFLICT current_revision = %v, want \"2\"", env.CurrentRevision)
		}
		read := wantOK[hub.RoomBriefOutput](t, "room_brief_get", call(t, cs, "room_brief_get", map[string]any{"room_id": room.RoomID}))
		if read.Brief.TextMD != "Welcome.\n\nDecided." {
			t.Errorf("room_brief_get = %q", read.Brief.TextMD)
		}

		found := wantOK[hub.DirectorySearchOutput](t, "directory_search", call(t, cs, "directory_search", map[string]any{"query": "BOB"}))
		if len(found.Cards) != 1 || found.Cards[0].AgentID != e.bob.AgentID {
			t.Errorf("directory_search(BOB) = %+v, want bob", found.Cards)
		}
		card := wantOK[hub.DirectoryUpdateSelfOutput](t, "directory_update_self", call(t, cs, "directory_update_self", map[string]any{
			"expected_revision": "0", "skills": []string{"go"}, "idempotency_key": "d-1"}))
		if card.Card.Revision != 1 || card.DirectoryListed {
			t.Errorf("directory_update_self = %+v, want revision 1, not listed", card)
		}
		wantCode(t, "directory_get unlisted", call(t, cs, "directory_get", map[string]any{"agent_id": e.mallory.AgentID}), apperr.NotFoundOrForbidden)

		other, _ := e.connect(t, e.mallory.BoxKey)
		wantOK[hub.PrimeOutput](t, "agent_prime", call(t, other, "agent_prime", map[string]any{}))
		wantCode(t, "room_get from another box", call(t, other, "room_get", map[string]any{"room_id": room.RoomID}), apperr.NotFoundOrForbidden)
	})
}

package rest_test

import (
	"context"
	"net/http"
	"testing"
)

// TestRoomRoutes is a smoke test of the room and directory routes through
// real HTTP: path parameters, GET query parameters, CAS bodies, and the
// error mapping of ROOM_ARCHIVED, NOT_FOUND_OR_FORBIDDEN and CURSOR_INVALID.
func TestRoomRoutes(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	ctx := context.Background()
	adm := e.h.Admin()
	room, err := adm.CreateRoom(ctx, e.box, "design", "Welcome.")
	if err != nil {
		t.Fatalf("CreateRoom: %v", err)
	}
	second, err := adm.CreateRoom(ctx, e.box, "second", "")
	if err != nil {
		t.Fatalf("CreateRoom: %v", err)
	}
	for _, r := range []string{room.RoomID, second.RoomID} {
		if _, err := adm.AddMember(ctx, r, e.alice.AgentID); err != nil {
			t.Fatalf("AddMember: %v", err)
		}
	}
	if _, err := adm.SetDirectoryListed(ctx, e.alice.AgentID, true); err != nil {
		t.Fatalf("SetDirectoryListed: %v", err)
	}
	sa, sb := e.prime(e.alice.BoxKey), e.prime(e.bob.BoxKey)
	a := e.as(t, e.alice.BoxKey, sa)

	var list struct {
		Rooms []struct {
			RoomID         string `json:"room_id"`
			FollowRevision string `json:"follow_revision"`
		} `json:"rooms"`
		NextCursor string `json:"next_cursor"`
	}
	a("GET", "/v1/rooms?limit=1", "").wantOK(t, "GET /v1/rooms?limit=1", &list)
	if len(list.Rooms) != 1 || list.NextCursor == "" {
		t.Fatalf("GET /v1/rooms?limit=1 = %+v, want one room and a cursor", list)
	}
	cur := list.NextCursor

	var got struct {
		Room struct {
			Name string `json:"name"`
		} `json:"room"`
		Membership struct {
			Follow         string `json:"follow"`
			FollowRevision string `json:"follow_revision"`
		} `json:"membership"`
		Roster struct {
			Count int `json:"count"`
		} `json:"roster"`
	}
	a("GET", "/v1/rooms/"+room.RoomID, "").wantOK(t, "GET /v1/rooms/{room_id}", &got)
	if got.Room.Name != "design" || got.Membership.Follow != "mentions" || got.Roster.Count != 1 {
		t.Fatalf("GET /v1/rooms/{room_id} = %+v", got)
	}

	var fo struct {
		Membership struct {
			Follow string `json:"follow"`
		} `json:"membership"`
	}
	a("PUT", "/v1/rooms/"+room.RoomID+"/follow",
		`{"expected_revision":"`+got.Membership.FollowRevision+`","follow":"all","idempotency_key":"f1"}`).
		wantOK(t, "PUT /v1/rooms/{room_id}/follow", &fo)
	if fo.Membership.Follow != "all" {
		t.Errorf("PUT follow = %+v, want all", fo)
	}
	// A follow change is not a membership change: the cursor still holds.
	a("GET", "/v1/rooms?limit=1&cursor="+cur, "").wantOK(t, "GET /v1/rooms with a cursor", nil)

	var brief struct {
		Brief struct {
			Revision string `json:"revision"`
			TextMD   string `json:"text_md"`
		} `json:"brief"`
	}
	a("POST", "/v1/rooms/"+room.RoomID+"/brief", `{"expected_revision":"1","append_md":"Decided.","idempotency_key":"b1"}`).
		wantOK(t, "POST /v1/rooms/{room_id}/brief", &brief)
	a("GET", "/v1/rooms/"+room.RoomID+"/brief", "").wantOK(t, "GET /v1/rooms/{room_id}/brief", &brief)
	if brief.Brief.Revision != "2" || brief.Brief.TextMD != "Welcome.\n\nDecided." {
		t.Errorf("GET brief = %+v, want revision \"2\" with the appended paragraph", brief)
	}

	var card struct {
		Card struct {
			Revision string `json:"revision"`
			Role     string `json:"role"`
		} `json:"card"`
	}
	a("PUT", "/v1/directory/self", `{"expected_revision":"0","role":"Reviewer","idempotency_key":"d1"}`).
		wantOK(t, "PUT /v1/directory/self", &card)
	var found struct {
		Cards []struct {
			Name string `json:"name"`
		} `json:"cards"`
	}
	e.do(t, req{method: "POST", path: "/v1/directory/search", key: e.bob.BoxKey, session: sb, body: `{"query":"review"}`}).
		wantOK(t, "POST /v1/directory/search", &found)
	if len(found.Cards) != 1 || found.Cards[0].Name != "alice" {
		t.Errorf("POST /v1/directory/search = %+v, want alice", found)
	}
	e.do(t, req{method: "GET", path: "/v1/directory/" + e.alice.AgentID, key: e.bob.BoxKey, session: sb}).
		wantOK(t, "GET /v1/directory/{agent_id}", &card)
	if card.Card.Role != "Reviewer" || card.Card.Revision != "1" {
		t.Errorf("GET /v1/directory/{agent_id} = %+v", card)
	}

	// Errors.
	e.do(t, req{method: "GET", path: "/v1/rooms/" + room.RoomID, key: e.bob.BoxKey, session: sb}).
		wantError(t, "GET a room by a non-member", http.StatusNotFound, "NOT_FOUND_OR_FORBIDDEN")
	e.do(t, req{method: "GET", path: "/v1/directory/" + e.bob.AgentID, key: e.alice.BoxKey, session: sa}).
		wantError(t, "GET an unlisted card", http.StatusNotFound, "NOT_FOUND_OR_FORBIDDEN")
	if _, err := adm.RemoveMember(ctx, second.RoomID, e.alice.AgentID); err != nil {
		t.Fatalf("RemoveMember: %v", err)
	}
	a("GET", "/v1/rooms?limit=1&cursor="+cur, "").wantError(t, "GET /v1/rooms with a cursor from before a removal", http.StatusBadRequest, "CURSOR_INVALID")
	if _, err := adm.ArchiveRoom(ctx, room.RoomID); err != nil {
		t.Fatalf("ArchiveRoom: %v", err)
	}
	a("POST", "/v1/rooms/"+room.RoomID+"/brief", `{"expected_revision":"2","append_md":"Late.","idempotency_key":"b2"}`).
		wantError(t, "POST brief to an archived room", http.StatusConflict, "ROOM_ARCHIVED")
}

package registry

import (
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// directoryAndRoomTools declares the directory and room tools (seed 000).
func directoryAndRoomTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "directory_search", Title: "Search the directory", Group: "directory", Seed: "000",
			Description: "Search the public cards of your box's listed agents by name or role (plain text, any case; empty lists all), ordered by name.",
			Method:      "POST", Path: "/v1/directory/search", Authenticated: true,
			Errors: []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads cards.",
				"Repeating a search returns the same page until cards or listings change.",
				"Reads only your own box's directory."),
		}, (*hub.Hub).DirectorySearch),
		define(Tool{
			Name: "directory_get", Title: "Read a directory card", Group: "directory", Seed: "000",
			Description: "Read one listed agent's public card, or your own. Unknown, unlisted and other-box agents all answer NOT_FOUND_OR_FORBIDDEN.",
			Method:      "GET", Path: "/v1/directory/{agent_id}", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads a card.",
				"Repeated reads return the same card until it changes.",
				"Reads only your own box's directory."),
		}, (*hub.Hub).DirectoryGet),
		define(Tool{
			Name: "directory_update_self", Title: "Update own directory card", Group: "directory", Seed: "000",
			Description: "Change your card's role, description_md, skills or contact_notes (absent fields are kept) if expected_revision is current. Name and listing are the box owner's.",
			Method:      "PUT", Path: "/v1/directory/self", Authenticated: true,
			Errors: []apperr.Code{apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: why(
				"Writes a new card revision.",
				"Replaces the previous values of the fields it names.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Changes what the other agents of your box see on your card while the owner lists you.")},
		}, (*hub.Hub).DirectoryUpdateSelf),
		define(Tool{
			Name: "rooms_list", Title: "List own rooms", Group: "rooms", Seed: "000",
			Description: "List the rooms you belong to, with your follow setting, brief revision and archived flag.",
			Method:      "GET", Path: "/v1/rooms", Authenticated: true,
			Errors: []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads your memberships.",
				"Repeated reads return the same rooms until memberships change.",
				"Reads only your own memberships."),
		}, (*hub.Hub).RoomsList),
		define(Tool{
			Name: "room_get", Title: "Read a room", Group: "rooms", Seed: "000",
			Description: "Read a room you belong to: its details, your membership and follow setting, and up to 50 members. Archived rooms stay readable.",
			Method:      "GET", Path: "/v1/rooms/{room_id}", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads the room.",
				"Repeated reads return the same room until it or its roster changes.",
				"Reads only a room of your own box that you are a member of."),
		}, (*hub.Hub).RoomGet),
		define(Tool{
			Name: "room_follow", Title: "Set room follow preference", Group: "rooms", Seed: "000",
			Description: "Choose what in a room notifies you (all, mentions, replies, mute) if expected_revision is current. Applies from now on; rejoining resets it to mentions.",
			Method:      "PUT", Path: "/v1/rooms/{room_id}/follow", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, Why: why(
				"Writes a new membership revision.",
				"Replaces your previous preference for this epoch.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Changes only your own membership; no other agent sees it.")},
		}, (*hub.Hub).RoomFollow),
		define(Tool{
			Name: "room_brief_get", Title: "Read a room brief", Group: "rooms", Seed: "000",
			Description: "Read the brief of a room you belong to, also right after joining and when archived.",
			Method:      "GET", Path: "/v1/rooms/{room_id}/brief", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads the brief.",
				"Repeated reads return the same brief until it is appended to.",
				"Reads only a room of your own box that you are a member of."),
		}, (*hub.Hub).RoomBriefGet),
		define(Tool{
			Name: "room_brief_update", Title: "Append to a room brief", Group: "rooms", Seed: "000",
			Description: "Append a paragraph to a room's brief if expected_revision is current. Archived rooms answer ROOM_ARCHIVED; the brief holds at most 64 KiB.",
			Method:      "POST", Path: "/v1/rooms/{room_id}/brief", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RoomArchived, apperr.RevisionConflict},
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: why(
				"Writes a new brief revision.",
				"Only appends; nothing already in the brief is removed or replaced.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Every current and future member of the room reads the brief.")},
		}, (*hub.Hub).RoomBriefUpdate),
	}
}

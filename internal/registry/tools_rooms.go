package registry

import "github.com/agentbox/agentbox/internal/hub"

// directoryAndRoomTools declares the directory and room tools (seed 000).
func directoryAndRoomTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "directory_search", Title: "Search the directory", Group: "directory", Seed: "000",
			Description: "Browse or search the listed, active agents' public cards of your box. The query is matched literally (no wildcard or pattern characters) against names and roles, ignoring case and Unicode spelling variants; an empty query browses all. Ordered by name, then agent id, with a keyset cursor; at most 100 per page. A browser, not an event stream: start again after directory changes.",
			Method:      "POST", Path: "/v1/directory/search", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads cards.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeating a search returns the same page until cards or listings change.",
				"openWorldHint":   "Reads only your own box's directory.",
			}},
		}, (*hub.Hub).DirectorySearch),
		define(Tool{
			Name: "directory_get", Title: "Read a directory card", Group: "directory", Seed: "000",
			Description: "Read one listed agent's public card. An agent that is not listed, of another box, or that does not exist gives the same NOT_FOUND_OR_FORBIDDEN. Your own card is always readable, listed or not.",
			Method:      "GET", Path: "/v1/directory/{agent_id}", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads a card.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeated reads return the same card until it changes.",
				"openWorldHint":   "Reads only your own box's directory.",
			}},
		}, (*hub.Hub).DirectoryGet),
		define(Tool{
			Name: "directory_update_self", Title: "Update own directory card", Group: "directory", Seed: "000",
			Description: "Change your own card's public fields (role, description_md, skills, contact_notes; absent fields are kept) under CAS on the card revision, and get the card back as it now is. The name and the directory opt-in belong to the box owner and cannot be changed here.",
			Method:      "PUT", Path: "/v1/directory/self", Scope: ScopeWrite, Authenticated: true,
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: map[string]string{
				"readOnlyHint":    "Writes a new card revision.",
				"destructiveHint": "Replaces the previous values of the fields it names.",
				"idempotentHint":  "A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"openWorldHint":   "Changes what the other agents of your box see on your card while the owner lists you.",
			}},
		}, (*hub.Hub).DirectoryUpdateSelf),
		define(Tool{
			Name: "rooms_list", Title: "List own rooms", Group: "rooms", Seed: "000",
			Description: "List your current room memberships with their follow preference and revision, brief revision and archived flag, by room id. The cursor becomes CURSOR_INVALID once your memberships change: then browse from the start.",
			Method:      "GET", Path: "/v1/rooms", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads your memberships.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeated reads return the same rooms until memberships change.",
				"openWorldHint":   "Reads only your own memberships.",
			}},
		}, (*hub.Hub).RoomsList),
		define(Tool{
			Name: "room_get", Title: "Read a room", Group: "rooms", Seed: "000",
			Description: "Read a room you are a current member of: its details, your membership (epoch, follow preference and revision), and a roster of up to 50 current members' public names and ids with the total count and a truncated flag. Archived rooms stay readable.",
			Method:      "GET", Path: "/v1/rooms/{room_id}", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads the room.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeated reads return the same room until it or its roster changes.",
				"openWorldHint":   "Reads only a room of your own box that you are a member of.",
			}},
		}, (*hub.Hub).RoomGet),
		define(Tool{
			Name: "room_follow", Title: "Set room follow preference", Group: "rooms", Seed: "000",
			Description: "Set your follow preference for your current membership epoch of a room (all, mentions, replies, mute) under CAS on follow_revision. Prospective only: it neither backfills nor removes attention already computed. A new epoch (after the owner removes and re-adds you) starts again from the default, mentions.",
			Method:      "PUT", Path: "/v1/rooms/{room_id}/follow", Scope: ScopeWrite, Authenticated: true,
			Hints: Hints{Destructive: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Writes a new membership revision.",
				"destructiveHint": "Replaces your previous preference for this epoch.",
				"idempotentHint":  "A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"openWorldHint":   "Changes only your own membership; no other agent sees it.",
			}},
		}, (*hub.Hub).RoomFollow),
		define(Tool{
			Name: "room_brief_get", Title: "Read a room brief", Group: "rooms", Seed: "000",
			Description: "Read the current brief of a room you are a current member of, including right after you were added (onboarding) and in archived rooms.",
			Method:      "GET", Path: "/v1/rooms/{room_id}/brief", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads the brief.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeated reads return the same brief until it is appended to.",
				"openWorldHint":   "Reads only a room of your own box that you are a member of.",
			}},
		}, (*hub.Hub).RoomBriefGet),
		define(Tool{
			Name: "room_brief_update", Title: "Append to a room brief", Group: "rooms", Seed: "000",
			Description: "Append a paragraph to a room's brief under CAS on the brief revision. Needs a fresh profile (PROFILE_OUTDATED otherwise) and a room that is not archived (ROOM_ARCHIVED). Generates no message. The whole brief is at most 64 KiB.",
			Method:      "POST", Path: "/v1/rooms/{room_id}/brief", Scope: ScopeWrite, Authenticated: true,
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: map[string]string{
				"readOnlyHint":    "Writes a new brief revision.",
				"destructiveHint": "Only appends; nothing already in the brief is removed or replaced.",
				"idempotentHint":  "A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"openWorldHint":   "Every current and future member of the room reads the brief.",
			}},
		}, (*hub.Hub).RoomBriefUpdate),
	}
}

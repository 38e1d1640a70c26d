package registry

import (
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// declare lists every tool, in the order documentation shows them. This is
// the one place a tool is named.
func declare(r *Registry) []*Tool {
	session := family{group: "session and self", seed: "000"}
	tools := []*Tool{
		define(session, Tool{
			Name: "agent_prime", Title: "Prime session", Method: "POST", Path: "/v1/agent/prime",
			Description: "Call this first, and again whenever a tool answers NOT_PRIMED. Opens or resumes your session and returns its session_id with your profile, checkpoint, rooms and limits; pass that session_id as the session_id argument of every later call (REST: the Agentbox-Session header).",
			// A session it is asked to resume that was ended.
			Errors: []apperr.Code{apperr.NotPrimed},
			Hints: Hints{Idempotent: true, Why: why(
				"Opens or resumes a session and records the profile version it observed.",
				"Changes nothing but the caller's own session record.",
				"Priming again resumes the same session with the same effect.",
				"Reads only the caller's own box.")},
		}, (*hub.Hub).Prime),
		define(session, Tool{
			Name: "profile_get", Title: "Read own profile", Method: "GET", Path: "/v1/profile",
			Description: "Read your private profile. Also clears PROFILE_OUTDATED for this session.",
			Hints: reads("Returns the profile; only the session's observed-version bookkeeping changes.",
				"Repeated reads return the same profile until the owner changes it.",
				"Reads only the caller's own profile."),
		}, (*hub.Hub).ProfileGet),
		define(session, Tool{
			Name: "checkpoint_get", Title: "Read own checkpoint", Method: "GET", Path: "/v1/checkpoint",
			Description: "Read your shared checkpoint. An absent checkpoint has revision \"0\".",
			Hints: reads("Only reads.",
				"Repeated reads return the same checkpoint until it is saved again.",
				"Reads only the caller's own checkpoint."),
		}, (*hub.Hub).CheckpointGet),
		define(session, Tool{
			Name: "checkpoint_save", Title: "Save own checkpoint", Method: "PUT", Path: "/v1/checkpoint",
			Description: "Replace your checkpoint if expected_revision is still current; otherwise REVISION_CONFLICT with the current revision, and nothing is written.",
			Errors:      []apperr.Code{apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, Why: why(
				"Writes a new checkpoint revision.",
				"Replaces the previous checkpoint content.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Writes only the caller's own checkpoint.")},
		}, (*hub.Hub).CheckpointSave),
		helpTool(r),
	}
	tools = append(tools, directoryAndRoomTools()...)
	tools = append(tools, messageTools()...)
	tools = append(tools, inboxTools()...)
	tools = append(tools, requestAndFileTools()...)
	tools = append(tools, spaceAndMemoryTools()...)
	return tools
}

// directoryAndRoomTools declares the directory and room tools (seed 000).
func directoryAndRoomTools() []*Tool {
	directory := family{group: "directory", seed: "000"}
	rooms := family{group: "rooms", seed: "000"}
	return []*Tool{
		define(directory, Tool{
			Name: "directory_search", Title: "Search the directory", Method: "POST", Path: "/v1/directory/search",
			Description: "Search the public cards of your box's listed agents by name or role (plain text, any case; empty lists all), ordered by name.",
			Errors:      []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads cards.",
				"Repeating a search returns the same page until cards or listings change.",
				"Reads only your own box's directory."),
		}, (*hub.Hub).DirectorySearch),
		define(directory, Tool{
			Name: "directory_get", Title: "Read a directory card", Method: "GET", Path: "/v1/directory/{agent_id}",
			Description: "Read one listed agent's public card, or your own. Unknown, unlisted and other-box agents all answer NOT_FOUND_OR_FORBIDDEN.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads a card.",
				"Repeated reads return the same card until it changes.",
				"Reads only your own box's directory."),
		}, (*hub.Hub).DirectoryGet),
		define(directory, Tool{
			Name: "directory_update_self", Title: "Update own directory card", Method: "PUT", Path: "/v1/directory/self",
			Description: "Change your card's role, description_md, skills or contact_notes (absent fields are kept) if expected_revision is current. Name and listing are the box owner's.",
			Errors:      []apperr.Code{apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: why(
				"Writes a new card revision.",
				"Replaces the previous values of the fields it names.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Changes what the other agents of your box see on your card while the owner lists you.")},
		}, (*hub.Hub).DirectoryUpdateSelf),
		define(rooms, Tool{
			Name: "rooms_list", Title: "List own rooms", Method: "GET", Path: "/v1/rooms",
			Description: "List the rooms you belong to, with your follow setting, brief revision and archived flag.",
			Errors:      []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads your memberships.",
				"Repeated reads return the same rooms until memberships change.",
				"Reads only your own memberships."),
		}, (*hub.Hub).RoomsList),
		define(rooms, Tool{
			Name: "room_get", Title: "Read a room", Method: "GET", Path: "/v1/rooms/{room_id}",
			Description: "Read a room you belong to: its details, your membership and follow setting, and up to 50 members. Archived rooms stay readable.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads the room.",
				"Repeated reads return the same room until it or its roster changes.",
				"Reads only a room of your own box that you are a member of."),
		}, (*hub.Hub).RoomGet),
		define(rooms, Tool{
			Name: "room_follow", Title: "Set room follow preference", Method: "PUT", Path: "/v1/rooms/{room_id}/follow",
			Description: "Choose what in a room notifies you (all, mentions, replies, mute) if expected_revision is current. Applies from now on; rejoining resets it to mentions.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, Why: why(
				"Writes a new membership revision.",
				"Replaces your previous preference for this epoch.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Changes only your own membership; no other agent sees it.")},
		}, (*hub.Hub).RoomFollow),
		define(rooms, Tool{
			Name: "room_brief_get", Title: "Read a room brief", Method: "GET", Path: "/v1/rooms/{room_id}/brief",
			Description: "Read the brief of a room you belong to, also right after joining and when archived.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads the brief.",
				"Repeated reads return the same brief until it is appended to.",
				"Reads only a room of your own box that you are a member of."),
		}, (*hub.Hub).RoomBriefGet),
		define(rooms, Tool{
			Name: "room_brief_update", Title: "Append to a room brief", Method: "POST", Path: "/v1/rooms/{room_id}/brief",
			Description: "Append a paragraph to a room's brief if expected_revision is current. Archived rooms answer ROOM_ARCHIVED; the brief holds at most 64 KiB.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.RoomArchived, apperr.RevisionConflict},
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: why(
				"Writes a new brief revision.",
				"Only appends; nothing already in the brief is removed or replaced.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Every current and future member of the room reads the brief.")},
		}, (*hub.Hub).RoomBriefUpdate),
	}
}

// messageTools declares the message tools (seed 000).
func messageTools() []*Tool {
	messages := family{group: "messages", seed: "000"}
	return []*Tool{
		define(messages, Tool{
			Name: "message_send", Title: "Send a message", Method: "POST", Path: "/v1/messages",
			Description: "Post to a room you belong to, or a DM to an agent of your box. Mention or request agents by id; a reply stays in its room or DM. Returns the stored message id and sequence: stored, not read.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.RoomArchived},
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: why(
				"Stores a message and attention rows for its recipients.",
				"Adds a message; replaces or deletes nothing (messages are immutable).",
				"A retry with the same idempotency_key and payload returns the original receipt and sends nothing again.",
				"Other agents of your box read the message and get attention for it.")},
		}, (*hub.Hub).MessageSend),
		define(messages, Tool{
			Name: "message_get", Title: "Read a message", Method: "GET", Path: "/v1/messages/{message_id}",
			Description: "Read one message you can see. Marks it seen by this session if it is in your inbox; not an ACK.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Returns the message; only this session's retrieval receipt is recorded.",
				"Messages never change; reading again returns the same message.",
				"Reads only messages of your own rooms and DMs."),
		}, (*hub.Hub).MessageGet),
		define(messages, Tool{
			Name: "conversation_read", Title: "Read a conversation", Method: "POST", Path: "/v1/conversations/read",
			Description: "Read a room (since you joined) or a DM, oldest first. Follow next_cursor; the last page gives resume_cursor for newer messages later. Never ACKs.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.CursorInvalid},
			Hints: reads("Returns messages; only this session's retrieval receipts are recorded.",
				"A cursor returns the same page each time; messages never change.",
				"Reads only your own rooms and DMs."),
		}, (*hub.Hub).ConversationRead),
		define(messages, Tool{
			Name: "thread_read", Title: "Read a thread", Method: "GET", Path: "/v1/messages/{message_id}/thread",
			Description: "Read the thread of a message you can see, oldest first. Earlier messages you cannot see show only their id.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads.",
				"Returns the same thread until someone replies.",
				"Reads only your own rooms and DMs."),
		}, (*hub.Hub).ThreadRead),
	}
}

// inboxTools declares the inbox tools (seed 000).
func inboxTools() []*Tool {
	inbox := family{group: "inbox", seed: "000"}
	return []*Tool{
		define(inbox, Tool{
			Name: "inbox_list", Title: "List your inbox", Method: "POST", Path: "/v1/inbox/list",
			Description: "List what needs your attention, oldest first, with why. Default: unread. Follow next_cursor; the last page gives resume_cursor for new rows later (wait_seconds waits). Marks rows seen by this session; use inbox_ack to acknowledge.",
			Errors:      []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Returns rows; only this session's retrieval receipts are recorded, never an ACK.",
				"A cursor returns the same rows each time, until they are acknowledged.",
				"Reads only your own inbox."),
		}, (*hub.Hub).InboxList),
		define(inbox, Tool{
			Name: "inbox_ack", Title: "Acknowledge inbox rows", Method: "POST", Path: "/v1/inbox/ack",
			Description: "Acknowledge up to 100 inbox rows shown to this session, all or none. Rows another of your sessions acknowledged first say already_acked.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{Idempotent: true, Why: why(
				"Marks rows acknowledged and lowers your unread count.",
				"Marks rows; deletes or replaces no content, and a row's first acknowledgement is never overwritten.",
				"A retry with the same idempotency_key and rows returns the original receipt; acknowledging again changes nothing.",
				"Changes only your own inbox.")},
		}, (*hub.Hub).InboxAck),
	}
}

// requestAndFileTools declares the request, file-report and export tools
// (seed 000).
func requestAndFileTools() []*Tool {
	requests := family{group: "requests", seed: "000"}
	files := family{group: "files and export", seed: "000"}
	return []*Tool{
		define(requests, Tool{
			Name: "requests_list", Title: "Browse requests", Method: "GET", Path: "/v1/requests",
			Description: "List requests to you (incoming) or from you (outgoing, one per recipient), oldest first, with their current declaration. Browse again to see later corrections. A recipient removed from the room before answering shows recipient_removed: no longer open.",
			Errors:      []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads; records no receipt.",
				"A cursor returns the same requests until someone declares or sends.",
				"Reads only requests you made or received."),
		}, (*hub.Hub).RequestsList),
		define(requests, Tool{
			Name: "request_respond", Title: "Respond to a request", Method: "POST", Path: "/v1/requests/{request_message_id}/respond",
			Description: "Answer a request to you: accepted, needs_context, declined or result_ready, if expected_revision is current; posts your reply in its room or DM. Call again to correct.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: why(
				"Writes a declaration and a reply message.",
				"Replaces your previous declaration on the request (the earlier reply message stays).",
				"A retry with the same idempotency_key and payload returns the original receipt and posts no second reply.",
				"The request's author and the room read your reply and get attention for it.")},
		}, (*hub.Hub).RequestRespond),
		define(files, Tool{
			Name: "file_access_report", Title: "Report access to a file", Method: "PUT", Path: "/v1/messages/{message_id}/files/{file_id}/report",
			Description: "Report whether you could open a file link of a message you did not write: accessible, denied, not_found or other. The service never opens links. A later report replaces yours.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, Why: why(
				"Stores your report.",
				"Replaces your previous report on the file.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Only the message's author and you can read the report.")},
		}, (*hub.Hub).FileAccessReport),
		define(files, Tool{
			Name: "file_reports_list", Title: "List file access reports", Method: "GET", Path: "/v1/messages/{message_id}/file-reports",
			Description: "List access reports on a message's files: all of them for its author, your own for anyone else. No report means not reported.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads.",
				"Returns the same reports until someone reports again.",
				"Reads only reports on messages you can see."),
		}, (*hub.Hub).FileReportsList),
		define(files, Tool{
			Name: "thread_export", Title: "Export a thread", Method: "GET", Path: "/v1/messages/{message_id}/export",
			Description: "Export a thread you can see as JSON Lines or Markdown, a chunk per call: follow next_cursor while partial is true. No ACK, no receipt.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.CursorInvalid},
			Hints: reads("Only reads; acknowledges nothing and records no receipt.",
				"A cursor returns the same chunk each time; messages never change.",
				"Reads only your own rooms and DMs; uploads nothing."),
		}, (*hub.Hub).ThreadExport),
	}
}

// spaceAndMemoryTools declares the space and memory tools (seed 002). Their
// contracts follow seed 002's form (seed002.go); update_space is the seed's
// own example, and a golden test holds it to the seed.
func spaceAndMemoryTools() []*Tool {
	spaces := family{group: "spaces", seed: "002", shape: IDData}
	memory := family{group: "memory", seed: "002", shape: IDData}
	return []*Tool{
		define(spaces, Tool{
			Name: "create_space", Title: "Create space", Method: "POST", Path: "/v1/spaces",
			Description: "Create a space: title, goal, visibility, status (active by default). public: every agent of your box may read and update it; private: only members, whom you manage.",
			Hints: Hints{OpenWorld: true, Why: changes(
				"Creates a new space; replaces or deletes nothing.",
				"Each call creates another space unless it reuses an operation_key with an identical payload.",
				"A public space is visible to every agent of the box; a private one only to its members.")},
		}, (*hub.Hub).CreateSpace),
		define(spaces, Tool{
			Name: "get_space", Title: "Read space", Method: "GET", Path: "/v1/spaces/{id}",
			Description: "Read a public space of your box, or a private one you belong to (with its members). Anything else answers NOT_FOUND_OR_FORBIDDEN.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads the space.",
				"Repeated reads return the same space until it is updated.",
				"Reads only spaces of your own box that you may see."),
		}, (*hub.Hub).GetSpace),
		define(spaces, Tool{
			Name: "list_spaces", Title: "List spaces", Method: "GET", Path: "/v1/spaces",
			Description: "List the spaces you may see, oldest first, without goals (get_space has them). A space created a moment ago may show up a moment later.",
			Errors:      []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads spaces.",
				"Repeated reads return the same page until spaces are created or changed.",
				"Reads only spaces of your own box that you may see."),
		}, (*hub.Hub).ListSpaces),
		define(spaces, Tool{
			Name: "update_space", Title: "Update space", Method: "POST", Path: "/v1/spaces/{id}",
			Description: "Replace a space's title, goal and status if expected_version is current; otherwise REVISION_CONFLICT and nothing is written. Visibility and members stay.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, OpenWorld: true, Why: changes(
				"Replaces space metadata and can pause or archive the space.",
				"A repeated call is checked against the then-current version; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"Can change a public space's visible title and goal; private spaces retain their membership restrictions.")},
		}, (*hub.Hub).UpdateSpace),
		define(spaces, Tool{
			Name: "add_space_member", Title: "Add space member", Method: "POST", Path: "/v1/spaces/{id}/members/add",
			Description: "Add an active agent of your box to a private space you created (at most 100 members). Adding a member twice changes nothing.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: changes(
				"Adds a membership, granting another agent of your box access; replaces or deletes nothing.",
				"Adding an existing member changes nothing.",
				"Another agent can then read and update the private space.")},
		}, (*hub.Hub).AddSpaceMember),
		define(spaces, Tool{
			Name: "remove_space_member", Title: "Remove space member", Method: "POST", Path: "/v1/spaces/{id}/members/remove",
			Description: "Remove an agent from a private space you created; it loses access at once. The creator cannot be removed.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: changes(
				"Revokes another agent's access to a private space.",
				"Removing a non-member changes nothing.",
				"Changes what another agent of your box may see.")},
		}, (*hub.Hub).RemoveSpaceMember),
		define(memory, Tool{
			Name: "save_memory", Title: "Save memory note", Method: "PUT", Path: "/v1/memory/{id}",
			Description: "Create or replace your private note named id. expected_version 0 creates a missing note; otherwise it must be the current version. Up to 16 KiB; 200 notes.",
			Errors:      []apperr.Code{apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Why: changes(
				"Replaces the note's content.",
				"A repeated call is checked against the then-current version; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"Notes are private to you; no other agent can read them.")},
		}, (*hub.Hub).SaveMemory),
		define(memory, Tool{
			Name: "get_memory", Title: "Read memory note", Method: "GET", Path: "/v1/memory/{id}",
			Description: "Read one of your private notes by name. A name you have not saved answers NOT_FOUND_OR_FORBIDDEN.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads the note.",
				"Repeated reads return the same note until it is saved again.",
				"Reads only your own notes."),
		}, (*hub.Hub).GetMemory),
		define(memory, Tool{
			Name: "list_memory", Title: "List memory notes", Method: "GET", Path: "/v1/memory",
			Description: "List your private notes by name, without content (get_memory has it), with your note count and limit.",
			Errors:      []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads notes.",
				"Repeated reads return the same page until notes change.",
				"Reads only your own notes."),
		}, (*hub.Hub).ListMemory),
		define(memory, Tool{
			Name: "delete_memory", Title: "Delete memory note", Method: "DELETE", Path: "/v1/memory/{id}",
			Description: "Delete your private note if expected_version is its current version; otherwise REVISION_CONFLICT and nothing is deleted.",
			Errors:      []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Why: changes(
				"Deletes the note.",
				"A repeated call is checked against the then-current note, which may be a new one under the same name; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"Notes are private to you.")},
		}, (*hub.Hub).DeleteMemory),
	}
}

// why holds a tool's four hint justifications, in the order of the MCP
// annotations.
func why(readOnly, destructive, idempotent, openWorld string) map[string]string {
	return map[string]string{"readOnlyHint": readOnly, "destructiveHint": destructive,
		"idempotentHint": idempotent, "openWorldHint": openWorld}
}

// reads are the hints of a read tool: read-only and idempotent, and it
// deletes or replaces nothing.
func reads(readOnly, idempotent, openWorld string) Hints {
	return Hints{ReadOnly: true, Idempotent: true, Why: why(readOnly, "Deletes or replaces nothing.", idempotent, openWorld)}
}

// changes holds a seed-002 write tool's four hint justifications. The seed
// words the read-only one as "Changes application state: " and what the
// tool replaces or deletes.
func changes(destructive, idempotent, openWorld string) map[string]string {
	return why("Changes application state: "+destructive, destructive, idempotent, openWorld)
}

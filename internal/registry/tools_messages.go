package registry

import (
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// messageTools declares the message tools (seed 000).
func messageTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "message_send", Title: "Send a message", Group: "messages", Seed: "000",
			Description: "Post to a room you belong to, or a DM to an agent of your box. Mention or request agents by id; a reply stays in its room or DM. Returns the stored message id and sequence: stored, not read.",
			Method:      "POST", Path: "/v1/messages", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RoomArchived},
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: why(
				"Stores a message and attention rows for its recipients.",
				"Adds a message; replaces or deletes nothing (messages are immutable).",
				"A retry with the same idempotency_key and payload returns the original receipt and sends nothing again.",
				"Other agents of your box read the message and get attention for it.")},
		}, (*hub.Hub).MessageSend),
		define(Tool{
			Name: "message_get", Title: "Read a message", Group: "messages", Seed: "000",
			Description: "Read one message you can see. Marks it seen by this session if it is in your inbox; not an ACK.",
			Method:      "GET", Path: "/v1/messages/{message_id}", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Returns the message; only this session's retrieval receipt is recorded.",
				"Messages never change; reading again returns the same message.",
				"Reads only messages of your own rooms and DMs."),
		}, (*hub.Hub).MessageGet),
		define(Tool{
			Name: "conversation_read", Title: "Read a conversation", Group: "messages", Seed: "000",
			Description: "Read a room (since you joined) or a DM, oldest first. Follow next_cursor; the last page gives resume_cursor for newer messages later. Never ACKs.",
			Method:      "POST", Path: "/v1/conversations/read", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.CursorInvalid},
			Hints: reads("Returns messages; only this session's retrieval receipts are recorded.",
				"A cursor returns the same page each time; messages never change.",
				"Reads only your own rooms and DMs."),
		}, (*hub.Hub).ConversationRead),
		define(Tool{
			Name: "thread_read", Title: "Read a thread", Group: "messages", Seed: "000",
			Description: "Read the thread of a message you can see, oldest first. Earlier messages you cannot see show only their id.",
			Method:      "GET", Path: "/v1/messages/{message_id}/thread", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads.",
				"Returns the same thread until someone replies.",
				"Reads only your own rooms and DMs."),
		}, (*hub.Hub).ThreadRead),
	}
}

// inboxTools declares the inbox tools (seed 000).
func inboxTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "inbox_list", Title: "List your inbox", Group: "inbox", Seed: "000",
			Description: "List what needs your attention, oldest first, with why. Default: unread. Follow next_cursor; the last page gives resume_cursor for new rows later (wait_seconds waits). Marks rows seen by this session; use inbox_ack to acknowledge.",
			Method:      "POST", Path: "/v1/inbox/list", Authenticated: true,
			Errors: []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Returns rows; only this session's retrieval receipts are recorded, never an ACK.",
				"A cursor returns the same rows each time, until they are acknowledged.",
				"Reads only your own inbox."),
		}, (*hub.Hub).InboxList),
		define(Tool{
			Name: "inbox_ack", Title: "Acknowledge inbox rows", Group: "inbox", Seed: "000",
			Description: "Acknowledge up to 100 inbox rows shown to this session, all or none. Rows another of your sessions acknowledged first say already_acked.",
			Method:      "POST", Path: "/v1/inbox/ack", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{Idempotent: true, Why: why(
				"Marks rows acknowledged and lowers your unread count.",
				"Marks rows; deletes or replaces no content, and a row's first acknowledgement is never overwritten.",
				"A retry with the same idempotency_key and rows returns the original receipt; acknowledging again changes nothing.",
				"Changes only your own inbox.")},
		}, (*hub.Hub).InboxAck),
	}
}

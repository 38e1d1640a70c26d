package registry

import "github.com/agentbox/agentbox/internal/hub"

// messageTools declares the message tools (seed 000).
func messageTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "message_send", Title: "Send a message", Group: "messages", Seed: "000",
			Description: "Post a message to a room you are a member of or a DM to one agent of your box. Mentions and requests name agents by id (writing @Name does nothing); a reply stays in its parent's room or DM. Returns the stored message's id, stream sequence and how many recipients got attention: stored, not necessarily read.",
			Method:      "POST", Path: "/v1/messages", Scope: ScopeWrite, Authenticated: true,
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: map[string]string{
				"readOnlyHint":    "Stores a message and attention rows for its recipients.",
				"destructiveHint": "Adds a message; replaces or deletes nothing (messages are immutable).",
				"idempotentHint":  "A retry with the same idempotency_key and payload returns the original receipt and sends nothing again.",
				"openWorldHint":   "Other agents of your box read the message and get attention for it.",
			}},
		}, (*hub.Hub).MessageSend),
		define(Tool{
			Name: "message_get", Title: "Read a message", Group: "messages", Seed: "000",
			Description: "Read one message you can see. If it is in your inbox, this records that this session saw it (a receipt, not an ACK: use inbox_ack for that).",
			Method:      "GET", Path: "/v1/messages/{message_id}", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Returns the message; only this session's retrieval receipt is recorded.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Messages never change; reading again returns the same message.",
				"openWorldHint":   "Reads only messages of your own rooms and DMs.",
			}},
		}, (*hub.Hub).MessageGet),
		define(Tool{
			Name: "conversation_read", Title: "Read a conversation", Group: "messages", Seed: "000",
			Description: "Read a room (from when you joined) or your DM with one agent, oldest first, a page at a time. Follow next_cursor to the end; the last page gives resume_cursor, which later returns only newer messages. Records receipts for returned messages in your inbox; never ACKs.",
			Method:      "POST", Path: "/v1/conversations/read", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Returns messages; only this session's retrieval receipts are recorded.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "A cursor returns the same page each time; messages never change.",
				"openWorldHint":   "Reads only your own rooms and DMs.",
			}},
		}, (*hub.Hub).ConversationRead),
		define(Tool{
			Name: "thread_read", Title: "Read a thread", Group: "messages", Seed: "000",
			Description: "Read the whole thread of a message you can see: the first message and every reply, oldest first. Earlier messages you cannot see (sent before you joined the room) that this message answers show only their id.",
			Method:      "GET", Path: "/v1/messages/{message_id}/thread", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Returns the same thread until someone replies.",
				"openWorldHint":   "Reads only your own rooms and DMs.",
			}},
		}, (*hub.Hub).ThreadRead),
	}
}

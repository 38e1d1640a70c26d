package registry

import (
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// requestAndFileTools declares the request, file-report and export tools
// (seed 000).
func requestAndFileTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "requests_list", Title: "Browse requests", Group: "requests", Seed: "000",
			Description: "List requests to you (incoming) or from you (outgoing, one per recipient), oldest first, with their current declaration. Browse again to see later corrections. A recipient removed from the room before answering shows recipient_removed: no longer open.",
			Method:      "GET", Path: "/v1/requests", Authenticated: true,
			Errors: []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads; records no receipt.",
				"A cursor returns the same requests until someone declares or sends.",
				"Reads only requests you made or received."),
		}, (*hub.Hub).RequestsList),
		define(Tool{
			Name: "request_respond", Title: "Respond to a request", Group: "requests", Seed: "000",
			Description: "Answer a request to you: accepted, needs_context, declined or result_ready, if expected_revision is current; posts your reply in its room or DM. Call again to correct.",
			Method:      "POST", Path: "/v1/requests/{request_message_id}/respond", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: why(
				"Writes a declaration and a reply message.",
				"Replaces your previous declaration on the request (the earlier reply message stays).",
				"A retry with the same idempotency_key and payload returns the original receipt and posts no second reply.",
				"The request's author and the room read your reply and get attention for it.")},
		}, (*hub.Hub).RequestRespond),
		define(Tool{
			Name: "file_access_report", Title: "Report access to a file", Group: "files and export", Seed: "000",
			Description: "Report whether you could open a file link of a message you did not write: accessible, denied, not_found or other. The service never opens links. A later report replaces yours.",
			Method:      "PUT", Path: "/v1/messages/{message_id}/files/{file_id}/report", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Idempotent: true, Why: why(
				"Stores your report.",
				"Replaces your previous report on the file.",
				"A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"Only the message's author and you can read the report.")},
		}, (*hub.Hub).FileAccessReport),
		define(Tool{
			Name: "file_reports_list", Title: "List file access reports", Group: "files and export", Seed: "000",
			Description: "List access reports on a message's files: all of them for its author, your own for anyone else. No report means not reported.",
			Method:      "GET", Path: "/v1/messages/{message_id}/file-reports", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads.",
				"Returns the same reports until someone reports again.",
				"Reads only reports on messages you can see."),
		}, (*hub.Hub).FileReportsList),
		define(Tool{
			Name: "thread_export", Title: "Export a thread", Group: "files and export", Seed: "000",
			Description: "Export a thread you can see as JSON Lines or Markdown, a chunk per call: follow next_cursor while partial is true. No ACK, no receipt.",
			Method:      "GET", Path: "/v1/messages/{message_id}/export", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.CursorInvalid},
			Hints: reads("Only reads; acknowledges nothing and records no receipt.",
				"A cursor returns the same chunk each time; messages never change.",
				"Reads only your own rooms and DMs; uploads nothing."),
		}, (*hub.Hub).ThreadExport),
	}
}

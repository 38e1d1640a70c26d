package registry

import "github.com/agentbox/agentbox/internal/hub"

// requestAndFileTools declares the request, file-report and export tools
// (seed 000).
func requestAndFileTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "requests_list", Title: "Browse requests", Group: "requests", Seed: "000",
			Description: "Browse requests addressed to you (incoming) or that you made (outgoing, one entry per requested recipient), oldest first by (message_seq, recipient), each with its current declaration: status, revision and time. A browser, not an event stream: browse again from the start to find later corrections; a request sent a moment ago may not be listed yet.",
			Method:      "GET", Path: "/v1/requests", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads; records no receipt.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "A cursor returns the same requests until someone declares or sends.",
				"openWorldHint":   "Reads only requests you made or received.",
			}},
		}, (*hub.Hub).RequestsList),
		define(Tool{
			Name: "request_respond", Title: "Respond to a request", Group: "requests", Seed: "000",
			Description: "Declare your response to a request addressed to you — accepted, needs_context, declined or result_ready — by CAS on its revision (\"0\" while open), and post one reply to the request in its room or DM (no new request). A later call with the new revision corrects the declaration. result_ready needs a version_label, sha256 or commit on every file.",
			Method:      "POST", Path: "/v1/requests/{request_message_id}/respond", Scope: ScopeWrite, Authenticated: true,
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: map[string]string{
				"readOnlyHint":    "Writes a declaration and a reply message.",
				"destructiveHint": "Replaces your previous declaration on the request (the earlier reply message stays).",
				"idempotentHint":  "A retry with the same idempotency_key and payload returns the original receipt and posts no second reply.",
				"openWorldHint":   "The request's author and the room read your reply and get attention for it.",
			}},
		}, (*hub.Hub).RequestRespond),
		define(Tool{
			Name: "file_access_report", Title: "Report access to a file", Group: "files and export", Seed: "000",
			Description: "Report your own access to one file reference of a message you can see and did not write: accessible, denied, not_found or other, with an optional note. The service never opens the link. A later report replaces yours by CAS (expected_revision \"0\" for the first). Independent of ACKs and requests.",
			Method:      "PUT", Path: "/v1/messages/{message_id}/files/{file_id}/report", Scope: ScopeWrite, Authenticated: true,
			Hints: Hints{Destructive: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Stores your report.",
				"destructiveHint": "Replaces your previous report on the file.",
				"idempotentHint":  "A retry with the same idempotency_key and payload returns the original receipt with no second effect.",
				"openWorldHint":   "Only the message's author and you can read the report.",
			}},
		}, (*hub.Hub).FileAccessReport),
		define(Tool{
			Name: "file_reports_list", Title: "List file access reports", Group: "files and export", Seed: "000",
			Description: "List access reports on a message's files: its author (while it can still see the message) gets every report, a page at a time; anyone else who can see it gets only its own. No report means not reported, never accessible. Fetches nothing, records no receipt.",
			Method:      "GET", Path: "/v1/messages/{message_id}/file-reports", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Returns the same reports until someone reports again.",
				"openWorldHint":   "Reads only reports on messages you can see.",
			}},
		}, (*hub.Hub).FileReportsList),
		define(Tool{
			Name: "thread_export", Title: "Export a thread", Group: "files and export", Seed: "000",
			Description: "Export the thread of a message you can see, as JSON Lines or Markdown, one chunk per call: follow next_cursor while partial is true and concatenate the chunks. Only what you may see; earlier messages you cannot see that the anchor answers appear as redacted references. No ACK, no receipt, no upload.",
			Method:      "GET", Path: "/v1/messages/{message_id}/export", Scope: ScopeRead, Authenticated: true,
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads; acknowledges nothing and records no receipt.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "A cursor returns the same chunk each time; messages never change.",
				"openWorldHint":   "Reads only your own rooms and DMs; uploads nothing.",
			}},
		}, (*hub.Hub).ThreadExport),
	}
}

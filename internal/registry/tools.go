package registry

import (
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// declare lists every tool, in the order documentation shows them. This is
// the one place a tool is named.
func declare(r *Registry) []*Tool {
	tools := []*Tool{
		define(Tool{
			Name: "agent_prime", Title: "Prime session", Group: "session and self", Seed: "000",
			Description: "Call this first, and again whenever a tool answers NOT_PRIMED. Opens or resumes your session and returns its session_id with your profile, checkpoint, rooms and limits; pass that session_id as the session_id argument of every later call (REST: the Agentbox-Session header).",
			Method:      "POST", Path: "/v1/agent/prime", Authenticated: true,
			// A session it is asked to resume that was ended.
			Errors: []apperr.Code{apperr.NotPrimed},
			Hints: Hints{Idempotent: true, Why: why(
				"Opens or resumes a session and records the profile version it observed.",
				"Changes nothing but the caller's own session record.",
				"Priming again resumes the same session with the same effect.",
				"Reads only the caller's own box.")},
		}, (*hub.Hub).Prime),
		define(Tool{
			Name: "profile_get", Title: "Read own profile", Group: "session and self", Seed: "000",
			Description: "Read your private profile. Also clears PROFILE_OUTDATED for this session.",
			Method:      "GET", Path: "/v1/profile", Authenticated: true,
			Hints: reads("Returns the profile; only the session's observed-version bookkeeping changes.",
				"Repeated reads return the same profile until the owner changes it.",
				"Reads only the caller's own profile."),
		}, (*hub.Hub).ProfileGet),
		define(Tool{
			Name: "checkpoint_get", Title: "Read own checkpoint", Group: "session and self", Seed: "000",
			Description: "Read your shared checkpoint. An absent checkpoint has revision \"0\".",
			Method:      "GET", Path: "/v1/checkpoint", Authenticated: true,
			Hints: reads("Only reads.",
				"Repeated reads return the same checkpoint until it is saved again.",
				"Reads only the caller's own checkpoint."),
		}, (*hub.Hub).CheckpointGet),
		define(Tool{
			Name: "checkpoint_save", Title: "Save own checkpoint", Group: "session and self", Seed: "000",
			Description: "Replace your checkpoint if expected_revision is still current; otherwise REVISION_CONFLICT with the current revision, and nothing is written.",
			Method:      "PUT", Path: "/v1/checkpoint", Authenticated: true,
			Errors: []apperr.Code{apperr.RevisionConflict},
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

package registry

import (
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// spaceAndMemoryTools declares the space and memory tools (seed 002). Their
// contracts follow seed 002's form (seed002.go); update_space is the seed's
// own example, and a golden test holds it to the seed.
func spaceAndMemoryTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "create_space", Title: "Create space", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Create a space: title, goal, visibility, status (active by default). public: every agent of your box may read and update it; private: only members, whom you manage.",
			Method:      "POST", Path: "/v1/spaces", Authenticated: true,
			Hints: Hints{OpenWorld: true, Why: why(
				"Changes application state: Creates a new space; replaces or deletes nothing.",
				"Creates a new space; replaces or deletes nothing.",
				"Each call creates another space unless it reuses an operation_key with an identical payload.",
				"A public space is visible to every agent of the box; a private one only to its members.")},
		}, (*hub.Hub).CreateSpace),
		define(Tool{
			Name: "get_space", Title: "Read space", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Read a public space of your box, or a private one you belong to (with its members). Anything else answers NOT_FOUND_OR_FORBIDDEN.",
			Method:      "GET", Path: "/v1/spaces/{id}", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads the space.",
				"Repeated reads return the same space until it is updated.",
				"Reads only spaces of your own box that you may see."),
		}, (*hub.Hub).GetSpace),
		define(Tool{
			Name: "list_spaces", Title: "List spaces", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "List the spaces you may see, oldest first, without goals (get_space has them). A space created a moment ago may show up a moment later.",
			Method:      "GET", Path: "/v1/spaces", Authenticated: true,
			Errors: []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads spaces.",
				"Repeated reads return the same page until spaces are created or changed.",
				"Reads only spaces of your own box that you may see."),
		}, (*hub.Hub).ListSpaces),
		define(Tool{
			Name: "update_space", Title: "Update space", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Replace a space's title, goal and status if expected_version is current; otherwise REVISION_CONFLICT and nothing is written. Visibility and members stay.",
			Method:      "POST", Path: "/v1/spaces/{id}", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, OpenWorld: true, Why: why(
				"Changes application state: Replaces space metadata and can pause or archive the space.",
				"Replaces space metadata and can pause or archive the space.",
				"A repeated call is checked against the then-current version; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"Can change a public space's visible title and goal; private spaces retain their membership restrictions.")},
		}, (*hub.Hub).UpdateSpace),
		define(Tool{
			Name: "add_space_member", Title: "Add space member", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Add an active agent of your box to a private space you created (at most 100 members). Adding a member twice changes nothing.",
			Method:      "POST", Path: "/v1/spaces/{id}/members/add", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: why(
				"Changes application state: Adds a membership, granting another agent of your box access; replaces or deletes nothing.",
				"Adds a membership, granting another agent of your box access; replaces or deletes nothing.",
				"Adding an existing member changes nothing.",
				"Another agent can then read and update the private space.")},
		}, (*hub.Hub).AddSpaceMember),
		define(Tool{
			Name: "remove_space_member", Title: "Remove space member", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Remove an agent from a private space you created; it loses access at once. The creator cannot be removed.",
			Method:      "POST", Path: "/v1/spaces/{id}/members/remove", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: why(
				"Changes application state: Revokes another agent's access to a private space.",
				"Revokes another agent's access to a private space.",
				"Removing a non-member changes nothing.",
				"Changes what another agent of your box may see.")},
		}, (*hub.Hub).RemoveSpaceMember),
		define(Tool{
			Name: "save_memory", Title: "Save memory note", Group: "memory", Seed: "002", Shape: IDData,
			Description: "Create or replace your private note named id. expected_version 0 creates a missing note; otherwise it must be the current version. Up to 16 KiB; 200 notes.",
			Method:      "PUT", Path: "/v1/memory/{id}", Authenticated: true,
			Errors: []apperr.Code{apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Why: why(
				"Changes application state: Replaces the note's content.",
				"Replaces the note's content.",
				"A repeated call is checked against the then-current version; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"Notes are private to you; no other agent can read them.")},
		}, (*hub.Hub).SaveMemory),
		define(Tool{
			Name: "get_memory", Title: "Read memory note", Group: "memory", Seed: "002", Shape: IDData,
			Description: "Read one of your private notes by name. A name you have not saved answers NOT_FOUND_OR_FORBIDDEN.",
			Method:      "GET", Path: "/v1/memory/{id}", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: reads("Only reads the note.",
				"Repeated reads return the same note until it is saved again.",
				"Reads only your own notes."),
		}, (*hub.Hub).GetMemory),
		define(Tool{
			Name: "list_memory", Title: "List memory notes", Group: "memory", Seed: "002", Shape: IDData,
			Description: "List your private notes by name, without content (get_memory has it), with your note count and limit.",
			Method:      "GET", Path: "/v1/memory", Authenticated: true,
			Errors: []apperr.Code{apperr.CursorInvalid},
			Hints: reads("Only reads notes.",
				"Repeated reads return the same page until notes change.",
				"Reads only your own notes."),
		}, (*hub.Hub).ListMemory),
		define(Tool{
			Name: "delete_memory", Title: "Delete memory note", Group: "memory", Seed: "002", Shape: IDData,
			Description: "Delete your private note if expected_version is its current version; otherwise REVISION_CONFLICT and nothing is deleted.",
			Method:      "DELETE", Path: "/v1/memory/{id}", Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Why: why(
				"Changes application state: Deletes the note.",
				"Deletes the note.",
				"A repeated call is checked against the then-current note, which may be a new one under the same name; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"Notes are private to you.")},
		}, (*hub.Hub).DeleteMemory),
	}
}

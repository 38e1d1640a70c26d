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
			Method:      "POST", Path: "/v1/spaces", Scope: ScopeWrite, Authenticated: true,
			Hints: Hints{OpenWorld: true, Why: map[string]string{
				"readOnlyHint":    "Changes application state: Creates a new space; replaces or deletes nothing.",
				"destructiveHint": "Creates a new space; replaces or deletes nothing.",
				"idempotentHint":  "Each call creates another space unless it reuses an operation_key with an identical payload.",
				"openWorldHint":   "A public space is visible to every agent of the box; a private one only to its members.",
			}},
		}, (*hub.Hub).CreateSpace),
		define(Tool{
			Name: "get_space", Title: "Read space", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Read a public space of your box, or a private one you belong to (with its members). Anything else answers NOT_FOUND_OR_FORBIDDEN.",
			Method:      "GET", Path: "/v1/spaces/{id}", Scope: ScopeRead, Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads the space.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeated reads return the same space until it is updated.",
				"openWorldHint":   "Reads only spaces of your own box that you may see.",
			}},
		}, (*hub.Hub).GetSpace),
		define(Tool{
			Name: "list_spaces", Title: "List spaces", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "List the spaces you may see, oldest first, without goals (get_space has them). A space created a moment ago may show up a moment later.",
			Method:      "GET", Path: "/v1/spaces", Scope: ScopeRead, Authenticated: true,
			Errors: []apperr.Code{apperr.CursorInvalid},
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads spaces.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeated reads return the same page until spaces are created or changed.",
				"openWorldHint":   "Reads only spaces of your own box that you may see.",
			}},
		}, (*hub.Hub).ListSpaces),
		define(Tool{
			Name: "update_space", Title: "Update space", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Replace a space's title, goal and status if expected_version is current; otherwise REVISION_CONFLICT and nothing is written. Visibility and members stay.",
			Method:      "POST", Path: "/v1/spaces/{id}", Scope: ScopeWrite, Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, OpenWorld: true, Why: map[string]string{
				"readOnlyHint":    "Changes application state: Replaces space metadata and can pause or archive the space.",
				"destructiveHint": "Replaces space metadata and can pause or archive the space.",
				"idempotentHint":  "A repeated call is checked against the then-current version; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"openWorldHint":   "Can change a public space's visible title and goal; private spaces retain their membership restrictions.",
			}},
		}, (*hub.Hub).UpdateSpace),
		define(Tool{
			Name: "add_space_member", Title: "Add space member", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Add an active agent of your box to a private space you created (at most 100 members). Adding a member twice changes nothing.",
			Method:      "POST", Path: "/v1/spaces/{id}/members/add", Scope: ScopeWrite, Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{Idempotent: true, OpenWorld: true, Why: map[string]string{
				"readOnlyHint":    "Changes application state: Adds a membership, granting another agent of your box access; replaces or deletes nothing.",
				"destructiveHint": "Adds a membership, granting another agent of your box access; replaces or deletes nothing.",
				"idempotentHint":  "Adding an existing member changes nothing.",
				"openWorldHint":   "Another agent can then read and update the private space.",
			}},
		}, (*hub.Hub).AddSpaceMember),
		define(Tool{
			Name: "remove_space_member", Title: "Remove space member", Group: "spaces", Seed: "002", Shape: IDData,
			Description: "Remove an agent from a private space you created; it loses access at once. The creator cannot be removed.",
			Method:      "POST", Path: "/v1/spaces/{id}/members/remove", Scope: ScopeWrite, Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{Destructive: true, Idempotent: true, OpenWorld: true, Why: map[string]string{
				"readOnlyHint":    "Changes application state: Revokes another agent's access to a private space.",
				"destructiveHint": "Revokes another agent's access to a private space.",
				"idempotentHint":  "Removing a non-member changes nothing.",
				"openWorldHint":   "Changes what another agent of your box may see.",
			}},
		}, (*hub.Hub).RemoveSpaceMember),
		define(Tool{
			Name: "save_memory", Title: "Save memory note", Group: "memory", Seed: "002", Shape: IDData,
			Description: "Create or replace your private note named id. expected_version 0 creates a missing note; otherwise it must be the current version. Up to 16 KiB; 200 notes.",
			Method:      "PUT", Path: "/v1/memory/{id}", Scope: ScopeWrite, Authenticated: true,
			Errors: []apperr.Code{apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Why: map[string]string{
				"readOnlyHint":    "Changes application state: Replaces the note's content.",
				"destructiveHint": "Replaces the note's content.",
				"idempotentHint":  "A repeated call is checked against the then-current version; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"openWorldHint":   "Notes are private to you; no other agent can read them.",
			}},
		}, (*hub.Hub).SaveMemory),
		define(Tool{
			Name: "get_memory", Title: "Read memory note", Group: "memory", Seed: "002", Shape: IDData,
			Description: "Read one of your private notes by name. A name you have not saved answers NOT_FOUND_OR_FORBIDDEN.",
			Method:      "GET", Path: "/v1/memory/{id}", Scope: ScopeRead, Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden},
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads the note.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeated reads return the same note until it is saved again.",
				"openWorldHint":   "Reads only your own notes.",
			}},
		}, (*hub.Hub).GetMemory),
		define(Tool{
			Name: "list_memory", Title: "List memory notes", Group: "memory", Seed: "002", Shape: IDData,
			Description: "List your private notes by name, without content (get_memory has it), with your note count and limit.",
			Method:      "GET", Path: "/v1/memory", Scope: ScopeRead, Authenticated: true,
			Errors: []apperr.Code{apperr.CursorInvalid},
			Hints: Hints{ReadOnly: true, Idempotent: true, Why: map[string]string{
				"readOnlyHint":    "Only reads notes.",
				"destructiveHint": "Deletes or replaces nothing.",
				"idempotentHint":  "Repeated reads return the same page until notes change.",
				"openWorldHint":   "Reads only your own notes.",
			}},
		}, (*hub.Hub).ListMemory),
		define(Tool{
			Name: "delete_memory", Title: "Delete memory note", Group: "memory", Seed: "002", Shape: IDData,
			Description: "Delete your private note if expected_version is its current version; otherwise REVISION_CONFLICT and nothing is deleted.",
			Method:      "DELETE", Path: "/v1/memory/{id}", Scope: ScopeWrite, Authenticated: true,
			Errors: []apperr.Code{apperr.NotFoundOrForbidden, apperr.RevisionConflict},
			Hints: Hints{Destructive: true, Why: map[string]string{
				"readOnlyHint":    "Changes application state: Deletes the note.",
				"destructiveHint": "Deletes the note.",
				"idempotentHint":  "A repeated call is checked against the then-current note, which may be a new one under the same name; only a reused operation_key with an identical payload is answered from the first call's receipt.",
				"openWorldHint":   "Notes are private to you.",
			}},
		}, (*hub.Hub).DeleteMemory),
	}
}

package apperr

// # Where an error is answered
//
// The domain raises an error without knowing who asked: the same
// INVALID_ARGUMENT can reach a read over REST or a seed-002 mutation over
// MCP. What an agent should do next depends on exactly that, so the
// transports render every error in a Context (registry.ErrorContext builds
// it from the tool's contract) and the next action of each code is a
// function of it (nextActions). An error built with an explicit next
// action (WithNext) keeps it everywhere; use that only for words that fit
// every tool and transport the error can reach.

// Transport is where an error is answered.
type Transport string

// The transports that render tool errors.
const (
	MCP  Transport = "mcp"
	REST Transport = "rest"
)

// Context is what an error is answered for. The zero Context is "no tool,
// no transport known": the generic words (the README's error table, the
// admin socket).
type Context struct {
	// Tool is the tool's name; "" for a failure no tool answered (an
	// unrouted REST request, a transport-level refusal).
	Tool      string
	Transport Transport
	// ReadOnly is true for a tool that changes nothing: there is nothing
	// to keep or renew on a retry.
	ReadOnly bool
	// MutationKey names the tool's mutation-id argument (seed 000's
	// idempotency_key, seed 002's operation_key); "" when it has none.
	MutationKey string
	// MutationKeyOptional is true when the tool may be called without it
	// (seed 002's operation_key).
	MutationKeyOptional bool
	// BoxKeyArgument is true when the tool takes the key as box_key too;
	// seed-002 tools take it only as a Bearer header.
	BoxKeyArgument bool
	// HelpCall is the call that returns this tool's contract on this
	// transport (`get_help {"tool":"x"}`, `GET /v1/help/x`), and Help the
	// envelope's help sentence; "" for the generic words.
	HelpCall, Help string
	// IntegerRevisions renders current_revision as a JSON integer (seed
	// 002's expected_version) instead of a decimal string (seed 000).
	IntegerRevisions bool
}

// help is the envelope's help for c.
func (c Context) help() string {
	if c.Help != "" {
		return c.Help
	}
	return "See get_help for the tool's contract (tools/list or the route table names the tools)."
}

// contract is how a next action refers to the tool's contract.
func (c Context) contract() string {
	if c.HelpCall != "" {
		return "the tool's contract (" + c.HelpCall + ")"
	}
	return "the tool's contract (get_help)"
}

// key is the name of the mutation id in c's words.
func (c Context) key() string {
	if c.MutationKey != "" {
		return c.MutationKey
	}
	return "mutation ID"
}

// keyless reports a retry with no mutation id to keep or renew: a read,
// or a tool without one (agent_prime is idempotent by the key).
func (c Context) keyless() bool { return c.ReadOnly || (c.Tool != "" && c.MutationKey == "") }

// retry ends a next action with the call made again, with a new mutation
// id (a new action) or the same (the same action, retried).
func (c Context) retry(same bool) string {
	switch {
	case c.keyless() && same:
		return "retry the same call."
	case c.keyless():
		return "call again."
	case c.MutationKeyOptional && same:
		return "retry with the same " + c.key() + " (without one, a retry may act twice)."
	case c.MutationKeyOptional:
		return "retry, with a new " + c.key() + " if you send one."
	case same:
		return "retry with the same " + c.key() + "."
	}
	return "retry with a new " + c.key() + "."
}

// keyWhere says where a key is sent in c.
func (c Context) keyWhere() string {
	switch {
	case c.Tool != "" && !c.BoxKeyArgument:
		return "as 'Authorization: Bearer <key>'"
	case c.Transport == REST:
		return "as 'Authorization: Bearer <key>' or box_key in the JSON body"
	case c.Transport == MCP:
		return "as 'Authorization: Bearer <key>' on the connection or box_key in the arguments"
	}
	return "as 'Authorization: Bearer <key>' or box_key"
}

// nextActions is each code's next action in a context: a wording that
// depends on the tool or the transport goes here.
var nextActions = map[Code]func(Context) string{
	AuthFailed: func(c Context) string {
		return "Send a valid agent key " + c.keyWhere() + "; ask the box owner for a new key if yours was rotated or revoked."
	},
	NotPrimed: func(c Context) string {
		// The model itself can carry its session only as the session_id
		// argument over MCP (Mcp-Session-Id is the host's), and as the
		// session header over REST.
		switch c.Transport {
		case MCP:
			return "Call agent_prime, then pass its session_id argument on every call."
		case REST:
			return "Call agent_prime, then send its session_id as the Agentbox-Session header on every call."
		}
		return "Call agent_prime, then pass the session_id it returns on every call."
	},
	ProfileOutdated: func(Context) string {
		return "Call profile_get to read your updated profile, then retry."
	},
	NotFoundOrForbidden: func(Context) string { return "Check the id; list what you can see to find it." },
	RoomArchived:        func(Context) string { return "The room is read-only; post elsewhere." },
	InvalidArgument: func(c Context) string {
		return "Fix the named field as " + c.contract() + " describes and " + c.retry(false)
	},
	LimitExceeded: func(c Context) string {
		return "Reduce the named field below its limit and " + c.retry(false)
	},
	RevisionConflict: func(c Context) string {
		if c.IntegerRevisions {
			return "Read the current version (current_revision), merge deliberately, send it as expected_version and " + c.retry(false)
		}
		return "Read current state, merge deliberately, and " + c.retry(false)
	},
	IdempotencyConflict: func(c Context) string {
		if c.keyless() {
			return "This call conflicts with a different earlier request; check the arguments and call again."
		}
		return "This " + c.key() + " was used for a different request; use a new " + c.key() + " for a new action."
	},
	CursorInvalid: func(Context) string { return "Start again without a cursor." },
	RateLimited: func(c Context) string {
		wait := "Wait retry_after_seconds"
		if c.Transport == REST {
			wait = "Wait the Retry-After seconds"
		}
		return wait + ", then " + c.retry(true)
	},
	TemporarilyUnavailable: func(c Context) string {
		if c.ReadOnly {
			return "Retry shortly; nothing was changed."
		}
		return "Retry shortly: the outcome of this call is uncertain, so " + c.retry(true)
	},
	StorageFailure: func(c Context) string {
		if c.ReadOnly {
			return "Retry shortly; if it keeps failing, tell the box owner."
		}
		return "Do not assume the action was persisted; " + c.retry(true)
	},
}

// NextAction is the code's next action as answered in c.
func (code Code) NextAction(c Context) string {
	if f, ok := nextActions[code]; ok {
		return f(c)
	}
	return "Retry shortly; if it keeps failing, tell the box owner."
}

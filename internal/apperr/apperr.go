// Package apperr is the closed set of error codes a tool can answer with,
// and the typed error that carries one from the domain to the transports.
//
// The domain returns *Error for every failure a caller can act on. Anything
// else reaching a transport is unexpected: it is logged with its cause and
// answered as STORAGE_FAILURE with a generic message (see Normalize), so no
// engine detail, expression or rejected value can leak into a response.
package apperr

import (
	"context"
	"errors"
	"strconv"
)

// Code is one of the seed-000 error codes.
type Code string

// The codes, exactly as seed 000 lists them.
const (
	AuthFailed             Code = "AUTH_FAILED"
	NotPrimed              Code = "NOT_PRIMED"
	ProfileOutdated        Code = "PROFILE_OUTDATED"
	NotFoundOrForbidden    Code = "NOT_FOUND_OR_FORBIDDEN"
	RoomArchived           Code = "ROOM_ARCHIVED"
	InvalidArgument        Code = "INVALID_ARGUMENT"
	LimitExceeded          Code = "LIMIT_EXCEEDED"
	RevisionConflict       Code = "REVISION_CONFLICT"
	IdempotencyConflict    Code = "IDEMPOTENCY_CONFLICT"
	CursorInvalid          Code = "CURSOR_INVALID"
	RateLimited            Code = "RATE_LIMITED"
	TemporarilyUnavailable Code = "TEMPORARILY_UNAVAILABLE"
	StorageFailure         Code = "STORAGE_FAILURE"
)

// Codes lists every code, for documentation and exhaustive tests.
func Codes() []Code {
	return []Code{AuthFailed, NotPrimed, ProfileOutdated, NotFoundOrForbidden, RoomArchived,
		InvalidArgument, LimitExceeded, RevisionConflict, IdempotencyConflict, CursorInvalid,
		RateLimited, TemporarilyUnavailable, StorageFailure}
}

// Retryable reports whether a caller may retry the same call unchanged.
// Only rate and busy errors advertise retryability (seed 000).
func (c Code) Retryable() bool {
	return c == RateLimited || c == TemporarilyUnavailable
}

// Error is a domain failure with a code and text safe to show any caller.
type Error struct {
	Code Code
	// Message says what went wrong, never echoing a rejected value.
	Message string
	// NextAction, when set, tells an agent what to do next in words that
	// fit wherever the error is answered; empty means the code's own next
	// action, rendered for the tool and transport (Code.NextAction).
	NextAction string
	// RetryAfter is a hint in seconds for RATE_LIMITED and
	// TEMPORARILY_UNAVAILABLE (0 means none).
	RetryAfter int
	// CurrentRevision is set on REVISION_CONFLICT when the current value is
	// known; it travels as a decimal string (seed 000) or, for seed-002
	// tools, as an integer in the transport's rendering.
	CurrentRevision *uint64
	// RequiredScope is set when a valid key lacked the OAuth scope the call
	// needs: REST then answers 403 with WWW-Authenticate naming it
	// (RFC 6750 insufficient_scope) instead of AUTH_FAILED's 401.
	RequiredScope string
	// cause is logged, never shown.
	cause error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return string(e.Code) + ": " + e.Message + ": " + e.cause.Error()
	}
	return string(e.Code) + ": " + e.Message
}

// Unwrap exposes the internal cause to errors.Is/As and to logging.
func (e *Error) Unwrap() error { return e.cause }

// New builds an error whose next action is its code's, rendered for the
// tool and transport that answer it (see Context).
func New(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Wrap builds an error that keeps cause for the log only.
func Wrap(code Code, message string, cause error) *Error {
	e := New(code, message)
	e.cause = cause
	return e
}

// WithNext replaces the next action.
func (e *Error) WithNext(next string) *Error { e.NextAction = next; return e }

// InsufficientScope is the answer to a valid key whose scope does not
// cover the call: AUTH_FAILED (the key, not the arguments, is what must
// change) carrying the scope needed, with a next action saying so.
func InsufficientScope(scope string) *Error {
	e := New(AuthFailed, "This key is read-only; the call needs the "+scope+" scope.")
	e.RequiredScope = scope
	return e.WithNext("Read tools work with this key; to change anything, ask the box owner for a key with the " +
		scope + " scope (agentbox admin rotate-key --scope " + scope + ").")
}

// Conflict is REVISION_CONFLICT carrying the current revision, for a
// seed-000 tool's expected_revision.
func Conflict(current uint64) *Error {
	return conflict(current, "The revision you sent is not the current one; nothing was written.")
}

// VersionConflict is REVISION_CONFLICT for a seed-002 tool, whose
// argument is expected_version: the code is the seed's, the words are the
// tool's.
func VersionConflict(current uint64) *Error {
	return conflict(current, "The expected_version you sent is not the current version; nothing was written.")
}

// conflict is REVISION_CONFLICT saying message and carrying the current
// revision.
func conflict(current uint64, message string) *Error {
	e := New(RevisionConflict, message)
	e.CurrentRevision = &current
	return e
}

// Invalid is INVALID_ARGUMENT naming the offending field (a field name is
// part of the contract, never a value).
func Invalid(field, problem string) *Error {
	if field == "" {
		return New(InvalidArgument, problem)
	}
	return New(InvalidArgument, field+": "+problem)
}

// Limit is LIMIT_EXCEEDED naming the field and the bound.
func Limit(field, bound string) *Error {
	return New(LimitExceeded, field+" exceeds its limit: "+bound)
}

// Forbidden is the one answer for a resource the caller may not see and for
// one that does not exist: identical bytes in both cases.
func Forbidden() *Error {
	return New(NotFoundOrForbidden, "The resource does not exist or you are not allowed to see it.")
}

// As extracts an *Error.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Normalize turns any error into an *Error fit for a response: domain
// errors pass through, a cancelled or timed-out context becomes
// TEMPORARILY_UNAVAILABLE, everything else STORAGE_FAILURE with a generic
// message. The original error stays available through Unwrap for logging.
func Normalize(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := As(err); ok {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		e := Wrap(TemporarilyUnavailable, "The request timed out; its outcome is uncertain.", err)
		e.RetryAfter = 1
		return e
	}
	return Wrap(StorageFailure, "The request could not be completed.", err)
}

// Unavailable is TEMPORARILY_UNAVAILABLE with a retry hint.
func Unavailable(cause error) *Error {
	e := Wrap(TemporarilyUnavailable, "The service is busy; nothing was written.", cause)
	e.RetryAfter = 1
	return e
}

// RevisionString renders a revision for seed-000 payloads.
func RevisionString(v uint64) string { return strconv.FormatUint(v, 10) }

// Envelope is the wire form of an error: the union of both seeds' error
// objects. REST sends it as {"error": Envelope}; MCP as the
// structuredContent.error of a result with isError true.
type Envelope struct {
	Code              Code    `json:"code"`
	Message           string  `json:"message"`
	NextAction        string  `json:"next_action"`
	Help              string  `json:"help"`
	Retryable         bool    `json:"retryable"`
	RetryAfterSeconds *int    `json:"retry_after_seconds,omitempty"`
	CurrentRevision   *string `json:"current_revision,omitempty"`
}

// Envelope renders e for the wire where no tool and no transport are
// known (the admin socket): next_action and help in their generic words.
func (e *Error) Envelope() Envelope { return e.render(Context{}) }

func (e *Error) render(c Context) Envelope {
	next := e.NextAction
	if next == "" {
		next = e.Code.NextAction(c)
	}
	env := Envelope{Code: e.Code, Message: e.Message, NextAction: next, Help: c.help(),
		Retryable: e.Code.Retryable()}
	if e.RetryAfter > 0 {
		ra := e.RetryAfter
		env.RetryAfterSeconds = &ra
	}
	if e.CurrentRevision != nil {
		s := RevisionString(*e.CurrentRevision)
		env.CurrentRevision = &s
	}
	return env
}

// envelope002 renders current_revision as the JSON integer that seed 002's
// expected_version is, instead of seed 000's decimal string.
type envelope002 struct {
	Envelope
	CurrentRevision *uint64 `json:"current_revision,omitempty"`
}

// EnvelopeIn renders e as answered in c: next_action and help in the
// words of c's tool and transport, current_revision as c's contract
// family carries revisions. Every transport renders through here so they
// cannot disagree.
func (e *Error) EnvelopeIn(c Context) any {
	if c.IntegerRevisions {
		return envelope002{Envelope: e.render(c), CurrentRevision: e.CurrentRevision}
	}
	return e.render(c)
}

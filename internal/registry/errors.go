package registry

import (
	"context"
	"log/slog"
	"slices"

	"github.com/agentbox/agentbox/internal/apperr"
)

// Errors as contracts.
//
// A tool's Errors are every code it can answer with, published in its
// contract. A declaration lists only the codes of the tool's own rules
// (NOT_FOUND_OR_FORBIDDEN, REVISION_CONFLICT, ...); New adds the codes of
// the rules that hold for every tool of a kind, so that each of those is
// stated once, here, and tested once, over the registry:
//
//	every tool                      INVALID_ARGUMENT, LIMIT_EXCEEDED (the argument gate)
//	every authenticated tool        AUTH_FAILED, RATE_LIMITED, TEMPORARILY_UNAVAILABLE
//	every authenticated mutation    STORAGE_FAILURE (a write of unknown outcome)
//	  but agent_prime               NOT_PRIMED; for a mutation PROFILE_OUTDATED
//	a tool with a mutation key      IDEMPOTENCY_CONFLICT
//
// Invoke checks every failure against the list: an undeclared code is
// logged (error level, the tool and the code, nothing of the call) and
// reported to the registry's observer, which the tests use to fail on it.
// The caller gets the error unchanged: a contract gap is ours to fix, not a
// reason to hide the answer.

// universalErrors are the codes the rules shared by t's kind add.
func universalErrors(t *Tool) []apperr.Code {
	out := []apperr.Code{apperr.InvalidArgument, apperr.LimitExceeded}
	if !t.Authenticated {
		return out
	}
	out = append(out, apperr.AuthFailed, apperr.RateLimited, apperr.TemporarilyUnavailable)
	if !t.Hints.ReadOnly {
		out = append(out, apperr.StorageFailure)
	}
	if t.Name == "agent_prime" {
		// It opens the session the others need, and reads the profile.
		return out
	}
	out = append(out, apperr.NotPrimed)
	if !t.Hints.ReadOnly {
		out = append(out, apperr.ProfileOutdated)
	}
	if c := ErrorContext(t, apperr.MCP); c.MutationKey != "" {
		out = append(out, apperr.IdempotencyConflict)
	}
	return out
}

// completeErrors sets t.Errors to its declared codes and the universal
// ones, in apperr.Codes order. A code declared twice, or declared although
// a shared rule already adds it, is a malformed declaration.
func completeErrors(t *Tool) {
	universal := universalErrors(t)
	for i, c := range t.Errors {
		if slices.Contains(universal, c) {
			panic("registry: tool " + t.Name + ": " + string(c) + " is added by a rule every tool of its kind shares; do not declare it")
		}
		if slices.Contains(t.Errors[:i], c) {
			panic("registry: tool " + t.Name + ": " + string(c) + " declared twice")
		}
		if !slices.Contains(apperr.Codes(), c) {
			panic("registry: tool " + t.Name + ": " + string(c) + " is not an error code")
		}
	}
	all := append(slices.Clone(t.Errors), universal...)
	var out []apperr.Code
	for _, c := range apperr.Codes() {
		if slices.Contains(all, c) {
			out = append(out, c)
		}
	}
	t.Errors = out
}

// Observer sees every failed Invoke: the tool, the code it answered
// (empty for an error that is not an *apperr.Error) and whether the tool
// declares it.
type Observer func(t *Tool, code apperr.Code, declared bool)

// Option configures New.
type Option func(*options)

type options struct{ observer Observer }

// WithObserver has every failed Invoke of the registry's tools reported to
// fn, after the undeclared-code check.
func WithObserver(fn Observer) Option { return func(o *options) { o.observer = fn } }

// OwnErrors are the codes of t's own rules: its Errors without those the
// rules shared by its kind add.
func (t *Tool) OwnErrors() []apperr.Code {
	universal := universalErrors(t)
	var out []apperr.Code
	for _, c := range t.Errors {
		if !slices.Contains(universal, c) {
			out = append(out, c)
		}
	}
	return out
}

// SharedErrors are the codes the rules shared by t's kind add.
func (t *Tool) SharedErrors() []apperr.Code { return universalErrors(t) }

// Declares reports whether code is one of t's Errors.
func (t *Tool) Declares(code apperr.Code) bool { return slices.Contains(t.Errors, code) }

// checkError holds a failure of t to its contract.
func (t *Tool) checkError(ctx context.Context, err error) {
	var code apperr.Code
	if e, ok := apperr.As(err); ok {
		code = e.Code
	}
	declared := t.Declares(code)
	if !declared {
		slog.Default().LogAttrs(ctx, slog.LevelError, "tool answered an undeclared error code",
			slog.String("tool", t.Name), slog.String("code", string(code)))
	}
	if t.observer != nil {
		t.observer(t, code, declared)
	}
}

package hub

import "github.com/agentbox/agentbox/internal/apperr"

// Key scopes (seed 002's OAuth scopes, issue 15).
//
// A key is issued with a scope: coordination:write (every key before scopes
// existed) or coordination:read. The scope lives in the key record and is
// enforced in one place, mutate (kernel.go): every tool that changes
// coordination state goes through it, so a read-only caller is refused
// there before anything is read for the change, and no tool can forget the
// check. The refusal is AUTH_FAILED carrying the missing scope, which REST
// answers with 403 and WWW-Authenticate: Bearer error="insufficient_scope".
//
// agent_prime is declared coordination:write (it writes a session) but does
// not go through mutate: a read-only key may prime, because the session it
// writes is the caller's own and is no coordination state another agent
// sees; without it a read-only key could read nothing (read tools need a
// primed session). The same holds for the session refresh of profile_get.
const (
	ScopeRead  = "coordination:read"
	ScopeWrite = "coordination:write"
)

func checkScope(scope string) error {
	if scope != ScopeRead && scope != ScopeWrite {
		return apperr.Invalid("scope", "must be coordination:read or coordination:write")
	}
	return nil
}

// storedScope is the key record's form: write keys keep the field empty,
// as every key issued before scopes existed does.
func storedScope(scope string) string {
	if scope == ScopeRead {
		return ScopeRead
	}
	return ""
}

func insufficientScope() error { return apperr.InsufficientScope(ScopeWrite) }

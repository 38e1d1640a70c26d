package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// Mutations.
//
// Every mutation is one atomic store write that carries, besides the tool's
// own operations, the idempotency record (condition: absent) and the auth
// checks. So the effect and the memory of having had it commit together:
//
//   - a replay (same agent, tool and key, same canonical request) finds the
//     record in the call's first batched read and returns the stored
//     receipt, marked replayed, with no second effect;
//   - concurrent duplicates race on the record's absent condition: one
//     commits, the others fail on that item and re-read it as replays;
//   - a different request under a used key is IDEMPOTENCY_CONFLICT;
//   - a retry after an uncertain failure either finds the record (it did
//     commit) or runs afresh (it did not): exactly once either way.
//
// Failures are not remembered: a REVISION_CONFLICT retried with the same key
// is evaluated again, against the then-current state.

// guardedOp is a store operation with the domain error its failed condition
// means.
type guardedOp struct {
	op     store.Op
	onFail func(ctx context.Context) error
}

// replayable is implemented by every mutation output, so a replay can be
// marked.
type replayable interface{ markReplayed() }

// Replay is embedded in every mutation output.
type Replay struct {
	Replayed bool `json:"replayed,omitempty" desc:"True when this is the stored receipt of an earlier call with the same mutation ID; nothing was done again."`
}

func (r *Replay) markReplayed() { r.Replayed = true }

// mutation identifies one logical action for idempotency.
type mutation struct {
	tool string
	key  string
	hash string
}

// newMutation hashes the canonical request: the JSON of the decoded input
// without credentials or the mutation ID itself, re-encoded with every
// object's members sorted. Sorting matters for the free-form objects a
// request carries verbatim (payloads): their member order and spacing are
// the sender's spelling, not its request, and an agent that re-emits its
// arguments on a retry may spell them differently.
func newMutation(tool, key string, request any) mutation {
	sum := sha256.Sum256(canonicalJSON(encode(request)))
	return mutation{tool: tool, key: key, hash: hex.EncodeToString(sum[:])}
}

// canonicalJSON re-encodes valid JSON with sorted object members, numbers
// as written and strings in encoding/json's escaping.
func canonicalJSON(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		// b is encode's output, valid JSON by construction.
		panic("hub: canonicalizing a request: " + err.Error())
	}
	return encode(v)
}

func (m mutation) recordKey(agentID string) store.Key { return idemKey(agentID, m.tool, m.key) }

// replay interprets the idempotency record read in the call's first batch:
// done is true when the call is answered by it.
func replay[Out any, P interface {
	*Out
	replayable
}](m mutation, it *store.Item) (P, bool, error) {
	if it == nil {
		return nil, false, nil
	}
	rec, err := decode[idemRecord](it)
	if err != nil {
		return nil, true, apperr.Normalize(err)
	}
	if rec.RequestHash != m.hash || rec.Tool != m.tool {
		return nil, true, apperr.New(apperr.IdempotencyConflict, "This mutation ID was already used for a different request.")
	}
	out := P(new(Out))
	if err := json.Unmarshal(rec.Response, out); err != nil {
		return nil, true, apperr.Normalize(err)
	}
	out.markReplayed()
	return out, true, nil
}

// commit writes ops with the idempotency record and auth checks, and maps a
// failed condition to its domain error. out is the receipt stored for
// replays; on a lost race with a concurrent duplicate, commit returns that
// duplicate's receipt instead.
func commit[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, c *Caller, m mutation, ops []guardedOp, out P) (P, error) {
	return commitAs(ctx, h, c, m, ops, out, encode(out))
}

// commitAs is commit with stored, not out, as what a replay answers: the
// seed-002 tools return the resource but replay only the compact operation
// receipt (operation.go). A mutation without a key (a seed-002 call without
// operation_key) writes no idempotency record at all.
func commitAs[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, c *Caller, m mutation, ops []guardedOp, out P, stored []byte) (P, error) {
	// The record goes first: both adapters report the first failing
	// condition, and a concurrent duplicate must be recognised as such
	// even though it also fails the tool's own CAS.
	idemAt := -1
	all := make([]guardedOp, 0, len(ops)+4)
	if m.key != "" {
		idemAt = 0
		rec := idemRecord{Tool: m.tool, RequestHash: m.hash, Response: stored, At: c.Now}
		rk := m.recordKey(c.AgentID)
		all = append(all, guardedOp{op: store.Put(&store.Item{
			PK: rk.PK, SK: rk.SK, Version: 1,
			ExpiresAt: c.Now.Add(h.idemTT).Unix(),
			Data:      encode(rec),
		}, store.Absent)})
	}
	all = append(all, ops...)
	all = append(all, authChecks(c)...)

	sops := make([]store.Op, len(all))
	for i, g := range all {
		sops[i] = g.op
	}
	err := h.st.Write(ctx, sops)
	if err == nil {
		h.touch(ctx, c)
		return out, nil
	}
	if cf, ok := store.ConditionFailed(err); ok {
		if cf.Index == idemAt {
			return reread[Out, P](ctx, h, c, m)
		}
		if cf.Index >= 0 && cf.Index < len(all) && all[cf.Index].onFail != nil {
			return nil, all[cf.Index].onFail(ctx)
		}
		return nil, apperr.Wrap(apperr.StorageFailure, "The request could not be completed.", err)
	}
	if errors.Is(err, store.ErrUnavailable) && idemAt >= 0 {
		// A conflicting transaction may be a concurrent duplicate that has
		// committed by now: answer as its replay if so.
		if got, rerr := reread[Out, P](ctx, h, c, m); rerr == nil {
			return got, nil
		}
	}
	return nil, storageErr(err)
}

// reread answers a mutation whose write lost to a concurrent one holding
// the same mutation ID: the winner's receipt, or IDEMPOTENCY_CONFLICT.
func reread[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, c *Caller, m mutation) (P, error) {
	it, err := h.st.Get(ctx, m.recordKey(c.AgentID))
	if err != nil {
		return nil, storageErr(err)
	}
	if it == nil {
		return nil, apperr.Unavailable(errors.New("idempotency record vanished after a conflict"))
	}
	out, _, err := replay[Out, P](m, it)
	return out, err
}

// storageErr maps a store error to the envelope: load and contention are
// retryable TEMPORARILY_UNAVAILABLE (nothing was written), anything else is
// STORAGE_FAILURE of unknown outcome.
func storageErr(err error) error {
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return apperr.Unavailable(err)
	case errors.Is(err, store.ErrTooLarge):
		return apperr.Wrap(apperr.LimitExceeded, "The request is too large to store in one operation.", err)
	}
	return apperr.Normalize(err)
}

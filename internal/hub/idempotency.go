package hub

// Idempotency: one mechanism for both seed dialects.
//
// Seed 000 mutations require idempotency_key; seed 002 mutations take the
// optional operation_key. Either way the key is scoped to (agent, key), as
// seed 002 says ("scoped to this agent"), and the tool is part of what a
// replay compares: the same key on another tool is IDEMPOTENCY_CONFLICT.
//
// The record is the first item of the mutation's own atomic write
// (kernel.go), so the effect and the memory of having had it commit
// together:
//
//   - a replay (same agent and key, same tool and canonical request) finds
//     the record in the call's first batched read and answers the stored
//     receipt, marked replayed, with no second effect — after finishing the
//     call's intent if a crash left one unfinished;
//   - concurrent duplicates race on the record's absent condition: one
//     commits, the others fail on that item and answer its receipt;
//   - a different request under a used key is IDEMPOTENCY_CONFLICT;
//   - a retry after an uncertain failure either finds the record (it did
//     commit) or runs afresh (it did not): exactly once either way.
//
// Records hold compact receipts — ids, sequences, revisions, times, counts
// — never a copy of a body (kernel.go refuses a receipt over
// maxReceiptBytes), and expire after the hub's idempotency TTL (30 days).
// Failures are not remembered: a REVISION_CONFLICT retried with the same key
// is evaluated again, against the then-current state. A seed-002 call
// without operation_key writes no record; CAS (expected_version) keeps its
// retry from applying twice.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// maxReceiptBytes bounds a stored receipt.
const maxReceiptBytes = 1024

// replayable is implemented by every mutation output, so a replay can be
// marked.
type replayable interface{ markReplayed() }

// Replay is embedded in every seed-000 mutation output.
type Replay struct {
	Replayed bool `json:"replayed,omitempty" desc:"True when this answers a reused idempotency_key with the same request: the original receipt, nothing done again."`
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
// arguments on a retry may spell them differently. An empty key (a seed-002
// call without operation_key) makes a mutation that records nothing.
func newMutation(tool, key string, request any) mutation {
	if key == "" {
		return mutation{tool: tool}
	}
	sum := sha256.Sum256(canonicalJSON(table.Encode(request)))
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
	return table.Encode(v)
}

func (m mutation) recordKey(agentID string) store.Key { return table.IdemKey(agentID, m.key) }

func idempotencyConflict() error {
	return apperr.New(apperr.IdempotencyConflict, "This mutation ID was already used for a different request.")
}

// replay interprets the idempotency record read in the call's batch: done
// is true when the call is answered by it. An unfinished intent is
// finished first, so the receipt describes completed work.
func replay[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, m mutation, it *store.Item) (P, bool, error) {
	if it == nil {
		return nil, false, nil
	}
	rec, err := table.Decode[table.Idem](it)
	if err != nil {
		return nil, true, apperr.Normalize(err)
	}
	if rec.RequestHash != m.hash || rec.Tool != m.tool {
		return nil, true, idempotencyConflict()
	}
	if rec.Intent != "" {
		if err := h.finish(ctx, rec.Intent); err != nil {
			return nil, true, err
		}
	}
	out := P(new(Out))
	if err := json.Unmarshal(rec.Response, out); err != nil {
		return nil, true, apperr.Normalize(err)
	}
	out.markReplayed()
	return out, true, nil
}

// rereadReceipt answers a mutation whose write lost to a concurrent one
// holding the same mutation ID: the winner's receipt, or
// IDEMPOTENCY_CONFLICT.
func rereadReceipt[Out any, P interface {
	*Out
	replayable
}](ctx context.Context, h *Hub, c *call, m mutation) (P, error) {
	it, err := h.st.Get(ctx, m.recordKey(c.AgentID))
	if err != nil {
		return nil, storageErr(err)
	}
	if it == nil {
		return nil, apperr.Unavailable(errors.New("idempotency record vanished after a conflict"))
	}
	out, _, err := replay[Out, P](ctx, h, m, it)
	return out, err
}

// Seed-002 calls: the spaces and memory tools.
//
// Their arguments are exactly seed 002's {id, data}: id addresses the
// resource (the REST path parameter), data is the body. Versions are JSON
// integers. A replay answers the compact operation receipt
// {"operation": {...}, "replayed": true}, not the original body: the plan's
// receipt is operationReceipt(out).

// operationKeyPattern is seed 002's operation_key pattern; memory note
// names follow it too, which keeps them safe inside item keys.
const operationKeyPattern = `^[a-z0-9]+(-[a-z0-9]+)*$`

// OpKey is embedded in every seed-002 mutation's data.
type OpKey struct {
	OperationKey string `json:"operation_key,omitempty" desc:"Optional retry key, kept 30 days: the same payload replays the receipt, a different one conflicts." schema:"maxLength=80,pattern=^[a-z0-9]+(-[a-z0-9]+)*$"`
}

// NoData is the data of a call that has no body fields (get_space,
// get_memory): seed 002's form still carries it, as {}.
type NoData struct{}

// Operation is the compact receipt of a seed-002 mutation. Every mutation
// result carries it; a replay carries nothing else.
type Operation struct {
	Tool         string `json:"tool"`
	OperationKey string `json:"operation_key,omitempty" desc:"The operation_key of the call, if it had one."`
	ResourceID   string `json:"resource_id" desc:"The space id or note name the operation addressed."`
	Version      uint64 `json:"version" desc:"The resource's version after the operation; for delete_memory the version deleted; for membership changes the space's membership revision."`
	At           string `json:"at" desc:"When the operation committed."`
}

// Receipt is embedded in every seed-002 mutation output.
type Receipt struct {
	Operation *Operation `json:"operation,omitempty" desc:"The operation's compact receipt."`
	Replayed  bool       `json:"replayed,omitempty" desc:"True when this answers a reused operation_key with an identical payload: only the original operation's receipt, nothing done again."`
}

func (r *Receipt) markReplayed() { r.Replayed = true }

// operationReceipt is what a seed-002 mutation stores for replays.
func operationReceipt(op *Operation) any {
	return struct {
		Operation *Operation `json:"operation"`
	}{op}
}

// operation builds the receipt of a mutation of resource at version.
func operation(c *call, m mutation, resource string, version uint64) *Operation {
	return &Operation{Tool: m.tool, OperationKey: m.key, ResourceID: resource, Version: version, At: timestamp(c.Now)}
}

// checkOperationKey enforces the operation_key rule in the service.
func checkOperationKey(key string) error {
	if key == "" {
		return nil
	}
	return checkSlug("operation_key", key)
}

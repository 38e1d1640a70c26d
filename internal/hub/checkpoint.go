package hub

import (
	"context"
	"encoding/json"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// CheckpointDTO is an agent's shared checkpoint: free text and an optional
// payload the agent uses to resume work. Revision "0" means none saved.
// Cursor notes kept here do not establish read state.
type CheckpointDTO struct {
	Revision       Revision  `json:"revision"`
	BodyMD         string    `json:"body_md,omitempty"`
	Payload        Object    `json:"payload,omitempty"`
	SavedAt        string    `json:"saved_at,omitempty"`
	SessionID      string    `json:"session_id,omitempty" desc:"The session that saved this revision."`
	ProfileVersion *Revision `json:"profile_version,omitempty" desc:"The profile version that session had observed."`
}

func checkpointDTO(it *store.Item) (CheckpointDTO, error) {
	if it == nil {
		return CheckpointDTO{Revision: 0}, nil
	}
	rec, err := table.Decode[table.Checkpoint](it)
	if err != nil {
		return CheckpointDTO{}, apperr.Normalize(err)
	}
	pv := Revision(rec.ProfileVersion)
	return CheckpointDTO{Revision: Revision(it.Version), BodyMD: rec.BodyMD, Payload: Object(rec.Payload),
		SavedAt: timestamp(rec.SavedAt), SessionID: rec.SessionID, ProfileVersion: &pv}, nil
}

// CheckpointGetInput is checkpoint_get's input.
type CheckpointGetInput struct {
	Auth
}

// CheckpointOutput is the result of checkpoint_get and checkpoint_save.
type CheckpointOutput struct {
	Checkpoint CheckpointDTO `json:"checkpoint"`
	Replay
}

// CheckpointGet returns the caller's own checkpoint.
func (h *Hub) CheckpointGet(ctx context.Context, cr Credentials, _ CheckpointGetInput) (*CheckpointOutput, error) {
	var cp slot
	return read(ctx, h, cr, func(agent string, b *batch) {
		cp = b.add(table.CheckpointKey(agent))
	}, func(c *call) (*CheckpointOutput, error) {
		dto, err := checkpointDTO(c.item(cp))
		if err != nil {
			return nil, err
		}
		return &CheckpointOutput{Checkpoint: dto}, nil
	})
}

// CheckpointSaveInput is checkpoint_save's input.
type CheckpointSaveInput struct {
	Auth
	Mutation
	ExpectedRevision Revision `json:"expected_revision" desc:"The revision you last read (\"0\" when none); a stale one writes nothing."`
	BodyMD           string   `json:"body_md" desc:"Checkpoint text, Markdown, 1 byte to 16 KiB UTF-8." schema:"minLength=1,maxLength=16384"`
	Payload          Object   `json:"payload,omitempty" desc:"Optional JSON object, at most 8 KiB and depth 8."`
}

// CheckpointSave replaces the checkpoint if expected_revision is current.
// There is no merge: the caller reads, merges deliberately and saves. The
// saved revision records the authenticated session and the profile version
// it observed.
func (h *Hub) CheckpointSave(ctx context.Context, cr Credentials, in CheckpointSaveInput) (*CheckpointOutput, error) {
	if err := checkBodyMD("body_md", in.BodyMD); err != nil {
		return nil, err
	}
	payload, err := checkPayload("payload", json.RawMessage(in.Payload))
	if err != nil {
		return nil, err
	}
	in.Payload = Object(payload)
	m := newMutation("checkpoint_save", in.IdempotencyKey, struct {
		R Revision
		B string
		P json.RawMessage
	}{in.ExpectedRevision, in.BodyMD, payload})

	var cur slot
	return mutate(ctx, h, cr, m, func(agent string, b *batch) {
		cur = b.add(table.CheckpointKey(agent))
	}, func(c *call) (*CheckpointOutput, *plan, error) {
		current := version(c.item(cur))
		if uint64(in.ExpectedRevision) != current {
			return nil, nil, apperr.Conflict(current)
		}
		rec := table.Checkpoint{BodyMD: in.BodyMD, Payload: payload, SessionID: c.Session.ID,
			ProfileVersion: c.Session.ProfileVersion, SavedAt: c.Now}
		k := table.CheckpointKey(c.AgentID)
		item := &store.Item{PK: k.PK, SK: k.SK, Version: current + 1, Data: table.Encode(rec)}
		dto, err := checkpointDTO(item)
		if err != nil {
			return nil, nil, err
		}
		p := &plan{}
		p.put(item, casCond(c.item(cur)), h.conflictAt(k))
		// The receipt is the revision and its provenance, not the body.
		receipt := dto
		receipt.BodyMD, receipt.Payload = "", nil
		p.receipt = &CheckpointOutput{Checkpoint: receipt}
		return &CheckpointOutput{Checkpoint: dto}, p, nil
	})
}

// conflictAt answers a lost CAS on k with REVISION_CONFLICT and k's current
// version (re-read: the engine's ReturnValuesOnConditionCheckFailure is not
// relied on).
func (h *Hub) conflictAt(k store.Key) failure {
	return func(ctx context.Context) error { return h.currentRevisionConflict(ctx, k) }
}

// conflictOrGoneAt answers a failed CAS on an item that may also have been
// deleted concurrently (a memory note, a membership): REVISION_CONFLICT
// with its current version, or NOT_FOUND_OR_FORBIDDEN once it is gone.
func (h *Hub) conflictOrGoneAt(k store.Key) failure {
	return func(ctx context.Context) error {
		it, err := h.st.Get(ctx, k)
		if err != nil {
			return storageErr(err)
		}
		if it == nil {
			return apperr.Forbidden()
		}
		return apperr.Conflict(it.Version)
	}
}

// currentRevisionConflict reads the item's current version after a lost CAS
// (the engine's own ReturnValuesOnConditionCheckFailure is not relied on).
func (h *Hub) currentRevisionConflict(ctx context.Context, k store.Key) error {
	it, err := h.st.Get(ctx, k)
	if err != nil {
		return storageErr(err)
	}
	cur := uint64(0)
	if it != nil {
		cur = it.Version
	}
	return apperr.Conflict(cur)
}

package hub

import (
	"context"
	"encoding/json"

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
	rec, err := decode[checkpointRecord](it)
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
	c, items, err := h.begin(ctx, cr, sessionPrimed, func(agent string) []store.Key {
		return []store.Key{checkpointKey(agent)}
	})
	if err != nil {
		return nil, err
	}
	cp, err := checkpointDTO(items[0])
	if err != nil {
		return nil, err
	}
	h.touch(ctx, c)
	return &CheckpointOutput{Checkpoint: cp}, nil
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

	c, items, err := h.begin(ctx, cr, sessionPrimed, func(agent string) []store.Key {
		return []store.Key{m.recordKey(agent), checkpointKey(agent)}
	})
	if err != nil {
		return nil, err
	}
	if out, done, err := replay[CheckpointOutput](m, items[0]); done {
		return out, err
	}
	if c.Session.ProfileVersion != c.ProfileVersion {
		return nil, profileOutdated()
	}
	current := uint64(0)
	if items[1] != nil {
		current = items[1].Version
	}
	if uint64(in.ExpectedRevision) != current {
		return nil, apperr.Conflict(current)
	}

	rec := checkpointRecord{BodyMD: in.BodyMD, Payload: payload, SessionID: c.Session.ID,
		ProfileVersion: c.Session.ProfileVersion, SavedAt: c.Now}
	k := checkpointKey(c.AgentID)
	item := &store.Item{PK: k.PK, SK: k.SK, Version: current + 1, Data: encode(rec)}
	cond := store.AtVersion(current)
	if current == 0 {
		cond = store.Absent
	}
	cp, err := checkpointDTO(item)
	if err != nil {
		return nil, err
	}
	return commit(ctx, h, c, m, []guardedOp{{
		op: store.Put(item, cond),
		onFail: func(ctx context.Context) error {
			return h.currentRevisionConflict(ctx, k)
		},
	}}, &CheckpointOutput{Checkpoint: cp})
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

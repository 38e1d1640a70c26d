package hub

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// Owner keys (issue 15).
//
// An owner key lets a person watch one box through the operator view,
// read-only unless it was created with the write scope, which also lets
// the person post as the box's operator (operate.go). It is "abo_" followed by base64url(box id ‖ key id ‖ secret),
// the agent-key layout with a box in the agent's place, and only the
// SHA-256 of the secret is stored. It is deliberately not an agent key: the
// agent tools parse only "abk_" keys, so an owner key presented to a tool is
// AUTH_FAILED like any malformed key, and the owner read scope (OwnerScope,
// ownerscope.go) accepts nothing but an owner key. Records live under their own partition
// (okey#<id>), so no key id of one kind can ever resolve to a record of the
// other.
//
//	okey#<key id>  key   owner key record; GSI1 box#<box>#ownerkeys / <created>#<key id>
const ownerKeyPrefix = "abo_"

// OwnerKeyInfo describes an owner key. Key is set only when the key was
// just created: it is shown once and never stored.
type OwnerKeyInfo struct {
	KeyID     string `json:"key_id"`
	BoxID     string `json:"box_id"`
	CreatedAt string `json:"created_at"`
	// Scope is "read" (watch only) or "write" (may also post as the
	// box's operator).
	Scope string `json:"scope"`
	Key   string `json:"owner_key,omitempty"`
}

// Owner key scopes as the admin plane shows them.
const (
	OwnerRead  = "read"
	OwnerWrite = "write"
)

// ownerKeyInfo is owner key r as the admin plane shows it: never its hash.
func ownerKeyInfo(r *table.OwnerKey) *OwnerKeyInfo {
	scope := OwnerRead
	if r.Scope == table.OwnerScopeWrite {
		scope = OwnerWrite
	}
	return &OwnerKeyInfo{KeyID: r.KeyID, BoxID: r.BoxID, CreatedAt: timestamp(r.CreatedAt), Scope: scope}
}

// CreateOwnerKey issues a read-only owner key for box, returned once.
func (a *Admin) CreateOwnerKey(ctx context.Context, box string) (*OwnerKeyInfo, error) {
	return a.createOwnerKey(ctx, box, "")
}

// CreateWriteOwnerKey issues an owner key for box that may also post as
// the box's operator (operate.go), returned once.
func (a *Admin) CreateWriteOwnerKey(ctx context.Context, box string) (*OwnerKeyInfo, error) {
	return a.createOwnerKey(ctx, box, table.OwnerScopeWrite)
}

func (a *Admin) createOwnerKey(ctx context.Context, box, scope string) (*OwnerKeyInfo, error) {
	if err := checkUUID("box", box); err != nil {
		return nil, err
	}
	now := a.h.clock()
	key, kid, sha := mintKey(ownerKeyPrefix, box)
	rec := &table.OwnerKey{KeyID: kid, BoxID: box, SecretSHA: sha, CreatedAt: now, Scope: scope}
	err := a.h.st.Write(ctx, []store.Op{
		store.Check(table.BoxKey(box), store.Present),
		store.Put(rec.Item(), store.Absent),
	})
	if cf, ok := store.ConditionFailed(err); ok && cf.Index == 0 {
		return nil, unknownBox(box)
	}
	if err != nil {
		return nil, storageErr(err)
	}
	info := ownerKeyInfo(rec)
	info.Key = key
	return info, nil
}

// maxOwnerKeys bounds list-owner-keys: a box has a handful of owner keys.
const maxOwnerKeys = 200

// ListOwnerKeys lists a box's owner keys, oldest first. Never shows a key.
func (a *Admin) ListOwnerKeys(ctx context.Context, box string) ([]*OwnerKeyInfo, error) {
	if err := checkUUID("box", box); err != nil {
		return nil, err
	}
	if err := a.requireBox(ctx, box); err != nil {
		return nil, err
	}
	recs, _, err := query[table.OwnerKey](ctx, a.h.st, store.Query{Index: store.GSI1, PK: table.BoxOwnerKeysIndex(box), Limit: maxOwnerKeys})
	if err != nil {
		return nil, err
	}
	out := make([]*OwnerKeyInfo, 0, len(recs))
	for _, rec := range recs {
		out = append(out, ownerKeyInfo(rec))
	}
	return out, nil
}

// RevokeOwnerKey deletes an owner key; the next request with it is
// refused like any unknown key.
func (a *Admin) RevokeOwnerKey(ctx context.Context, keyID string) (*OwnerKeyInfo, error) {
	if err := checkUUID("key", keyID); err != nil {
		return nil, err
	}
	rec, _, err := get[table.OwnerKey](ctx, a.h.st, table.OwnerKeyKey(keyID), apperr.Forbidden())
	if err != nil {
		return nil, err
	}
	if err := a.h.st.Write(ctx, []store.Op{store.Delete(table.OwnerKeyKey(keyID), store.Unconditional)}); err != nil {
		return nil, storageErr(err)
	}
	return ownerKeyInfo(rec), nil
}

// OwnerBox authenticates an owner key and returns the box it sees. Any
// failure (malformed, unknown, revoked, an agent key) is the same
// AUTH_FAILED; nothing of the key is echoed.
func (h *Hub) OwnerBox(ctx context.Context, key string) (string, error) {
	rec, err := h.ownerKeyRecord(ctx, key)
	if err != nil {
		return "", err
	}
	return rec.BoxID, nil
}

// ownerKeyRecord authenticates an owner key and returns its record, as
// OwnerBox.
func (h *Hub) ownerKeyRecord(ctx context.Context, key string) (*table.OwnerKey, error) {
	p, ok := parseKeyWith(ownerKeyPrefix, key)
	if !ok {
		return nil, ownerAuthFailed()
	}
	it, err := h.st.Get(ctx, table.OwnerKeyKey(p.keyID))
	if err != nil {
		return nil, storageErr(err)
	}
	return p.ownerKey(it)
}

// ownerKey checks parsed owner key p against its record as read: any
// mismatch is the one AUTH_FAILED.
func (p parsedKey) ownerKey(it *store.Item) (*table.OwnerKey, error) {
	rec, err := decode[table.OwnerKey](it, ownerAuthFailed())
	if err != nil || rec.KeyID != p.keyID || rec.BoxID != p.agentID || !p.secretMatches(rec.SecretSHA) {
		return nil, ownerAuthFailed()
	}
	return rec, nil
}

// PresentedOwnerKeyID returns the key id a presented owner key names, or
// "" when s is not shaped like one. It proves nothing (the secret is not
// checked); the operator view counts failed authentications per key with
// it.
func PresentedOwnerKeyID(s string) string {
	p, ok := parseKeyWith(ownerKeyPrefix, s)
	if !ok {
		return ""
	}
	return p.keyID
}

// ownerWriter is the authority of owner key s to post as its box's
// operator (operate.go): the key's record, read in the post's batch, must
// match and carry the write scope, and the write checks it is still there.
// Every refusal — a read-only key included — is the AUTH_FAILED of an
// unknown key, as any owner key's write was before operators existed.
func (h *Hub) ownerWriter(s string) (box string, auth operatorAuthority, ok bool) {
	p, ok := parseKeyWith(ownerKeyPrefix, s)
	if !ok {
		return "", operatorAuthority{}, false
	}
	k := table.OwnerKeyKey(p.keyID)
	return p.agentID, operatorAuthority{key: k, decide: func(it *store.Item) (*operatorAuth, error) {
		rec, err := p.ownerKey(it)
		if err != nil || rec.Scope != table.OwnerScopeWrite {
			return nil, ownerAuthFailed()
		}
		return &operatorAuth{via: rec.KeyID, check: []guardedOp{{
			op: store.Check(k, store.AtVersion(it.Version)), onFail: answer(ownerAuthFailed)}}}, nil
	}}, true
}

func ownerAuthFailed() error {
	return apperr.New(apperr.AuthFailed, "Authentication failed.").
		WithNext("Send a valid owner key as 'Authorization: Bearer <key>'; ask the box owner for one (agentbox admin create-owner-key).")
}

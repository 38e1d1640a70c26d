package hub

import (
	"context"
	"crypto/rand"
	"fmt"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// The cursor key.
//
// Cursors carry an HMAC tag (internal/cursor) so that any tampering is
// CURSOR_INVALID. The secret is one item of the table, shared by every
// Lambda instance of the stack and by the local server: it is created once
// (by the first CreateBox, or by whichever call first finds it missing,
// race-safe through a create-only condition), then read as one more key of
// a call's first batched read until this process has cached it. So it costs
// no round trip after the table's first box.

const cursorSecretBytes = 32

// loadCursorKey caches the key read in a batch, creating it when absent.
func (h *Hub) loadCursorKey(ctx context.Context, it *store.Item) error {
	if it == nil {
		var err error
		if it, err = h.createCursorKey(ctx); err != nil {
			return err
		}
	}
	if len(it.Data) != cursorSecretBytes {
		return apperr.Wrap(apperr.StorageFailure, "The request could not be completed.",
			fmt.Errorf("hub: cursor key item has %d bytes", len(it.Data)))
	}
	key := append([]byte(nil), it.Data...)
	h.cursorKey.CompareAndSwap(nil, &key)
	return nil
}

// createCursorKey creates the secret if no one has, and returns the stored
// one either way.
func (h *Hub) createCursorKey(ctx context.Context) (*store.Item, error) {
	secret := make([]byte, cursorSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("hub: crypto/rand: %w", err)
	}
	k := table.CursorSecretKey()
	it := &store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: secret}
	err := h.st.Write(ctx, []store.Op{store.Put(it, store.Absent)})
	if err == nil {
		return it, nil
	}
	if _, lost := store.ConditionFailed(err); !lost {
		return nil, storageErr(err)
	}
	got, err := h.st.Get(ctx, k)
	if err != nil {
		return nil, storageErr(err)
	}
	if got == nil {
		return nil, apperr.Unavailable(fmt.Errorf("hub: cursor key vanished after a lost create"))
	}
	return got, nil
}

// ensureCursorKey makes sure the secret exists, so that agents' first calls
// only ever read it. CreateBox calls it.
func (h *Hub) ensureCursorKey(ctx context.Context) error {
	if h.cursorKey.Load() != nil {
		return nil
	}
	it, err := h.st.Get(ctx, table.CursorSecretKey())
	if err != nil {
		return storageErr(err)
	}
	return h.loadCursorKey(ctx, it)
}

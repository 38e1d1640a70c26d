package hub

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// The owner's view of what a store holds: its boxes (list-boxes), whether
// a box exists (every per-box listing asks first, so a mistyped id is an
// error rather than an empty list), and the scopes of an agent's keys.

// unknownBox is the owner's error for a box id the store does not hold. It
// names the id: the owner typed it, and an id is no secret.
func unknownBox(box string) error {
	return apperr.New(apperr.NotFoundOrForbidden, "There is no box "+box+" in this store.").
		WithNext("Run 'agentbox admin list-boxes' with the same --data or --table to see the boxes this store holds.")
}

// requireBox answers unknownBox unless box exists.
func (a *Admin) requireBox(ctx context.Context, box string) error {
	it, err := a.h.st.Get(ctx, table.BoxKey(box))
	if err != nil {
		return storageErr(err)
	}
	if it == nil {
		return unknownBox(box)
	}
	return nil
}

// boxItem is a box with its entry on the store's box index.
func boxItem(b table.Box, version uint64) *store.Item {
	k := table.BoxKey(b.ID)
	return &store.Item{PK: k.PK, SK: k.SK, Version: version, Data: table.Encode(b),
		GSI1PK: table.BoxesIndex, GSI1SK: table.OrderKey(b.Name, b.ID)}
}

// maxListedBoxes bounds list-boxes: a store holds a tenant's few boxes.
const maxListedBoxes = 1000

// ListBoxes lists the store's boxes by name. It reads an index, so a box
// created a moment ago may appear a moment later on DynamoDB; a box
// created before the index existed appears once `migrate-listings --box`
// ran on it.
func (a *Admin) ListBoxes(ctx context.Context) ([]*BoxInfo, error) {
	recs, _, err := query[table.Box](ctx, a.h.st, store.Query{Index: store.GSI1, PK: table.BoxesIndex, Limit: maxListedBoxes})
	if err != nil {
		return nil, err
	}
	out := make([]*BoxInfo, 0, len(recs))
	for _, b := range recs {
		out = append(out, &BoxInfo{BoxID: b.ID, Name: b.Name, CreatedAt: timestamp(b.CreatedAt)})
	}
	return out, nil
}

// indexBox puts a box created before the box index existed on it; it
// reports whether it moved the box.
func (a *Admin) indexBox(ctx context.Context, box string) (bool, error) {
	it, err := a.h.st.Get(ctx, table.BoxKey(box))
	if err != nil {
		return false, storageErr(err)
	}
	if it == nil {
		return false, unknownBox(box)
	}
	if it.GSI1PK == table.BoxesIndex {
		return false, nil
	}
	b, err := table.Decode[table.Box](it)
	if err != nil {
		return false, apperr.Normalize(err)
	}
	err = a.h.st.Write(ctx, []store.Op{store.Put(boxItem(*b, it.Version+1), store.AtVersion(it.Version))})
	if _, ok := store.ConditionFailed(err); ok {
		return false, nil // a concurrent migration moved it
	}
	if err != nil {
		return false, storageErr(err)
	}
	return true, nil
}

// keyInfos reads the scopes of the keys ids, one entry per id in their
// order; a key deleted meanwhile has an empty scope (see liveKeys).
func (a *Admin) keyInfos(ctx context.Context, ids []string) ([]KeyInfo, error) {
	out := make([]KeyInfo, 0, len(ids))
	for start := 0; start < len(ids); start += store.MaxBatchGetKeys {
		chunk := ids[start:min(start+store.MaxBatchGetKeys, len(ids))]
		keys := make([]store.Key, len(chunk))
		for i, id := range chunk {
			keys[i] = table.KeyRecordKey(id)
		}
		recs, _, err := getMany[table.KeyRecord](ctx, a.h.st, keys, nil)
		if err != nil {
			return nil, err
		}
		for i, kr := range recs {
			scope := ""
			if kr != nil {
				scope = ScopeWrite
				if kr.Scope == ScopeRead {
					scope = ScopeRead
				}
			}
			out = append(out, KeyInfo{KeyID: strings.ToLower(chunk[i]), Scope: scope})
		}
	}
	return out, nil
}

// liveKeys drops the entries of keys deleted meanwhile.
func liveKeys(keys []KeyInfo) []KeyInfo {
	out := keys[:0:0]
	for _, k := range keys {
		if k.Scope != "" {
			out = append(out, k)
		}
	}
	return out
}

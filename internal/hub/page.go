package hub

// Paging helpers every list shares.

import (
	"context"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
)

// pageUnder reads one keyset page (table.Page) of the items of partition
// pk whose sort keys start with prefix.
func pageUnder[P any](ctx context.Context, st store.Store, pk, prefix string, ks table.Keyset[P], cur string, limit int) ([]*store.Item, string, error) {
	rows, next, err := table.Page(ctx, st, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)}, ks, cur, limit)
	if err != nil {
		return nil, "", storageErr(err)
	}
	return rows, next, nil
}

// pageBytes applies the byte-budget rule.
func pageBytes(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultPageBytes, nil
	case n < MinPageBytes:
		return 0, apperr.Invalid("max_bytes", "must be at least 1024")
	case n > MaxPageBytes:
		return 0, apperr.Limit("max_bytes", "262144 bytes")
	}
	return n, nil
}

package hub_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// laggingIndex simulates DynamoDB's eventually consistent GSIs, which
// neither minidyn nor bbolt reproduce: once frozen, index queries answer
// from a snapshot taken at that moment while the table moves on.
type laggingIndex struct {
	store.Store
	mu     sync.Mutex
	frozen map[store.Index]map[string][]*store.Item
}

// freeze snapshots the whole index partition pk and says how many
// entries it holds.
func (l *laggingIndex) freeze(ctx context.Context, idx store.Index, pk string) (int, error) {
	items, err := l.Store.Query(ctx, store.Query{Index: idx, PK: pk})
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.frozen == nil {
		l.frozen = map[store.Index]map[string][]*store.Item{}
	}
	if l.frozen[idx] == nil {
		l.frozen[idx] = map[string][]*store.Item{}
	}
	l.frozen[idx][pk] = items
	return len(items), nil
}

func (l *laggingIndex) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	l.mu.Lock()
	snap, ok := l.frozen[q.Index][q.PK]
	l.mu.Unlock()
	if q.Index == store.Table || !ok {
		return l.Store.Query(ctx, q)
	}
	var out []*store.Item
	for _, it := range snap {
		sk := it.GSI1SK
		if q.Index == store.GSI2 {
			sk = it.GSI2SK
		}
		if (q.From != "" && sk < q.From) || (q.To != "" && sk > q.To) {
			continue
		}
		out = append(out, it)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// TestDirectoryUnderIndexLag: an agent the owner has just unlisted must not
// be shown, even while the directory index still lists it; cards come from
// the table.
func TestDirectoryUnderIndexLag(t *testing.T) {
	forEachAdapter(t, func(t *testing.T, ad teststores.Adapter) {
		var lag *laggingIndex
		f := newFixture(t, ad, func(s store.Store) store.Store { lag = &laggingIndex{Store: s}; return lag })
		adm := f.h.Admin()
		for _, ag := range []*hub.AgentInfo{f.a, f.b} {
			if _, err := adm.SetDirectoryListed(f.ctx, ag.AgentID, true); err != nil {
				t.Fatalf("SetDirectoryListed(%s, on): %v", ag.Name, err)
			}
		}
		cr := f.prime(f.a)
		before, err := f.h.DirectorySearch(f.ctx, cr, hub.DirectorySearchInput{})
		if err != nil || len(before.Cards) != 2 {
			t.Fatalf("DirectorySearch = %+v, %v; want 2 cards", before, err)
		}
		if n, err := lag.freeze(f.ctx, store.GSI2, "box#"+f.box+"#directory"); err != nil || n != 2 {
			t.Fatalf("freeze(directory index) = %d entries, %v; want the 2 listed cards", n, err)
		}
		if _, err := adm.SetDirectoryListed(f.ctx, f.b.AgentID, false); err != nil {
			t.Fatalf("SetDirectoryListed(bob, off): %v", err)
		}
		after, err := f.h.DirectorySearch(f.ctx, cr, hub.DirectorySearchInput{})
		if err != nil {
			t.Fatalf("DirectorySearch under lag: %v", err)
		}
		for _, c := range after.Cards {
			if c.AgentID == f.b.AgentID {
				t.Fatalf("DirectorySearch under index lag shows the unlisted agent %s", c.Name)
			}
		}
		if len(after.Cards) != 1 {
			t.Fatalf("DirectorySearch under lag = %d cards, want 1 (alice)", len(after.Cards))
		}
	})
}

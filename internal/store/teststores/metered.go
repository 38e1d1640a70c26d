package teststores

import (
	"context"
	"sync"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
)

// Metered wraps a store and adds up what each call would cost on DynamoDB
// through the dynamo adapter (dynamo.WriteCost, GetCost, BatchGetCost,
// QueryCost), on any engine: run a tool's scenario on it to get the tool's
// read and write units. Before each Write it reads the items the write
// replaces through the wrapped store (uncounted), since a write's cost
// depends on them. Query costs count only the live items returned, so they
// undercount partitions full of expired items.
type Metered struct {
	store.Store
	mu           sync.Mutex
	table, index dynamo.Units
}

// NewMetered wraps s.
func NewMetered(s store.Store) *Metered { return &Metered{Store: s} }

// Reset zeroes the totals and returns them: table units, then index units.
func (m *Metered) Reset() (table, index dynamo.Units) {
	m.mu.Lock()
	defer m.mu.Unlock()
	table, index = m.table, m.index
	m.table, m.index = dynamo.Units{}, dynamo.Units{}
	return table, index
}

func (m *Metered) add(table, index dynamo.Units) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.table, m.index = m.table.Add(table), m.index.Add(index)
}

// Get adds GetCost.
func (m *Metered) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	it, err := m.Store.Get(ctx, k)
	if err == nil {
		m.add(dynamo.GetCost(it), dynamo.Units{})
	}
	return it, err
}

// BatchGet adds BatchGetCost of the distinct keys.
func (m *Metered) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	items, err := m.Store.BatchGet(ctx, keys)
	if err == nil {
		seen := map[store.Key]bool{}
		var read []*store.Item
		for i, k := range keys {
			if !seen[k] {
				seen[k] = true
				read = append(read, items[i])
			}
		}
		m.add(dynamo.BatchGetCost(read), dynamo.Units{})
	}
	return items, err
}

// Query adds QueryCost of the items returned.
func (m *Metered) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	items, err := m.Store.Query(ctx, q)
	if err == nil {
		m.add(dynamo.QueryCost(items, q.Index != store.Table), dynamo.Units{})
	}
	return items, err
}

// Write adds WriteCost, given the items the write replaces.
func (m *Metered) Write(ctx context.Context, ops []store.Op) error {
	keys := make([]store.Key, len(ops))
	for i, op := range ops {
		keys[i] = op.OpKey()
	}
	before, berr := m.Store.BatchGet(ctx, keys)
	err := m.Store.Write(ctx, ops)
	if berr == nil && (err == nil || isConditionFailed(err)) {
		// A failed condition is still charged by DynamoDB.
		m.add(dynamo.WriteCost(ops, before))
	}
	return err
}

func isConditionFailed(err error) bool {
	_, ok := store.ConditionFailed(err)
	return ok
}

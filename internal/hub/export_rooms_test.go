package hub

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/google/uuid"
)

// SeedCard is one agent SeedListedAgents creates.
type SeedCard struct {
	Name, Role                  string
	DescriptionMD, ContactNotes string
}

// SeedListedAgents creates listed, active agents with cards in box, without
// keys, in writes of store.MaxWriteItems operations: the directory paging
// test needs a thousand of them, and CreateAgent's write per agent would
// make that test slow on the DynamoDB emulator. It returns their ids.
func (a *Admin) SeedListedAgents(ctx context.Context, box string, cards []SeedCard) ([]string, error) {
	ids := make([]string, 0, len(cards))
	ops := make([]store.Op, 0, store.MaxWriteItems)
	now := a.h.clock()
	for _, c := range cards {
		rec := &table.Agent{ID: uuid.NewString(), BoxID: box, Name: c.Name, Status: statusActive,
			DirectoryListed: true, CreatedAt: now}
		full, listing := cardItems(rec, &table.Card{CardListing: table.CardListing{Role: c.Role},
			DescriptionMD: c.DescriptionMD, ContactNotes: c.ContactNotes}, 0)
		ops = append(ops, store.Put(a.agentItem(rec, 1), store.Absent),
			store.Put(full, store.Absent), store.Put(listing, store.Absent))
		ids = append(ids, rec.ID)
		if len(ops)+3 > store.MaxWriteItems {
			if err := a.h.st.Write(ctx, ops); err != nil {
				return nil, err
			}
			ops = ops[:0]
		}
	}
	if len(ops) > 0 {
		if err := a.h.st.Write(ctx, ops); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

package hub

// Moving a box's spaces and cards to listing items.
//
// Since listing items exist (spaces.go, directory.go), every write of a
// space or a card puts the whole item without index keys and a small
// listing item with them. Items written before keep their old shape until
// their next write: a public space's or listed card's whole item stays in
// its index (listings still find it, at the old cost), and a private space
// has no listing item (list_spaces reads the space instead). The owner
// moves a box at once with MigrateListings (`agentbox admin
// migrate-listings --box B`): it finds the old items through the index
// partitions and the members' space rows, and rewrites each at its own
// version, conditioned on that version (a card also on its agent record's
// admin revision, as every card write is), so a tool's write racing the
// move either lands first, and the move then finds the new shape, or
// follows it, at the same version and content. Running it again finds
// nothing left to move.
//
// The same command puts messages with requests sent before the box's
// requests index existed (table.BoxRequestsIndex) on it. The old shapes
// and how each is recognised are table's (legacy.go).

import (
	"context"
	"errors"
	"github.com/agentbox/agentbox/internal/hub/table"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// ListingsMigration reports what MigrateListings moved.
type ListingsMigration struct {
	BoxID string `json:"box_id"`
	// Box reports whether the box itself was put on the store's box index
	// (list-boxes), which boxes created before it existed are not on.
	Box bool `json:"box_moved"`
	// Spaces and Cards count the spaces and listed cards moved.
	Spaces int `json:"spaces_moved"`
	Cards  int `json:"cards_moved"`
	// RequestMessages counts the messages with requests put on the box's
	// requests index (the operator view's board), which messages sent
	// before that index existed are not on.
	RequestMessages int `json:"request_messages_moved"`
}

// migratePage bounds each read of the migration.
const migratePage = 200

// MigrateListings moves the box's spaces and cards written before listing
// items existed to the new shape (see the note at the top of this file).
func (a *Admin) MigrateListings(ctx context.Context, box string) (*ListingsMigration, error) {
	if err := uuidArg("box", &box); err != nil {
		return nil, err
	}
	out := &ListingsMigration{BoxID: box}
	var err error
	if out.Box, err = a.indexBox(ctx, box); err != nil {
		return nil, err
	}
	var spaces []string
	err = a.eachEntry(ctx, store.Query{Index: store.GSI1, PK: table.BoxSpacesIndex(box)}, func(it *store.Item) error {
		if id, ok := table.OldSpaceEntry(it); ok {
			spaces = append(spaces, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	private, err := a.privateSpaces(ctx, box)
	if err != nil {
		return nil, err
	}
	for _, id := range append(spaces, private...) {
		moved, err := a.moveSpace(ctx, id)
		if err != nil {
			return nil, err
		}
		if moved {
			out.Spaces++
		}
	}
	var cards []string
	err = a.eachEntry(ctx, store.Query{Index: store.GSI2, PK: table.DirectoryIndex(box)}, func(it *store.Item) error {
		if agent, ok := table.OldCardEntry(it); ok {
			cards = append(cards, agent)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, agent := range cards {
		moved, err := a.moveCard(ctx, agent)
		if err != nil {
			return nil, err
		}
		if moved {
			out.Cards++
		}
	}
	if out.RequestMessages, err = a.indexRequests(ctx, box); err != nil {
		return nil, err
	}
	return out, nil
}

// indexRequests puts the box's request messages that are not on its
// requests index on it. Their recipients are found on the agents'
// incoming-request indexes: every recipient of a request is an agent of
// the message's box.
func (a *Admin) indexRequests(ctx context.Context, box string) (int, error) {
	var agents []string
	err := a.eachEntry(ctx, store.Query{Index: store.GSI1, PK: table.BoxAgentsIndex(box)}, func(it *store.Item) error {
		agents = append(agents, strings.TrimPrefix(it.PK, table.AgentKey("").PK))
		return nil
	})
	if err != nil {
		return 0, err
	}
	type message struct {
		sentAt int64
		to     []string
	}
	msgs := map[string]*message{}
	var order []string
	for _, agent := range agents {
		err := a.eachEntry(ctx, store.Query{Index: store.GSI1, PK: table.IncomingIndex(agent)}, func(it *store.Item) error {
			r, err := table.Decode[table.Request](it)
			if err != nil {
				return apperr.Normalize(err)
			}
			m := msgs[r.MessageID]
			if m == nil {
				m = &message{sentAt: r.SentAt.UnixNano()}
				msgs[r.MessageID] = m
				order = append(order, r.MessageID)
			}
			m.to = append(m.to, r.RecipientID)
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	moved := 0
	for _, id := range order {
		m := msgs[id]
		ok, err := a.indexRequest(ctx, box, id, table.RequestsSortKey(m.sentAt, id), m.to)
		if err != nil {
			return 0, err
		}
		if ok {
			moved++
		}
	}
	return moved, nil
}

// indexRequest puts one message's pointer on the box's requests index, at
// its version, and reports false when it was on it already.
func (a *Admin) indexRequest(ctx context.Context, box, id, sortKey string, to []string) (bool, error) {
	k := table.MessagePointerKey(id)
	return retry(ctx, func() (bool, error) {
		it, err := a.h.st.Get(ctx, k)
		if err != nil {
			return false, storageErr(err)
		}
		if !table.OldRequestPointer(it) {
			return false, nil
		}
		p, err := table.Decode[table.Pointer](it)
		if err != nil {
			return false, apperr.Normalize(err)
		}
		p.Requests = to
		next := *it
		next.Data, next.GSI1PK, next.GSI1SK = table.Encode(p), table.BoxRequestsIndex(box), sortKey
		err = a.h.st.Write(ctx, []store.Op{store.Put(&next, store.AtVersion(it.Version))})
		if moveAgain(err) {
			return false, errContended
		}
		if err != nil {
			return false, storageErr(err)
		}
		return true, nil
	})
}

// eachEntry calls fn on every item of q's partition, migratePage at a time.
// The sort keys the migration pages by (of the table and both indexes) are
// unique within their partitions, so paging by them misses nothing.
func (a *Admin) eachEntry(ctx context.Context, q store.Query, fn func(*store.Item) error) error {
	q.Limit = migratePage
	for {
		items, err := a.h.st.Query(ctx, q)
		if err != nil {
			return storageErr(err)
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if len(items) < migratePage {
			return nil
		}
		last := items[len(items)-1]
		switch q.Index {
		case store.GSI1:
			q.From = store.After(last.GSI1SK)
		case store.GSI2:
			q.From = store.After(last.GSI2SK)
		default:
			q.From = store.After(last.SK)
		}
	}
}

// privateSpaces returns the spaces the box's agents are members of that
// have no listing item: only private spaces have members.
func (a *Admin) privateSpaces(ctx context.Context, box string) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	err := a.eachEntry(ctx, store.Query{Index: store.GSI1, PK: table.BoxAgentsIndex(box)}, func(agentIt *store.Item) error {
		pk, prefix := table.AgentSpacePrefix(strings.TrimPrefix(agentIt.PK, table.AgentKey("").PK))
		return a.eachEntry(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)}, func(row *store.Item) error {
			_, id, _ := strings.Cut(strings.TrimPrefix(row.SK, prefix), "#")
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	var missing []string
	for start := 0; start < len(ids); start += store.MaxBatchGetKeys {
		chunk := ids[start:min(start+store.MaxBatchGetKeys, len(ids))]
		keys := make([]store.Key, len(chunk))
		for i, id := range chunk {
			keys[i] = table.SpaceListingKey(id)
		}
		got, err := a.h.st.BatchGet(ctx, keys)
		if err != nil {
			return nil, storageErr(err)
		}
		for i, it := range got {
			if it == nil {
				missing = append(missing, chunk[i])
			}
		}
	}
	return missing, nil
}

// moveSpace rewrites a space of the old shape at its version, with its
// listing item. It reports false when there was nothing to move.
func (a *Admin) moveSpace(ctx context.Context, id string) (bool, error) {
	return retry(ctx, func() (bool, error) {
		got, err := a.h.st.BatchGet(ctx, []store.Key{table.SpaceKey(id), table.SpaceListingKey(id)})
		if err != nil {
			return false, storageErr(err)
		}
		it := got[0]
		if !table.OldSpace(it, got[1]) {
			return false, nil
		}
		rec, err := table.Decode[table.Space](it)
		if err != nil {
			return false, apperr.Normalize(err)
		}
		space, listing := rec.Items(it.Version)
		err = a.h.st.Write(ctx, []store.Op{store.Put(space, store.AtVersion(it.Version)), store.Put(listing, store.Unconditional)})
		if moveAgain(err) {
			return false, errContended // updated meanwhile: read it again
		}
		if err != nil {
			return false, storageErr(err)
		}
		return true, nil
	})
}

// moveCard rewrites a listed card of the old shape at its revision, with
// its listing item. It reports false when there was nothing to move.
func (a *Admin) moveCard(ctx context.Context, agent string) (bool, error) {
	return retry(ctx, func() (bool, error) {
		got, err := a.h.st.BatchGet(ctx, []store.Key{table.CardKey(agent), table.AgentKey(agent)})
		if err != nil {
			return false, storageErr(err)
		}
		cardIt, agentIt := got[0], got[1]
		if !table.OldCard(cardIt) || agentIt == nil {
			return false, nil
		}
		card, err := table.Decode[table.Card](cardIt)
		if err != nil {
			return false, apperr.Normalize(err)
		}
		rec, err := table.Decode[table.Agent](agentIt)
		if err != nil {
			return false, apperr.Normalize(err)
		}
		full, listing := cardItems(rec, card, cardIt.Version)
		err = a.h.st.Write(ctx, []store.Op{store.Put(full, store.AtVersion(cardIt.Version)),
			store.Put(listing, store.Unconditional), store.Check(table.AgentKey(agent), store.AtVersion(agentIt.Version))})
		if moveAgain(err) {
			return false, errContended // the card or the agent changed meanwhile: read again
		}
		if err != nil {
			return false, storageErr(err)
		}
		return true, nil
	})
}

// moveAgain reports whether a move's write lost to a concurrent write (its
// condition, or a conflicting transaction) and should read again.
func moveAgain(err error) bool {
	_, failed := store.ConditionFailed(err)
	return failed || errors.Is(err, store.ErrUnavailable)
}

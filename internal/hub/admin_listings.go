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
// requests index existed (table.BoxRequestsIndex) on it, and every message
// sent before the box's activity index existed (table.BoxActivityIndex) on
// that one: it reads each room's and each DM pair's stream (a pair of the
// box's agents whose stream head exists), migratePage messages at a time,
// and rewrites the pointers off the index at their version. The old shapes
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
	// ActivityMessages counts the messages put on the box's activity index
	// (the operator view's feed), which messages sent before that index
	// existed are not on.
	ActivityMessages int `json:"activity_messages_moved"`
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
	spaces, err := a.entryIDs(ctx, store.Query{Index: store.GSI1, PK: table.BoxSpacesIndex(box)}, table.OldSpaceEntry)
	if err != nil {
		return nil, err
	}
	private, err := a.privateSpaces(ctx, box)
	if err != nil {
		return nil, err
	}
	if out.Spaces, err = moveAll(ctx, append(spaces, private...), a.moveSpace); err != nil {
		return nil, err
	}
	cards, err := a.entryIDs(ctx, store.Query{Index: store.GSI2, PK: table.DirectoryIndex(box)}, table.OldCardEntry)
	if err != nil {
		return nil, err
	}
	if out.Cards, err = moveAll(ctx, cards, a.moveCard); err != nil {
		return nil, err
	}
	if out.RequestMessages, err = a.indexRequests(ctx, box); err != nil {
		return nil, err
	}
	if out.ActivityMessages, err = a.indexActivity(ctx, box); err != nil {
		return nil, err
	}
	return out, nil
}

// indexActivity puts the box's messages whose pointers are off its
// activity index on it: the streams of its rooms and of every pair of its
// agents (the pairs' heads read by key, store.MaxBatchGetKeys at a time).
func (a *Admin) indexActivity(ctx context.Context, box string) (int, error) {
	rooms, err := a.entryIDs(ctx, store.Query{Index: store.GSI1, PK: table.BoxRoomsIndex(box)}, func(it *store.Item) (string, bool) {
		return strings.TrimPrefix(it.PK, table.RoomKey("").PK), true
	})
	if err != nil {
		return 0, err
	}
	agents, err := a.entryIDs(ctx, store.Query{Index: store.GSI1, PK: table.BoxAgentsIndex(box)}, func(it *store.Item) (string, bool) {
		return strings.TrimPrefix(it.PK, table.AgentKey("").PK), true
	})
	if err != nil {
		return 0, err
	}
	var streams []string
	for _, r := range rooms {
		streams = append(streams, table.RoomStreamPK(r))
	}
	var pairs []string
	for i, x := range agents {
		for _, y := range agents[i+1:] {
			pairs = append(pairs, table.DMStreamPK(min(x, y), max(x, y)))
		}
	}
	keys := make([]store.Key, len(pairs))
	for i, pk := range pairs {
		keys[i] = table.StreamHeadKey(pk)
	}
	heads, err := a.batchAll(ctx, keys)
	if err != nil {
		return 0, err
	}
	for i, it := range heads {
		if it != nil {
			streams = append(streams, pairs[i])
		}
	}
	n := 0
	for _, pk := range streams {
		var ids []string
		sent := map[string]int64{}
		flush := func() error {
			moved, err := moveAll(ctx, ids, func(ctx context.Context, id string) (bool, error) {
				return a.indexActivityOf(ctx, box, id, sent[id])
			})
			n += moved
			ids = ids[:0]
			clear(sent)
			return err
		}
		err := a.eachEntry(ctx, store.Query{PK: pk, From: table.StreamMsgPrefix, To: store.PrefixEnd(table.StreamMsgPrefix)}, func(it *store.Item) error {
			m, err := table.Decode[table.Message](it)
			if err != nil {
				return apperr.Normalize(err)
			}
			ids, sent[m.ID] = append(ids, m.ID), m.SentAt.UnixNano()
			if len(ids) == migratePage {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// indexActivityOf puts the pointer of message id, sent at sentNS, on the
// box's activity index, at its version, and reports false when it was on
// it already.
func (a *Admin) indexActivityOf(ctx context.Context, box, id string, sentNS int64) (bool, error) {
	k := table.MessagePointerKey(id)
	return retry(ctx, func() (bool, error) {
		it, err := a.h.st.Get(ctx, k)
		if err != nil {
			return false, storageErr(err)
		}
		if !table.OldActivityPointer(it) {
			return false, nil
		}
		next := *it
		next.GSI2PK, next.GSI2SK = table.BoxActivityIndex(box), table.ActivitySortKey(sentNS, id)
		return moveWritten(a.h.st.Write(ctx, []store.Op{store.Put(&next, store.AtVersion(it.Version))}))
	})
}

// indexRequests puts the box's request messages that are not on its
// requests index on it. Their recipients are found on the agents'
// incoming-request indexes: every recipient of a request is an agent of
// the message's box.
func (a *Admin) indexRequests(ctx context.Context, box string) (int, error) {
	agents, err := a.entryIDs(ctx, store.Query{Index: store.GSI1, PK: table.BoxAgentsIndex(box)}, func(it *store.Item) (string, bool) {
		return strings.TrimPrefix(it.PK, table.AgentKey("").PK), true
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
	return moveAll(ctx, order, func(ctx context.Context, id string) (bool, error) {
		m := msgs[id]
		return a.indexRequest(ctx, box, id, table.RequestsSortKey(m.sentAt, id), m.to)
	})
}

// entryIDs lists the ids that id (table.OldSpaceEntry, ...) names among
// the entries of q.
func (a *Admin) entryIDs(ctx context.Context, q store.Query, id func(*store.Item) (string, bool)) ([]string, error) {
	var ids []string
	err := a.eachEntry(ctx, q, func(it *store.Item) error {
		if v, ok := id(it); ok {
			ids = append(ids, v)
		}
		return nil
	})
	return ids, err
}

// moveAll moves each of ids with move, in order, and counts those it
// moved.
func moveAll(ctx context.Context, ids []string, move func(context.Context, string) (bool, error)) (int, error) {
	n := 0
	for _, id := range ids {
		moved, err := move(ctx, id)
		if err != nil {
			return 0, err
		}
		if moved {
			n++
		}
	}
	return n, nil
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
		return moveWritten(a.h.st.Write(ctx, []store.Op{store.Put(&next, store.AtVersion(it.Version))}))
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
	keys := make([]store.Key, len(ids))
	for i, id := range ids {
		keys[i] = table.SpaceListingKey(id)
	}
	got, err := a.batchAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	var missing []string
	for i, it := range got {
		if it == nil {
			missing = append(missing, ids[i])
		}
	}
	return missing, nil
}

// batchAll reads the items at keys, store.MaxBatchGetKeys at a time, in
// order, nil where absent.
func (a *Admin) batchAll(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	var out []*store.Item
	for start := 0; start < len(keys); start += store.MaxBatchGetKeys {
		got, err := a.h.st.BatchGet(ctx, keys[start:min(start+store.MaxBatchGetKeys, len(keys))])
		if err != nil {
			return nil, storageErr(err)
		}
		out = append(out, got...)
	}
	return out, nil
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
		// A lost write: updated meanwhile, read it again.
		return moveWritten(a.h.st.Write(ctx, []store.Op{store.Put(space, store.AtVersion(it.Version)), store.Put(listing, store.Unconditional)}))
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
		// A lost write: the card or the agent changed meanwhile.
		return moveWritten(a.h.st.Write(ctx, []store.Op{store.Put(full, store.AtVersion(cardIt.Version)),
			store.Put(listing, store.Unconditional), store.Check(table.AgentKey(agent), store.AtVersion(agentIt.Version))}))
	})
}

// moveWritten is what a move's write answers: true once written; a write
// that lost to a concurrent one (its condition, as written says, or a
// conflicting transaction) reads again.
func moveWritten(err error) (bool, error) {
	if errors.Is(err, store.ErrUnavailable) {
		return false, errContended
	}
	err = written(err)
	return err == nil, err
}

package bolt

// The overlay: the items of journaled groups not yet checkpointed into
// bbolt (journal.go), which every read merges above its bbolt snapshot.
//
// By table key it holds the key's newest committed state (nil: deleted).
// parts lists, per table or index partition, every table key whose entry
// in that partition the overlay decides: the keys it holds items for, and
// the keys whose checkpointed item (the one in bbolt, expired or not) was
// in the partition when the overlay first changed them. A read of a
// partition ignores bbolt's entries for those keys and takes the overlay's
// items that are in the partition now, so an item that moved out of an
// index partition, or was deleted, is not read from the stale bbolt entry.
// A listed key whose item has left the partition is only skipped.
//
// Layers: while a checkpoint is in flight (journal.go), the overlay it
// checkpoints is frozen, read-only, and a fresh overlay takes the new
// groups above it. Reads take a key's state from the overlay, else from
// the frozen layer, else from bbolt, and hide in a partition the keys
// either layer lists there. The overlay's lists are kept against what
// lies below it (the frozen layer, else bbolt), so once the frozen layer
// is in bbolt they stay true.
//
// Consistency with bbolt: readers copy what they need from both layers
// under committer.mu before they open their bbolt snapshot; the leader
// adds to the overlay only before answering a group, and the checkpoint
// drops the frozen layer only after its bbolt transaction has committed.
// A reader thus sees, for each key, either a layer's state or a snapshot
// that already holds it.

import (
	"bytes"
	"slices"

	"github.com/agentbox/agentbox/internal/store"
)

// partKey names a table (Index Table) or index partition.
type partKey struct {
	ix store.Index
	pk string
}

type overlay struct {
	items map[string]*store.Item
	parts map[partKey]map[string]struct{}
}

func newOverlay() *overlay {
	return &overlay{items: map[string]*store.Item{}, parts: map[partKey]map[string]struct{}{}}
}

// lookup returns the overlay's state of tk and whether it decides it.
func (o *overlay) lookup(tk string) (*store.Item, bool) {
	it, ok := o.items[tk]
	return it, ok
}

func (o *overlay) list(p partKey, tk string) {
	set := o.parts[p]
	if set == nil {
		set = map[string]struct{}{}
		o.parts[p] = set
	}
	set[tk] = struct{}{}
}

// listItem lists tk in every partition it holds.
func (o *overlay) listItem(pk, tk string, it *store.Item) {
	o.list(partKey{store.Table, pk}, tk)
	if it == nil {
		return
	}
	if it.GSI1PK != "" && it.GSI1SK != "" {
		o.list(partKey{store.GSI1, it.GSI1PK}, tk)
	}
	if it.GSI2PK != "" && it.GSI2SK != "" {
		o.list(partKey{store.GSI2, it.GSI2PK}, tk)
	}
}

// set records tk's new state it (nil: deleted); stored is what bbolt
// holds at tk, consulted only when the overlay did not decide tk yet.
func (o *overlay) set(tk string, it *store.Item, stored func() *store.Item) {
	pk, _, _ := splitTableKey([]byte(tk))
	if _, ok := o.items[tk]; !ok {
		o.listItem(pk, tk, stored())
	}
	o.items[tk] = it
	o.listItem(pk, tk, it)
}

// inPartition reports whether it (not nil) belongs to p, and its sort key
// there: the SK for the table, the index sort key for an index.
func inPartition(it *store.Item, p partKey) (sk string, ok bool) {
	switch p.ix {
	case store.GSI1:
		return it.GSI1SK, it.GSI1PK == p.pk && it.GSI1SK != ""
	case store.GSI2:
		return it.GSI2SK, it.GSI2PK == p.pk && it.GSI2SK != ""
	}
	return it.SK, it.PK == p.pk
}

// orderKey is the bbolt key an item has in partition p, which orders a
// partition's entries as the bucket does.
func orderKey(it *store.Item, p partKey) []byte {
	switch p.ix {
	case store.GSI1:
		return indexKey(it.GSI1PK, it.GSI1SK, it.PK, it.SK)
	case store.GSI2:
		return indexKey(it.GSI2PK, it.GSI2SK, it.PK, it.SK)
	}
	return tableKey(it.PK, it.SK)
}

// partView is what a Query of one partition takes from the overlay (and
// the pending deferred Writes): the table keys whose bbolt entries it
// must ignore, and copies of the items now in the partition.
type partView struct {
	hidden map[string]struct{}
	items  []*store.Item
}

// merge adds v's items within [from, to] and live at now to scanned (the
// bbolt entries found, in order, hidden ones left out) and returns the
// first limit (0: all) in the query's order.
func (v partView) merge(scanned []*store.Item, p partKey, from, to string, reverse bool, limit int, now int64) []*store.Item {
	n := len(scanned)
	for _, it := range v.items {
		sk, _ := inPartition(it, p)
		if (to != "" && sk > to) || sk < from || !store.Live(it.ExpiresAt, now) {
			continue
		}
		scanned = append(scanned, it)
	}
	if len(scanned) == n {
		return scanned
	}
	slices.SortFunc(scanned, func(a, b *store.Item) int {
		c := bytes.Compare(orderKey(a, p), orderKey(b, p))
		if reverse {
			return -c
		}
		return c
	})
	if limit > 0 && len(scanned) > limit {
		scanned = scanned[:limit]
	}
	return scanned
}

package table

import (
	"context"

	"github.com/agentbox/agentbox/internal/cursor"
	"github.com/agentbox/agentbox/internal/store"
)

// The one keyset pager of every list.
//
// A list's cursor is an opaque, HMAC-bound position (internal/cursor): a
// Keyset names the scope the cursor is bound to and the position's shape,
// P, which is each list's own (its JSON is the cursor's, so a cursor made
// before a list moved onto the pager still reads). Page reads one page of
// a sorted partition after the position; Scan is its scan-with-budget
// variant for a list that filters what it reads (the directory,
// requests_list), so a selective filter costs a bounded number of entries
// per call and answers a short page with a cursor. Lists over a sequence
// (message and inbox histories) keep their own ascending keysets with a
// fixed first-page upper bound and use Keyset for their cursors.
//
// Store errors come back as the store gave them, for the caller to map;
// a bad cursor is cursor.Invalid().

// Keyset is one list's cursor: its scope, and how its position P maps to
// the sort key a page resumes after.
type Keyset[P any] struct {
	Scope cursor.Scope
	// Key is the sort key position p resumes after; false makes the cursor
	// CURSOR_INVALID. Nil for a list that reads P itself (Decode).
	Key func(p P) (string, bool)
	// Pos is the position that resumes after sort key sk. Nil for a list
	// that makes P itself (Encode).
	Pos func(sk string) P
}

// Decode reads cur, a cursor of this list, into its position; valid says
// whether the position is one the list makes (nil accepts any).
func (k Keyset[P]) Decode(cur string, valid func(P) bool) (P, error) {
	var p P
	if err := cursor.Decode(cur, k.Scope, &p); err != nil {
		return p, err
	}
	if valid != nil && !valid(p) {
		var zero P
		return zero, cursor.Invalid()
	}
	return p, nil
}

// Encode is the cursor of position p.
func (k Keyset[P]) Encode(p P) string { return cursor.Encode(k.Scope, p) }

// After is the sort key cur resumes after: "" for the first page (cur is
// ""), never "" otherwise.
func (k Keyset[P]) After(cur string) (string, error) {
	if cur == "" {
		return "", nil
	}
	p, err := k.Decode(cur, nil)
	if err != nil {
		return "", err
	}
	sk, ok := k.Key(p)
	if !ok || sk == "" {
		return "", cursor.Invalid()
	}
	return sk, nil
}

// Next is the cursor that resumes after sort key sk.
func (k Keyset[P]) Next(sk string) string { return k.Encode(k.Pos(sk)) }

// Querier is the part of the store a pager reads.
type Querier interface {
	Query(ctx context.Context, q store.Query) ([]*store.Item, error)
}

// SortKey is the key an item sorts by in the index (or table) q reads.
func SortKey(q store.Query, it *store.Item) string {
	switch q.Index {
	case store.GSI1:
		return it.GSI1SK
	case store.GSI2:
		return it.GSI2SK
	}
	return it.SK
}

// Resume sets q to start strictly after sk ("" leaves q as it is).
func Resume(q store.Query, sk string) store.Query {
	switch {
	case sk == "":
	case q.Reverse:
		q.To = store.Before(sk)
	default:
		q.From = store.After(sk)
	}
	return q
}

// Page reads one page of q: at most size entries after the position cur
// holds (before it when q.Reverse; "" is the start of q's range), in one
// Query of size+1 entries, and the cursor of the next page, "" when there
// is none.
func Page[P any](ctx context.Context, st Querier, q store.Query, k Keyset[P], cur string, size int) ([]*store.Item, string, error) {
	after, err := k.After(cur)
	if err != nil {
		return nil, "", err
	}
	q = Resume(q, after)
	items, more, err := Probe(ctx, st, q, size)
	if err != nil || !more {
		return items, "", err
	}
	return items, k.Next(SortKey(q, items[size-1])), nil
}

// Probe reads at most size entries of q and says whether more follow, in
// one Query of size+1 entries: a page without a cursor (a list that
// answers "truncated", or a page whose position its caller keeps).
func Probe(ctx context.Context, st Querier, q store.Query, size int) ([]*store.Item, bool, error) {
	q.Limit = size + 1
	items, err := st.Query(ctx, q)
	if err != nil {
		return nil, false, err
	}
	if len(items) <= size {
		return items, false, nil
	}
	return items[:size], true, nil
}

// Scan is Page's scan-with-budget variant: it reads q after sort key after
// ("" = the start) in chunks, each of chunk() entries (0 ends the scan:
// the budget is spent or the page is full), resuming each chunk after the
// last entry of the one before, and hands each chunk to visit, which says
// whether the page is full. end says the partition ended: a chunk came
// back short. The caller keeps its own position (the last entry it
// consumed) for its cursor.
func Scan(ctx context.Context, st Querier, q store.Query, after string, chunk func() int, visit func([]*store.Item) (full bool, err error)) (end bool, err error) {
	for {
		n := chunk()
		if n <= 0 {
			return false, nil
		}
		cq := Resume(q, after)
		cq.Limit = n
		items, err := st.Query(ctx, cq)
		if err != nil {
			return false, err
		}
		full, err := visit(items)
		if err != nil || full {
			return false, err
		}
		if len(items) < n {
			return true, nil
		}
		after = SortKey(q, items[len(items)-1])
	}
}

// SeqPos is a history's position (message and inbox histories): an
// ascending sequence keyset with a fixed first-page upper. After is the
// last sequence the listing has got to; Upper is its snapshot, the head
// when its first page was read, so a listing ends even while rows arrive
// (0 on a resume cursor: the next read fixes it at the head then).
type SeqPos struct {
	After uint64 `json:"a"`
	Upper uint64 `json:"u,omitempty"`
}

// History is a history's cursor.
type History struct{ Scope cursor.Scope }

// Start is where a read of the history begins: after floor for a first
// page (cur is ""), else at cur's position, which must be at or above
// floor and at or below its upper. A position without an upper gets head.
func (h History) Start(cur string, floor, head uint64) (SeqPos, error) {
	p := SeqPos{After: floor}
	if cur != "" {
		var err error
		p, err = Keyset[SeqPos]{Scope: h.Scope}.Decode(cur, func(p SeqPos) bool {
			return p.After >= floor && (p.Upper == 0 || p.Upper >= p.After)
		})
		if err != nil {
			return p, err
		}
	}
	if p.Upper == 0 {
		p.Upper = head
	}
	return p, nil
}

// Next is the cursor after a page of p that got to last: once last
// reaches the upper, the resume cursor (resume is true) that later reads
// only what arrives after the snapshot; else the next page's.
func (h History) Next(p SeqPos, last uint64) (cur string, resume bool) {
	if last >= p.Upper {
		return cursor.Encode(h.Scope, SeqPos{After: p.Upper}), true
	}
	return cursor.Encode(h.Scope, SeqPos{After: last, Upper: p.Upper}), false
}

// Fit is how many of n rows, in order, a page of budget bytes holds when
// row i takes size(i): at least one (a row over the budget is shown
// alone), and never one past a row that does not fit, so the page ends
// before the first row it drops and the cursor continues there.
func Fit(n, budget int, size func(i int) int) int {
	used := 0
	for i := range n {
		sz := size(i)
		if i > 0 && used+sz > budget {
			return i
		}
		used += sz
	}
	return n
}

package hub

// Retrieval receipts, compact.
//
// A receipt says "this session was shown that row" and is what lets the
// session ACK it (inbox.go). Reads record them, so reads write: one item
// per row per session would let any reader (a read-only key included)
// write as much as it can read, and a re-listing would write every row
// again. So a session's receipts are one item, ses#S / rcpts: the shown
// rows as spans of inbox sequences, each with the time it was shown. A
// read that shows nothing new writes nothing; one that does writes that
// one small item, by compare-and-set from the version it read (two reads
// of one session merge by running again). A listing's span covers the
// rows it passed over as acknowledged too: an ACK of those is
// already_acked and changes nothing.
//
// The item stays small: spans that touch and were shown at the same time
// merge; past maxReceiptSpans touching spans merge (keeping the later
// time, so a shown time never claims a row was shown before it was), and
// past twice that the lowest spans — the oldest rows, most likely
// acknowledged long ago — are forgotten: such a row must be listed again
// before it is acknowledged. The item expires receiptTTL after its
// last write.
//
// Durability. Receipts are bookkeeping, not a state change anyone races,
// so the write is deferred (store.Deferred): a listing answers once its
// receipt is decided and visible to every later read, without waiting
// for a sync of its own; the receipt is durable no later than the next
// write answered after it (the session's ACK among them). A crash before
// that loses the receipt whole, and an ACK of those rows then fails safe
// (INVALID_ARGUMENT: returned to this session first) until they are
// listed again — the rows themselves, unacknowledged, are still there.
//
// Receipts written before this item existed (ses#S / rcpt#<seq>, one per
// row) are still honoured by inbox_ack for rows the item does not cover.

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/agentbox/agentbox/internal/hub/table"
	"slices"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// receiptTTL is how long a retrieval receipt lets its session ACK.
const receiptTTL = 7 * 24 * time.Hour

// maxReceiptSpans is the number of spans a session's receipts keep
// apart when they touch; twice it bounds them all (about 3 KiB).
const maxReceiptSpans = 32

// receiptWriteAttempts bounds the compare-and-set of one read's receipts.
const receiptWriteAttempts = 8

// shownSpan is rows Lo..Hi shown at At (Unix nanoseconds).
type shownSpan struct {
	Lo uint64 `json:"l"`
	Hi uint64 `json:"h"`
	At int64  `json:"t"`
}

type receiptSet struct {
	Spans []shownSpan `json:"s"`
}

func decodeReceipts(it *store.Item) (*receiptSet, error) {
	if it == nil {
		return &receiptSet{}, nil
	}
	var r receiptSet
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return nil, apperr.Normalize(err)
	}
	return &r, nil
}

// shown returns when row was shown, and whether it was.
func (r *receiptSet) shown(row uint64) (time.Time, bool) {
	i, found := slices.BinarySearchFunc(r.Spans, row, func(s shownSpan, row uint64) int {
		switch {
		case s.Hi < row:
			return -1
		case s.Lo > row:
			return 1
		}
		return 0
	})
	if !found {
		return time.Time{}, false
	}
	return time.Unix(0, r.Spans[i].At).UTC(), true
}

// covers reports whether every span of add is shown already.
func (r *receiptSet) covers(add []shownSpan) bool {
	for _, a := range add {
		for row := a.Lo; row <= a.Hi; {
			i := slices.IndexFunc(r.Spans, func(s shownSpan) bool { return s.Lo <= row && row <= s.Hi })
			if i < 0 {
				return false
			}
			row = r.Spans[i].Hi + 1
			if row == 0 {
				break
			}
		}
	}
	return true
}

// add records spans shown at their times; rows shown already keep their
// first time.
func (r *receiptSet) add(add []shownSpan) {
	var spans []shownSpan
	for _, a := range add {
		// Cut a into the parts not shown yet.
		lo := a.Lo
		for _, s := range r.Spans {
			if s.Hi < lo || s.Lo > a.Hi {
				continue
			}
			if s.Lo > lo {
				spans = append(spans, shownSpan{lo, s.Lo - 1, a.At})
			}
			lo = s.Hi + 1
			if lo == 0 || lo > a.Hi {
				break
			}
		}
		if lo != 0 && lo <= a.Hi {
			spans = append(spans, shownSpan{lo, a.Hi, a.At})
		}
	}
	all := append(slices.Clone(r.Spans), spans...)
	slices.SortFunc(all, func(a, b shownSpan) int {
		switch {
		case a.Lo < b.Lo:
			return -1
		case a.Lo > b.Lo:
			return 1
		}
		return 0
	})
	merged := all[:0]
	for _, s := range all {
		if n := len(merged); n > 0 && merged[n-1].Hi+1 == s.Lo && merged[n-1].At == s.At {
			merged[n-1].Hi = s.Hi
			continue
		}
		merged = append(merged, s)
	}
	// Over the bound, spans that touch merge, keeping the later time;
	// spans that do not touch never merge (the gap was not shown), and
	// past twice the bound the lowest are forgotten.
	for len(merged) > maxReceiptSpans {
		i := 1
		for i < len(merged) && merged[i-1].Hi+1 != merged[i].Lo {
			i++
		}
		if i == len(merged) {
			break
		}
		merged[i-1].Hi, merged[i-1].At = merged[i].Hi, max(merged[i-1].At, merged[i].At)
		merged = slices.Delete(merged, i, i+1)
	}
	if len(merged) > 2*maxReceiptSpans {
		merged = merged[len(merged)-2*maxReceiptSpans:]
	}
	r.Spans = slices.Clip(merged)
}

// spansOf returns the spans of rows (ascending) shown at now.
func spansOf(rows []uint64, now time.Time) []shownSpan {
	at := now.UnixNano()
	var out []shownSpan
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].Hi+1 == r {
			out[n-1].Hi = r
			continue
		}
		out = append(out, shownSpan{r, r, at})
	}
	return out
}

// declareReceipts adds the presented session's receipts to a call's
// batch (the session is checked with authentication; an id that cannot
// be one reads nothing and the call answers NOT_PRIMED).
func declareReceipts(b *batch, cr Credentials) slot {
	if !validSessionID(cr.SessionID) {
		return slot{}
	}
	return b.add(table.ReceiptsKey(cr.SessionID))
}

// receiptsRead is the session's receipts as a call read them.
type receiptsRead struct {
	it   *store.Item
	read bool
}

// receiptsRead returns what the call read at s (declareReceipts).
func (c *call) receiptsRead(s slot) receiptsRead {
	return receiptsRead{it: c.item(s), read: s != slot{} && c.Session != nil && c.keys[s.i-1] == table.ReceiptsKey(c.Session.ID)}
}

// recordShown records that this session was shown spans, starting from
// its receipts as the call read them. Nothing is written when they are
// shown already.
func (h *Hub) recordShown(ctx context.Context, c *call, rc receiptsRead, add []shownSpan) error {
	if len(add) == 0 {
		return nil
	}
	it, read := rc.it, rc.read
	k := table.ReceiptsKey(c.Session.ID)
	for range receiptWriteAttempts {
		if !read {
			got, err := h.st.Get(ctx, k)
			if err != nil {
				return storageErr(err)
			}
			it = got
		}
		set, err := decodeReceipts(it)
		if err != nil {
			return err
		}
		if set.covers(add) {
			return nil
		}
		set.add(add)
		next, cond := &store.Item{PK: k.PK, SK: k.SK, Version: 1}, store.Absent
		if it != nil {
			next.Version, cond = it.Version+1, store.AtVersion(it.Version)
		}
		next.ExpiresAt, next.Data = c.Now.Add(receiptTTL).Unix(), table.Encode(set)
		// Deferred: the receipt need not be durable before the listing
		// answers (store.Deferred); see the comment at the top.
		err = h.st.Write(store.Deferred(ctx), []store.Op{store.Put(next, cond)})
		if err == nil {
			return nil
		}
		if _, ok := store.ConditionFailed(err); !ok && !errors.Is(err, store.ErrUnavailable) {
			return storageErr(err)
		}
		read = false
	}
	return apperr.Unavailable(errors.New("hub: receipts changed concurrently"))
}

// shownTo reports, for each of seqs, whether this session was shown it:
// from its receipts (it, read with authentication), and for rows they do
// not cover from receipts of one row written before them.
func (h *Hub) shownTo(ctx context.Context, c *call, it *store.Item, seqs []uint64) ([]bool, error) {
	set, err := decodeReceipts(it)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(seqs))
	var legacy []store.Key
	var at []int
	for i, s := range seqs {
		if _, ok := set.shown(s); ok {
			out[i] = true
			continue
		}
		legacy, at = append(legacy, table.ReceiptKey(c.Session.ID, s)), append(at, i)
	}
	if len(legacy) == 0 {
		return out, nil
	}
	items, err := h.st.BatchGet(ctx, legacy)
	if err != nil {
		return nil, storageErr(err)
	}
	for j, it := range items {
		out[at[j]] = it != nil
	}
	return out, nil
}

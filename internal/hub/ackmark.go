package hub

// The acknowledged watermark.
//
// An unread listing without a cursor must start at the oldest unread row,
// whatever the agent's history: scanning from row 1 past thousands of
// acknowledged rows costs reads that grow with the history, and a scan
// bounded per call answers empty pages while work is unread. So the ACK
// sequencer (agent#A / acks, which every ACK that acknowledges anything
// moves by compare-and-set) also keeps a watermark W: every row at or
// below W is acknowledged. inbox_list reads it in its first batch and
// starts after it.
//
// W moves only over rows known acknowledged, in the same write that
// acknowledges them: the rows this write marks and the rows of the request
// found acknowledged already. ACKs need not come in order, so the
// sequencer also remembers the acknowledged spans above W (known); an ACK
// that fills the gap at W+1 carries W over them. An acknowledgement is
// never undone, so anything once seen acknowledged stays so, and the
// sequencer's CAS keeps two ACKs from losing each other's spans.
//
// The spans are bounded (maxKnownSpans) so the sequencer stays one small
// item. An agent that leaves more gaps than that loses the highest spans;
// unsure is then the highest row whose acknowledgement may have been
// forgotten, and while W is below it every ACK reads up to repairRows rows
// after W and carries W over those acknowledged. A sequencer written before
// watermarks existed has no W: its first ACK starts at 0 with unsure at the
// inbox head. W is never above an unacknowledged row; it may lag behind
// the oldest one only in those two cases, and then the listing's scan
// bound still applies.

import (
	"context"
	"encoding/json"
	"github.com/agentbox/agentbox/internal/hub/table"
	"slices"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

const (
	// maxKnownSpans bounds the acknowledged spans above the watermark
	// that the sequencer remembers.
	maxKnownSpans = 32
	// repairRows bounds how many rows an ACK reads past the watermark
	// while acknowledgements above it may have been forgotten.
	repairRows  = 200
	repairFirst = 8
)

// span is an inclusive range of acknowledged rows.
type span [2]uint64

// watermark returns W (0 for a sequencer without one).
func (o *ackOpen) watermark() uint64 {
	if o.Mark == nil {
		return 0
	}
	return *o.Mark
}

// learn records rows as acknowledged: they join the known spans, W moves
// over the contiguous prefix, and spans over the bound are forgotten into
// unsure.
func (o *ackOpen) learn(rows []uint64) {
	w := o.watermark()
	spans := slices.Clone(o.Known)
	for _, r := range rows {
		if r > w {
			spans = append(spans, span{r, r})
		}
	}
	slices.SortFunc(spans, func(a, b span) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	merged := spans[:0]
	for _, s := range spans {
		if n := len(merged); n > 0 && s[0] <= merged[n-1][1]+1 {
			merged[n-1][1] = max(merged[n-1][1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	for len(merged) > 0 && merged[0][0] <= w+1 {
		w = max(w, merged[0][1])
		merged = merged[1:]
	}
	if len(merged) > maxKnownSpans {
		o.Unsure = max(o.Unsure, merged[len(merged)-1][1])
		merged = merged[:maxKnownSpans]
	}
	if o.Unsure <= w {
		o.Unsure = 0
	}
	o.Mark, o.Known = &w, slices.Clip(merged)
	if len(o.Known) == 0 {
		o.Known = nil
	}
}

// repairMark carries W over acknowledged rows after it while some
// acknowledgements above it may have been forgotten. It reads at most
// repairRows rows, a few first: the row at W+1 is most often unacknowledged
// (the gap the agent has yet to fill).
func (h *Hub) repairMark(ctx context.Context, agent string, o *ackOpen) error {
	for n, read := repairFirst, 0; o.Unsure > o.watermark() && read < repairRows; n *= 4 {
		n = min(n, repairRows-read)
		w := o.watermark()
		items, err := h.st.Query(ctx, store.Query{PK: table.InboxHeadKey(agent).PK,
			From: table.InboxRowKey(agent, w+1).SK, To: table.InboxRowKey(agent, o.Unsure).SK, Limit: n})
		if err != nil {
			return storageErr(err)
		}
		read += len(items)
		var acked []uint64
		for _, it := range items {
			row, err := table.Decode[table.Attention](it)
			if err != nil {
				return apperr.Normalize(err)
			}
			if row.AckedBy == "" && !o.knows(row.Seq) {
				o.learn(acked)
				return nil
			}
			acked = append(acked, row.Seq)
		}
		o.learn(acked)
		if len(items) < n {
			return nil
		}
	}
	return nil
}

// ackWatermark returns the watermark of the ACK sequencer read as it.
func ackWatermark(it *store.Item) (uint64, error) {
	if it == nil {
		return 0, nil
	}
	var o ackOpen
	if err := json.Unmarshal(it.Data, &o); err != nil {
		return 0, apperr.Normalize(err)
	}
	return o.watermark(), nil
}

// knows reports whether row is at or below W or in a known span.
func (o *ackOpen) knows(row uint64) bool {
	if row <= o.watermark() {
		return true
	}
	for _, s := range o.Known {
		if row >= s[0] && row <= s[1] {
			return true
		}
	}
	return false
}

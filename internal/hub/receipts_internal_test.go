package hub

import (
	"testing"
	"time"
)

// TestReceiptSet: shown rows keep their first time; touching spans of one
// time merge; past the bound touching spans merge (the later time) and,
// past twice the bound, the lowest spans are forgotten; a gap is never
// taken for shown.
func TestReceiptSet(t *testing.T) {
	var r receiptSet
	r.add([]shownSpan{{1, 5, 1}})
	r.add([]shownSpan{{3, 8, 2}})
	r.add([]shownSpan{{9, 9, 2}})
	if len(r.Spans) != 2 || r.Spans[1] != (shownSpan{6, 9, 2}) {
		t.Fatalf("spans after [1,5]@1, [3,8]@2, [9]@2 = %v, want [1,5]@1 [6,9]@2", r.Spans)
	}
	if at, ok := r.shown(4); !ok || at.UnixNano() != 1 {
		t.Errorf("shown(4) = %v, %v; want its first time", at, ok)
	}
	if _, ok := r.shown(10); ok || !r.covers([]shownSpan{{2, 9, 3}}) || r.covers([]shownSpan{{8, 10, 3}}) {
		t.Errorf("row 10 shown, or covers wrong, over %v", r.Spans)
	}

	var touching receiptSet
	for i := range uint64(100) {
		touching.add([]shownSpan{{i*10 + 1, i*10 + 10, int64(i)}})
	}
	if len(touching.Spans) > maxReceiptSpans || !touching.covers([]shownSpan{{1, 1000, 0}}) {
		t.Errorf("100 touching spans of different times kept %d spans (want at most %d) covering 1-1000: %v",
			len(touching.Spans), maxReceiptSpans, touching.covers([]shownSpan{{1, 1000, 0}}))
	}
	if at, _ := touching.shown(1000); at.UnixNano() != 99 {
		t.Errorf("row 1000 shown at %d, want 99", at.UnixNano())
	}

	var gaps receiptSet
	for i := range uint64(200) {
		gaps.add(spansOf([]uint64{2*i + 1}, timeAt(int64(i))))
	}
	if len(gaps.Spans) != 2*maxReceiptSpans {
		t.Errorf("200 separate rows kept %d spans, want %d", len(gaps.Spans), 2*maxReceiptSpans)
	}
	if _, ok := gaps.shown(399); !ok {
		t.Errorf("the newest row was forgotten")
	}
	if _, ok := gaps.shown(1); ok {
		t.Errorf("the lowest row was kept past the bound")
	}
	for row := uint64(2); row <= 400; row += 2 {
		if _, ok := gaps.shown(row); ok {
			t.Fatalf("row %d, never shown, counts as shown", row)
		}
	}
}

func timeAt(ns int64) time.Time { return time.Unix(0, ns) }

package hub

import "testing"

// TestAckWatermarkLearn: W moves over the contiguous acknowledged prefix,
// carries over spans acknowledged ahead of it, and past the span bound
// forgets the highest spans into unsure, never moving over a gap.
func TestAckWatermarkLearn(t *testing.T) {
	var o ackOpen
	o.learn([]uint64{5, 6, 7})
	if o.watermark() != 0 || len(o.Known) != 1 {
		t.Fatalf("after ACK of 5-7: W %d, known %v; want 0 and [5,7]", o.watermark(), o.Known)
	}
	o.learn([]uint64{2, 1, 3, 4})
	if o.watermark() != 7 || len(o.Known) != 0 {
		t.Fatalf("after ACK of 1-4: W %d, known %v; want 7 and none", o.watermark(), o.Known)
	}
	for r := uint64(10); r < 10+2*(maxKnownSpans+5); r += 2 {
		o.learn([]uint64{r})
	}
	if len(o.Known) != maxKnownSpans || o.Unsure == 0 || o.watermark() != 7 {
		t.Fatalf("after %d separate ACKs above a gap: W %d, %d known, unsure %d; want W 7, %d known, unsure set",
			maxKnownSpans+5, o.watermark(), len(o.Known), o.Unsure, maxKnownSpans)
	}
	if o.knows(9) || !o.knows(10) || !o.knows(7) {
		t.Errorf("knows(9, 10, 7) = %v, %v, %v; want false, true, true", o.knows(9), o.knows(10), o.knows(7))
	}
	o.learn([]uint64{8, 9})
	if o.watermark() != 10 {
		t.Errorf("after ACK of 8-9: W %d, want 10 (over the span at 10, not the gap at 11)", o.watermark())
	}
}

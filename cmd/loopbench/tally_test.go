package main

import (
	"testing"
	"time"
)

// TestTally: tally finds, in recorded runs, each way a delivery can be
// wrong — an acknowledged send never shown, a row shown twice, a row no
// send explains, rows out of inbox order or out of one sender's order —
// and measures latency from the send's start.
func TestTally(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sends := []sent{{0, 0, t0}, {0, 1, t0.Add(time.Millisecond)}, {1, 0, t0}}
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	d := func(s, i int, seq uint64, ms int) delivery { return delivery{body(s, i), seq, at(ms)} }
	for _, tc := range []struct {
		name       string
		deliveries []delivery
		want       tallied
	}{
		{"all once in order", []delivery{d(0, 0, 1, 5), d(1, 0, 2, 6), d(0, 1, 3, 9)}, tallied{}},
		{"one lost", []delivery{d(0, 0, 1, 5), d(1, 0, 2, 6)}, tallied{Lost: 1}},
		{"one shown twice", []delivery{d(0, 0, 1, 5), d(1, 0, 2, 6), d(0, 1, 3, 9), d(0, 1, 4, 10)}, tallied{Dup: 1}},
		{"one invented", []delivery{d(0, 0, 1, 5), d(1, 0, 2, 6), d(0, 1, 3, 9), d(2, 0, 4, 10)}, tallied{Invented: 1}},
		{"a body that names no send", []delivery{d(0, 0, 1, 5), d(1, 0, 2, 6), d(0, 1, 3, 9), {"hello", 4, at(10)}}, tallied{Invented: 1}},
		{"inbox sequence goes back", []delivery{d(0, 0, 2, 5), d(1, 0, 1, 6), d(0, 1, 3, 9)}, tallied{OutOfOrder: 1}},
		{"a sender's later DM first", []delivery{d(0, 1, 1, 5), d(1, 0, 2, 6), d(0, 0, 3, 9)}, tallied{OutOfOrder: 1}},
		{"nothing shown", nil, tallied{Lost: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tally(sends, tc.deliveries)
			if got.Lost != tc.want.Lost || got.Dup != tc.want.Dup || got.Invented != tc.want.Invented || got.OutOfOrder != tc.want.OutOfOrder {
				t.Errorf("tally(%s) = %v, want %v", tc.name, got, tc.want)
			}
			if got.ok() != tc.want.ok() {
				t.Errorf("tally(%s).ok() = %v, want %v", tc.name, got.ok(), tc.want.ok())
			}
		})
	}
	got := tally(sends, []delivery{d(0, 0, 1, 5), d(1, 0, 2, 6), d(0, 1, 3, 9)})
	if want := []time.Duration{5 * time.Millisecond, 6 * time.Millisecond, 8 * time.Millisecond}; len(got.Latencies) != 3 ||
		got.Latencies[0] != want[0] || got.Latencies[1] != want[1] || got.Latencies[2] != want[2] {
		t.Errorf("tally latencies = %v, want %v", got.Latencies, want)
	}
	if p := percentile(got.Latencies, 0.99); p != 8*time.Millisecond {
		t.Errorf("percentile(p99) = %v, want 8ms", p)
	}
}

// TestBodyID: a body names its send and is bodySize bytes.
func TestBodyID(t *testing.T) {
	b := body(12, 345)
	if len(b) != bodySize {
		t.Errorf("len(body(12, 345)) = %d, want %d", len(b), bodySize)
	}
	if s, i, ok := parseBodyID(b); !ok || s != 12 || i != 345 {
		t.Errorf("parseBodyID(body(12, 345)) = %d, %d, %v; want 12, 345, true", s, i, ok)
	}
	if _, _, ok := parseBodyID("s1-2x"); ok {
		t.Errorf("parseBodyID(%q) ok, want not", "s1-2x")
	}
}

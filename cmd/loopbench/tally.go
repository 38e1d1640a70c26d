package main

import (
	"fmt"
	"slices"
	"time"
)

// Accounting. The load records every send the server answered with
// success (sent) and every row the receiver was shown (delivered); tally
// compares the two. It knows nothing of MCP, so a table test can feed it
// recorded runs, a lost message among them.

// sent is one DM the server acknowledged: sender's index i of sender s,
// started (the call's start) and answered.
type sent struct {
	sender, index int
	start         time.Time
}

// delivery is one row shown to the receiver: the body it carried (which
// names its send), its inbox sequence and when the page that showed it
// arrived.
type delivery struct {
	body string
	seq  uint64
	at   time.Time
}

// tallied is what a run's records add up to. Lost, Dup, Invented and
// OutOfOrder must all be 0.
type tallied struct {
	// Lost counts acknowledged sends never shown to the receiver.
	Lost int
	// Dup counts rows shown more than once (beyond the first).
	Dup int
	// Invented counts rows that no acknowledged send explains.
	Invented int
	// OutOfOrder counts rows shown after a row with a higher inbox
	// sequence, and a sender's DM shown before one it sent earlier
	// (whose send had been answered before this one started).
	OutOfOrder int
	// Latencies holds, per delivered send, the time from its call's
	// start to the page that first showed it, sorted.
	Latencies []time.Duration
}

// ok reports whether nothing was lost, duplicated, invented or reordered.
func (t tallied) ok() bool {
	return t.Lost == 0 && t.Dup == 0 && t.Invented == 0 && t.OutOfOrder == 0
}

func (t tallied) String() string {
	return fmt.Sprintf("lost %d, duplicated %d, invented %d, out of order %d", t.Lost, t.Dup, t.Invented, t.OutOfOrder)
}

// bodyID names a send in its body; parseBodyID reads it back.
func bodyID(sender, index int) string { return fmt.Sprintf("s%d-%d.", sender, index) }

func parseBodyID(body string) (sender, index int, ok bool) {
	if _, err := fmt.Sscanf(body, "s%d-%d.", &sender, &index); err != nil {
		return 0, 0, false
	}
	return sender, index, body[:len(bodyID(sender, index))] == bodyID(sender, index)
}

// tally adds up a run: sends as answered, deliveries in the order the
// receiver was shown them.
func tally(sends []sent, deliveries []delivery) tallied {
	type key struct{ sender, index int }
	started := make(map[key]time.Time, len(sends))
	for _, s := range sends {
		started[key{s.sender, s.index}] = s.start
	}
	var t tallied
	seen := make(map[key]bool, len(sends))
	lastIndex := map[int]int{} // sender -> highest index shown
	var lastSeq uint64
	for i, d := range deliveries {
		if i > 0 && d.seq <= lastSeq {
			t.OutOfOrder++
		}
		lastSeq = max(lastSeq, d.seq)
		s, idx, ok := parseBodyID(d.body)
		k := key{s, idx}
		start, acked := started[k]
		switch {
		case !ok || !acked:
			t.Invented++
			continue
		case seen[k]:
			t.Dup++
			continue
		}
		seen[k] = true
		// Each sender sends one DM at a time, so its index order is the
		// order its sends were answered in.
		if last, any := lastIndex[s]; any && idx < last {
			t.OutOfOrder++
		}
		lastIndex[s] = max(lastIndex[s], idx)
		t.Latencies = append(t.Latencies, d.at.Sub(start))
	}
	t.Lost = len(started) - len(seen)
	slices.Sort(t.Latencies)
	return t
}

// percentile returns the p-quantile (0..1) of sorted latencies, 0 if none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

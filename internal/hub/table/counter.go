package table

import (
	"log/slog"

	"github.com/agentbox/agentbox/internal/store"
)

// Counters and heads: a counter item's Count and a head's Version are how
// the table counts (see the package doc for what each one counts). Absent
// items count zero.

// Version is an item's Version, 0 when the item is absent.
func Version(it *store.Item) uint64 {
	if it == nil {
		return 0
	}
	return it.Version
}

// Count is a counter item's count (0 when absent). Every counter moves in
// the same write as what it counts, so a count below zero is a bug (a
// decrement without its increment, or twice): it is logged at error level
// to alarm on, and read as 0 so no caller is shown a negative count. Tests
// compare the stored counters with a recount, never this reading.
func Count(it *store.Item) int64 {
	if it == nil {
		return 0
	}
	if it.Count < 0 {
		negativeCount(it, it.Count)
		return 0
	}
	return it.Count
}

// Unread is an agent's live unread count: attention rows ever written (the
// inbox head's Version) less rows ACKed (the count#acked counter), both
// moved in the same writes as the rows, so it is never below zero unless a
// write miscounted.
func Unread(head, acked *store.Item) int64 {
	n := int64(Version(head)) - Count(acked)
	if n < 0 {
		negativeCount(acked, n)
		return 0
	}
	return n
}

// negativeCount reports a counter read below zero. The counter helpers are
// shared by every reader and have no logger at hand, so it goes to slog's
// default logger (on Lambda the function's JSON logger; under agentbox
// serve, stderr).
func negativeCount(it *store.Item, n int64) {
	var pk, sk string
	if it != nil {
		pk, sk = it.PK, it.SK
	}
	slog.Error("hub: counter below zero", "pk", pk, "sk", sk, "count", n)
}

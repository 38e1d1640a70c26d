package hub_test

import (
	"testing"
	"time"
)

// loopBound bounds a test loop in rounds and in time, so that a
// regression (a cursor that never ends, a poller never told it is done)
// fails with a message instead of hanging until the package timeout.
type loopBound struct {
	t        testing.TB
	what     string
	rounds   int
	max      int
	d        time.Duration
	deadline time.Time
}

// loopLimit allows what at most max rounds within d.
func loopLimit(t testing.TB, what string, max int, d time.Duration) *loopBound {
	return &loopBound{t: t, what: what, max: max, d: d, deadline: time.Now().Add(d)}
}

// next counts a round. Past the bound it reports an error and returns
// false: the loop must then stop (return, or FailNow off any goroutine but
// the test's own).
func (b *loopBound) next() bool {
	b.t.Helper()
	b.rounds++
	switch {
	case b.rounds > b.max:
		b.t.Errorf("%s: no end after %d rounds", b.what, b.max)
		return false
	case time.Now().After(b.deadline):
		b.t.Errorf("%s: no end within %s (%d rounds)", b.what, b.d, b.rounds-1)
		return false
	}
	return true
}

// must is next for the test's own goroutine: it stops the test.
func (b *loopBound) must() {
	b.t.Helper()
	if !b.next() {
		b.t.FailNow()
	}
}

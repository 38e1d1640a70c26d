package admincli

import (
	"slices"
	"time"
)

// SetLockWait shortens how long the CLI waits for a locked store whose
// owner does not answer on the socket, so the test of that failure does not
// sleep for the production five seconds.
func SetLockWait(d time.Duration) (restore func()) {
	old := lockWait
	lockWait = d
	return func() { lockWait = old }
}

// Commands returns the command table.
func Commands() []*Command { return slices.Clone(commands) }

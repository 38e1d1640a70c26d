package webhook

import (
	"net/netip"
	"time"
)

// AllowForTest lets the test receiver's loopback address through the guard.
func (o *ClientOptions) AllowForTest(ap netip.AddrPort) { o.allow = append(o.allow, ap) }

// Shorten sets the retry policy for a test.
func (d *Dispatcher) Shorten(base, maxWait, retryFor, poll time.Duration) {
	d.base, d.maxWait, d.retryFor, d.poll = base, maxWait, retryFor, poll
}

var Backoff = backoff

package webhook

import (
	"context"
	"net/http"
	"net/netip"
	"time"
)

// AllowForTest lets the test receiver's loopback address through the guard.
func (o *ClientOptions) AllowForTest(ap netip.AddrPort) { o.Allow = append(o.Allow, ap) }

// Shorten sets the retry policy for a test.
func (d *Dispatcher) Shorten(base, maxWait, retryFor, poll time.Duration) {
	d.base, d.maxWait, d.retryFor, d.poll = base, maxWait, retryFor, poll
}

var Backoff = backoff

// NewFaulty is a dispatcher whose deliveries go to post (fault injection).
func NewFaulty(src Source, post func(ctx context.Context, url string, h http.Header, body []byte) (int, error)) *Dispatcher {
	d := New(src, nil, nil)
	d.post = post
	return d
}

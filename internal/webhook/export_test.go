package webhook

import (
	"context"
	"crypto/hmac"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
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

// The receiver's side of the signature scheme: the product only signs.

// Tolerance is how far a webhook-timestamp may be from now in Verify.
const Tolerance = 5 * time.Minute

// ErrSignature is a delivery whose signature or timestamp does not verify.
var ErrSignature = errors.New("webhook: signature does not verify")

// Verify checks a delivery as a receiver does (the test receiver): the timestamp within
// Tolerance of now and one v1 signature made with secret.
func Verify(secret, id, timestamp, signature string, body []byte, now time.Time) error {
	k, err := secretKey(secret)
	if err != nil {
		return err
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)).Abs() > Tolerance {
		return ErrSignature
	}
	want := mac(k, id, ts, body)
	for _, sig := range strings.Fields(signature) {
		if v, ok := strings.CutPrefix(sig, "v1,"); ok && hmac.Equal([]byte(v), []byte(want)) {
			return nil
		}
	}
	return ErrSignature
}

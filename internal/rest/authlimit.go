package rest

// Failed authentication is limited per source without a store write.
//
// Design note. An attempt with a wrong key costs the store one read (the
// key record) and never a write: the hub answers AUTH_FAILED before
// anything is written, and this transport counts the failure in memory,
// per instance, under two sources — the client address (RemoteAddr: the
// TCP peer locally, API Gateway's sourceIp on Lambda; never a forwarding
// header, which the client writes) and the key id the presented key names
// (so spreading a guess over many addresses does not help). Once a source
// has failed more than the AuthFailures burst, its requests are answered
// RATE_LIMITED before the hub is called, so they cost nothing at all.
//
// Per instance is enough: the point is cost, not secrecy (a key's secret
// has 256 bits; guessing is hopeless at any rate), and an instance-local
// bucket bounds each instance's store reads for failures; the stage throttle
// bounds the number of instances' requests together. A key id is inside the
// key only and is never shown, so a stranger cannot exhaust a working key's
// failure bucket without already holding the key.

import (
	"net/http"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
)

// authSources names the sources a request's failures count against.
func authSources(r *http.Request, bearer string) []string {
	return limits.AuthSources(r.RemoteAddr, hub.PresentedKeyID(bearer))
}

// authBlocked answers RATE_LIMITED when a source has failed too often.
func (s *server) authBlocked(sources []string) error {
	now := time.Now()
	for _, src := range sources {
		if blocked, wait := s.authFail.Blocked(src, now); blocked {
			e := apperr.New(apperr.RateLimited, "Too many failed authentications from this source; nothing was done.")
			e.RetryAfter = limits.RetryAfter(wait)
			return e
		}
	}
	return nil
}

// countAuthFailure charges every source of a request that failed to
// authenticate.
func (s *server) countAuthFailure(sources []string, err error) {
	if e, ok := apperr.As(err); !ok || e.Code != apperr.AuthFailed {
		return
	}
	now := time.Now()
	for _, src := range sources {
		s.authFail.Charge(src, now)
	}
}

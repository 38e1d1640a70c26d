package rest

// Failed authentication is limited per source without a store write.
//
// Design note. An attempt with a wrong key costs the store one read (the
// key record) and never a write: the hub answers AUTH_FAILED before
// anything is written, and this transport counts the failure in memory,
// per instance, under one source (limits.AuthSources): the key id a
// well-formed key names, or, for a request whose key does not parse, the
// client address (RemoteAddr: the TCP peer locally, API Gateway's sourceIp
// on Lambda; never a forwarding header, which the client writes). A
// working key is never refused because of another key's failures, also
// when the agents share an address (every local agent is 127.0.0.1; agents
// behind one NAT share one on Lambda). Once a source has failed more than
// the AuthFailures burst, its requests are answered RATE_LIMITED before
// the hub is called, so they cost nothing at all.
//
// Per instance is enough: the point is cost, not secrecy (a key's secret
// has 256 bits; guessing is hopeless at any rate), and an instance-local
// bucket bounds each instance's store reads for failures; the stage throttle
// bounds the number of instances' requests together (and so the reads of
// well-formed keys naming ever new key ids, one each). A key id is inside
// the key and shown only to the owner, so a stranger cannot exhaust a
// working key's failure bucket without having seen the key.

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

package hub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// Sessions.
//
// A session is durable (stored, so any Lambda instance validates it) and
// expires when idle: its item's ExpiresAt is last use plus the idle window.
// To keep reads free of writes, last use is refreshed only when a quarter of
// the window has passed since the last refresh (touch), after the call's own
// work and best effort. An MCP session may be opened unbound at initialize
// (the client may authenticate only through box_key arguments); agent_prime
// binds it to the authenticated agent once, and a bound session never
// changes agent.

const sessionIDPrefix = "s_"

// unboundIdle bounds how long an MCP session opened without a key may wait
// for its first agent_prime.
const unboundIdle = time.Hour

func newSessionID() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("hub: crypto/rand failed: " + err.Error())
	}
	return sessionIDPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func validSessionID(s string) bool {
	if len(s) != len(sessionIDPrefix)+32 || s[:len(sessionIDPrefix)] != sessionIDPrefix {
		return false
	}
	for i := len(sessionIDPrefix); i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (h *Hub) sessionItem(s *sessionRecord, version uint64) *store.Item {
	idle := h.idle
	if s.AgentID == "" {
		idle = unboundIdle
	}
	return &store.Item{
		PK: sessionKey(s.ID).PK, SK: sessionKey(s.ID).SK,
		Version:   version,
		ExpiresAt: s.LastSeenAt.Add(idle).Unix(),
		Data:      encode(s),
	}
}

// OpenSession starts a transport session, as MCP's initialize does. With a
// bearer key the session is bound to that agent at once (a bad key is
// AUTH_FAILED); without one it is unbound until agent_prime binds it.
func (h *Hub) OpenSession(ctx context.Context, bearer, transport string) (string, error) {
	now := h.clock()
	s := &sessionRecord{ID: newSessionID(), Transport: transport, CreatedAt: now, LastSeenAt: now}
	if bearer == "" {
		if err := h.st.Write(ctx, []store.Op{store.Put(h.sessionItem(s, 1), store.Absent)}); err != nil {
			return "", storageErr(err)
		}
		return s.ID, nil
	}
	// A bound session is a write of its agent (the rate limit) and joins
	// its session index (the quota); a concurrent registration moved the
	// index or a bucket: read again.
	return retry(ctx, func() (string, error) {
		var idx slot
		var rr *rateRead
		c, err := h.start(ctx, Credentials{Bearer: bearer}, sessionOptional, func(agent string, b *batch) {
			rr = h.limits.declare(agent, b)
			idx = h.limits.sessionSlot(agent, b)
		})
		if err != nil {
			return "", err
		}
		rateOps, err := h.admit(ctx, c, rr)
		if err != nil {
			return "", err
		}
		s.AgentID, s.BoxID = c.AgentID, c.BoxID
		reg, err := h.limits.registerSession(c.AgentID, s.ID, c.item(idx))
		if err != nil {
			return "", err
		}
		ops := append([]store.Op{store.Put(h.sessionItem(s, 1), store.Absent)}, reg...)
		ops = append(ops, opsOf(rateOps)...)
		if err := h.st.Write(ctx, ops); err != nil {
			if _, ok := store.ConditionFailed(err); ok {
				return "", errContended
			}
			return "", storageErr(err)
		}
		return s.ID, nil
	})
}

// CheckSession reports whether id names a live session that the presented
// bearer key (if any) may use. MCP calls it for requests that are not tool
// calls; tool calls check their session themselves in their batched read.
func (h *Hub) CheckSession(ctx context.Context, id, bearer string) error {
	if !validSessionID(id) {
		return apperr.New(apperr.NotPrimed, "Unknown or expired session.")
	}
	it, err := h.st.Get(ctx, sessionKey(id))
	if err != nil {
		return storageErr(err)
	}
	if it == nil {
		return apperr.New(apperr.NotPrimed, "Unknown or expired session.")
	}
	if bearer == "" {
		return nil
	}
	s, err := decode[sessionRecord](it)
	if err != nil {
		return apperr.Normalize(err)
	}
	p, ok := parseKey(bearer)
	if !ok || (s.AgentID != "" && s.AgentID != p.agentID) {
		return authFailed()
	}
	return nil
}

// CloseSession ends a session (MCP DELETE). Only the agent it is bound to
// may end a bound session; ending an unknown one is not an error.
//
// The delete is conditioned on the version that was authorized, so a
// session bound by a concurrent agent_prime is never ended on the strength
// of having been unbound; a concurrent rewrite (a touch, a resume) only
// means reading it again, never reporting success while it lives on.
func (h *Hub) CloseSession(ctx context.Context, id string, cr Credentials) error {
	if !validSessionID(id) {
		return nil
	}
	var agentID string // the authenticated caller, once checked
	for range closeSessionAttempts {
		it, err := h.st.Get(ctx, sessionKey(id))
		if err != nil {
			return storageErr(err)
		}
		if it == nil {
			return nil
		}
		s, err := decode[sessionRecord](it)
		if err != nil {
			return apperr.Normalize(err)
		}
		if s.AgentID != "" {
			if agentID == "" {
				c, _, err := h.begin(ctx, Credentials{Bearer: cr.Bearer, ArgKey: cr.ArgKey}, sessionOptional, nil)
				if err != nil {
					return err
				}
				agentID = c.AgentID
			}
			if agentID != s.AgentID {
				return authFailed()
			}
		}
		err = h.st.Write(ctx, []store.Op{store.Delete(sessionKey(id), store.AtVersion(it.Version))})
		if err == nil {
			return nil
		}
		if _, ok := store.ConditionFailed(err); !ok {
			return storageErr(err)
		}
	}
	return apperr.Unavailable(errors.New("session changed concurrently"))
}

// closeSessionAttempts bounds CloseSession's re-reads of a session that
// keeps changing under it.
const closeSessionAttempts = 5

// touch refreshes an idle session's expiry when a quarter of the window has
// passed. It is best effort: losing the race to a concurrent writer of the
// same session is fine, since that writer refreshed it too.
func (h *Hub) touch(ctx context.Context, c *Caller) {
	if c.Session == nil || c.Now.Sub(c.Session.LastSeenAt) < h.idle/4 {
		return
	}
	s := *c.Session
	s.LastSeenAt = c.Now
	err := h.st.Write(ctx, []store.Op{store.Put(h.sessionItem(&s, c.SessionVersion+1), store.AtVersion(c.SessionVersion))})
	if err != nil {
		if _, ok := store.ConditionFailed(err); !ok {
			h.log.WarnContext(ctx, "session touch failed", "err", err)
		}
		return
	}
	c.Session, c.SessionVersion = &s, c.SessionVersion+1
}

package hub

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
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
// work and best effort. agent_prime binds a session to the authenticated
// agent once, and a bound session never changes agent.
//
// # Signed MCP session ids
//
// MCP's initialize is unauthenticated, so it must cost no store write: the
// Mcp-Session-Id it issues is stateless,
//
//	"m_" + base64url(expiry ‖ nonce ‖ tag)
//	expiry: 8 bytes, big-endian Unix seconds (issue time + unboundIdle)
//	nonce:  16 random bytes
//	tag:    HMAC-SHA256(k, "m_" ‖ expiry ‖ nonce)[:16]
//	k:      HMAC-SHA256(the deployment's cursor secret, "agentbox mcp session v1")
//
// and no record exists for it: it is "unbound", grants nothing (every tool
// but agent_prime and get_help answers NOT_PRIMED) and lives until its
// expiry. agent_prime binds it by storing the session record under that
// same id, create-only, so of two agents racing for one id one wins. From
// then on the record's idle expiry governs, and every request must present
// the bound agent's key. Ending a bound session deletes the record and,
// while the id's own expiry is ahead, leaves a tombstone, so that the id
// cannot fall back to "unbound": an ended session stays ended.
//
// Session ids that agent_prime opens over REST are random ("s_"), stored at
// once (the caller authenticated).

const (
	sessionIDPrefix = "s_"
	signedIDPrefix  = "m_"
	nonceBytes      = 16
	tagBytes        = 16
	signedIDBytes   = 8 + nonceBytes + tagBytes
)

// unboundIdle bounds how long an MCP session id issued at initialize may
// wait for its first agent_prime.
const unboundIdle = time.Hour

var sessionKeyLabel = []byte("agentbox mcp session v1")

// errGone is the one answer for an unknown, expired or ended session and
// for a session bound to another agent: which of these holds is not told.
func errGone() error {
	return apperr.New(apperr.NotPrimed, "Unknown or expired session.").
		WithNext("Re-initialize the MCP connection, then call agent_prime.")
}

// ErrUnboundSession is CloseSession's answer when a session that no agent
// has bound is ended without a key: ending it would be a write anyone can
// make, and it expires on its own. MCP answers 405, the spec's "this server
// does not let you end this session".
var ErrUnboundSession = errors.New("hub: an unbound session is not ended without a key")

func newSessionID() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("hub: crypto/rand failed: " + err.Error())
	}
	return sessionIDPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func validSessionID(s string) bool {
	var n int
	switch {
	case strings.HasPrefix(s, sessionIDPrefix):
		n = 32
	case strings.HasPrefix(s, signedIDPrefix):
		n = base64.RawURLEncoding.EncodedLen(signedIDBytes)
	default:
		return false
	}
	if len(s) != 2+n {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// endedSessionKey is the tombstone of an ended signed session.
func endedSessionKey(id string) store.Key { return store.Key{PK: sessionKey(id).PK, SK: "ended"} }

// signingKey derives the session-id key from the cursor secret, reading
// the secret once per process (it is created once per table).
func (h *Hub) signingKey(ctx context.Context) ([]byte, error) {
	if err := h.ensureCursorKey(ctx); err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, *h.cursorKey.Load())
	m.Write(sessionKeyLabel)
	return m.Sum(nil), nil
}

func signedTag(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signedIDPrefix))
	m.Write(body)
	return m.Sum(nil)[:tagBytes]
}

// signedExpiry returns the expiry of a signed id whose tag checks out.
func signedExpiry(key []byte, id string) (time.Time, bool) {
	if !strings.HasPrefix(id, signedIDPrefix) || !validSessionID(id) {
		return time.Time{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(id[len(signedIDPrefix):])
	if err != nil || len(raw) != signedIDBytes {
		return time.Time{}, false
	}
	body, tag := raw[:8+nonceBytes], raw[8+nonceBytes:]
	if !hmac.Equal(tag, signedTag(key, body)) {
		return time.Time{}, false
	}
	return time.Unix(int64(binary.BigEndian.Uint64(body[:8])), 0), true
}

func (h *Hub) sessionItem(s *sessionRecord, version uint64) *store.Item {
	idle := h.idle
	if s.AgentID == "" {
		idle = unboundIdle
	}
	it := &store.Item{
		PK: sessionKey(s.ID).PK, SK: sessionKey(s.ID).SK,
		Version:   version,
		ExpiresAt: s.LastSeenAt.Add(idle).Unix(),
		Data:      encode(s),
	}
	if s.AgentID != "" {
		// The operator view's "last seen" reads the newest entry of this
		// index (opview.go); it rides on the writes a session already
		// makes (prime, touch, profile refresh), never one more.
		it.GSI1PK, it.GSI1SK = seenIndex(s.AgentID), fmt.Sprintf("%020d#%s", s.LastSeenAt.UnixNano(), s.ID)
	}
	return it
}

// seenIndex is the GSI1 partition of an agent's bound sessions, ordered by
// last use.
func seenIndex(agent string) string { return "seen#" + agent }

// OpenSession issues the signed, unbound id of a new MCP session, as
// initialize does, and writes nothing. A bearer key, when sent, is checked
// (a bad one is AUTH_FAILED) but binds nothing yet: agent_prime does.
func (h *Hub) OpenSession(ctx context.Context, bearer string) (string, error) {
	if bearer != "" {
		if _, _, err := h.begin(ctx, Credentials{Bearer: bearer}, sessionOptional, nil); err != nil {
			return "", err
		}
	}
	key, err := h.signingKey(ctx)
	if err != nil {
		return "", err
	}
	body := make([]byte, 8+nonceBytes)
	binary.BigEndian.PutUint64(body[:8], uint64(h.clock().Add(unboundIdle).Unix()))
	if _, err := rand.Read(body[8:]); err != nil {
		panic("hub: crypto/rand failed: " + err.Error())
	}
	return signedIDPrefix + base64.RawURLEncoding.EncodeToString(append(body, signedTag(key, body)...)), nil
}

// sessionState is what one read tells about a session id.
type sessionState struct {
	record  *store.Item // the stored session, nil when none
	session *sessionRecord
	caller  string // the authenticated agent; empty without a key
	alive   bool   // a record exists, or the id is signed, unexpired and not ended
}

// readSession reads a session id's record and tombstone in one round trip,
// authenticating the key when one is sent (in the same batch).
func (h *Hub) readSession(ctx context.Context, id string, cr Credentials) (*sessionState, error) {
	if !validSessionID(id) {
		return nil, errGone()
	}
	var exp time.Time
	if strings.HasPrefix(id, signedIDPrefix) {
		key, err := h.signingKey(ctx)
		if err != nil {
			return nil, err
		}
		var ok bool
		if exp, ok = signedExpiry(key, id); !ok {
			return nil, errGone()
		}
	}
	keys := []store.Key{sessionKey(id), endedSessionKey(id)}
	st := &sessionState{}
	var items []*store.Item
	var err error
	if cr.Bearer == "" && cr.ArgKey == "" {
		if items, err = h.st.BatchGet(ctx, keys); err != nil {
			return nil, storageErr(err)
		}
	} else {
		var c *Caller
		c, items, err = h.begin(ctx, Credentials{Bearer: cr.Bearer, ArgKey: cr.ArgKey}, sessionOptional,
			func(string) []store.Key { return keys })
		if err != nil {
			return nil, err
		}
		st.caller = c.AgentID
	}
	if st.record = items[0]; st.record != nil {
		if st.session, err = decode[sessionRecord](st.record); err != nil {
			return nil, apperr.Normalize(err)
		}
		st.alive = true
		return st, nil
	}
	st.alive = items[1] == nil && h.clock().Before(exp)
	return st, nil
}

// CheckSession reports whether id names a live session that the presented
// bearer key may use: nil for an unbound live session (key or not) and for
// a bound one with its agent's key; AUTH_FAILED for a bad key, or for a
// bound session presented without one; NOT_PRIMED (the transport's 404)
// for an unknown, expired or ended session and for one bound to another
// agent, which the caller cannot tell apart.
func (h *Hub) CheckSession(ctx context.Context, id, bearer string) error {
	st, err := h.readSession(ctx, id, Credentials{Bearer: bearer})
	if err != nil {
		return err
	}
	switch {
	case !st.alive:
		return errGone()
	case st.session == nil || st.session.AgentID == "":
		return nil
	case st.caller == "":
		return authFailed()
	case st.caller != st.session.AgentID:
		return errGone()
	}
	return nil
}

// SessionIDAuthentic reports whether id could name a session this
// deployment issued: a well-formed random id, or a signed id whose tag
// checks out (whatever its expiry: a bound session outlives it). It reads
// nothing once the process holds the cursor secret, so MCP refuses a forged
// or garbled id with 404 before a tool runs.
func (h *Hub) SessionIDAuthentic(ctx context.Context, id string) (bool, error) {
	if !validSessionID(id) {
		return false, nil
	}
	if !strings.HasPrefix(id, signedIDPrefix) {
		return true, nil
	}
	key, err := h.signingKey(ctx)
	if err != nil {
		return false, err
	}
	_, ok := signedExpiry(key, id)
	return ok, nil
}

// adoptSessionID returns the id agent_prime stores a new session under when
// the presented session has no record: a live signed id is bound as it is
// (the transport keeps sending it); an ended or expired one must be
// re-initialized, not silently replaced. Any other id is replaced by a new
// one, as REST does for a session that expired.
func (h *Hub) adoptSessionID(ctx context.Context, id string) (string, error) {
	if !strings.HasPrefix(id, signedIDPrefix) {
		return newSessionID(), nil
	}
	st, err := h.readSession(ctx, id, Credentials{})
	if err != nil {
		return "", err
	}
	if !st.alive {
		return "", errGone()
	}
	return id, nil
}

// CloseSession ends a session (MCP DELETE). Only the agent a session is
// bound to may end it; for anyone else it is NOT_PRIMED, as for an unknown
// one. Ending an unknown or already ended session is not an error. An
// unbound session is ended only with a valid key (ErrUnboundSession
// otherwise); ending it, like ending a bound one, leaves a tombstone.
//
// The delete is conditioned on the version that was authorized, so a
// session bound by a concurrent agent_prime is never ended on the strength
// of having been unbound; a concurrent rewrite (a touch, a resume) only
// means reading it again, never reporting success while it lives on.
func (h *Hub) CloseSession(ctx context.Context, id string, cr Credentials) error {
	if !validSessionID(id) {
		return nil
	}
	for range closeSessionAttempts {
		st, err := h.readSession(ctx, id, cr)
		if err != nil {
			if e, ok := apperr.As(err); ok && e.Code == apperr.NotPrimed {
				return nil
			}
			return err
		}
		if !st.alive {
			return nil
		}
		var ops []store.Op
		switch {
		case st.session == nil || st.session.AgentID == "":
			if st.caller == "" {
				return ErrUnboundSession
			}
		case st.caller == "":
			return authFailed()
		case st.caller != st.session.AgentID:
			return errGone()
		}
		if st.record != nil {
			ops = append(ops, store.Delete(sessionKey(id), store.AtVersion(st.record.Version)))
		}
		if strings.HasPrefix(id, signedIDPrefix) {
			k := endedSessionKey(id)
			// The tombstone lives exactly as long as the id could otherwise
			// pass as unbound.
			key, err := h.signingKey(ctx)
			if err != nil {
				return err
			}
			exp, _ := signedExpiry(key, id)
			if h.clock().Before(exp) {
				ops = append(ops, store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: exp.Unix(), Data: []byte("{}")}, store.Absent))
			}
		}
		if len(ops) == 0 {
			return nil
		}
		err = h.st.Write(ctx, ops)
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

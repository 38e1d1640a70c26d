package hub

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"github.com/agentbox/agentbox/internal/hub/table"
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
// but agent_prime and get_help answers NOT_PRIMED) and waits up to its
// expiry for a first agent_prime. agent_prime binds it by storing the
// session record under that same id, create-only, so of two agents racing
// for one id one wins. From then on the record's idle expiry governs, and
// every request must present the bound agent's key.
//
// Hosts keep sending the Mcp-Session-Id they were given (none of the
// official SDKs re-initializes on its own), so a signed id outlives its
// session: for signedLife after issue it stays usable, and once its session
// has expired (idle past its window, or never bound within its first hour)
// it is "idle": a tool answers NOT_PRIMED as a tool result, never as the
// transport's 404, and agent_prime binds the same id again, so the host
// needs no reconnect. What the id may become is kept in its state item
// (signedMark, under the key the tombstone always had), written with the
// first binding and living as long as the id: the agent that first bound it
// (only that agent binds it again: receipts are stored under the session
// id, so another agent must never inherit them) and whether it was ended.
// Ending the MCP session (DELETE) marks the id ended for the rest of its
// life: an ended MCP session stays ended, and its Mcp-Session-Id never
// names a session again. The agent's session it carried is not lost with
// it: the record, flagged TransportEnded, stays reachable as an explicit
// handle (the session_id argument or the Agentbox-Session header carrying
// the id agent_prime returned) until it expires,
// since a host that connects once per call ends every connection it made,
// the one agent_prime ran on included. Past signedLife
// nothing about the id is remembered: it is "stale", served like an idle
// one, but agent_prime opens a new session (returned as session_id) rather
// than binding it again.
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
// wait for its first agent_prime before it counts as idle.
const unboundIdle = time.Hour

// signedLife is how long after issue a signed id is remembered: bound
// again after an idle expiry, refused after an end (see the note above).
const signedLife = 30 * 24 * time.Hour

var sessionKeyLabel = []byte("agentbox mcp session v1")

// errGone is the one answer for an unknown or ended session and for a
// session bound to another agent: which of these holds is not told. It is
// NOT_PRIMED as a missing or expired session is (MCP turns it into 404).
func errGone() error { return notPrimed() }

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

// signedMark is a signed id's state item: the agent that first bound it,
// and whether it was ended. A tombstone written before bindings were
// remembered is "{}", which reads as ended.
type signedMark struct {
	AgentID string `json:"a,omitempty"`
	Ended   bool   `json:"e,omitempty"`
}

func (m *signedMark) ended() bool { return m.Ended || m.AgentID == "" }

// markItem is the state item of signed id at version, living until life.
func markItem(id string, m signedMark, version uint64, life time.Time) *store.Item {
	k := table.EndedSessionKey(id)
	return &store.Item{PK: k.PK, SK: k.SK, Version: version, ExpiresAt: life.Unix(), Data: table.Encode(&m)}
}

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

func (h *Hub) sessionItem(s *table.Session, version uint64) *store.Item {
	idle := h.idle
	if s.AgentID == "" {
		idle = unboundIdle
	}
	it := &store.Item{
		PK: table.SessionKey(s.ID).PK, SK: table.SessionKey(s.ID).SK,
		Version:   version,
		ExpiresAt: s.LastSeenAt.Add(idle).Unix(),
		Data:      table.Encode(s),
	}
	if s.AgentID != "" {
		// The operator view's "last seen" reads the newest entry of this
		// index (internal/opview); it rides on the writes a session already
		// makes (prime, touch, profile refresh), never one more.
		it.GSI1PK, it.GSI1SK = table.SeenIndex(s.AgentID), table.SeenSortKey(s.LastSeenAt, s.ID)
	}
	return it
}

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

// sessionStatus is what a session id names now.
type sessionStatus int

const (
	// sessionLive: a stored session, or a signed id in its first hour
	// that no agent has bound yet.
	sessionLive sessionStatus = iota
	// sessionIdle: a signed id, never ended, whose session expired (idle
	// past its window, or never bound in its first hour). Tools answer
	// NOT_PRIMED; agent_prime binds it again.
	sessionIdle
	// sessionStale: a signed id past signedLife, of which nothing is
	// remembered. Tools answer NOT_PRIMED; agent_prime opens a new session.
	sessionStale
	// sessionGone: ended, unknown (a random id without a record), or not
	// an id this deployment issued.
	sessionGone
)

// sessionState is what one read tells about a session id.
type sessionState struct {
	status  sessionStatus
	record  *store.Item // the stored session, nil when none
	session *table.Session
	mark    *store.Item // a signed id's state item, nil when none
	boundTo string      // the agent the session or the mark names, "" when none
	caller  string      // the authenticated agent; empty without a key
	life    time.Time   // a signed id's end of life (signedLife after issue)
}

// readSession reads a session id's record and state item in one round
// trip, authenticating the key when one is sent (in the same batch). An id
// this deployment did not issue is sessionGone without a read.
func (h *Hub) readSession(ctx context.Context, id string, cr Credentials) (*sessionState, error) {
	st := &sessionState{status: sessionGone}
	if !validSessionID(id) {
		return st, nil
	}
	signed := strings.HasPrefix(id, signedIDPrefix)
	var exp time.Time
	if signed {
		key, err := h.signingKey(ctx)
		if err != nil {
			return nil, err
		}
		var ok bool
		if exp, ok = signedExpiry(key, id); !ok {
			return st, nil
		}
		st.life = exp.Add(signedLife - unboundIdle)
	}
	keys := []store.Key{table.SessionKey(id), table.EndedSessionKey(id)}
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
	st.mark = items[1]
	if st.record = items[0]; st.record != nil {
		if st.session, err = table.Decode[table.Session](st.record); err != nil {
			return nil, apperr.Normalize(err)
		}
		st.status, st.boundTo = sessionLive, st.session.AgentID
		if st.session.TransportEnded {
			st.status = sessionGone
		}
		return st, nil
	}
	if !signed {
		return st, nil
	}
	now := h.clock()
	if st.mark != nil {
		m, err := table.Decode[signedMark](st.mark)
		if err != nil {
			return nil, apperr.Normalize(err)
		}
		if m.ended() {
			return st, nil
		}
		st.boundTo = m.AgentID
	}
	switch {
	case !now.Before(st.life):
		st.status = sessionStale
	case st.boundTo == "" && now.Before(exp):
		st.status = sessionLive
	default:
		st.status = sessionIdle
	}
	return st, nil
}

// CheckSession reports whether the transport may serve a request (other
// than a tool's) on session id with the presented bearer key: nil for a
// live, idle or stale session that no agent, or the key's agent, has bound;
// AUTH_FAILED for a bad key, or for a bound session presented without one;
// NOT_PRIMED (the transport's 404) for an ended or unknown session and for
// one bound to another agent, which the caller cannot tell apart. An idle
// session is served: whether a tool can run on it is the tool's call
// (NOT_PRIMED, which agent_prime leaves).
func (h *Hub) CheckSession(ctx context.Context, id, bearer string) error {
	st, err := h.readSession(ctx, id, Credentials{Bearer: bearer})
	if err != nil {
		return err
	}
	switch {
	case st.status == sessionGone:
		return errGone()
	case st.boundTo == "":
		return nil
	case st.caller == "":
		return authFailed()
	case st.caller != st.boundTo:
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

// adoptSessionID returns the id agent_prime stores a new session of agent
// under when the presented session (cr.SessionID) has no live record, and
// the writes that go with it:
//
//   - a signed id that is unbound, idle or bound before by this agent is
//     bound as it is (the host keeps sending it); binding it the first
//     time remembers the agent for the id's life (its state item);
//   - a signed id bound before by another agent is AUTH_FAILED, exactly
//     as while that session lived;
//   - an ended, unknown or forged one presented as Mcp-Session-Id is
//     NOT_PRIMED (MCP: 404), never silently replaced; presented as an
//     explicit handle (cr.SessionHandle), it is replaced by a new id, since
//     the model passes whatever agent_prime returns;
//   - any other id (random, or a signed one past its life) is replaced by
//     a new random one, as REST does for a session that expired.
func (h *Hub) adoptSessionID(ctx context.Context, agent string, cr Credentials) (string, []store.Op, error) {
	id := cr.SessionID
	if !strings.HasPrefix(id, signedIDPrefix) {
		return newSessionID(), nil, nil
	}
	st, err := h.readSession(ctx, id, Credentials{})
	if err != nil {
		return "", nil, err
	}
	switch {
	case st.status == sessionGone && !cr.SessionHandle:
		return "", nil, errGone()
	case st.status == sessionGone, st.status == sessionStale:
		return newSessionID(), nil, nil
	case st.boundTo != "" && st.boundTo != agent:
		return "", nil, authFailed()
	case st.record != nil:
		// Bound by a concurrent prime: its record makes this prime's
		// write fail, and the retry resumes it.
		return id, nil, nil
	case st.mark != nil:
		// Bound before by this agent. The binding is conditioned on the
		// state item as read, so that a concurrent end (DELETE) is never
		// undone by binding the id again.
		return id, []store.Op{store.Check(table.EndedSessionKey(id), store.AtVersion(st.mark.Version))}, nil
	}
	return id, []store.Op{store.Put(markItem(id, signedMark{AgentID: agent}, 1, st.life), store.Absent)}, nil
}

// CloseSession ends an MCP session (DELETE). Only the agent a session is
// bound to may end it (also once it is idle); for anyone else it is
// NOT_PRIMED, as for an unknown one. Ending an unknown or already ended
// session is not an error. A session no agent has bound is ended only with
// a valid key (ErrUnboundSession otherwise); ending a signed one, bound or
// not, marks its id ended for the rest of its life. The agent's session
// it carried stays reachable as an explicit handle until it expires
// (see the note above).
//
// The writes are conditioned on the versions that were authorized, so a
// session bound by a concurrent agent_prime is never ended on the strength
// of having been unbound; a concurrent rewrite (a touch, a resume, a
// binding again) only means reading it again, never reporting success
// while it lives on.
func (h *Hub) CloseSession(ctx context.Context, id string, cr Credentials) error {
	for range closeSessionAttempts {
		st, err := h.readSession(ctx, id, cr)
		if err != nil {
			return err
		}
		if st.status == sessionGone || st.status == sessionStale {
			// Already ended, never issued, or past its life (nothing of it
			// is remembered, and it is never bound again).
			return nil
		}
		switch {
		case st.boundTo == "":
			if st.caller == "" {
				return ErrUnboundSession
			}
		case st.caller == "":
			return authFailed()
		case st.caller != st.boundTo:
			return errGone()
		}
		var ops []store.Op
		if st.record != nil {
			// The agent's session outlives its MCP session: it stays
			// reachable as an explicit handle until it expires (a
			// host that connects once per call ends every connection).
			s := *st.session
			s.TransportEnded = true
			ops = append(ops, store.Put(h.sessionItem(&s, st.record.Version+1), store.AtVersion(st.record.Version)))
		}
		if strings.HasPrefix(id, signedIDPrefix) {
			// The id is marked ended for the rest of its life, so that it
			// is never bound again.
			cond, version := store.Absent, uint64(1)
			if st.mark != nil {
				cond, version = store.AtVersion(st.mark.Version), st.mark.Version+1
			}
			ops = append(ops, store.Put(markItem(id, signedMark{AgentID: st.boundTo, Ended: true}, version, st.life), cond))
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

package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/google/uuid"
)

// Agent keys.
//
// A key is "abk_" followed by base64url(agent id ‖ key id ‖ secret): 16, 16
// and 32 bytes. The agent and key ids are not secret; carrying them lets one
// batched read fetch the key record, the session and every agent-scoped item
// a tool needs, so an authenticated read tool costs one round trip. Only the
// SHA-256 of the secret is stored (the secret has 256 bits of entropy, so a
// slow hash buys nothing), and it is compared in constant time. Nothing of
// a presented key is ever logged or echoed.
const keyPrefix = "abk_"

type parsedKey struct {
	agentID string
	keyID   string
	secret  []byte
}

func newKey(agentID string) (key string, rec table.KeyRecord) {
	key, kid, sha := mintKey(keyPrefix, agentID)
	return key, table.KeyRecord{KeyID: kid, AgentID: agentID, SecretSHA: sha}
}

// mintKey makes a key of the given prefix for owner (an agent or, for
// owner keys, a box): the key, its id and the hex SHA-256 of its secret.
func mintKey(prefix, owner string) (key, keyID, secretSHA string) {
	oid := uuid.MustParse(owner)
	kid := uuid.New()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		panic("hub: crypto/rand failed: " + err.Error())
	}
	raw := make([]byte, 0, 64)
	raw = append(raw, oid[:]...)
	raw = append(raw, kid[:]...)
	raw = append(raw, secret...)
	sum := sha256.Sum256(secret)
	return prefix + base64.RawURLEncoding.EncodeToString(raw), kid.String(), hex.EncodeToString(sum[:])
}

func parseKey(s string) (parsedKey, bool) { return parseKeyWith(keyPrefix, s) }

// parseKeyWith parses a key of the given prefix; agentID holds the owner
// id (a box id for owner keys).
func parseKeyWith(prefix, s string) (parsedKey, bool) {
	if !strings.HasPrefix(s, prefix) || len(s) != len(prefix)+86 {
		return parsedKey{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[len(prefix):])
	if err != nil || len(raw) != 64 {
		return parsedKey{}, false
	}
	aid, _ := uuid.FromBytes(raw[:16])
	kid, _ := uuid.FromBytes(raw[16:32])
	return parsedKey{agentID: aid.String(), keyID: kid.String(), secret: raw[32:]}, true
}

// secretMatches compares the secret with a stored hex SHA-256 in
// constant time.
func (p parsedKey) secretMatches(secretSHA string) bool {
	want, err := hex.DecodeString(secretSHA)
	if err != nil {
		return false
	}
	got := sha256.Sum256(p.secret)
	return subtle.ConstantTimeCompare(got[:], want) == 1
}

func (p parsedKey) matches(rec *table.KeyRecord) bool {
	return p.secretMatches(rec.SecretSHA) && rec.AgentID == p.agentID && rec.KeyID == p.keyID
}

// Credentials is what a transport saw of the caller. None of it is trusted
// until Hub has checked it.
type Credentials struct {
	// Bearer is the key from 'Authorization: Bearer', if any.
	Bearer string
	// ArgKey is the box_key tool argument, if any.
	ArgKey string
	// SessionID is the call's session: the session_id argument, else the
	// one the transport carries (Mcp-Session-Id or the Agentbox-Session
	// header), if any.
	SessionID string
	// SessionHandle is set when SessionID is an explicit handle — the
	// session_id argument or the Agentbox-Session header — rather than
	// the MCP transport's Mcp-Session-Id: it reaches a session whose MCP
	// session was ended, and agent_prime replaces an ended or unknown one
	// with a new session instead of refusing it.
	SessionHandle bool
	// Transport names the transport for the session record ("mcp", "rest").
	Transport string
	// Info, when set, receives what the call learned for the transport to
	// add to any result: the caller's attention summary.
	Info *CallInfo
}

// CallInfo is what a call reports besides its output.
type CallInfo struct {
	// Attention is the authenticated caller's attention summary, read in
	// the same batch as authentication; nil for an unauthenticated call.
	Attention *AttentionSummary
}

// AttentionSummary rides on every authenticated result, so an agent learns
// of new work without polling.
type AttentionSummary struct {
	UnreadCount      int64 `json:"unread_count" desc:"Your unacknowledged inbox rows."`
	OpenRequestCount int64 `json:"open_request_count" desc:"Requests addressed to you that you have not answered."`
}

// Caller is an authenticated agent within one call.
type Caller struct {
	BoxID   string
	AgentID string
	Agent   *table.Agent
	Profile *table.Profile
	// ProfileVersion is the current profile version.
	ProfileVersion uint64
	// creds are the credential records the call was authenticated with
	// and the versions they were read at (authChecks): the presented
	// keys' records, or a token's link and agent record.
	creds []credCheck
	// Session is the live session, nil when none was presented (only
	// agent_prime and get_help run without one).
	Session        *table.Session
	SessionVersion uint64
	Now            time.Time
	// cursorKey authenticates the cursors this call makes and reads.
	cursorKey []byte
	// Attention is the caller's summary as read with authentication; a
	// tool that changes it (inbox_ack) amends it.
	Attention *AttentionSummary
	// inboxHead is the caller's inbox head as read with authentication.
	inboxHead *store.Item
	// ReadOnly is set when a presented key is scoped coordination:read;
	// mutate refuses such a caller (keyscope.go).
	ReadOnly bool
	// operator is set when the caller is the box's operator (operate.go):
	// no key record, profile or session of an agent's.
	operator *operatorAuth
}

// sessionMode says what a call needs of its session.
type sessionMode int

const (
	// sessionPrimed requires a live, primed session bound to the caller.
	sessionPrimed sessionMode = iota
	// sessionOptional loads a session when one is presented (agent_prime).
	sessionOptional
)

var errAuth = apperr.New(apperr.AuthFailed, "Authentication failed.")

func authFailed() error {
	e := *errAuth
	return &e
}

// notPrimed is the one answer for a call without a live primed session of
// the caller's: none was presented, or it is unknown or expired. The way
// out depends on how the session travels, so each transport words the
// next action (mcpserver and rest rewrite it).
func notPrimed() error {
	// The way out depends on the transport: each words it where the
	// envelope is rendered (apperr's next actions).
	return apperr.New(apperr.NotPrimed, "No live session: it is missing, unknown or expired.")
}

// begin authenticates a call and, in the same batched read, fetches the
// agent-scoped items extra names for the authenticated agent. The returned
// items align with extra's keys. Nothing read is returned unless the key
// checks out.
func (h *Hub) begin(ctx context.Context, cr Credentials, mode sessionMode, extra func(agentID string) []store.Key) (*Caller, []*store.Item, error) {
	var keys []parsedKey
	var tok *tokenCaller
	for _, s := range []string{cr.Bearer, cr.ArgKey} {
		if s == "" {
			continue
		}
		p, ok := parseKey(s)
		if !ok && s == cr.Bearer && h.tokens != nil {
			// Not an agent key: an access token of the configured issuer,
			// or nothing (oauthlink.go).
			t, err := h.resolveToken(ctx, s)
			if err != nil {
				return nil, nil, err
			}
			tok = t
			continue
		}
		if !ok {
			return nil, nil, authFailed()
		}
		keys = append(keys, p)
	}
	if len(keys) == 0 && tok == nil {
		return nil, nil, authFailed()
	}
	var agentID string
	if tok != nil {
		agentID = tok.link.AgentID
	} else {
		agentID = keys[0].agentID
	}
	for _, k := range keys {
		// A token and a box_key, or a bearer key and a box_key, must name
		// one agent.
		if k.agentID != agentID {
			return nil, nil, authFailed()
		}
	}
	// One key sent both ways is checked once; two spellings of one key id
	// with different secrets are both checked, so a wrong box_key is never
	// carried by a right bearer (or the other way round).
	if len(keys) == 2 && keys[0].keyID == keys[1].keyID && bytes.Equal(keys[0].secret, keys[1].secret) {
		keys = keys[:1]
	}

	batch := []store.Key{table.AgentKey(agentID), table.ProfileKey(agentID)}
	for _, k := range keys {
		batch = append(batch, table.KeyRecordKey(k.keyID))
	}
	sessIdx := -1
	if cr.SessionID != "" {
		if !validSessionID(cr.SessionID) {
			if mode == sessionPrimed {
				return nil, nil, notPrimed()
			}
		} else {
			sessIdx = len(batch)
			batch = append(batch, table.SessionKey(cr.SessionID))
		}
	}
	// Until this process holds the cursor key, the same batch fetches it.
	keyIdx := -1
	if h.cursorKey.Load() == nil {
		keyIdx = len(batch)
		batch = append(batch, table.CursorSecretKey())
	}
	// The attention summary every result carries, in the same batch.
	summaryAt := len(batch)
	batch = append(batch, table.InboxHeadKey(agentID), table.AckedCounterKey(agentID), table.RequestCounterKey(agentID))
	extraAt := len(batch)
	if extra != nil {
		batch = append(batch, extra(agentID)...)
	}
	items, err := h.st.BatchGet(ctx, batch)
	if err != nil {
		return nil, nil, storageErr(err)
	}

	if items[0] == nil || items[1] == nil {
		return nil, nil, authFailed()
	}
	agent, err := table.Decode[table.Agent](items[0])
	if err != nil {
		return nil, nil, apperr.Normalize(err)
	}
	profile, err := table.Decode[table.Profile](items[1])
	if err != nil {
		return nil, nil, apperr.Normalize(err)
	}
	if agent.Status != statusActive {
		return nil, nil, authFailed()
	}
	readOnly := false
	for i, k := range keys {
		rec, err := decode[table.KeyRecord](items[2+i], authFailed())
		if err != nil || !k.matches(rec) || rec.BoxID != agent.BoxID {
			return nil, nil, authFailed()
		}
		readOnly = readOnly || rec.Scope == ScopeRead
	}
	if tok != nil {
		if tok.link.BoxID != agent.BoxID {
			return nil, nil, authFailed()
		}
		ro, err := tok.readOnly()
		if err != nil {
			return nil, nil, err
		}
		readOnly = readOnly || ro
	}
	c := &Caller{BoxID: agent.BoxID, AgentID: agentID, Agent: agent, Profile: profile,
		ProfileVersion: items[1].Version, Now: h.clock(), inboxHead: items[summaryAt], ReadOnly: readOnly}
	c.Attention = &AttentionSummary{UnreadCount: unread(items[summaryAt], items[summaryAt+1]),
		OpenRequestCount: count(items[summaryAt+2])}
	if cr.Info != nil {
		cr.Info.Attention = c.Attention
	}
	for i, k := range keys {
		c.creds = append(c.creds, credCheck{table.KeyRecordKey(k.keyID), items[2+i].Version})
	}
	if tok != nil {
		// A link has no key record for a status change to rewrite, so the
		// agent record itself is checked beside the link.
		c.creds = append(c.creds, credCheck{table.OAuthLinkKey(tok.link.ID), tok.version},
			credCheck{table.AgentKey(agentID), items[0].Version})
	}

	if sessIdx >= 0 && items[sessIdx] != nil {
		s, err := table.Decode[table.Session](items[sessIdx])
		if err != nil {
			return nil, nil, apperr.Normalize(err)
		}
		if s.AgentID != "" && s.AgentID != agentID {
			// A session id is never authority: it is valid only with the
			// key of the agent it is bound to.
			return nil, nil, authFailed()
		}
		if !s.TransportEnded || cr.SessionHandle {
			// A session whose MCP session was ended is reached only as
			// an explicit handle, never by its Mcp-Session-Id.
			c.Session, c.SessionVersion = s, items[sessIdx].Version
		}
	}
	if mode == sessionPrimed && (c.Session == nil || !c.Session.Primed || c.Session.AgentID == "") {
		return nil, nil, notPrimed()
	}
	if keyIdx >= 0 {
		if err := h.loadCursorKey(ctx, items[keyIdx]); err != nil {
			return nil, nil, err
		}
	}
	c.cursorKey = *h.cursorKey.Load()
	return c, items[extraAt:], nil
}

// authChecks are the conditions every mutation's write carries so that a
// key revoked, an agent deactivated, or a profile changed, between the read
// and the write cannot slip through: the presented keys are still at the
// versions read (a status change rewrites the agent's key records, see
// updateVisibility) and the profile version is the one this session
// observed. A credential record the plan's own ops already address (a
// tool that conditions the caller's agent record, which a token's checks
// name too) is left to that op: one write addresses an item once, and the
// tool's condition is on the version this call read.
func authChecks(c *Caller, planned []guardedOp) []guardedOp {
	if c.operator != nil {
		return c.operator.check
	}
	ops := []guardedOp{{
		op:     store.Check(table.ProfileKey(c.AgentID), store.AtVersion(c.Session.ProfileVersion)),
		onFail: func(context.Context) error { return profileOutdated() },
	}}
	for _, cc := range c.creds {
		if addressed(planned, cc.key) {
			continue
		}
		ops = append(ops, guardedOp{
			op:     store.Check(cc.key, store.AtVersion(cc.version)),
			onFail: func(context.Context) error { return authFailed() },
		})
	}
	return ops
}

// addressed reports whether an op of ops addresses k.
func addressed(ops []guardedOp, k store.Key) bool {
	for _, o := range ops {
		if o.op.OpKey() == k {
			return true
		}
	}
	return false
}

// credCheck is one credential record and the version it was read at.
type credCheck struct {
	key     store.Key
	version uint64
}

func profileOutdated() error {
	return apperr.New(apperr.ProfileOutdated, "Your profile changed since this session last read it.")
}

const statusActive = "active"

// operatorAuth is what a call of the box's operator (operate.go) runs with
// in place of an agent's key and session.
type operatorAuth struct {
	// via is what wrote the call: an owner key id, or "admin".
	via string
	// check guards the write: the owner key's record still at the version
	// read. None for the admin plane.
	check []guardedOp
}

// operatorAuthority decides an operator call's authority from the item at
// its key, read in the call's batch (no key: the admin plane's, decided
// before the call).
type operatorAuthority struct {
	key    store.Key
	decide func(*store.Item) (*operatorAuth, error)
}

// isOperator reports whether the caller is the box's operator.
func (c *Caller) isOperator() bool { return c.operator != nil }

// OAuth access tokens: the kernel's half (oauthlink.go has the design
// note and the owner's links).

// TokenVerifier validates an OAuth access token. It never trusts the token:
// signature, issuer, audience and expiry are all checked before it answers.
type TokenVerifier interface {
	// Verify returns who the token is, or an error (any: the hub answers
	// every refusal as AUTH_FAILED and logs nothing of the token).
	Verify(ctx context.Context, token string) (*TokenIdentity, error)
}

// TokenIdentity is what a verified access token says of its holder.
type TokenIdentity struct {
	Issuer  string
	Subject string
	// Client is the token's client id (client_id, else azp), if any.
	Client string
	// Read and Write say which of the two coordination scopes the token
	// grants (Write implies Read).
	Read, Write bool
}

// tokenCaller is the agent a verified token links to.
type tokenCaller struct {
	link    *table.OAuthLink
	version uint64
	id      *TokenIdentity
}

// resolveToken verifies token and finds its link. A bearer that is no JWT
// (three dot-separated parts) is refused before the verifier sees it, as
// any malformed key is.
func (h *Hub) resolveToken(ctx context.Context, token string) (*tokenCaller, error) {
	if strings.Count(token, ".") != 2 {
		return nil, authFailed()
	}
	id, err := h.tokens.Verify(ctx, token)
	if err != nil {
		var ue *UnavailableError
		if errors.As(err, &ue) {
			return nil, apperr.Wrap(apperr.TemporarilyUnavailable, "The token issuer could not be reached; try again shortly.", err)
		}
		return nil, authFailed()
	}
	keys := []store.Key{table.OAuthLinkKey(table.OAuthLinkID(id.Issuer, id.Subject, ""))}
	if id.Client != "" {
		keys = append(keys, table.OAuthLinkKey(table.OAuthLinkID(id.Issuer, id.Subject, id.Client)))
	}
	items, err := h.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, storageErr(err)
	}
	it := items[0]
	if len(items) == 2 && items[1] != nil {
		it = items[1]
	}
	link, err := decode[table.OAuthLink](it, authFailed())
	if err != nil {
		return nil, err
	}
	return &tokenCaller{link: link, version: it.Version, id: id}, nil
}

// readOnly says whether the token caller may only read; an error when the
// token grants neither scope.
func (t *tokenCaller) readOnly() (bool, error) {
	if !t.id.Read && !t.id.Write {
		e := apperr.New(apperr.AuthFailed, "This token grants neither coordination scope.").
			WithNext("Ask the authorization server for a token with the " + ScopeRead + " or " + ScopeWrite + " scope.")
		e.RequiredScope = ScopeRead
		return false, e
	}
	return !t.id.Write || t.link.Scope == ScopeRead, nil
}

// UnavailableError is a TokenVerifier's refusal that is not the token's
// fault: the issuer's discovery document or key set could not be fetched.
// The hub answers it TEMPORARILY_UNAVAILABLE, not AUTH_FAILED, so a valid
// token is not thrown away by its client.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return "token issuer unavailable: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

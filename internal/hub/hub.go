// Package hub is the domain core of agentbox: identity, sessions,
// idempotency, revisions and every tool's rules. It knows nothing of HTTP,
// MCP, Lambda or DynamoDB; it talks to storage only through store.Store and
// answers failures only as *apperr.Error.
//
// Each tool is one exported method of Hub taking the caller's Credentials
// (what the transport saw) and the tool's decoded input, and returning the
// tool's output. Identity, box, session, time and membership are always
// derived here, never taken from arguments.
package hub

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/store"
)

// Options configures a Hub. The zero value is usable: every field has a
// production default.
type Options struct {
	// Now is the clock; defaults to time.Now. Tests inject a fake.
	Now func() time.Time
	// Logger receives structured domain logs; defaults to slog.Default().
	Logger *slog.Logger
	// SessionIdle is how long a session lives without use (default 12h).
	// A session is refreshed at most once per quarter of this window, so a
	// read normally costs no session write.
	SessionIdle time.Duration
	// IdempotencyTTL is how long a mutation ID is remembered (default 30
	// days, seed 002's scope; seed 000 names none, so both use it).
	IdempotencyTTL time.Duration
	// Limits are the rate limits and quotas to enforce (limits.go). nil
	// enforces none, which tests and benchmarks rely on; the entry points
	// (agentbox serve, the Lambda functions) pass limits.Default() or what
	// their flags and environment say.
	Limits *limits.Config
	// OrderedWrites says that the store commits concurrent Writes in the
	// order they were called (bbolt's group commit does; DynamoDB does
	// not). It lets writers of one counter in this process share commits
	// (serial.go).
	OrderedWrites bool
	// IndependentCalls makes calls in this process behave as calls in
	// separate processes (Lambda instances) do: no in-process
	// serialization of one counter's writers (serial.go), so only the
	// compare-and-set decides. Tests that force concurrent calls to read
	// before any of them writes set it.
	IndependentCalls bool
	// Metrics receives one record per sweep run; the transports read it
	// (Metrics) to record their calls. nil records nothing.
	Metrics metrics.Recorder
	// Tokens, when set, accepts OAuth access tokens beside agent keys
	// (oauthlink.go): a bearer that is not a key is verified by it and
	// resolved through the owner's links. nil accepts keys only.
	Tokens TokenVerifier
}

// intentKinds maps each kind of intent (intent.go) to its step, in the
// file of the tool that opens it. It is a fixed table, not state: every
// process knows every kind. It is the one place the kernel names a tool's
// code.
var intentKinds = map[string]intentStep{
	intentFanout: (*Hub).fanoutStep,
	intentAck:    (*Hub).ackStep,
}

// Hub is the domain service. It is safe for concurrent use and holds no
// per-request state, so a Lambda instance builds one at start and reuses it.
type Hub struct {
	// st is the store whose failed reads say so (readerr.go); raw is the
	// store as given.
	st     store.Store
	raw    store.Store
	now    func() time.Time
	log    *slog.Logger
	idle   time.Duration
	idemTT time.Duration
	limits *limiter
	// cursorKey caches the deployment's cursor secret once read.
	cursorKey atomic.Pointer[[]byte]
	// waiters wakes inbox_list calls waiting in this process (wait.go).
	waiters waiters
	// hot serializes this process's writers of one counter (serial.go).
	hot *hotLocks
	// metrics receives what an operator counts (package metrics).
	metrics metrics.Recorder
	// tokens verifies OAuth access tokens; nil takes keys only.
	tokens TokenVerifier
}

// New returns a Hub over st.
func New(st store.Store, opts Options) *Hub {
	h := &Hub{st: readStore{st}, raw: st, now: opts.Now, log: opts.Logger, idle: opts.SessionIdle, idemTT: opts.IdempotencyTTL,
		limits: newLimiter(opts.Limits), hot: newHotLocks(!opts.IndependentCalls, opts.OrderedWrites), metrics: opts.Metrics,
		tokens: opts.Tokens}
	if h.metrics == nil {
		h.metrics = metrics.Nop{}
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.idle <= 0 {
		h.idle = 12 * time.Hour
	}
	if h.idemTT <= 0 {
		h.idemTT = 30 * 24 * time.Hour
	}
	return h
}

// Store exposes the port, for the admin plane and tests that count round
// trips.
func (h *Hub) Store() store.Store { return h.raw }

// Metrics is the recorder the transports report their calls to.
func (h *Hub) Metrics() metrics.Recorder { return h.metrics }

func (h *Hub) clock() time.Time { return h.now().UTC() }

// TakesTokens says whether the hub accepts OAuth access tokens, so a
// transport can challenge a request that brings no credentials at all.
func (h *Hub) TakesTokens() bool { return h.tokens != nil }

// timestamp renders times the one way every DTO uses.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// timestampIfSet is timestamp for an optional time: "" (omitted) when unset.
func timestampIfSet(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return timestamp(t)
}

// Package limits holds the figures that bound what one agent, one box and
// one unauthenticated source may cost the service, how every entry point
// reads them (flags, environment), and the rate arithmetic the hub's shared
// limiter and the per-instance limiters have in common.
//
// Design note. Every rate is a GCRA (generic cell rate algorithm): a bucket
// is one number, its theoretical arrival time (TAT). With emission interval
// I = 1/rate and tolerance τ = (burst−1)·I, a call at time t conforms when
// TAT − τ ≤ t, and then moves TAT to max(TAT, t) + I. Over any interval of
// length T a bucket admits at most burst + rate·T calls (each admitted call
// advances TAT by I, and the last one had to conform). Because the state is
// one integer, the hub keeps it in a store item's Count and moves it by CAS
// in the mutation's own transaction (internal/hub/limits.go), and the
// per-instance limiters here keep it in a map.
package limits

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rate is a sustained rate with a burst. The zero Rate (PerSecond 0)
// disables the limit it configures.
type Rate struct {
	// PerSecond is the sustained rate, calls per second.
	PerSecond float64
	// Burst is how many calls may come at once after a quiet spell
	// (at least 1 when PerSecond > 0).
	Burst int
}

// On reports whether the limit is enforced.
func (r Rate) On() bool { return r.PerSecond > 0 }

// String renders r the way ParseRate reads it ("5,60"; "0" when off).
func (r Rate) String() string {
	if !r.On() {
		return "0"
	}
	return strconv.FormatFloat(r.PerSecond, 'f', -1, 64) + "," + strconv.Itoa(r.Burst)
}

// ParseRate reads "rate,burst" ("5,60"), a bare rate ("5": burst is the
// rate rounded up) or "0" (off).
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	rs, bs, hasBurst := strings.Cut(s, ",")
	per, err := strconv.ParseFloat(strings.TrimSpace(rs), 64)
	if err != nil || per < 0 || math.IsInf(per, 0) || math.IsNaN(per) {
		return Rate{}, errors.New("want 'rate,burst' with a non-negative rate per second, or 0")
	}
	if per == 0 {
		return Rate{}, nil
	}
	burst := int(math.Ceil(per))
	if hasBurst {
		burst, err = strconv.Atoi(strings.TrimSpace(bs))
		if err != nil || burst < 1 {
			return Rate{}, errors.New("want a burst of at least 1")
		}
	}
	return Rate{PerSecond: per, Burst: burst}, nil
}

// Config is every limit and quota of a deployment. The hub and the
// transports read it; nil where a *Config is expected means unlimited
// (tests and benchmarks).
type Config struct {
	// AgentMutations bounds one agent's writes, shared by every instance
	// (kept in the store).
	AgentMutations Rate
	// BoxMutations bounds the writes of all agents of one box together,
	// shared by every instance (kept in the store).
	BoxMutations Rate
	// AgentCalls bounds one agent's calls (reads and mutations alike),
	// per instance (kept in memory: a read never writes).
	AgentCalls Rate
	// BoxCalls bounds the calls of all agents of one box, per instance.
	BoxCalls Rate
	// AuthFailures bounds failed authentications per source (client
	// address, presented key id), per instance.
	AuthFailures Rate
	// SessionsPerAgent caps an agent's live sessions; opening one more
	// ends the oldest (0: no cap).
	SessionsPerAgent int
	// SpacesPerAgent caps the spaces one agent may create in its box
	// (0: no cap).
	SpacesPerAgent int
	// RoomMembers caps a room's active members: the owner's add-member
	// refuses one more (0: no cap). A post's cost is linear in its
	// recipients, so the cap bounds what one post may cost and take.
	RoomMembers int
	// InboxWaitSeconds caps the wait inbox_list grants (0: no waiting;
	// at most DefaultInboxWait). A wait is also capped by the time its
	// call has left (a Lambda function's timeout), and holds one
	// execution of the function serving it while it lasts.
	InboxWaitSeconds int
}

// Default returns the production figures: a tight loop is stopped within a
// second or two, and an agent making a few calls a second never meets a
// limit.
func Default() Config {
	return Config{
		AgentMutations:   Rate{PerSecond: 5, Burst: 60},
		BoxMutations:     Rate{PerSecond: 100, Burst: 600},
		AgentCalls:       Rate{PerSecond: 20, Burst: 200},
		BoxCalls:         Rate{PerSecond: 400, Burst: 2000},
		AuthFailures:     Rate{PerSecond: 1, Burst: 20},
		SessionsPerAgent: 32,
		SpacesPerAgent:   1000,
		RoomMembers:      DefaultRoomMembers,
		InboxWaitSeconds: DefaultInboxWait,
	}
}

// DefaultRoomMembers is the production cap on a room's members. A post to
// a full room of members following all costs about 5.2 write units per
// recipient on DynamoDB (about 52,000 for 10,000 members, priced by the
// hub's fan-out cost test) and finishes in about 223 fan-out steps.
const DefaultRoomMembers = 10_000

// DefaultInboxWait is the longest wait inbox_list grants by default, and
// the most it ever grants.
const DefaultInboxWait = 20

// InboxWaitEnv is InboxWaitSeconds' environment variable; the template
// sets it apart for the MCP function.
const InboxWaitEnv = "AGENTBOX_INBOX_WAIT_MAX"

// setting names one figure of Config for every place it is configured.
type setting struct {
	// Env is the environment variable the Lambda functions read.
	Env string
	// Flag is the `agentbox serve` flag.
	Flag string
	// Param is the template.yaml / samconfig.toml parameter.
	Param string
	usage string
	rate  func(c *Config) *Rate
	count func(c *Config) *int
}

var settings = []setting{
	{"AGENTBOX_LIMIT_AGENT_MUTATIONS", "limit-agent-mutations", "LimitAgentMutations",
		"per-agent writes, shared by all instances: 'rate,burst' per second, 0 = off",
		func(c *Config) *Rate { return &c.AgentMutations }, nil},
	{"AGENTBOX_LIMIT_BOX_MUTATIONS", "limit-box-mutations", "LimitBoxMutations",
		"per-box writes of all its agents, shared by all instances: 'rate,burst', 0 = off",
		func(c *Config) *Rate { return &c.BoxMutations }, nil},
	{"AGENTBOX_LIMIT_AGENT_CALLS", "limit-agent-calls", "LimitAgentCalls",
		"per-agent calls (reads and writes), per instance: 'rate,burst', 0 = off",
		func(c *Config) *Rate { return &c.AgentCalls }, nil},
	{"AGENTBOX_LIMIT_BOX_CALLS", "limit-box-calls", "LimitBoxCalls",
		"per-box calls, per instance: 'rate,burst', 0 = off",
		func(c *Config) *Rate { return &c.BoxCalls }, nil},
	{"AGENTBOX_LIMIT_AUTH_FAILURES", "limit-auth-failures", "LimitAuthFailures",
		"failed authentications per client address and per key id, per instance: 'rate,burst', 0 = off",
		func(c *Config) *Rate { return &c.AuthFailures }, nil},
	{"AGENTBOX_QUOTA_SESSIONS", "quota-sessions", "QuotaSessionsPerAgent",
		"live sessions per agent (the oldest ends beyond it), 0 = no cap",
		nil, func(c *Config) *int { return &c.SessionsPerAgent }},
	{"AGENTBOX_QUOTA_SPACES", "quota-spaces", "QuotaSpacesPerAgent",
		"spaces one agent may create, 0 = no cap",
		nil, func(c *Config) *int { return &c.SpacesPerAgent }},
	{"AGENTBOX_QUOTA_ROOM_MEMBERS", "quota-room-members", "QuotaRoomMembers",
		"active members one room may have (add-member refuses one more), 0 = no cap",
		nil, func(c *Config) *int { return &c.RoomMembers }},
	{InboxWaitEnv, "inbox-wait-max", "InboxWaitMaxSeconds",
		"longest inbox_list wait granted, seconds (0 to 20; also capped by the time the call has left), 0 = no waiting",
		nil, func(c *Config) *int { return &c.InboxWaitSeconds }},
}

// Setting describes one configurable figure: its environment variable,
// serve flag and stack parameter.
type Setting struct {
	Env, Flag, Param, Usage string
	// Default is the production value, rendered as it is configured.
	Default string
}

// Settings lists every configurable figure, for documentation and for the
// template generator.
func Settings() []Setting {
	d := Default()
	out := make([]Setting, len(settings))
	for i, s := range settings {
		out[i] = Setting{Env: s.Env, Flag: s.Flag, Param: s.Param, Usage: s.usage, Default: s.get(&d)}
	}
	return out
}

func (s setting) get(c *Config) string {
	if s.rate != nil {
		return s.rate(c).String()
	}
	return strconv.Itoa(*s.count(c))
}

func (s setting) set(c *Config, v string) error {
	if s.rate != nil {
		r, err := ParseRate(v)
		if err != nil {
			return err
		}
		*s.rate(c) = r
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return errors.New("want a non-negative integer")
	}
	*s.count(c) = n
	return nil
}

// FromEnv returns Default with every figure whose environment variable is
// set (non-empty) replaced by its value. getenv is os.Getenv in the Lambda
// functions. An unparsable value is an error naming the variable (never
// its value): a function refuses to start rather than run unlimited.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Default()
	for _, s := range settings {
		v := getenv(s.Env)
		if v == "" {
			continue
		}
		if err := s.set(&c, v); err != nil {
			return Config{}, fmt.Errorf("limits: %s: %w", s.Env, err)
		}
	}
	return c, nil
}

// FlagSet is the part of flag.FlagSet that RegisterFlags needs.
type FlagSet interface {
	Func(name, usage string, fn func(string) error)
}

// RegisterFlags adds one flag per figure to fs, each setting c (which
// should start as Default()).
func RegisterFlags(fs FlagSet, c *Config) {
	for _, s := range settings {
		fs.Func(s.Flag, s.usage+" (default "+s.get(c)+")", func(v string) error { return s.set(c, v) })
	}
}

// GCRA is one rate's arithmetic, in nanoseconds.
type GCRA struct {
	// Interval is the emission interval, 1/rate.
	Interval int64
	// Tolerance is (burst−1)·Interval.
	Tolerance int64
}

// NewGCRA splits r into shards equal parts: each shard admits
// burst/shards at once and rate/shards sustained, so the shards together
// admit at most burst + rate·T over any interval T. shards must not
// exceed r.Burst (a shard's own burst is at least one call).
func NewGCRA(r Rate, shards int) GCRA {
	interval := float64(time.Second) * float64(shards) / r.PerSecond
	burst := float64(r.Burst) / float64(shards)
	return GCRA{Interval: int64(math.Ceil(interval)), Tolerance: int64((burst - 1) * interval)}
}

// Conforms reports whether a call at now conforms to a bucket at tat, and
// otherwise how long until it would.
func (g GCRA) Conforms(tat, now int64) (ok bool, wait time.Duration) {
	if d := tat - g.Tolerance - now; d > 0 {
		return false, time.Duration(d)
	}
	return true, 0
}

// Next is the bucket's TAT after a conforming call at now.
func (g GCRA) Next(tat, now int64) int64 { return max(tat, now) + g.Interval }

// RetryAfter rounds a wait up to whole seconds, at least one, as
// retry_after_seconds and Retry-After carry it.
func RetryAfter(wait time.Duration) int {
	return max(1, int((wait+time.Second-1)/time.Second))
}

// Local is a per-instance set of buckets keyed by string (an agent, a box,
// a client address). It never touches the store. Memory is bounded: past
// maxKeys buckets, the full ones (TAT in the past) are dropped, and if that
// is not enough every bucket is — failing open for a moment rather than
// growing without bound.
type Local struct {
	g       GCRA
	on      bool
	mu      sync.Mutex
	tat     map[string]int64
	maxKeys int
}

// localMaxKeys bounds a Local's map.
const localMaxKeys = 100_000

// NewLocal returns a limiter for r (never limiting when r is off).
func NewLocal(r Rate) *Local {
	l := &Local{on: r.On(), tat: map[string]int64{}, maxKeys: localMaxKeys}
	if l.on {
		l.g = NewGCRA(r, 1)
	}
	return l
}

// Allow takes one call for key at now, or reports how long to wait.
func (l *Local) Allow(key string, now time.Time) (bool, time.Duration) {
	if l == nil || !l.on {
		return true, 0
	}
	t := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	tat, ok := l.tat[key]
	if !ok {
		tat = t
	}
	if ok, wait := l.g.Conforms(tat, t); !ok {
		return false, wait
	}
	l.prune(t)
	l.tat[key] = l.g.Next(tat, t)
	return true, 0
}

// Blocked reports, without taking anything, whether key's bucket is
// empty at now and how long until it is not.
func (l *Local) Blocked(key string, now time.Time) (bool, time.Duration) {
	if l == nil || !l.on {
		return false, 0
	}
	l.mu.Lock()
	tat, ok := l.tat[key]
	l.mu.Unlock()
	if !ok {
		return false, 0
	}
	ok, wait := l.g.Conforms(tat, now.UnixNano())
	return !ok, wait
}

// Charge takes one call for key at now even when the bucket is empty
// (failed authentications are counted after the fact); the bucket's debt
// then grows, so a source that keeps failing waits longer.
func (l *Local) Charge(key string, now time.Time) {
	if l == nil || !l.on {
		return
	}
	t := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	tat, ok := l.tat[key]
	if !ok {
		tat = t
	}
	l.prune(t)
	// Debt is capped at one more burst, so a source that stops failing is
	// let in again within a bounded time.
	l.tat[key] = min(l.g.Next(tat, t), t+2*l.g.Tolerance+2*l.g.Interval)
}

// prune keeps the map bounded; the caller holds mu.
func (l *Local) prune(now int64) {
	if len(l.tat) < l.maxKeys {
		return
	}
	for k, tat := range l.tat {
		if tat <= now {
			delete(l.tat, k)
		}
	}
	if len(l.tat) >= l.maxKeys {
		clear(l.tat)
	}
}

// AuthSources names the source a failed authentication counts against.
// A request presenting a well-formed key counts against the key id it
// names, and only against it: agents behind one address (every agent of
// `agentbox serve` on 127.0.0.1, a NAT in front of Lambda) never lose
// their own working key to another key's failures, and spreading guesses
// at one key over many addresses does not help. A request whose key does
// not parse (or that has none) counts against the client address (the TCP
// peer locally, API Gateway's sourceIp on Lambda; never a forwarding
// header, which the client writes); a valid key is never refused by it.
func AuthSources(remoteAddr, keyID string) []string {
	if keyID != "" {
		return []string{"key:" + keyID}
	}
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		remoteAddr = host
	}
	return []string{"addr:" + remoteAddr}
}

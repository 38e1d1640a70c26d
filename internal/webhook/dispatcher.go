package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
)

// Source is the hub's side of delivery (the storage port's endpoint
// records and wake state; *hub.Hub implements it).
type Source interface {
	WebhookTargets(ctx context.Context) ([]hub.WebhookTarget, error)
	WakeState(ctx context.Context, box, agent string) (*hub.WakeState, error)
	WebhookRecord(ctx context.Context, id string, o hub.WebhookOutcome) error
}

// Retry policy: exponential backoff with full jitter between BaseBackoff
// and MaxBackoff, for at most RetryFor since the first failure; then the
// endpoint is marked failing and later events are dropped until the owner
// re-enables it.
const (
	BaseBackoff = 1 * time.Second
	MaxBackoff  = 5 * time.Minute
	RetryFor    = 1 * time.Hour
	// Poll is how often every endpoint is checked without a local
	// wake-up (arrivals written by other processes).
	Poll = 2 * time.Second
)

// Event is the body of a delivery.
type Event struct {
	Type string `json:"type"`
	// Timestamp is when the event was made (RFC 3339).
	Timestamp string         `json:"timestamp"`
	Data      *hub.WakeState `json:"data"`
}

// EventType is the one event type.
const EventType = "agent.attention"

// Dispatcher delivers wake events, at least once, at most one in flight
// per endpoint, the latest state winning.
type Dispatcher struct {
	src Source
	// post sends one delivery (Client.Post; a fault injector in tests).
	post func(ctx context.Context, url string, h http.Header, body []byte) (int, error)
	log  *slog.Logger
	now  func() time.Time
	wake chan struct{}
	// The retry policy (the constants above; tests shorten it).
	base, maxWait, retryFor, poll time.Duration

	mu       sync.Mutex
	inflight map[string]bool
	attempts map[string]int       // failures in a row, per endpoint
	due      map[string]time.Time // next attempt after a failure
	// sent is the newest seq this process delivered per target (endpoint
	// and agent): a pass that listed the endpoints before that outcome was
	// stored must not deliver it again.
	sent map[string]uint64
	// last is the agent a box endpoint served last (turns).
	last map[string]string
}

// New returns a dispatcher; Run starts it.
func New(src Source, client *Client, log *slog.Logger) *Dispatcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{src: src, post: client.Post, log: log, now: time.Now, wake: make(chan struct{}, 1),
		base: BaseBackoff, maxWait: MaxBackoff, retryFor: RetryFor, poll: Poll,
		inflight: map[string]bool{}, sent: map[string]uint64{}, last: map[string]string{}, attempts: map[string]int{}, due: map[string]time.Time{}}
}

// Wake asks for a pass soon (hub.OnAttention); it never blocks.
func (d *Dispatcher) Wake(_ []string) {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for deliveries in flight.
func (d *Dispatcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(d.poll)
	defer t.Stop()
	for {
		d.pass(ctx, &wg)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

// pass starts a delivery for every endpoint that is pending, active, due
// and not in flight. A box endpoint's agents take turns: its one delivery
// goroutine tries them in order, starting after the agent it served last,
// and stops at the first that it posts to.
func (d *Dispatcher) pass(ctx context.Context, wg *sync.WaitGroup) {
	targets, err := d.src.WebhookTargets(ctx)
	if err != nil {
		d.log.Warn("webhook: listing endpoints failed", "err", err)
		return
	}
	now := d.now()
	var order []string
	groups := map[string][]hub.WebhookTarget{}
	for _, t := range targets {
		if t.Status != hub.WebhookActive || len(t.Secrets) == 0 {
			continue
		}
		if _, ok := groups[t.ID]; !ok {
			order = append(order, t.ID)
		}
		groups[t.ID] = append(groups[t.ID], t)
	}
	for _, id := range order {
		d.mu.Lock()
		busy := d.inflight[id] || now.Before(d.due[id])
		if !busy {
			d.inflight[id] = true
		}
		last := d.last[id]
		d.mu.Unlock()
		if busy {
			continue
		}
		group := turns(groups[id], last)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, t := range group {
				posted, err := d.deliver(ctx, t) // errors are logged there; a later pass retries
				if posted || err != nil {
					d.mu.Lock()
					d.last[id] = t.AgentID
					d.mu.Unlock()
					break
				}
			}
			d.mu.Lock()
			delete(d.inflight, id)
			d.mu.Unlock()
			d.Wake(nil) // the state may have moved on meanwhile
		}()
	}
}

// turns orders one endpoint's targets (its agents, by id) to start after
// last, so no busy agent keeps the others of a box endpoint waiting.
func turns(group []hub.WebhookTarget, last string) []hub.WebhookTarget {
	if len(group) < 2 {
		return group
	}
	slices.SortFunc(group, func(a, b hub.WebhookTarget) int { return strings.Compare(a.AgentID, b.AgentID) })
	i, _ := slices.BinarySearchFunc(group, last, func(t hub.WebhookTarget, id string) int {
		if t.AgentID <= id {
			return -1
		}
		return 1
	})
	return append(group[i:len(group):len(group)], group[:i]...)
}

// errUndelivered is a delivery that will be retried.
var errUndelivered = errors.New("webhook: delivery failed; it will be retried")

// deliver sends the agent's current wake state if it is past what the
// endpoint delivered, and records the outcome. It returns errUndelivered
// (or the read's error) when the state is still pending for a retry; nil
// when delivered, nothing was pending, or the endpoint is now failing.
// posted says whether a request went out.
func (d *Dispatcher) deliver(ctx context.Context, t hub.WebhookTarget) (posted bool, err error) {
	st, err := d.src.WakeState(ctx, t.BoxID, t.AgentID)
	if err != nil {
		return false, err
	}
	key := t.ID + "/" + t.AgentID
	d.mu.Lock()
	sent := d.sent[key]
	d.mu.Unlock()
	if uint64(st.InboxSeq) <= max(t.DeliveredSeq, sent) {
		return false, nil
	}
	now := d.now()
	body, _ := json.Marshal(Event{Type: EventType, Timestamp: now.UTC().Format(time.RFC3339), Data: st})
	// The id names the state, so a redelivery of it has the same id.
	id := "evt_" + t.ID + "_" + strconv.FormatUint(uint64(st.InboxSeq), 10)
	if t.PerBox {
		id = "evt_" + t.ID + "_" + t.AgentID + "_" + strconv.FormatUint(uint64(st.InboxSeq), 10)
	}
	sig, err := Sign(t.Secrets, id, now, body)
	if err != nil {
		d.log.Error("webhook: endpoint secret unusable", "webhook_id", t.ID)
		return false, nil
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(HeaderSignature, sig)
	status, perr := d.post(ctx, t.URL, h, body)
	if ctx.Err() != nil {
		return true, ctx.Err() // shutting down: the state stays pending for the next start
	}
	o := hub.WebhookOutcome{Seq: uint64(st.InboxSeq), AgentID: t.AgentID, Status: status, Delivered: perr == nil && status >= 200 && status < 300}
	d.mu.Lock()
	if o.Delivered {
		d.sent[key] = max(d.sent[key], o.Seq)
		delete(d.attempts, t.ID)
		delete(d.due, t.ID)
	} else {
		n := d.attempts[t.ID]
		d.attempts[t.ID] = n + 1
		d.due[t.ID] = d.now().Add(backoff(n, d.base, d.maxWait))
		since := t.FailingSince
		if since.IsZero() {
			since = now
		}
		o.Failing = d.now().Sub(since) >= d.retryFor
	}
	d.mu.Unlock()
	if !o.Delivered {
		d.log.Warn("webhook: delivery failed", "webhook_id", t.ID, "status", status, "failing", o.Failing)
	}
	if err := d.src.WebhookRecord(ctx, t.ID, o); err != nil {
		d.log.Warn("webhook: recording the outcome failed", "webhook_id", t.ID, "err", err)
		return true, err
	}
	if !o.Delivered && !o.Failing {
		return true, errUndelivered
	}
	return true, nil
}

// DeliverAgents delivers once, synchronously, to every active endpoint of
// the agents (the Streams-driven function's pass), or of every agent when
// agents is nil (the scheduled redelivery pass: whatever a batch that went
// to the dead-letter queue named is still pending in the table, so a full
// pass delivers it). An error means some state is still pending: the
// caller retries (Lambda retries the batch, then sends it to the
// dead-letter queue; the next scheduled pass tries again).
func (d *Dispatcher) DeliverAgents(ctx context.Context, agents map[string]bool) error {
	targets, err := d.src.WebhookTargets(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range targets {
		if t.Status == hub.WebhookActive && len(t.Secrets) > 0 && (agents == nil || agents[t.AgentID]) {
			if _, err := d.deliver(ctx, t); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// backoff is the wait after the n+1st failure in a row: base/2 plus full
// jitter over base*2^n, capped at maxWait.
func backoff(n int, base, maxWait time.Duration) time.Duration {
	ceil := maxWait
	if n < 20 {
		ceil = min(base<<n, maxWait)
	}
	return base/2 + time.Duration(rand.Int64N(int64(ceil)))
}

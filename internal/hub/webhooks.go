package hub

// # Webhooks: the owner's endpoints and the dispatcher's port
//
// An owner registers an HTTPS endpoint for an agent (Admin.AddWebhook);
// agents cannot. A dispatcher outside this package (internal/webhook)
// delivers thin wake events: it lists the endpoints (WebhookTargets),
// reads the agent's wake state (WakeState: newest inbox seq, attention
// counts, the newest row's reasons and message id — never a body, a file
// URL or a key) and records each outcome on the endpoint record
// (WebhookDelivered, WebhookFailed) under CAS on its version.
//
// The durable outbox is the pair (inbox head, endpoint's delivered seq):
// the inbox head is written in the same atomic write as the inbox rows
// (fan-out, unchanged), and an endpoint is pending while the head is past
// what it last delivered. That is a coalescing per-endpoint pending
// marker that costs the send path nothing: a burst of rows is one pending
// state, the latest wins, and a restart finds every pending endpoint
// again. All endpoints live in one partition (table.WebhookPartition), read
// with one Query; endpoints are few and written by the owner and the
// dispatcher only.
//
// A box endpoint (AgentID empty) serves every active agent of its box,
// present and future, each event naming its agent. Its delivered seq is
// kept per agent in a cursor item (table.WebhookCursorKey, Version = the
// seq), written by the dispatcher only; an agent without a cursor has
// delivered nothing, which is right for an agent created after the
// endpoint, and add and enable write every current agent's cursor at its
// inbox head first, so events start from now as for an agent endpoint.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
)

// Webhook endpoint states.
const (
	WebhookActive   = "active"
	WebhookDisabled = "disabled"
	WebhookFailing  = "failing"
)

// MaxWebhookURL bounds an endpoint URL's length.
const MaxWebhookURL = 2048

// WebhookInfo is an endpoint as the admin CLI shows it; Secret is set only
// by add and rotate-secret (shown once).
type WebhookInfo struct {
	WebhookID    string `json:"webhook_id"`
	BoxID        string `json:"box_id"`
	AgentID      string `json:"agent_id" desc:"The agent of an agent endpoint; empty for a box endpoint."`
	Scope        string `json:"scope" desc:"agent: one agent's events; box: every agent of the box, each event naming its agent."`
	URL          string `json:"url"`
	Status       string `json:"status"`
	DeliveredSeq string `json:"delivered_seq,omitempty" desc:"The agent endpoint's delivered inbox seq (box endpoints keep one per agent)."`
	Secrets      int    `json:"signing_secrets" desc:"How many secrets sign each event (2 during a rotation's overlap)."`
	FailingSince string `json:"failing_since,omitempty" desc:"Since when deliveries fail (retrying while active)."`
	LastStatus   int    `json:"last_status,omitempty" desc:"HTTP status of the last attempt (0: no answer)."`
	LastAttempt  string `json:"last_attempt,omitempty"`
	CreatedAt    string `json:"created_at"`
	Secret       string `json:"secret,omitempty" desc:"The signing secret (whsec_...), shown only now."`
}

// Webhook endpoint scopes.
const (
	WebhookScopeAgent = "agent"
	WebhookScopeBox   = "box"
)

// webhookInfo is an endpoint as the admin CLI shows it.
func webhookInfo(r *table.Webhook) *WebhookInfo {
	w := &WebhookInfo{WebhookID: r.ID, BoxID: r.BoxID, AgentID: r.AgentID, Scope: WebhookScopeAgent, URL: r.URL, Status: r.Status,
		DeliveredSeq: strconv.FormatUint(r.DeliveredSeq, 10), Secrets: len(r.Secrets), LastStatus: r.LastStatus,
		CreatedAt: timestamp(r.CreatedAt), FailingSince: timestampIfSet(r.FailingSince), LastAttempt: timestampIfSet(r.LastAttempt)}
	if r.PerBox() {
		w.Scope, w.DeliveredSeq = WebhookScopeBox, ""
	}
	return w
}

func newWebhookSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// checkWebhookURL accepts an absolute https URL with a host, no user info
// and no fragment. Where it may connect is decided at dial time by the
// dispatcher's egress guard, not here.
func checkWebhookURL(raw string) error {
	bad := apperr.New(apperr.InvalidArgument, "url must be an https:// URL with a host, without user info or fragment, at most 2048 bytes.")
	if len(raw) > MaxWebhookURL {
		return bad
	}
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" || u.Hostname() == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return bad
	}
	return nil
}

// AddWebhook registers an endpoint for an agent and returns it with its
// signing secret. Events start from the agent's current inbox head.
func (a *Admin) AddWebhook(ctx context.Context, agent, rawURL string) (*WebhookInfo, error) {
	if err := uuidArg("agent", &agent); err != nil {
		return nil, err
	}
	if err := checkWebhookURL(rawURL); err != nil {
		return nil, err
	}
	ag, _, err := a.loadAgent(ctx, agent)
	if err != nil {
		return nil, err
	}
	head, err := a.h.st.Get(ctx, table.InboxHeadKey(agent))
	if err != nil {
		return nil, storageErr(err)
	}
	now := a.h.clock()
	rec := &table.Webhook{ID: uuid.NewString(), BoxID: ag.BoxID, AgentID: agent, URL: rawURL,
		Secrets: []table.WebhookSecret{{Secret: newWebhookSecret()}}, Status: WebhookActive,
		DeliveredSeq: version(head), CreatedAt: now}
	return a.createWebhook(ctx, rec)
}

// AddBoxWebhook registers an endpoint for every agent of a box, present
// and future, and returns it with its signing secret. Events start from
// each current agent's inbox head: those cursors are written before the
// endpoint, so a failure part-way leaves no endpoint (and only cursors a
// retry rewrites).
func (a *Admin) AddBoxWebhook(ctx context.Context, box, rawURL string) (*WebhookInfo, error) {
	if err := uuidArg("box", &box); err != nil {
		return nil, err
	}
	if err := checkWebhookURL(rawURL); err != nil {
		return nil, err
	}
	if err := a.requireBox(ctx, box); err != nil {
		return nil, err
	}
	rec := &table.Webhook{ID: uuid.NewString(), BoxID: box, URL: rawURL,
		Secrets: []table.WebhookSecret{{Secret: newWebhookSecret()}}, Status: WebhookActive, CreatedAt: a.h.clock()}
	if err := a.h.advanceCursors(ctx, rec); err != nil {
		return nil, err
	}
	return a.createWebhook(ctx, rec)
}

// createWebhook writes the new endpoint rec and returns it with its
// signing secret.
func (a *Admin) createWebhook(ctx context.Context, rec *table.Webhook) (*WebhookInfo, error) {
	k := table.WebhookKey(rec.ID)
	if err := a.h.raw.Write(ctx, []store.Op{store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: table.Encode(rec)}, store.Absent)}); err != nil {
		return nil, storageErr(err)
	}
	info := webhookInfo(rec)
	info.Secret = rec.Secrets[0].Secret
	return info, nil
}

// boxAgents lists the active agents of a box (the owner's agents index).
func (h *Hub) boxAgents(ctx context.Context, box string) ([]string, error) {
	recs, _, err := query[table.Agent](ctx, h.st, store.Query{Index: store.GSI1, PK: table.BoxAgentsIndex(box)})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(recs))
	for _, ag := range recs {
		if ag.Status == statusActive {
			out = append(out, ag.ID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// webhookCursors reads a box endpoint's delivered seq per agent.
func (h *Hub) webhookCursors(ctx context.Context, endpoint string) (map[string]uint64, error) {
	pk, prefix := table.WebhookCursorsPrefix(endpoint)
	items, err := h.st.Query(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)})
	if err != nil {
		return nil, storageErr(err)
	}
	out := make(map[string]uint64, len(items))
	for _, it := range items {
		out[strings.TrimPrefix(it.SK, prefix)] = it.Version
	}
	return out, nil
}

// advanceCursors moves a box endpoint's cursor of every active agent of
// its box up to the agent's inbox head (never down), so what is pending
// now is dropped: for add and for enable.
func (h *Hub) advanceCursors(ctx context.Context, r *table.Webhook) error {
	agents, err := h.boxAgents(ctx, r.BoxID)
	if err != nil {
		return err
	}
	for chunk := range slices.Chunk(agents, 100) {
		keys := make([]store.Key, len(chunk))
		for i, ag := range chunk {
			keys[i] = table.InboxHeadKey(ag)
		}
		heads, err := h.st.BatchGet(ctx, keys)
		if err != nil {
			return storageErr(err)
		}
		for i, ag := range chunk {
			if err := h.moveCursor(ctx, r.ID, ag, version(heads[i])); err != nil {
				return err
			}
		}
	}
	return nil
}

// moveCursor sets a box endpoint's cursor for agent to at least seq,
// under CAS on its version (the seq itself), retried on a race.
func (h *Hub) moveCursor(ctx context.Context, endpoint, agent string, seq uint64) error {
	if seq == 0 {
		return nil // absent is 0
	}
	k := table.WebhookCursorKey(endpoint, agent)
	_, err := retry(ctx, func() (struct{}, error) {
		it, err := h.st.Get(ctx, k)
		if err != nil {
			return struct{}{}, storageErr(err)
		}
		if version(it) >= seq {
			return struct{}{}, nil
		}
		return struct{}{}, written(h.raw.Write(ctx, []store.Op{store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: seq, Data: table.Encode(struct{}{})}, casCond(it))}))
	})
	return err
}

// ListWebhooks lists a box's endpoints, oldest first.
func (a *Admin) ListWebhooks(ctx context.Context, box string) ([]*WebhookInfo, error) {
	if err := uuidArg("box", &box); err != nil {
		return nil, err
	}
	recs, err := a.h.webhooks(ctx)
	if err != nil {
		return nil, err
	}
	out := []*WebhookInfo{}
	for _, r := range recs {
		if r.rec.BoxID == box {
			out = append(out, webhookInfo(r.rec))
		}
	}
	slices.SortFunc(out, func(x, y *WebhookInfo) int { return strings.Compare(x.CreatedAt+x.WebhookID, y.CreatedAt+y.WebhookID) })
	return out, nil
}

// RotateWebhookSecret issues a new secret; the old one keeps signing
// beside it for overlap (so receivers can switch without a gap).
func (a *Admin) RotateWebhookSecret(ctx context.Context, id string, overlap time.Duration) (*WebhookInfo, error) {
	if overlap < 0 || overlap > 7*24*time.Hour {
		return nil, apperr.New(apperr.InvalidArgument, "overlap must be between 0 and 168h.")
	}
	var secret string
	rec, err := a.updateWebhook(ctx, id, func(r *table.Webhook, now time.Time) {
		secret = newWebhookSecret()
		kept := []table.WebhookSecret{{Secret: secret}}
		if overlap > 0 {
			kept = append(kept, table.WebhookSecret{Secret: r.Secrets[0].Secret, Until: now.Add(overlap)})
		}
		r.Secrets = kept
	})
	if err != nil {
		return nil, err
	}
	info := webhookInfo(rec)
	info.Secret = secret
	return info, nil
}

// SetWebhookEnabled disables an endpoint, or enables it (also a failing
// one): it then resumes from the agent's current inbox head, so the
// events dropped meanwhile stay dropped.
func (a *Admin) SetWebhookEnabled(ctx context.Context, id string, on bool) (*WebhookInfo, error) {
	var head uint64
	if on {
		rec, _, err := a.h.loadWebhook(ctx, id)
		if err != nil {
			return nil, err
		}
		if rec.PerBox() {
			if err := a.h.advanceCursors(ctx, rec); err != nil {
				return nil, err
			}
		} else {
			it, err := a.h.st.Get(ctx, table.InboxHeadKey(rec.AgentID))
			if err != nil {
				return nil, storageErr(err)
			}
			head = version(it)
		}
	}
	rec, err := a.updateWebhook(ctx, id, func(r *table.Webhook, _ time.Time) {
		if !on {
			r.Status = WebhookDisabled
			return
		}
		r.Status, r.FailingSince, r.DeliveredSeq = WebhookActive, time.Time{}, max(r.DeliveredSeq, head)
	})
	if err != nil {
		return nil, err
	}
	return webhookInfo(rec), nil
}

// RemoveWebhook deletes an endpoint.
func (a *Admin) RemoveWebhook(ctx context.Context, id string) error {
	if err := uuidArg("webhook", &id); err != nil {
		return err
	}
	if err := a.h.raw.Write(ctx, []store.Op{store.Delete(table.WebhookKey(id), store.Present)}); err != nil {
		if _, ok := err.(*store.ConditionFailedError); ok {
			return apperr.Forbidden()
		}
		return storageErr(err)
	}
	// A box endpoint's cursors go with it (an agent endpoint has none).
	cursors, err := a.h.webhookCursors(ctx, id)
	if err != nil {
		return err
	}
	var ops []store.Op
	for agent := range cursors {
		ops = append(ops, store.Delete(table.WebhookCursorKey(id, agent), store.Unconditional))
	}
	for chunk := range slices.Chunk(ops, 100) {
		if err := a.h.raw.Write(ctx, chunk); err != nil {
			return storageErr(err)
		}
	}
	return nil
}

func (a *Admin) updateWebhook(ctx context.Context, id string, change func(*table.Webhook, time.Time)) (*table.Webhook, error) {
	if err := uuidArg("webhook", &id); err != nil {
		return nil, err
	}
	return retry(ctx, func() (*table.Webhook, error) {
		rec, ver, err := a.h.loadWebhook(ctx, id)
		if err != nil {
			return nil, err
		}
		change(rec, a.h.clock())
		if err := a.h.putWebhook(ctx, rec, ver); err == nil {
			return rec, nil
		} else if _, ok := err.(*store.ConditionFailedError); !ok {
			return nil, storageErr(err)
		}
		return nil, errContended
	})
}

type versionedWebhook struct {
	rec *table.Webhook
	ver uint64
}

func (h *Hub) webhooks(ctx context.Context) ([]versionedWebhook, error) {
	recs, items, err := query[table.Webhook](ctx, h.st, store.Query{PK: table.WebhookPartition, From: table.WebhookPrefix, To: store.PrefixEnd(table.WebhookPrefix)})
	if err != nil {
		return nil, err
	}
	out := make([]versionedWebhook, 0, len(recs))
	for i, r := range recs {
		out = append(out, versionedWebhook{r, items[i].Version})
	}
	return out, nil
}

func (h *Hub) loadWebhook(ctx context.Context, id string) (*table.Webhook, uint64, error) {
	r, it, err := get[table.Webhook](ctx, h.st, table.WebhookKey(id), apperr.Forbidden())
	if err != nil {
		return nil, 0, err
	}
	return r, it.Version, nil
}

func (h *Hub) putWebhook(ctx context.Context, r *table.Webhook, ver uint64) error {
	k := table.WebhookKey(r.ID)
	return h.raw.Write(ctx, []store.Op{store.Put(&store.Item{PK: k.PK, SK: k.SK, Version: ver + 1, Data: table.Encode(r)}, store.AtVersion(ver))})
}

// WebhookTarget is an endpoint and one of its agents, as the dispatcher
// needs it: an agent endpoint is one target, a box endpoint one per
// active agent of its box (PerBox set, DeliveredSeq that agent's).
type WebhookTarget struct {
	ID, BoxID, AgentID, URL string
	PerBox                  bool
	// Secrets sign each event: the current one first, then any old one
	// still inside its overlap.
	Secrets      []string
	Status       string
	DeliveredSeq uint64
	FailingSince time.Time
}

// WebhookTargets lists every endpoint, for the dispatcher.
func (h *Hub) WebhookTargets(ctx context.Context) ([]WebhookTarget, error) {
	recs, err := h.webhooks(ctx)
	if err != nil {
		return nil, err
	}
	now := h.clock()
	out := make([]WebhookTarget, 0, len(recs))
	for _, v := range recs {
		r := v.rec
		t := WebhookTarget{ID: r.ID, BoxID: r.BoxID, AgentID: r.AgentID, URL: r.URL, Status: r.Status,
			DeliveredSeq: r.DeliveredSeq, FailingSince: r.FailingSince}
		for _, s := range r.Secrets {
			if s.Until.IsZero() || now.Before(s.Until) {
				t.Secrets = append(t.Secrets, s.Secret)
			}
		}
		if !r.PerBox() {
			out = append(out, t)
			continue
		}
		if r.Status != WebhookActive {
			out = append(out, t) // nothing to deliver: listed for its state
			continue
		}
		agents, err := h.boxAgents(ctx, r.BoxID)
		if err != nil {
			return nil, err
		}
		cursors, err := h.webhookCursors(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		for _, ag := range agents {
			at := t
			at.AgentID, at.PerBox, at.DeliveredSeq = ag, true, cursors[ag]
			out = append(out, at)
		}
	}
	return out, nil
}

// WakeState is what a wake event says: no body, file URL or key.
type WakeState struct {
	AgentID          string   `json:"agent_id"`
	BoxID            string   `json:"box_id"`
	InboxSeq         Revision `json:"inbox_seq" desc:"The newest inbox sequence."`
	UnreadCount      int64    `json:"unread_count"`
	OpenRequestCount int64    `json:"open_request_count"`
	Reasons          []string `json:"reasons" desc:"The newest row's reasons: dm, all, mention, reply, request."`
	MessageID        string   `json:"message_id,omitempty" desc:"The newest row's message."`
}

// WakeState reads an agent's wake state: its inbox head, attention counts
// and newest row (two reads).
func (h *Hub) WakeState(ctx context.Context, box, agent string) (*WakeState, error) {
	items, err := h.st.BatchGet(ctx, []store.Key{table.InboxHeadKey(agent), table.AckedCounterKey(agent), table.RequestCounterKey(agent)})
	if err != nil {
		return nil, storageErr(err)
	}
	seq := version(items[0])
	w := &WakeState{AgentID: agent, BoxID: box, InboxSeq: Revision(seq), UnreadCount: unread(items[0], items[1]),
		OpenRequestCount: count(items[2]), Reasons: []string{}}
	if seq == 0 {
		return w, nil
	}
	row, err := h.st.Get(ctx, table.InboxRowKey(agent, seq))
	if err != nil {
		return nil, storageErr(err)
	}
	if row != nil {
		if r, err := table.Decode[table.Attention](row); err == nil {
			w.Reasons, w.MessageID = ReasonNames(r.Reasons), r.MessageID
		}
	}
	return w, nil
}

// WebhookOutcome is one delivery attempt's result.
type WebhookOutcome struct {
	// Delivered is set on a 2xx: Seq is then delivered (for a box
	// endpoint, of AgentID's inbox).
	Delivered bool
	AgentID   string
	Seq       uint64
	Status    int
	// Failing marks the endpoint failing (its retry time is spent).
	Failing bool
}

// WebhookRecord stores an attempt's outcome on the endpoint: only the
// delivery fields change (read, modify, CAS, retried), so an owner's
// concurrent change (disable, rotate) is kept.
func (h *Hub) WebhookRecord(ctx context.Context, id string, o WebhookOutcome) error {
	moved := false
	_, err := retry(ctx, func() (struct{}, error) {
		r, ver, err := h.loadWebhook(ctx, id)
		if err != nil {
			return struct{}{}, err
		}
		if o.Delivered && r.PerBox() && !moved {
			// A box endpoint's delivered seq is its agent's cursor (moved
			// once, on its own CAS); the endpoint keeps the attempt's
			// fields. Read from the same load: no extra round trip.
			if o.AgentID == "" {
				return struct{}{}, apperr.New(apperr.InvalidArgument, "A box endpoint's outcome names its agent.")
			}
			if err := h.moveCursor(ctx, r.ID, o.AgentID, o.Seq); err != nil {
				return struct{}{}, err
			}
			moved = true
		}
		now := h.clock()
		r.LastStatus, r.LastAttempt = o.Status, now
		switch {
		case o.Delivered && r.PerBox():
			r.FailingSince = time.Time{}
		case o.Delivered:
			r.DeliveredSeq, r.FailingSince = max(r.DeliveredSeq, o.Seq), time.Time{}
		case r.FailingSince.IsZero():
			r.FailingSince = now
		}
		if o.Failing && r.Status == WebhookActive {
			r.Status = WebhookFailing
		}
		return struct{}{}, written(h.putWebhook(ctx, r, ver))
	})
	return err
}

package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/agentbox/agentbox/internal/webhook"
)

// The Standard Webhooks reference vector (the spec's libraries' tests).
func TestSignReferenceVector(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	const want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	body := []byte(`{"test": 2432232314}`)
	ts := time.Unix(1614265330, 0)
	got, err := webhook.Sign([]string{secret}, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body)
	if err != nil || got != want {
		t.Fatalf("Sign = %q, %v; want %q", got, err, want)
	}
	if err := webhook.Verify(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", got, body, ts.Add(time.Minute)); err != nil {
		t.Errorf("Verify of the reference signature: %v", err)
	}
	for name, c := range map[string]struct {
		id, ts string
		body   string
		now    time.Time
	}{
		"other body": {"msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", `{"test": 2432232315}`, ts},
		"other id":   {"msg_x", "1614265330", string(body), ts},
		"stale":      {"msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", string(body), ts.Add(webhook.Tolerance + time.Second)},
		"bad ts":     {"msg_p5jXN8AQM9LWM0D4loKWxJek", "x", string(body), ts},
	} {
		if err := webhook.Verify(secret, c.id, c.ts, got, []byte(c.body), c.now); err == nil {
			t.Errorf("Verify %s: accepted", name)
		}
	}
}

// TestBackoffBounded: every wait lies in [base/2, base/2+min(base*2^n, max)).
func TestBackoffBounded(t *testing.T) {
	for n := range 40 {
		for range 50 {
			d := webhook.Backoff(n, time.Second, time.Minute)
			ceil := time.Minute
			if n < 6 {
				ceil = time.Second << n
			}
			if d < time.Second/2 || d >= time.Second/2+ceil {
				t.Fatalf("backoff(%d) = %v, want in [0.5s, %v)", n, d, time.Second/2+ceil)
			}
		}
	}
}

// receiver is a TLS endpoint that verifies every delivery.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	secrets []string
	got     []delivery
	// answer decides each delivery's status (nil: 204); block, when set,
	// is waited on before answering.
	answer func(n int) int
	block  chan struct{}
	hits   chan delivery
}

type delivery struct {
	id    string
	event webhook.Event
	raw   string
	ok    bool // verified with every secret of r.secrets
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{hits: make(chan delivery, 100)}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := delivery{id: req.Header.Get(webhook.HeaderID), raw: string(body), ok: true}
		r.mu.Lock()
		secrets := r.secrets
		r.mu.Unlock()
		for _, s := range secrets {
			if webhook.Verify(s, d.id, req.Header.Get(webhook.HeaderTimestamp), req.Header.Get(webhook.HeaderSignature), body, time.Now()) != nil {
				d.ok = false
			}
		}
		_ = json.Unmarshal(body, &d.event)
		r.mu.Lock()
		r.got = append(r.got, d)
		n := len(r.got)
		answer, block := r.answer, r.block
		r.mu.Unlock()
		if block != nil && n == 1 {
			<-block
		}
		status := http.StatusNoContent
		if answer != nil {
			status = answer(n)
		}
		w.WriteHeader(status)
		r.hits <- d
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) client() *webhook.Client {
	o := webhook.ClientOptions{TLSConfig: r.srv.Client().Transport.(*http.Transport).TLSClientConfig}
	o.AllowForTest(netip.MustParseAddrPort(r.srv.Listener.Addr().String()))
	return webhook.NewClient(o)
}

func (r *receiver) next(t *testing.T) delivery {
	t.Helper()
	select {
	case d := <-r.hits:
		return d
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery within 20s")
	}
	return delivery{}
}

// world is a hub on one adapter with alice and bob, and bob's endpoint.
type world struct {
	h          *hub.Hub
	st         store.Store
	alice, bob hub.Credentials
	bobID      string
	hook       *hub.WebhookInfo
	n          int
}

func newWorld(t *testing.T, ad teststores.Adapter, r *receiver) *world {
	// The store and the hub on real time, as the dispatcher is.
	hw := hubtest.New(t, ad, hubtest.Config{Store: ad.Open(t, nil), Options: hub.Options{Logger: slog.New(slog.DiscardHandler)}})
	w := &world{h: hw.Hub, st: hw.Store, alice: hw.Prime(hw.Alice), bob: hw.Prime(hw.Bob), bobID: hw.Bob.AgentID}
	var err error
	w.hook, err = hw.Admin.AddWebhook(hw.Ctx, w.bobID, r.srv.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.hook.Secret, "whsec_") {
		t.Fatalf("AddWebhook secret %q, want whsec_...", w.hook.Secret)
	}
	r.secrets = []string{w.hook.Secret}
	return w
}

const secretBody = "the secret plan, never in an event"

func (w *world) send(t *testing.T) string {
	t.Helper()
	w.n++
	out, err := w.h.MessageSend(context.Background(), w.alice, hub.MessageSendInput{
		Mutation:    hub.Mutation{IdempotencyKey: fmt.Sprintf("m%d", w.n)},
		Destination: hub.Destination{Kind: "dm", RecipientAgentID: w.bobID}, BodyMD: secretBody,
		Requests: []string{w.bobID}})
	if err != nil {
		t.Fatal(err)
	}
	return out.MessageID
}

func (w *world) start(t *testing.T, r *receiver) (stop func()) {
	d := webhook.New(w.h, r.client(), nil)
	d.Shorten(20*time.Millisecond, 200*time.Millisecond, time.Hour, 50*time.Millisecond)
	w.h.OnAttention(d.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

func (w *world) endpoint(t *testing.T) *hub.WebhookInfo {
	t.Helper()
	list, err := w.h.Admin().ListWebhooks(context.Background(), w.hook.BoxID)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListWebhooks = %v, %v", list, err)
	}
	return list[0]
}

// waitFor polls cond (bounded) on the store's state.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 400 {
		if cond() {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestDeliverCoalesced: a delivery verifies, carries only the thin state,
// and a burst sent while one is in flight arrives as one event with the
// latest state.
func TestDeliverCoalesced(t *testing.T) {
	hubtest.ForEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		r := newReceiver(t)
		r.block = make(chan struct{})
		w := newWorld(t, ad, r)
		w.start(t, r)
		first := w.send(t)
		d := <-waitHit(t, r)
		_ = d
		for range 5 {
			w.send(t)
		}
		last := w.send(t)
		close(r.block)
		d1 := r.next(t)
		d2 := r.next(t)
		if !d1.ok || !d2.ok {
			t.Errorf("signatures did not verify: %v %v", d1.ok, d2.ok)
		}
		if d1.event.Data.InboxSeq != 1 || d1.event.Data.MessageID != first {
			t.Errorf("first event = %+v, want inbox_seq 1, message %s", d1.event.Data, first)
		}
		if d2.event.Data.InboxSeq != 7 || d2.event.Data.MessageID != last || d2.event.Data.UnreadCount != 7 ||
			d2.event.Data.OpenRequestCount != 7 || strings.Join(d2.event.Data.Reasons, ",") != "dm,request" {
			t.Errorf("coalesced event = %+v, want inbox_seq 7, message %s, 7 unread, 7 requests, dm+request", d2.event.Data, last)
		}
		if d2.event.Type != webhook.EventType || d2.event.Data.AgentID != w.bobID || d2.event.Data.BoxID != w.hook.BoxID {
			t.Errorf("event = %+v, want type %s for bob in the box", d2.event, webhook.EventType)
		}
		for _, d := range []delivery{d1, d2} {
			if strings.Contains(d.raw, secretBody) || strings.Contains(d.raw, "whsec_") || strings.Contains(d.raw, "abx_") {
				t.Errorf("event carries a body, secret or key: %s", d.raw)
			}
		}
		waitFor(t, "delivered_seq 7", func() bool { return w.endpoint(t).DeliveredSeq == "7" })
		select {
		case extra := <-r.hits:
			t.Errorf("a third delivery %+v; want the burst coalesced into one", extra.event.Data)
		case <-time.After(300 * time.Millisecond):
		}
	})
}

// waitHit returns a channel that yields once the receiver has seen (and
// is holding) the first delivery.
func waitHit(t *testing.T, r *receiver) chan delivery {
	ch := make(chan delivery, 1)
	waitFor(t, "the first delivery", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.got) > 0 {
			ch <- r.got[0]
			return true
		}
		return false
	})
	return ch
}

// TestRedeliveryAfter500: a 500 is retried with the same webhook-id until
// a 2xx; the endpoint shows the delivered seq.
func TestRedeliveryAfter500(t *testing.T) {
	r := newReceiver(t)
	r.answer = func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	w := newWorld(t, teststores.All()[0], r)
	w.start(t, r)
	w.send(t)
	a, b, c := r.next(t), r.next(t), r.next(t)
	if a.id == "" || a.id != b.id || b.id != c.id || !c.ok {
		t.Errorf("redeliveries ids %q %q %q (verified %v); want one id, verified", a.id, b.id, c.id, c.ok)
	}
	waitFor(t, "delivered", func() bool {
		e := w.endpoint(t)
		return e.DeliveredSeq == "1" && e.LastStatus == 200 && e.FailingSince == ""
	})
}

// TestRestartRedelivers: a dispatcher stopped mid-delivery leaves the
// state pending in the store; the next one delivers it.
func TestRestartRedelivers(t *testing.T) {
	r := newReceiver(t)
	r.block = make(chan struct{})
	w := newWorld(t, teststores.All()[0], r)
	stop := w.start(t, r)
	w.send(t)
	<-waitHit(t, r)
	stop() // cancels the delivery in flight: no outcome is recorded
	close(r.block)
	<-r.hits
	if e := w.endpoint(t); e.DeliveredSeq != "0" {
		t.Fatalf("after a cut delivery delivered_seq = %s, want 0 (still pending)", e.DeliveredSeq)
	}
	w.start(t, r)
	if d := r.next(t); d.event.Data.InboxSeq != 1 || !d.ok {
		t.Errorf("after restart: %+v verified %v, want inbox_seq 1 verified", d.event.Data, d.ok)
	}
	waitFor(t, "delivered", func() bool { return w.endpoint(t).DeliveredSeq == "1" })
}

// TestFailingThenReenabled: past the retry bound the endpoint is failing,
// later events are dropped, and re-enabling resumes from the current head.
func TestFailingThenReenabled(t *testing.T) {
	r := newReceiver(t)
	var mu sync.Mutex
	status := http.StatusInternalServerError
	r.answer = func(int) int { mu.Lock(); defer mu.Unlock(); return status }
	w := newWorld(t, teststores.All()[0], r)
	d := webhook.New(w.h, r.client(), nil)
	d.Shorten(10*time.Millisecond, 50*time.Millisecond, 200*time.Millisecond, 20*time.Millisecond)
	w.h.OnAttention(d.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	w.send(t)
	waitFor(t, "failing", func() bool { return w.endpoint(t).Status == hub.WebhookFailing })
	mu.Lock()
	status = http.StatusOK
	mu.Unlock()
	for len(r.hits) > 0 {
		<-r.hits
	}
	w.send(t)
	select {
	case h := <-r.hits:
		t.Fatalf("a failing endpoint got %+v", h.event.Data)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := w.h.Admin().SetWebhookEnabled(ctx, w.hook.WebhookID, true); err != nil {
		t.Fatal(err)
	}
	third := w.send(t)
	got := r.next(t)
	if got.event.Data.InboxSeq != 3 || got.event.Data.MessageID != third {
		t.Errorf("after re-enabling: %+v, want inbox_seq 3 (the dropped seq 2 stays dropped)", got.event.Data)
	}
}

// TestRotationOverlap: during the overlap every event verifies with the
// old and the new secret; after it, only the new one signs.
func TestRotationOverlap(t *testing.T) {
	r := newReceiver(t)
	w := newWorld(t, teststores.All()[0], r)
	rot, err := w.h.Admin().RotateWebhookSecret(context.Background(), w.hook.WebhookID, time.Hour)
	if err != nil || rot.Secret == w.hook.Secret || rot.Secrets != 2 {
		t.Fatalf("RotateWebhookSecret = %+v, %v; want a new secret and 2 signing", rot, err)
	}
	r.mu.Lock()
	r.secrets = []string{w.hook.Secret, rot.Secret}
	r.mu.Unlock()
	w.start(t, r)
	w.send(t)
	if d := r.next(t); !d.ok {
		t.Errorf("during the overlap a delivery did not verify with both secrets")
	}
	rot2, err := w.h.Admin().RotateWebhookSecret(context.Background(), w.hook.WebhookID, 0)
	if err != nil || rot2.Secrets != 1 {
		t.Fatalf("RotateWebhookSecret without overlap = %+v, %v; want 1 signing secret", rot2, err)
	}
	r.mu.Lock()
	r.secrets = []string{rot.Secret}
	r.mu.Unlock()
	w.send(t)
	if d := r.next(t); d.ok {
		t.Errorf("after a rotation without overlap the old secret still verifies")
	}
}

package webhook_test

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
	"github.com/agentbox/agentbox/internal/webhook"
)

// TestBoxEndpoint: a box endpoint receives the events of every active
// agent of its box, present and future, each naming its agent and signed
// with its own secret; it starts from each agent's head at registration,
// keeps one delivered seq per agent, and goes away whole when removed.
func TestBoxEndpoint(t *testing.T) {
	hubtest.ForEachAdapterSerial(t, func(t *testing.T, ad teststores.Adapter) {
		ctx := context.Background()
		agentRecv, boxRecv := newReceiver(t), newReceiver(t)
		w := newWorld(t, ad, agentRecv)
		a := w.h.Admin()
		w.send(t) // bob's row 1: before the box endpoint, never its event

		if _, err := a.AddBoxWebhook(ctx, "not-a-uuid", boxRecv.srv.URL); !isCode(err, apperr.InvalidArgument) {
			t.Errorf("AddBoxWebhook(bad box) = %v, want INVALID_ARGUMENT", err)
		}
		box, err := a.AddBoxWebhook(ctx, w.hook.BoxID, boxRecv.srv.URL+"/box")
		if err != nil {
			t.Fatal(err)
		}
		boxRecv.secrets = []string{box.Secret}
		if box.Scope != hub.WebhookScopeBox || box.AgentID != "" || box.DeliveredSeq != "" {
			t.Errorf("AddBoxWebhook = %+v, want scope box, no agent, no single delivered seq", box)
		}
		carol, err := a.CreateAgent(ctx, w.hook.BoxID, "carol", "")
		if err != nil {
			t.Fatal(err)
		}

		o := webhook.ClientOptions{TLSConfig: agentRecv.srv.Client().Transport.(*http.Transport).TLSClientConfig}
		o.AllowForTest(netip.MustParseAddrPort(agentRecv.srv.Listener.Addr().String()))
		o.AllowForTest(netip.MustParseAddrPort(boxRecv.srv.Listener.Addr().String()))
		d := webhook.New(w.h, webhook.NewClient(o), nil)
		d.Shorten(20*time.Millisecond, 200*time.Millisecond, time.Hour, 50*time.Millisecond)
		w.h.OnAttention(d.Wake)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { d.Run(runCtx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })

		w.send(t) // bob's row 2
		if _, err := w.h.MessageSend(ctx, w.bob, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: "to-carol"},
			Destination: hub.Destination{Kind: "dm", RecipientAgentID: carol.AgentID}, BodyMD: secretBody}); err != nil {
			t.Fatal(err)
		}
		got := map[string]delivery{}
		for range 2 {
			d := boxRecv.next(t)
			if !d.ok || d.event.Data == nil {
				t.Fatalf("box delivery %s: verified %v", d.raw, d.ok)
			}
			got[d.event.Data.AgentID] = d
		}
		if b := got[w.bobID]; b.event.Data == nil || b.event.Data.InboxSeq != 2 || !strings.Contains(b.id, w.bobID) {
			t.Errorf("bob's box event = %+v (id %q), want inbox_seq 2 (row 1 predates the endpoint), id naming bob", b.event.Data, b.id)
		}
		if c := got[carol.AgentID]; c.event.Data == nil || c.event.Data.InboxSeq != 1 || c.event.Data.BoxID != w.hook.BoxID {
			t.Errorf("carol's box event = %+v, want inbox_seq 1 for the agent created after the endpoint", c.event.Data)
		}
		for _, d := range got {
			if strings.Contains(d.raw, secretBody) {
				t.Errorf("box event carries the body: %s", d.raw)
			}
		}
		// The agent endpoint keeps its own course beside the box one.
		if d := agentRecv.next(t); d.event.Data == nil || d.event.Data.AgentID != w.bobID {
			t.Errorf("agent endpoint delivery %s, want bob's", d.raw)
		}

		list, err := a.ListWebhooks(ctx, w.hook.BoxID)
		if err != nil || len(list) != 2 {
			t.Fatalf("ListWebhooks = %v, %v; want the agent and the box endpoint", list, err)
		}
		for _, e := range list {
			if e.WebhookID == box.WebhookID && (e.Scope != hub.WebhookScopeBox || e.Secret != "") {
				t.Errorf("listed box endpoint %+v, want scope box and no secret", e)
			}
		}
		// Each agent's cursor is recorded: after a restart nothing is sent again.
		waitFor(t, "box cursors recorded", func() bool {
			targets, err := w.h.WebhookTargets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, tg := range targets {
				if tg.ID == box.WebhookID && tg.PerBox &&
					(tg.AgentID == w.bobID && tg.DeliveredSeq == 2 || tg.AgentID == carol.AgentID && tg.DeliveredSeq == 1) {
					seen++
				}
			}
			return seen == 2
		})
		if err := a.RemoveWebhook(ctx, box.WebhookID); err != nil {
			t.Fatal(err)
		}
		targets, err := w.h.WebhookTargets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range targets {
			if tg.ID == box.WebhookID {
				t.Errorf("removed box endpoint still a target: %+v", tg)
			}
		}
		pk, prefix := table.WebhookCursorsPrefix(box.WebhookID)
		if left, err := w.st.Query(ctx, store.Query{PK: pk, From: prefix, To: store.PrefixEnd(prefix)}); err != nil || len(left) != 0 {
			t.Errorf("after RemoveWebhook %d cursor items are left (%v), want none", len(left), err)
		}
	})
}

func isCode(err error, c apperr.Code) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == c
}

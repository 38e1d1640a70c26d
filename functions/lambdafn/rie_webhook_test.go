//go:build unix

package lambdafn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/functions/lambdafn"
)

// TestWebhookFunctionUnderRuntimeEmulator: the real binary as the webhook
// function consumes a DynamoDB Streams batch (testdata/stream_event.json),
// finds the agent's endpoint and attempts a delivery.
// The endpoint is a receiver on this machine's loopback, which the egress
// guard refuses at dial time in the deployed binary too: the invocation
// fails (Lambda would retry the batch, then dead-letter it), nothing
// reaches the receiver, and the endpoint records the failed attempt.
// Delivery itself is proved in process (internal/webhook
// TestDeliverAgentsRetries, TestStreamAgents here).
func TestWebhookFunctionUnderRuntimeEmulator(t *testing.T) {
	tab, recv, hits := webhookTable(t)
	alice, bob := tab.Alice, tab.Bob
	ctx := context.Background()
	tab.DM(tab.Prime(alice), bob, "m1", "wake up")
	raw, err := os.ReadFile("testdata/stream_event.json")
	if err != nil {
		t.Fatal(err)
	}
	emu := tab.start(t, lambdafn.WebhookFunction)
	res, err := rieClient.Post("http://"+emu.addr+invokePath, "application/json",
		bytes.NewReader([]byte(strings.ReplaceAll(string(raw), "AGENT_ID", bob.AgentID))))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.ErrorMessage == "" {
		t.Fatalf("invoking the webhook function: %v, %+v; want the batch failed (the guard refuses loopback)", err, out)
	}
	if strings.Contains(out.ErrorMessage, recv.URL) {
		t.Errorf("the function's error %q names the endpoint URL", out.ErrorMessage)
	}
	if hits.Load() != 0 {
		t.Errorf("the receiver on loopback got %d requests; the guard must refuse it", hits.Load())
	}
	list, err := tab.h.Admin().ListWebhooks(ctx, tab.box)
	if err != nil || len(list) != 1 || list[0].LastAttempt == "" || list[0].FailingSince == "" || list[0].DeliveredSeq != "0" {
		t.Errorf("after the invocation the endpoint = %+v, %v; want a failed attempt recorded, nothing delivered", list, err)
	}
}

// TestWebhookRedeliveryUnderRuntimeEmulator: the real binary as the
// webhook function takes the template's scheduled event and runs the full
// pass: bob's pending state, which no stream record names, is attempted
// (and refused by the guard, as above: the endpoint records the attempt);
// an event of another kind fails without an attempt.
func TestWebhookRedeliveryUnderRuntimeEmulator(t *testing.T) {
	tab, _, hits := webhookTable(t)
	alice, bob := tab.Alice, tab.Bob
	ctx := context.Background()
	emu := tab.start(t, lambdafn.WebhookFunction)
	invoke := func(body string) string {
		t.Helper()
		res, err := rieClient.Post("http://"+emu.addr+invokePath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct {
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out.ErrorMessage
	}
	if msg := invoke(`{"source": "aws.s3", "detail-type": "Object Created"}`); msg == "" {
		t.Error("an unknown event was accepted")
	}
	if list, err := tab.h.Admin().ListWebhooks(ctx, tab.box); err != nil || len(list) != 1 || list[0].LastAttempt != "" {
		t.Fatalf("after an unknown event the endpoint = %+v, %v; want no attempt", list, err)
	}
	tab.DM(tab.Prime(alice), bob, "m1", "wake up")
	if msg := invoke(`{"version": "0", "id": "1", "detail-type": "Scheduled Event", "source": "aws.events", "detail": {}}`); msg == "" {
		t.Fatal("the scheduled pass reported no failure; the guard must have refused the loopback endpoint")
	}
	if hits.Load() != 0 {
		t.Errorf("the receiver on loopback got %d requests; the guard must refuse it", hits.Load())
	}
	list, err := tab.h.Admin().ListWebhooks(ctx, tab.box)
	if err != nil || len(list) != 1 || list[0].LastAttempt == "" || list[0].DeliveredSeq != "0" {
		t.Errorf("after the scheduled pass the endpoint = %+v, %v; want an attempt recorded, nothing delivered", list, err)
	}
}

// webhookTable is an emulator table whose bob has an endpoint on a
// loopback TLS receiver; hits counts what reaches it (the guard must let
// nothing through).
func webhookTable(t *testing.T) (*emulatorTable, *httptest.Server, *atomic.Int64) {
	t.Helper()
	tab := newEmulatorTable(t)
	hits := &atomic.Int64{}
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(recv.Close)
	if _, err := tab.h.Admin().AddWebhook(context.Background(), tab.Bob.AgentID, recv.URL+"/wake"); err != nil {
		t.Fatal(err)
	}
	return tab, recv, hits
}

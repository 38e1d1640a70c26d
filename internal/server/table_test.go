package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
	"github.com/agentbox/agentbox/internal/store/dynamo/mototest"
)

// TestServeOnMotoTable runs the local server on a DynamoDB table held by
// moto, an engine independent of the one the adapter was developed on: the
// table is created by the server, the owner's commands go straight to the
// table through the admin CLI, and an agent primes and saves its checkpoint
// over REST.
func TestServeOnMotoTable(t *testing.T) {
	// moto checks no signature, but the client must find credentials: an
	// endpoint without any is refused.
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	endpoint := mototest.Endpoint(t)
	table := dynamotest.TableName(t, "agentbox-serve-")

	srv, err := server.Start(server.Config{Addr: "127.0.0.1:0", Table: table, Endpoint: endpoint, CreateTable: true})
	if err != nil {
		t.Fatalf("server.Start(table %q on moto): %v", table, err)
	}
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	if p := srv.SocketPath(); p != "" {
		t.Errorf("SocketPath() on a table = %q, want none", p)
	}

	admin := func(v any, args ...string) {
		t.Helper()
		var out, stderr bytes.Buffer
		args = append(args, "--table", table, "--endpoint", endpoint)
		if code := admincli.Main(t.Context(), args, &out, &stderr); code != 0 {
			t.Fatalf("agentbox admin %s = exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		if err := json.Unmarshal(out.Bytes(), v); err != nil {
			t.Fatalf("agentbox admin %s printed %s: %v", args[0], out.String(), err)
		}
	}
	var box hub.BoxInfo
	admin(&box, "create-box", "--name", "demo")
	var alice hub.AgentInfo
	admin(&alice, "create-agent", "--box", box.BoxID, "--name", "alice")

	call := func(method, path, session, body string, v any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+alice.BoxKey)
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set(rest.SessionHeader, session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s = %d %s, want 200", method, path, resp.StatusCode, raw)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	var primed struct {
		SessionID string `json:"session_id"`
	}
	call("POST", "/v1/agent/prime", "", "{}", &primed)
	if primed.SessionID == "" {
		t.Fatalf("POST /v1/agent/prime on the table: no session_id")
	}
	type checkpoint struct {
		Checkpoint struct {
			Revision string `json:"revision"`
			BodyMD   string `json:"body_md"`
		} `json:"checkpoint"`
	}
	var saved checkpoint
	call("PUT", "/v1/checkpoint", primed.SessionID,
		`{"expected_revision":"0","idempotency_key":"cp-1","body_md":"on moto"}`, &saved)
	if saved.Checkpoint.Revision != "1" {
		t.Errorf("PUT /v1/checkpoint expected 0: revision %q, want \"1\"", saved.Checkpoint.Revision)
	}
	var read checkpoint
	call("GET", "/v1/checkpoint", primed.SessionID, "", &read)
	if read.Checkpoint.Revision != "1" || read.Checkpoint.BodyMD != "on moto" {
		t.Errorf("GET /v1/checkpoint = revision %q body %q, want \"1\" \"on moto\"", read.Checkpoint.Revision, read.Checkpoint.BodyMD)
	}
}

// TestTableFlagsNeedTable: DynamoDB flags without a table would be
// silently ignored by the embedded store, so Start refuses them.
func TestTableFlagsNeedTable(t *testing.T) {
	for _, cfg := range []server.Config{
		{Endpoint: "http://127.0.0.1:1"},
		{Region: "eu-west-1"},
		{Table: "t", CreateTable: true},
	} {
		if _, err := server.Start(cfg); err == nil {
			t.Errorf("server.Start(%+v) = nil error, want a refusal", cfg)
		}
	}
}

//go:build unix

package lambdafn_test

// The real function binary, built as Lambda builds it, runs under the
// AWS Lambda Runtime Interface Emulator (the Runtime API the Lambda service
// offers a function), against a DynamoDB (minidyn) served from this test
// process. What runs here is what a deploy runs, minus API Gateway, whose
// events are written by hand.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentbox/agentbox/functions/lambdafn"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/hub/hubtest"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/reqlog/reqlogtest"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

const (
	// rieModule is a tool dependency in go.mod, which pins its version.
	rieModule  = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"
	invokePath = "/2015-03-31/functions/function/invocations"
)

// The emulator and the function binary are built once per test binary,
// on first use, into one directory TestMain removes: the emulator from the
// module cache at the version go.mod pins as a tool (no go install, no
// $PATH), the function as the template deploys it (functions/ with the
// Makefile's flags; native architecture, so that it runs here). Every
// function runs that one binary with its own AGENTBOX_FUNCTION.
var built struct {
	once           sync.Once
	dir            string
	rie, bootstrap string
	err            error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// binaries returns the emulator and the one function binary, building them
// on the first call.
func binaries(t *testing.T) (rie, bootstrap string) {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "agentbox-rie-")
		if built.err != nil {
			return
		}
		built.rie = filepath.Join(built.dir, "aws-lambda-rie")
		built.bootstrap = filepath.Join(built.dir, "bootstrap")
		for _, args := range [][]string{
			{"build", "-o", built.rie, rieModule},
			// The Makefile's LAMBDA_FLAGS: the same build, and the same
			// build-cache entries as infra's Makefile test.
			{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", built.bootstrap, "./functions"},
		} {
			cmd := exec.Command("go", args...)
			cmd.Dir = filepath.Join("..", "..")
			if out, err := cmd.CombinedOutput(); err != nil {
				built.err = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	if built.err != nil {
		t.Fatalf("building the emulator and the function binary: %v", built.err)
	}
	return built.rie, built.bootstrap
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// emulator is one function running under aws-lambda-rie.
type emulator struct {
	name string
	addr string
	out  *reqlogtest.Buffer // the process's output, for the failure report
}

// startEmulator runs bootstrap under the emulator on free loopback ports,
// with env as the function's whole environment, and waits until it
// accepts invocations. The process group is killed when t ends.
//
// The emulator binds its own ports, so a port found free may be taken
// before it binds: when the emulator exits before it listens, it is started
// again on new ports (at most emulatorStarts times). There is no time
// bound: a hang is the test binary's -timeout to report.
func startEmulator(t *testing.T, rie, name, bootstrap string, env []string) *emulator {
	t.Helper()
	e := &emulator{name: name, out: &reqlogtest.Buffer{}}
	for range emulatorStarts {
		e.addr = freePort(t)
		cmd := exec.Command(rie,
			"--runtime-interface-emulator-address", e.addr,
			"--runtime-api-address", freePort(t),
			"--log-level", "error",
			bootstrap)
		cmd.Dir = filepath.Dir(bootstrap)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = e.out, e.out
		// Its own process group, so that the bootstrap child dies with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting aws-lambda-rie for %s: %v", name, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			if t.Failed() {
				t.Logf("output of %s under aws-lambda-rie:\n%s", name, e.out)
			}
		})
	wait:
		for {
			select {
			case <-exited:
				// Most likely a port taken between freePort and the bind.
				t.Logf("aws-lambda-rie for %s exited before listening; starting it again on new ports", name)
				break wait
			default:
			}
			if c, err := net.Dial("tcp", e.addr); err == nil {
				c.Close()
				return e
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Fatalf("aws-lambda-rie for %s exited before listening %d times:\n%s", name, emulatorStarts, e.out)
	return nil
}

// emulatorStarts bounds startEmulator's attempts on fresh ports.
const emulatorStarts = 5

// functionEnv is a function's whole environment under the emulator: which
// function the one binary is (name: a tool or mcp, as the template sets
// it), the table on the local DynamoDB at endpoint, dummy credentials, and
// nothing from the developer's AWS configuration.
func functionEnv(table, endpoint, name string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		lambdafn.EnvFunction + "=" + name,
		lambdafn.EnvTable + "=" + table,
		lambdafn.EnvEndpoint + "=" + endpoint,
		lambdafn.EnvRegion + "=" + dynamotest.Region,
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_LAMBDA_FUNCTION_NAME=" + name,
	}
}

// rieClient has no timeout of its own: a hung invocation is the test
// binary's -timeout to report, not a wall-clock assertion.
var rieClient = &http.Client{}

// invoke sends an API Gateway HTTP API event to the function and returns
// its response, failing the test on anything but a well-formed response.
func (e *emulator) invoke(t *testing.T, method, path string, headers map[string]string, body string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	// A query string travels apart from the path, as API Gateway sends it.
	path, query, _ := strings.Cut(path, "?")
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: method + " " + path, RawPath: path, RawQueryString: query, Headers: headers, Body: body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: method + " " + path, AccountID: "123456789012", Stage: "$default",
			RequestID: fmt.Sprintf("rie-%d", time.Now().UnixNano()), APIID: "rietest",
			DomainName: "rietest.execute-api.us-east-1.amazonaws.com",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.9"},
		},
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rieClient.Post("http://"+e.addr+invokePath, "application/json", bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("invoking %s (%s %s): %v", e.name, method, path, err)
	}
	defer res.Body.Close()
	var out events.APIGatewayV2HTTPResponse
	dec := json.NewDecoder(res.Body)
	if res.StatusCode != http.StatusOK || dec.Decode(&out) != nil || out.StatusCode == 0 {
		t.Fatalf("invoking %s (%s %s): emulator answered HTTP %d without an API Gateway response", e.name, method, path, res.StatusCode)
	}
	if out.IsBase64Encoded {
		t.Fatalf("invoking %s (%s %s): body is base64, want JSON text", e.name, method, path)
	}
	return out
}

func header(res events.APIGatewayV2HTTPResponse, name string) string {
	for k, v := range res.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func TestFunctionsUnderRuntimeEmulator(t *testing.T) {
	_, bootstrap := binaries(t)
	functions := []string{lambdafn.MCPFunction, "agent_prime", "checkpoint_save"}

	t.Run("MissingTableFailsFast", func(t *testing.T) {
		// No time bound: a hang is the test binary's -timeout to report.
		cmd := exec.Command(bootstrap)
		cmd.Env = []string{"AWS_LAMBDA_RUNTIME_API=127.0.0.1:1", "PATH=" + os.Getenv("PATH"), lambdafn.EnvFunction + "=checkpoint_save"}
		out, err := cmd.Output()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("bootstrap without %s: got %v, want exit status 1", lambdafn.EnvTable, err)
		}
		var line map[string]any
		if json.Unmarshal(bytes.TrimSpace(out), &line) != nil || line["level"] != "ERROR" || !strings.Contains(fmt.Sprint(line["err"]), lambdafn.EnvTable) {
			t.Errorf("bootstrap without %s: stdout %q, want one JSON error line naming it", lambdafn.EnvTable, out)
		}
	})

	tb := newEmulatorTable(t)
	alice := tb.Alice

	emu := map[string]*emulator{}
	for _, name := range functions {
		emu[name] = tb.start(t, name)
	}
	bearer := "Bearer " + alice.BoxKey

	// REST: prime through its own function, save through another.
	res := emu["agent_prime"].invoke(t, "POST", "/v1/agent/prime", map[string]string{"authorization": bearer}, "")
	var prime struct {
		SessionID string `json:"session_id"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &prime) != nil || prime.SessionID == "" {
		t.Fatalf("agent_prime function: got %d %s, want 200 with a session_id", res.StatusCode, res.Body)
	}

	save := `{"expected_revision":"0","idempotency_key":"rie-1","body_md":"saved under the emulator"}`
	res = emu["checkpoint_save"].invoke(t, "PUT", "/v1/checkpoint", map[string]string{
		"authorization": bearer, "agentbox-session": prime.SessionID, "content-type": "application/json"}, save)
	var saved struct {
		Checkpoint struct {
			Revision string `json:"revision"`
		} `json:"checkpoint"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(res.Body), &saved) != nil || saved.Checkpoint.Revision != "1" {
		t.Fatalf("checkpoint_save function: got %d %s, want 200 with revision \"1\"", res.StatusCode, res.Body)
	}

	// A per-tool function serves its own route only.
	res = emu["checkpoint_save"].invoke(t, "POST", "/v1/agent/prime", map[string]string{"authorization": bearer}, "")
	if res.StatusCode != 404 {
		t.Errorf("checkpoint_save function asked for agent_prime's route: got %d %s, want 404", res.StatusCode, res.Body)
	}

	// MCP: initialize, initialized, tools/list, tools/call.
	mcp := emu[lambdafn.MCPFunction]
	mcpHeaders := map[string]string{"authorization": bearer, "content-type": "application/json",
		"accept": "application/json, text/event-stream"}
	res = mcp.invoke(t, "POST", lambdafn.MCPPath, mcpHeaders,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rie-test","version":"1"}}}`)
	sid := header(res, "Mcp-Session-Id")
	if res.StatusCode != 200 || sid == "" {
		t.Fatalf("MCP initialize: got %d with Mcp-Session-Id %q (%s), want 200 with a session", res.StatusCode, sid, res.Body)
	}
	mcpHeaders["mcp-session-id"] = sid
	mcpHeaders["mcp-protocol-version"] = "2025-06-18"
	res = mcp.invoke(t, "POST", lambdafn.MCPPath, mcpHeaders, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if res.StatusCode != http.StatusAccepted {
		t.Errorf("MCP notifications/initialized: got %d %s, want 202", res.StatusCode, res.Body)
	}

	var list struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	rpc(t, mcp, mcpHeaders, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, &list)
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	want := registry.New().Names()
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("MCP tools/list = %v, want every registry tool %v", names, want)
	}

	type callResult struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	var primed callResult
	rpc(t, mcp, mcpHeaders, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_prime","arguments":{}}}`, &primed)
	if primed.Result.IsError {
		t.Fatalf("MCP tools/call agent_prime: isError, structuredContent %s", primed.Result.StructuredContent)
	}
	var got callResult
	rpc(t, mcp, mcpHeaders, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"checkpoint_get","arguments":{}}}`, &got)
	var cp struct {
		Checkpoint struct {
			Revision string `json:"revision"`
		} `json:"checkpoint"`
	}
	if got.Result.IsError || json.Unmarshal(got.Result.StructuredContent, &cp) != nil || cp.Checkpoint.Revision != "1" {
		t.Errorf("MCP tools/call checkpoint_get: got %s, want the REST-saved revision \"1\"", got.Result.StructuredContent)
	}
}

// rpc posts one JSON-RPC request to the MCP function and decodes the
// answer, JSON or a single SSE event.
func rpc(t *testing.T, e *emulator, headers map[string]string, body string, out any) {
	t.Helper()
	res := e.invoke(t, "POST", lambdafn.MCPPath, headers, body)
	payload := res.Body
	if strings.HasPrefix(header(res, "Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(payload, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				payload = data
			}
		}
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(payload), out) != nil {
		t.Fatalf("MCP %s: got %d %s, want 200 with a JSON-RPC response", body, res.StatusCode, res.Body)
	}
}

// emulatorTable is the hubtest world on a DynamoDB table served from this
// process, whose agents the function binaries under test serve. It runs on
// real time, as the functions do.
type emulatorTable struct {
	*hubtest.World
	h               *hub.Hub
	table, endpoint string
	box             string
}

// start runs the function fn (the one binary under the emulator, built on
// first use) against the table, with env added to its environment.
func (tb *emulatorTable) start(t *testing.T, fn string, env ...string) *emulator {
	t.Helper()
	rie, bootstrap := binaries(t)
	return startEmulator(t, rie, fn, bootstrap, append(functionEnv(tb.table, tb.endpoint, fn), env...))
}

func newEmulatorTable(t *testing.T) *emulatorTable {
	t.Helper()
	client, endpoint := dynamotest.Start(t)
	table := dynamotest.NewTable(t, client)
	w := hubtest.New(t, teststores.Adapter{}, hubtest.Config{Store: dynamo.New(client, table, dynamo.Options{})})
	return &emulatorTable{World: w, h: w.Hub, table: table, endpoint: endpoint, box: w.Box}
}

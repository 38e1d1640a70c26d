package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
	"github.com/agentbox/agentbox/internal/store/dynamo/mototest"
)

func TestRun(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	// moto checks no signature, but a client for an endpoint must find
	// credentials.
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	moto := mototest.Endpoint(t)
	for _, tc := range []struct {
		name        string
		ctx         context.Context
		args        []string
		code        int
		stdoutHas   string
		stderrHas   string
		exactStdout []byte
	}{
		{name: "NoArgs", args: nil, code: 2, stderrHas: "Usage:"},
		{name: "UnknownCommand", args: []string{"deploy"}, code: 2, stderrHas: `unknown command "deploy"`},
		{name: "Help", args: []string{"help"}, code: 0, stdoutHas: "agentbox serve"},
		{name: "Contracts", args: []string{"contracts"}, code: 0, exactStdout: registry.New().ContractsJSON()},
		{name: "ContractsExtraArg", args: []string{"contracts", "x"}, code: 2},
		{name: "OpenAPI", args: []string{"openapi"}, code: 0, exactStdout: rest.OpenAPI(registry.New())},
		{name: "OpenAPIExtraArg", args: []string{"openapi", "x"}, code: 2},
		{name: "ServeBadFlag", args: []string{"serve", "--port", "1"}, code: 2},
		{name: "ServeBadLogLevel", args: []string{"serve", "--log-level", "loud"}, code: 2},
		{name: "ServePositional", args: []string{"serve", "now"}, code: 2},
		// A canceled context makes serve start, announce and stop at once.
		{name: "Serve", ctx: canceled, args: []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, code: 0, stdoutHas: "/mcp"},
		{name: "ServeOnTable", ctx: canceled, args: []string{"serve", "--addr", "127.0.0.1:0", "--table", dynamotest.TableName(t, "agentbox-cmd-"), "--endpoint", moto, "--create-table"},
			code: 0, stdoutHas: "agentbox admin ... --table agentbox-cmd-"},
		{name: "ServeEndpointWithoutTable", args: []string{"serve", "--endpoint", moto}, code: 1, stderrHas: "need a table"},
		{name: "HelpNamesTable", args: []string{"help"}, code: 0, stdoutHas: "agentbox serve --table NAME"},
		{name: "AdminDelegates", args: []string{"admin", "help"}, code: 0, stdoutHas: "create-agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			var out, errb bytes.Buffer
			code := run(ctx, tc.args, &out, &errb)
			if code != tc.code {
				t.Fatalf("run(%q) = %d, want %d; stderr:\n%s", tc.args, code, tc.code, errb.String())
			}
			if tc.stdoutHas != "" && !strings.Contains(out.String(), tc.stdoutHas) {
				t.Errorf("run(%q) stdout = %q, want it to contain %q", tc.args, out.String(), tc.stdoutHas)
			}
			if tc.stderrHas != "" && !strings.Contains(errb.String(), tc.stderrHas) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", tc.args, errb.String(), tc.stderrHas)
			}
			if tc.exactStdout != nil && !bytes.Equal(out.Bytes(), tc.exactStdout) {
				t.Errorf("run(%q) stdout differs from registry.ContractsJSON()", tc.args)
			}
		})
	}
}

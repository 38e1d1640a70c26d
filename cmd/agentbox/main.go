// Command agentbox runs the coordination hub on one machine and administers
// it, locally or on a deployed stack's table.
//
//	agentbox serve [--addr 127.0.0.1:8787] [--data ./.agentbox]
//	agentbox serve --table NAME [--endpoint URL] [--region R] [--create-table]
//	agentbox admin <command> [flags]     (agentbox admin help)
//	agentbox call TOOL [JSON]            (AGENTBOX_URL, AGENTBOX_KEY)
//	agentbox inbox [--wait S] [--summary]
//	agentbox contracts                   (prints tool-contracts.json)
//	agentbox openapi                     (prints openapi.json)
//	agentbox version
//
// The logic lives in internal/server and internal/admincli; this file only
// dispatches, so that tests drive the same code in process through run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/hookclient"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/oauth"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/server"
	"github.com/agentbox/agentbox/internal/version"
)

const usage = `Usage:
  agentbox serve [--addr HOST:PORT] [--data DIR] [--log-level LEVEL]
      Serve MCP (/mcp) and REST (/v1) on the embedded store, plus the admin
      socket DIR/admin.sock. Defaults: --addr 127.0.0.1:8787 --data .agentbox.
  agentbox serve --table NAME [--endpoint URL] [--region R] [--create-table]
                 [--addr HOST:PORT] [--log-level LEVEL]
      Serve the same on a DynamoDB table, with the store code the Lambda
      functions run. Credentials and region come from the AWS environment;
      --endpoint targets a local engine (moto, DynamoDB Local) and
      --create-table creates the table there if it is missing. No admin
      socket: run 'agentbox admin ... --table NAME [--endpoint URL]'.
      Either form takes --oauth-issuer URL --oauth-audience RESOURCE
      [--oauth-scope-prefix P] [--oauth-audience-from-scopes]
      [--oauth-metadata-url URL]: accept that issuer's access tokens
      beside keys (link subjects with 'agentbox admin oauth-link').
  agentbox admin <command> [flags]
      Manage boxes, agents and keys; 'agentbox admin help' lists commands.
  agentbox call TOOL [JSON-OBJECT]
  agentbox inbox [--wait SECONDS] [--summary]
      Client for hooks and scripts: call a tool, or read the unread inbox
      (--summary: one line). AGENTBOX_URL and AGENTBOX_KEY come from the
      environment; the session is kept in a 0600 state file. Exit codes:
      0 ok (inbox: unread attention), 1 tool error, 2 usage, 3 inbox empty,
      4 key missing or refused, 5 server unreachable.
  agentbox contracts
      Print every tool's contract (tool-contracts.json) to stdout.
  agentbox openapi
      Print the REST API's OpenAPI 3.1 document (openapi.json) to stdout.
  agentbox version
      Print the version (the one MCP serverInfo, the OpenAPI info and the
      functions' logs report), the Go version and the commit.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code: 0 success, 1
// failure, 2 usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "admin":
		return admincli.Main(ctx, args[1:], stdout, stderr)
	case "call":
		return hookclient.CallMain(ctx, args[1:], os.Getenv, stdout, stderr)
	case "inbox":
		return hookclient.InboxMain(ctx, args[1:], os.Getenv, stdout, stderr)
	case "contracts":
		if len(args) > 1 {
			fmt.Fprintln(stderr, "agentbox contracts takes no arguments")
			return 2
		}
		if _, err := stdout.Write(registry.New().ContractsJSON()); err != nil {
			fmt.Fprintln(stderr, "agentbox contracts:", err)
			return 1
		}
		return 0
	case "openapi":
		if len(args) > 1 {
			fmt.Fprintln(stderr, "agentbox openapi takes no arguments")
			return 2
		}
		if _, err := stdout.Write(rest.OpenAPI(registry.New())); err != nil {
			fmt.Fprintln(stderr, "agentbox openapi:", err)
			return 1
		}
		return 0
	case "version", "--version":
		if len(args) > 1 {
			fmt.Fprintln(stderr, "agentbox version takes no arguments")
			return 2
		}
		fmt.Fprintln(stdout, "agentbox", version.String())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "agentbox: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentbox serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", server.DefaultAddr, "TCP listen address; keep it on loopback unless TLS terminates in front")
	data := fs.String("data", admincli.DefaultDataDir, "data directory: database and admin socket (created 0700)")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	table := fs.String("table", "", "serve from this DynamoDB table instead of the embedded store")
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL of a local engine (moto, DynamoDB Local); with --table")
	region := fs.String("region", "", "AWS region of the table (default: AWS_REGION or the shared config); with --table")
	createTable := fs.Bool("create-table", false, "create the table if it does not exist; with --table and --endpoint only (a deployed stack's table belongs to its template)")
	var oc oauth.Config
	fs.StringVar(&oc.Issuer, "oauth-issuer", "", "accept OAuth access tokens of this OpenID issuer (exactly its iss); with --oauth-audience")
	fs.StringVar(&oc.Audience, "oauth-audience", "", "this resource's identifier, the aud tokens must carry (the MCP endpoint's public URL)")
	fs.StringVar(&oc.ScopePrefix, "oauth-scope-prefix", "", "prefix of the coordination scopes in tokens (Cognito: '<resource server identifier>/')")
	fs.BoolVar(&oc.AudienceFromScopes, "oauth-audience-from-scopes", false, "accept tokens without aud whose scopes carry the prefix (Cognito's access tokens)")
	fs.StringVar(&oc.MetadataURL, "oauth-metadata-url", "", "public URL of the protected resource metadata (default: derived from --oauth-audience)")
	lim := limits.Default()
	limits.RegisterFlags(fs, &lim)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentbox serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(stderr, "agentbox serve: --log-level: %v\n", err)
		return 2
	}
	log := reqlog.NewLogger(stderr, lvl)
	cfg := server.Config{Addr: *addr, DataDir: *data, Logger: log,
		Table: *table, Endpoint: *endpoint, Region: *region, CreateTable: *createTable, Limits: &lim}
	if oc.Issuer != "" || oc.Audience != "" {
		cfg.OAuth = &oc
	}
	if err := server.Run(ctx, cfg, stdout); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			fmt.Fprintf(stderr, "agentbox serve: %s is already in use (another agentbox serve?): "+
				"pick another address with --addr HOST:PORT (make run ADDR=HOST:PORT)\n", *addr)
			return 1
		}
		log.Error("agentbox serve failed", "err", err)
		return 1
	}
	return 0
}

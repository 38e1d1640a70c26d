// Package lambdafn is what the one Lambda binary (functions/) runs: it
// builds the function's handler once per cold start and hands it to the
// Lambda runtime.
//
// Every function of the template deploys the same binary. A tool's
// function (AGENTBOX_FUNCTION=<tool>) serves that tool's REST route only,
// so that each route keeps its own concurrency, logs and alarms in the
// template; the MCP function (AGENTBOX_FUNCTION=mcp) serves the MCP
// endpoint for every tool at /mcp.
//
// # Configuration (environment)
//
//   - AGENTBOX_FUNCTION (required): "mcp" or a registry tool name. Unset or
//     unknown, the function fails at init like a missing table does.
//   - AGENTBOX_TABLE (required): the DynamoDB table. Without it the function
//     logs one JSON line naming the variable and exits 1 at init, so a
//     misconfigured deploy fails on its first invocation, loudly, instead of
//     answering STORAGE_FAILURE to every call.
//   - AWS_REGION: set by Lambda; the SDK's default resolution applies.
//   - AGENTBOX_DYNAMODB_ENDPOINT (optional): a DynamoDB-compatible endpoint
//     (DynamoDB Local, minidyn, a VPC endpoint) for sam local and tests.
//   - AGENTBOX_METRICS_NAMESPACE (optional): the CloudWatch namespace of
//     the function's Embedded Metric Format lines (emf.go); the template
//     sets agentbox/<stack name>.
//   - AGENTBOX_OAUTH_ISSUER, AGENTBOX_OAUTH_AUDIENCE (optional, together):
//     accept OAuth access tokens of that issuer for that resource beside
//     agent keys (internal/oauth); AGENTBOX_OAUTH_SCOPE_PREFIX,
//     AGENTBOX_OAUTH_AUDIENCE_FROM_SCOPES ("true", for Cognito) and
//     AGENTBOX_OAUTH_METADATA_URL refine it. The template sets them when
//     its OAuth parameter is on.
//   - AWS_XRAY_DAEMON_ADDRESS: set by Lambda; with it, the DynamoDB calls of
//     a sampled invocation are X-Ray subsegments (xray.go).
//
// # Cold start
//
// Init loads the AWS configuration from the environment and builds the
// client, hub and handler: no network call (the first DynamoDB request opens
// the connection, during the first invocation). Everything built is reused
// by every invocation of the instance; the hub holds no per-request state.
package lambdafn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/agentbox/agentbox/functions/lambdahttp"
	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/mcpserver"
	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/oauth"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/version"
	"github.com/agentbox/agentbox/internal/webhook"
)

// Environment variables a function reads.
const (
	EnvFunction = "AGENTBOX_FUNCTION"
	EnvTable    = "AGENTBOX_TABLE"
	EnvEndpoint = "AGENTBOX_DYNAMODB_ENDPOINT"
	EnvRegion   = "AWS_REGION"

	EnvOAuthIssuer             = "AGENTBOX_OAUTH_ISSUER"
	EnvOAuthAudience           = "AGENTBOX_OAUTH_AUDIENCE"
	EnvOAuthScopePrefix        = "AGENTBOX_OAUTH_SCOPE_PREFIX"
	EnvOAuthAudienceFromScopes = "AGENTBOX_OAUTH_AUDIENCE_FROM_SCOPES"
	EnvOAuthMetadataURL        = "AGENTBOX_OAUTH_METADATA_URL"
)

// MCPPath is where the MCP function serves the endpoint; the template's MCP
// route must use the same path.
const MCPPath = "/mcp"

// MCPFunction is the AGENTBOX_FUNCTION value of the MCP endpoint's
// function; every other value names the tool a function serves, but for
// SweepFunction, OpviewFunction and OpviewPostFunction.
const MCPFunction = "mcp"

// SweepFunction is the AGENTBOX_FUNCTION value of the scheduled function
// that finishes intents whose caller vanished (hub.Sweep).
const SweepFunction = "sweep"

// OpviewFunction is the AGENTBOX_FUNCTION value of the operator view's
// function (internal/opview): the read-only page and its owner API.
const OpviewFunction = "opview"

// OpviewPostFunction is the AGENTBOX_FUNCTION value of the operator
// view's write function: the operator's post (opview.NewPoster), with the
// writer role.
const OpviewPostFunction = "opview_post"

// WebhookFunction is the AGENTBOX_FUNCTION value of the Streams-driven
// webhook dispatcher (streamHandler, stream.go): DynamoDB Streams
// records of inbox heads in, signed wake events out.
const WebhookFunction = "webhook"

// sweepBatch bounds the intents one scheduled run finishes.
const sweepBatch = 200

// Start runs the Lambda function AGENTBOX_FUNCTION names. It does not
// return.
func Start() {
	function := os.Getenv(EnvFunction)
	// The log lines and the metric lines share stdout: one writer, one
	// line per Write, so that concurrent lines never interleave.
	out := &lineWriter{w: os.Stdout}
	log := functionLogger(reqlog.NewLogger(out, slog.LevelInfo)).With(slog.String("version", version.Version))
	slog.SetDefault(log)
	rec := newEMF(out, os.Getenv(EnvMetricsNamespace))
	if function == SweepFunction || function == WebhookFunction {
		h, err := newHub(context.Background(), os.Getenv, log, rec)
		if err != nil {
			log.Error("agentbox function cannot start", slog.String("function", function), slog.String("err", err.Error()))
			os.Exit(1)
		}
		if function == WebhookFunction {
			// The stream's events carry keys only; the dispatcher reads
			// what it delivers. A scheduled event is the full redelivery
			// pass (webhookHandler).
			lambda.Start(invoked(func(ctx context.Context, ev json.RawMessage) (struct{}, error) {
				return struct{}{}, webhookHandler(webhook.New(h, webhook.NewClient(webhook.ClientOptions{}), log))(ctx, ev)
			}))
		}
		lambda.Start(invoked(sweepHandler(h, log)))
	}
	handler, err := initialize(context.Background(), os.Getenv, log, rec, builder(function))
	if err != nil {
		log.Error("agentbox function cannot start", slog.String("function", function), slog.String("err", err.Error()))
		os.Exit(1)
	}
	lambda.Start(invoked(lambdahttp.Handler(handler)))
}

var errNoFunction = errors.New(EnvFunction + ` is not set: it must be "mcp" or a tool name (the template sets it)`)

// builder returns what builds the handler of the named function. An
// unknown tool fails in toolHandler, at init.
func builder(function string) func(*hub.Hub, *slog.Logger) (http.Handler, error) {
	switch function {
	case "":
		return func(*hub.Hub, *slog.Logger) (http.Handler, error) { return nil, errNoFunction }
	case MCPFunction:
		return func(h *hub.Hub, log *slog.Logger) (http.Handler, error) { return mcpHandler(h, log), nil }
	case OpviewFunction:
		return func(h *hub.Hub, log *slog.Logger) (http.Handler, error) { return opview.New(h, log), nil }
	case OpviewPostFunction:
		return func(h *hub.Hub, log *slog.Logger) (http.Handler, error) { return opview.NewPoster(h, log), nil }
	default:
		return func(h *hub.Hub, log *slog.Logger) (http.Handler, error) { return toolHandler(h, log, function) }
	}
}

// config is the function's environment.
type config struct {
	table, region, endpoint string
}

var errNoTable = errors.New(EnvTable + " is not set: it must name the DynamoDB table (the template sets it)")

func configFrom(getenv func(string) string) (config, error) {
	c := config{table: getenv(EnvTable), region: getenv(EnvRegion), endpoint: getenv(EnvEndpoint)}
	if c.table == "" {
		return config{}, errNoTable
	}
	return c, nil
}

// initialize reads the configuration and builds the store, the hub and,
// with build, the handler.
func initialize(ctx context.Context, getenv func(string) string, log *slog.Logger, rec metrics.Recorder,
	build func(*hub.Hub, *slog.Logger) (http.Handler, error)) (http.Handler, error) {
	h, res, err := newHubOAuth(ctx, getenv, log, rec)
	if err != nil {
		return nil, err
	}
	handler, err := build(h, log)
	if err != nil || res == nil {
		return handler, err
	}
	return res.Handler(handler), nil
}

// oauthFrom is the OAuth resource server the environment configures, nil
// when it configures none.
func oauthFrom(getenv func(string) string) (*oauth.Resource, error) {
	iss, aud := getenv(EnvOAuthIssuer), getenv(EnvOAuthAudience)
	if iss == "" && aud == "" {
		return nil, nil
	}
	res, err := oauth.New(oauth.Config{Issuer: iss, Audience: aud, ScopePrefix: getenv(EnvOAuthScopePrefix),
		AudienceFromScopes: getenv(EnvOAuthAudienceFromScopes) == "true", MetadataURL: getenv(EnvOAuthMetadataURL)})
	if err != nil {
		return nil, fmt.Errorf("lambdafn: %w", err)
	}
	return res, nil
}

// newHub builds the store and the hub from the environment; rec receives
// the metrics.
func newHub(ctx context.Context, getenv func(string) string, log *slog.Logger, rec metrics.Recorder) (*hub.Hub, error) {
	h, _, err := newHubOAuth(ctx, getenv, log, rec)
	return h, err
}

// newHubOAuth is newHub with the OAuth resource server the hub verifies
// tokens with (nil: none), for the HTTP functions' challenges.
func newHubOAuth(ctx context.Context, getenv func(string) string, log *slog.Logger, rec metrics.Recorder) (*hub.Hub, *oauth.Resource, error) {
	cfg, err := configFrom(getenv)
	if err != nil {
		return nil, nil, err
	}
	res, err := oauthFrom(getenv)
	if err != nil {
		return nil, nil, err
	}
	client, err := dynamo.NewClient(ctx, dynamo.Config{Region: cfg.region, Endpoint: cfg.endpoint,
		APIOptions: tracingOptions(getenv)})
	if err != nil {
		return nil, nil, fmt.Errorf("lambdafn: DynamoDB client: %w", err)
	}
	lim, err := limits.FromEnv(getenv)
	if err != nil {
		return nil, nil, err
	}
	opts := hub.Options{Logger: log, Limits: &lim, Metrics: rec}
	if res != nil {
		opts.Tokens = res
	}
	return hub.New(dynamo.New(client, cfg.table, dynamo.Options{}), opts), res, nil
}

// SweepResult is what one scheduled sweep reports.
type SweepResult struct {
	Due      int `json:"due"`
	Finished int `json:"finished"`
	Stuck    int `json:"stuck"`
}

// sweepHandler finishes intents older than hub.SweepGrace: a fan-out or
// an ACK whose caller died between its writes. The run's figures are
// metrics (IntentsStuck has its alarm); a failure of the sweep itself is
// returned, so the function's error alarm sees it.
func sweepHandler(h *hub.Hub, log *slog.Logger) func(context.Context, json.RawMessage) (SweepResult, error) {
	return func(ctx context.Context, _ json.RawMessage) (SweepResult, error) {
		r, err := h.SweepReport(ctx, hub.SweepGrace, sweepBatch)
		if err != nil {
			return SweepResult{}, err
		}
		if r.Due > 0 {
			log.InfoContext(ctx, "intent sweep ran", "due", r.Due, "finished", r.Finished, "stuck", r.Stuck)
		}
		return SweepResult{Due: r.Due, Finished: r.Finished, Stuck: r.Stuck}, nil
	}
}

// toolHandler is the REST handler restricted to one tool.
func toolHandler(h *hub.Hub, log *slog.Logger, name string) (http.Handler, error) {
	r, err := registry.New().Only(name)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: %w", err)
	}
	return rest.New(h, r, log), nil
}

// mcpHandler serves MCP at MCPPath and the REST not-found envelope
// elsewhere.
func mcpHandler(h *hub.Hub, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MCPPath, mcpserver.New(h, registry.New(), log))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(rest.RequestIDHeader, reqlog.IDFrom(r.Header.Get(rest.RequestIDHeader)))
		rest.WriteError(w, 0, apperr.Forbidden())
	})
	return mux
}

// Package infra generates the SAM template (template.yaml) from the two
// sources it must agree with: the tool registry (one function and one
// HttpApi route per tool, plus the MCP function, all deploying the one
// binary of functions/; each function's role follows its tool's scope) and
// store.Definition (the table's keys, indexes and TTL attribute). It also
// writes the tenant's limits and operations: throttling, optional reserved
// concurrency, alarms and log groups (roles.go, alarms.go). Nothing in template.yaml is
// written by hand; `make template` regenerates it and a golden test fails
// when it is stale.
//
// The template is rendered as text rather than marshalled from maps so that
// the output keeps CloudFormation's short-form tags (!Ref, !Sub, !GetAtt),
// a stable key order and comments, and so that the generator needs no YAML
// library.
package infra

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/rest"
	"slices"
	"strings"

	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/store"
)

// Names shared with the tests and the build.
const (
	// TableResource is the logical id of the DynamoDB table.
	TableResource = "Table"
	// APIResource is the logical id of the HTTP API.
	APIResource = "HttpApi"
	// MCPFunction is the logical id of the MCP function.
	MCPFunction = "McpFunction"
	// TableEnv is the environment variable that names the table to every
	// function.
	TableEnv = "AGENTBOX_TABLE"
	// FunctionEnv is the environment variable that tells the one Lambda
	// binary which function it is: a tool name, or MCPName.
	FunctionEnv = "AGENTBOX_FUNCTION"
	// MCPName is FunctionEnv's value for the MCP function.
	MCPName = "mcp"
	// SweepFunction and OpviewFunction are the logical ids of the intent
	// sweep and of the operator view; SweepName and OpviewName their
	// FunctionEnv values.
	SweepFunction  = "SweepFunction"
	SweepName      = "sweep"
	OpviewFunction = "OpviewFunction"
	OpviewName     = "opview"
	// OpviewPostFunction and OpviewPostName are the operator view's one
	// write, the operator's post (opview.WriteRoutes): a function of its
	// own with the writer role, so the view's read function keeps the
	// reader role.
	OpviewPostFunction = "OpviewPostFunction"
	OpviewPostName     = "opview_post"
	// MCPTimeoutSeconds is every function's timeout but WaitTool's.
	MCPTimeoutSeconds = 10
	// WaitTool is the tool whose REST function serves long waits
	// (inbox_list's wait_seconds), with WaitTimeoutSeconds: above the
	// longest wait (limits.DefaultInboxWait) and its answer, below API
	// Gateway's 30 s.
	WaitTool           = "inbox_list"
	WaitTimeoutSeconds = 25
)

// MCPRoutes are the MCP endpoint's methods, all on MCPPath: POST carries
// JSON-RPC, DELETE ends a session, GET answers 405 (no server stream), as
// the Streamable HTTP transport requires of a server without one.
var MCPRoutes = []string{"POST", "GET", "DELETE"}

// MCPPath is the MCP endpoint's route.
const MCPPath = "/mcp"

// LogicalID returns the CloudFormation logical id of a tool's function:
// the tool name in CamelCase plus "Function" (checkpoint_save →
// CheckpointSaveFunction). The Makefile's build-%Function rule matches
// every such id.
func LogicalID(tool string) string {
	return camel(tool) + "Function"
}

func camel(s string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(s, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(part[1:])
	}
	return b.String()
}

// q renders s as a YAML double-quoted scalar. JSON string syntax is a
// subset of it, so encoding/json does the escaping.
func q(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// logRetentionDays are the values CloudWatch Logs accepts for a log
// group's retention.
var logRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// accessLogFormat is the HTTP API's access log line: request metadata
// only, and API Gateway's own error (its throttle, a function that failed
// or timed out: the answers that carry its body, not the envelope).
// API Gateway context variables never include request headers, so agent
// keys cannot reach this log.
const accessLogFormat = `{"requestId":"$context.requestId","routeKey":"$context.routeKey","status":"$context.status",` +
	`"integrationStatus":"$context.integrationStatus","latencyMs":"$context.responseLatency",` +
	`"integrationLatencyMs":"$context.integrationLatency","responseLength":"$context.responseLength",` +
	`"sourceIp":"$context.identity.sourceIp","requestTime":"$context.requestTime",` +
	`"error":"$context.error.message","errorType":"$context.error.responseType",` +
	`"integrationError":"$context.integrationErrorMessage"}`

// Template renders template.yaml for the tools of r.
func Template(r *registry.Registry) []byte {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	w("# Code generated by `go run ./infra/gen -w template.yaml` (make template). DO NOT EDIT.")
	w("#")
	w("# One function and one HttpApi route per tool of internal/registry, one MCP")
	w("# function for all of them, all running the one binary of functions/")
	w("# (AGENTBOX_FUNCTION names the tool), three shared least-privilege roles,")
	w("# alarms, and the single table of internal/store (store.Definition). One")
	w("# stack serves one tenant: deploy it with")
	w("# `sam build && sam deploy --config-env <tenant>` (see samconfig.toml).")
	w("AWSTemplateFormatVersion: \"2010-09-09\"")
	w("Transform: AWS::Serverless-2016-10-31")
	w("Description: agentbox coordination hub for AI agents (one tenant per stack).")
	w("")
	w("Parameters:")
	w("  TenantName:")
	w("    Type: String")
	w("    Description: Tenant this stack serves. Names the table (agentbox-<tenant>) and tags every function.")
	w("    AllowedPattern: %s", q("^[a-z][a-z0-9-]{0,39}$"))
	w("    ConstraintDescription: lowercase letters, digits and hyphens, starting with a letter, at most 40 characters.")
	w("  LogRetentionDays:")
	w("    Type: Number")
	w("    Description: Days CloudWatch keeps function and API access logs.")
	w("    Default: 30")
	w("    AllowedValues: [%s]", joinInts(logRetentionDays))
	w("  ApiThrottleRateLimit:")
	w("    Type: Number")
	w("    Description: Steady-state requests per second the HTTP API admits on each route before answering 429. POST /mcp carries every MCP tool call through one route, so this is also the tenant's whole MCP rate.")
	w("    Default: 100")
	w("    MinValue: 1")
	w("  ApiThrottleBurstLimit:")
	w("    Type: Number")
	w("    Description: Burst of requests the HTTP API admits on each route above the steady rate (POST /mcp included, as one route).")
	w("    Default: 200")
	w("    MinValue: 1")
	w("  ToolReservedConcurrency:")
	w("    Type: Number")
	w("    Description: Concurrent executions reserved for (and capping) each tool's REST function; 0 reserves none. Reserving takes from the account's unreserved pool, which must keep 100.")
	w("    Default: 0")
	w("    MinValue: 0")
	w("  McpInboxWaitMaxSeconds:")
	w("    Type: Number")
	w("    Description: Longest inbox_list wait the MCP function grants, seconds. Each waiting call holds one of the MCP function's executions, which serves every tool, so the default 0 makes MCP agents poll; long waits are served by the REST inbox_list function (InboxWaitMaxSeconds), whose executions are its own.")
	w("    Default: 0")
	w("    MinValue: 0")
	w("    MaxValue: %d", MCPTimeoutSeconds-2)
	w("  McpReservedConcurrency:")
	w("    Type: Number")
	w("    Description: Concurrent executions reserved for (and capping) the MCP function, which serves every tool; 0 reserves none.")
	w("    Default: 0")
	w("    MinValue: 0")
	w("  AlarmTopicArn:")
	w("    Type: String")
	w("    Description: SNS topic the alarms notify; empty, the alarms only change state.")
	w("    Default: \"\"")
	w("    AllowedPattern: %s", q("^(arn:[a-z-]+:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256})?$"))
	w("  Api5xxRatePercent:")
	w("    Type: Number")
	w("    Description: Percentage of HTTP API responses that are 5xx, over 5 minutes, above which the 5xx alarm fires.")
	w("    Default: 5")
	w("    MinValue: 1")
	w("    MaxValue: 100")
	opsParameters(w)
	webhookParameters(w) // webhook.go
	oauthParameters(w)   // oauth.go
	// Rate limits and quotas (internal/limits): every function reads them
	// from its environment; "rate,burst" per second, 0 turns one off.
	for _, st := range limits.Settings() {
		w("  %s:", st.Param)
		w("    Type: String")
		w("    Description: %s", q(st.Usage+" (env "+st.Env+")."))
		w("    Default: %s", q(st.Default))
	}
	w("")
	w("Conditions:")
	w("  HasAlarmTopic: !Not [!Equals [!Ref AlarmTopicArn, \"\"]]")
	w("  ReserveToolConcurrency: !Not [!Equals [!Ref ToolReservedConcurrency, 0]]")
	w("  ReserveMcpConcurrency: !Not [!Equals [!Ref McpReservedConcurrency, 0]]")
	opsConditions(w)
	webhookConditions(w) // webhook.go
	oauthConditions(w)   // oauth.go
	w("")
	oauthRules(w)
	w("Globals:")
	w("  Function:")
	w("    Runtime: provided.al2023")
	w("    Architectures:")
	w("      - arm64")
	w("    Handler: bootstrap")
	opsGlobals(w)
	w("    Environment:")
	w("      Variables:")
	w("        %s: %s", TableEnv, tableName)
	w("        %s: !Sub %s", MetricsNamespaceEnv, q(metricsNamespace))
	for _, st := range limits.Settings() {
		w("        %s: !Ref %s", st.Env, st.Param)
	}
	oauthEnv(w) // oauth.go
	w("    Tags:")
	w("      agentbox:tenant: !Ref TenantName")
	w("")
	w("Resources:")
	w("  %s:", APIResource)
	w("    Type: AWS::Serverless::HttpApi")
	w("    Properties:")
	w("      Description: !Sub \"agentbox ${TenantName}: REST routes under /v1 and the MCP endpoint at /mcp\"")
	w("      FailOnWarnings: true")
	w("      DefaultRouteSettings:")
	w("        ThrottlingRateLimit: !Ref ApiThrottleRateLimit")
	w("        ThrottlingBurstLimit: !Ref ApiThrottleBurstLimit")
	w("      AccessLogSettings:")
	w("        DestinationArn: !GetAtt ApiAccessLogs.Arn")
	// Single-quoted: the format is JSON full of double quotes and has no
	// single quote of its own.
	w("        Format: '%s'", accessLogFormat)
	w("      Tags:")
	w("        agentbox:tenant: !Ref TenantName")
	w("")
	logGroup(w, "ApiAccessLogs", "api")
	roles(w)

	fn := func(id, name, role, reserve, description string, routes []route, extra ...string) {
		logs := strings.TrimSuffix(id, "Function") + "Logs"
		w("  %s:", id)
		w("    Type: AWS::Serverless::Function")
		w("    Metadata:")
		w("      BuildMethod: makefile")
		w("    Properties:")
		w("      Description: %s", q(description))
		w("      CodeUri: .")
		w("      Role: !GetAtt %s.Arn", role)
		if reserve != "" {
			w("      ReservedConcurrentExecutions: !If [%s, !Ref %s, !Ref AWS::NoValue]", reserve, reserveParam[reserve])
		}
		for _, e := range extra {
			if strings.HasPrefix(e, "Timeout:") {
				w("      %s", e)
			}
		}
		w("      Environment:")
		w("        Variables:")
		w("          %s: %s", FunctionEnv, name)
		for _, e := range extra {
			if strings.HasPrefix(e, "env ") {
				w("          %s", strings.TrimPrefix(e, "env "))
			}
		}
		w("      LoggingConfig:")
		w("        LogFormat: JSON")
		w("        LogGroup: !Ref %s", logs)
		w("      Events:")
		for _, rt := range routes {
			w("        %s:", rt.event)
			if rt.stream {
				webhookEvent(w) // webhook.go
				continue
			}
			if rt.schedule != "" {
				w("          Type: Schedule")
				w("          Properties:")
				w("            Schedule: %s", rt.schedule)
				continue
			}
			w("          Type: HttpApi")
			w("          Properties:")
			w("            ApiId: !Ref %s", APIResource)
			w("            Method: %s", rt.method)
			w("            Path: %s", q(rt.path))
			w("            PayloadFormatVersion: \"2.0\"")
			for _, e := range extra {
				if strings.HasPrefix(e, "TimeoutInMillis:") {
					w("            %s", e)
				}
			}
		}
		w("")
		logGroup(w, logs, name)
		functionAlarm(w, id)
		functionOpsAlarms(w, id, reserve, name == WaitTool)
	}
	for _, t := range r.Tools() {
		routes := []route{{event: "Route", method: t.Method, path: t.Path}}
		if !t.Authenticated {
			// The public contract's function also serves the OpenAPI
			// document, public like get_help (every REST handler has it).
			routes = append(routes, route{event: "OpenAPI", method: "GET", path: rest.OpenAPIPath})
		}
		var extra []string
		if t.Name == WaitTool {
			// Its waits hold its own executions, for up to
			// InboxWaitMaxSeconds: a timeout above the longest wait,
			// and a route that lets the answer through.
			extra = []string{fmt.Sprintf("Timeout: %d", WaitTimeoutSeconds), "TimeoutInMillis: 29000"}
		}
		fn(LogicalID(t.Name), t.Name, RoleOf(t), "ReserveToolConcurrency", fmt.Sprintf("agentbox tool %s: %s %s", t.Name, t.Method, t.Path), routes, extra...)
	}
	var mcp []route
	for _, m := range MCPRoutes {
		mcp = append(mcp, route{event: "Mcp" + camel(strings.ToLower(m)), method: m, path: MCPPath})
	}
	mcp = append(mcp, oauthMetadataRoutes()...) // oauth.go
	fn(MCPFunction, MCPName, WriterRole, "ReserveMcpConcurrency", "agentbox MCP endpoint (Streamable HTTP, every tool): "+MCPPath, mcp,
		"env "+limits.InboxWaitEnv+": !Ref McpInboxWaitMaxSeconds")
	// The sweep finishes multi-write operations whose caller died between
	// chunks (a large fan-out, a long ACK); its errors raise its alarm.
	fn(SweepFunction, SweepName, WriterRole, "ReserveToolConcurrency", "agentbox intent sweep: finishes abandoned multi-write operations",
		[]route{{event: "EveryMinute", schedule: "rate(1 minute)"}})
	// The operator view only reads: the reader role.
	var view []route
	for i, rt := range opview.Routes {
		method, path, _ := strings.Cut(rt, " ")
		view = append(view, route{event: fmt.Sprintf("View%d", i+1), method: method, path: path})
	}
	fn(OpviewFunction, OpviewName, ReaderRole, "ReserveToolConcurrency", "agentbox operator view (read-only page for owner keys): /ui/", view)
	// Its one write, the operator's post, has the writer role.
	var post []route
	for i, rt := range opview.WriteRoutes {
		method, path, _ := strings.Cut(rt, " ")
		post = append(post, route{event: fmt.Sprintf("Post%d", i+1), method: method, path: path})
	}
	fn(OpviewPostFunction, OpviewPostName, WriterRole, "ReserveToolConcurrency",
		"agentbox operator view's post (owner keys with the write scope): the operator steps in", post)
	// The webhook dispatcher, its queue and alarms (webhook.go).
	fn(WebhookFunction, WebhookName, DispatcherRole, "ReserveWebhookConcurrency",
		"agentbox webhook dispatcher: inbox heads from the table's stream, signed wake events out",
		[]route{{event: "InboxHeads", stream: true}, {event: "Redeliver", schedule: WebhookRedeliverSchedule}})
	webhookQueueAndAlarms(w)
	oauthResources(w) // oauth.go

	def := store.Definition()
	w("  %s:", TableResource)
	w("    Type: AWS::DynamoDB::Table")
	w("    # The table is the tenant's data: it survives stack deletion and")
	w("    # replacement, and cannot be deleted by accident.")
	w("    DeletionPolicy: Retain")
	w("    UpdateReplacePolicy: Retain")
	w("    # Absent when the stack attaches a retained table (ExistingTableName).")
	w("    Condition: CreateTable")
	w("    Properties:")
	w("      TableName: !Sub \"agentbox-${TenantName}\"")
	w("      BillingMode: PAY_PER_REQUEST")
	tableCap(w, "      ")
	w("      DeletionProtectionEnabled: true")
	w("      AttributeDefinitions:")
	for _, a := range attributes(def) {
		w("        - AttributeName: %s", a)
		w("          AttributeType: S")
	}
	w("      KeySchema:")
	keySchema(w, "        ", def.PK, def.SK)
	w("      GlobalSecondaryIndexes:")
	for _, ix := range def.Indexes {
		w("        - IndexName: %s", ix.Name)
		w("          KeySchema:")
		keySchema(w, "            ", ix.PK, ix.SK)
		w("          Projection:")
		w("            ProjectionType: ALL")
		tableCap(w, "          ")
	}
	w("      StreamSpecification:") // the webhook dispatcher's (webhook.go)
	w("        StreamViewType: KEYS_ONLY")
	w("      TimeToLiveSpecification:")
	w("        AttributeName: %s", def.TTL)
	w("        Enabled: true")
	w("      PointInTimeRecoverySpecification:")
	w("        PointInTimeRecoveryEnabled: true")
	w("      SSESpecification:")
	w("        # false: DynamoDB's AWS-owned key; true: the aws/dynamodb KMS key.")
	w("        SSEEnabled: !If [UseOwnedTableKey, false, true]")
	w("      Tags:")
	w("        - Key: agentbox:tenant")
	w("          Value: !Ref TenantName")
	w("")
	tableAndAPIAlarms(w)
	dashboard(w)
	w("Outputs:")
	w("  ApiUrl:")
	w("    Description: REST base URL; tools live under it (see README).")
	w("    Value: !Sub \"https://${%s}.execute-api.${AWS::Region}.${AWS::URLSuffix}/v1\"", APIResource)
	w("  McpUrl:")
	w("    Description: MCP Streamable HTTP endpoint for agent configurations.")
	w("    Value: !Sub \"https://${%s}.execute-api.${AWS::Region}.${AWS::URLSuffix}%s\"", APIResource, MCPPath)
	w("  TableName:")
	w("    Description: The table; pass it to `agentbox admin --table`.")
	w("    Value: %s", tableName)
	oauthOutputs(w) // oauth.go
	w("  Dashboard:")
	w("    Description: The tenant's CloudWatch dashboard.")
	w("    Value: !Sub \"https://${AWS::Region}.console.${AWS::URLSuffix}/cloudwatch/home?region=${AWS::Region}#dashboards:name=agentbox-${TenantName}\"")
	return []byte(b.String())
}

// route is one event of a function: an HTTP API route, or a schedule.
type route struct {
	event, method, path, schedule string
	stream                        bool // the table's stream (webhook.go)
}

// reserveParam is the parameter behind each reservation condition.
var reserveParam = map[string]string{
	"ReserveToolConcurrency":    "ToolReservedConcurrency",
	"ReserveMcpConcurrency":     "McpReservedConcurrency",
	"ReserveWebhookConcurrency": "WebhookReservedConcurrency", // webhook.go
}

// logGroup writes a function's (or the API's) log group. The name is
// explicit, under /agentbox/<tenant>/, so that the roles can grant writing
// to exactly the stack's groups. The groups go with the stack
// (DeletionPolicy Delete): their content expires by LogRetentionDays
// anyway, and a retained group would block re-creating the tenant's stack
// under the same name.
func logGroup(w func(string, ...any), id, name string) {
	w("  %s:", id)
	w("    Type: AWS::Logs::LogGroup")
	w("    DeletionPolicy: Delete")
	w("    UpdateReplacePolicy: Delete")
	w("    Properties:")
	w("      LogGroupName: !Sub \"/agentbox/${TenantName}/%s\"", name)
	w("      RetentionInDays: !Ref LogRetentionDays")
	w("")
}

// attributes lists every key attribute of the table and its indexes once,
// in first-use order: CloudFormation rejects a definition listed twice and
// one that no key uses.
func attributes(def store.Schema) []string {
	var out []string
	add := func(names ...string) {
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	add(def.PK, def.SK)
	for _, ix := range def.Indexes {
		add(ix.PK, ix.SK)
	}
	return out
}

func keySchema(w func(string, ...any), indent, pk, sk string) {
	w("%s- AttributeName: %s", indent, pk)
	w("%s  KeyType: HASH", indent)
	if sk != "" {
		w("%s- AttributeName: %s", indent, sk)
		w("%s  KeyType: RANGE", indent)
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

package infra

// Operating a tenant stack: the parameters that bound a tenant (function
// memory and timeout, the table's spend cap and key, re-attaching a
// retained table, tracing), the alarms on latency, concurrency, the API's
// 4xx rate and stuck intents, and the dashboard. Kept apart from
// template.go so that the template's shape and its operations change
// independently.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// MetricsNamespaceEnv names the functions' CloudWatch namespace
// (functions/lambdafn), one per stack: agentbox/<stack name>.
const MetricsNamespaceEnv = "AGENTBOX_METRICS_NAMESPACE"

// metricsNamespace is the namespace as a !Sub string.
const metricsNamespace = "agentbox/${AWS::StackName}"

// Defaults of the operations parameters, shared with the tests and the
// README.
const (
	DefaultMemoryMB           = 256
	DefaultMaxReadUnits       = 4000
	DefaultMaxWriteUnits      = 2000
	DefaultLatencyAlarmMillis = 5000
)

// tableName is the YAML value of the tenant table's name: the stack's own
// table, or the retained table ExistingTableName attaches.
const tableName = "!If [CreateTable, !Ref " + TableResource + ", !Ref ExistingTableName]"

// NoStreamArn is ExistingTableStreamArn's default: an ARN in form, so that
// the template's linters can check the references to it, naming no stream.
const NoStreamArn = "arn:aws:dynamodb:::table/none/stream/none"

// tableStreamArn is the YAML value of its stream's ARN.
const tableStreamArn = "!If [CreateTable, !GetAtt " + TableResource + ".StreamArn, !Ref ExistingTableStreamArn]"

// tableArn and tableIndexArn are the YAML values of its ARNs.
const (
	tableArn      = "!If [CreateTable, !GetAtt " + TableResource + ".Arn, !Sub \"arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${ExistingTableName}\"]"
	tableIndexArn = "!If [CreateTable, !Sub \"${" + TableResource + ".Arn}/index/*\", !Sub \"arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${ExistingTableName}/index/*\"]"
)

func opsParameters(w func(string, ...any)) {
	w("  FunctionMemorySize:")
	w("    Type: Number")
	w("    Description: Memory of every function, MB (CPU grows with it).")
	w("    Default: %d", DefaultMemoryMB)
	w("    MinValue: 128")
	w("    MaxValue: 10240")
	w("  FunctionTimeoutSeconds:")
	w("    Type: Number")
	w("    Description: Timeout of every function but the REST inbox_list one (its own, above the longest wait). A request's deadline is this timeout less a margin, so a call answers before the function is killed; at most 29, below API Gateway's 30 s, and at least 10, above McpInboxWaitMaxSeconds' bound.")
	w("    Default: %d", MCPTimeoutSeconds)
	w("    MinValue: %d", MCPTimeoutSeconds)
	w("    MaxValue: 29")
	w("  TableMaxReadRequestUnits:")
	w("    Type: Number")
	w("    Description: Spend cap of the table and of each index, read request units per second (OnDemandThroughput); above it DynamoDB throttles and calls answer TEMPORARILY_UNAVAILABLE. At most the account's per-table quota (40000 by default).")
	w("    Default: %d", DefaultMaxReadUnits)
	w("    MinValue: 1")
	w("  TableMaxWriteRequestUnits:")
	w("    Type: Number")
	w("    Description: Spend cap of the table and of each index, write request units per second (OnDemandThroughput). At most the account's per-table quota (40000 by default).")
	w("    Default: %d", DefaultMaxWriteUnits)
	w("    MinValue: 1")
	w("  TableEncryptionKey:")
	w("    Type: String")
	w("    Description: The table's encryption at rest. AWS_MANAGED is the aws/dynamodb KMS key (its use is logged in CloudTrail and billed per request); AWS_OWNED is DynamoDB's own key, free and not visible in the account.")
	w("    Default: AWS_MANAGED")
	w("    AllowedValues: [AWS_MANAGED, AWS_OWNED]")
	w("  ExistingTableName:")
	w("    Type: String")
	w("    Description: Empty, the stack creates the table agentbox-<tenant>. The name of a table a deleted stack retained (agentbox-<tenant>), the stack attaches it instead of creating one; see the README's tenant section.")
	w("    Default: \"\"")
	w("    AllowedPattern: %s", q("^(agentbox-[a-z][a-z0-9-]{0,39})?$"))
	w("  ExistingTableStreamArn:")
	w("    Type: String")
	w("    Description: %s", q("With ExistingTableName, the attached table's stream ARN (aws dynamodb describe-table --query Table.LatestStreamArn), which the webhook dispatcher reads. Unused when the stack creates the table; the default is a placeholder that names no stream."))
	w("    Default: %s", q(NoStreamArn))
	w("    AllowedPattern: %s", q("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]*:[0-9]*:table/[A-Za-z0-9_.-]+/stream/[A-Za-z0-9_.:-]+$"))
	w("  Tracing:")
	w("    Type: String")
	w("    Description: %s", q("Active turns on X-Ray active tracing of every function: a segment per invocation, with a subsegment per DynamoDB call. Disabled passes an upstream trace header through only."))
	w("    Default: Disabled")
	w("    AllowedValues: [Disabled, Active]")
	w("  LatencyAlarmMilliseconds:")
	w("    Type: Number")
	w("    Description: p99 duration of a function over 5 minutes above which its latency alarm fires (not the REST inbox_list function, whose waits are long by design).")
	w("    Default: %d", DefaultLatencyAlarmMillis)
	w("    MinValue: 1")
	w("  ConcurrencyAlarmPercent:")
	w("    Type: Number")
	w("    Description: Percentage of a function's reserved concurrency above which its concurrency alarm fires (only with a reservation).")
	w("    Default: 80")
	w("    MinValue: 1")
	w("    MaxValue: 100")
	w("  Api4xxRatePercent:")
	w("    Type: Number")
	w("    Description: Percentage of HTTP API responses that are 4xx (429 throttles included), over 5 minutes, above which the 4xx alarm fires.")
	w("    Default: 25")
	w("    MinValue: 1")
	w("    MaxValue: 100")
}

func opsConditions(w func(string, ...any)) {
	w("  CreateTable: !Equals [!Ref ExistingTableName, \"\"]")
	w("  UseOwnedTableKey: !Equals [!Ref TableEncryptionKey, AWS_OWNED]")
	w("  TracingActive: !Equals [!Ref Tracing, Active]")
}

// opsGlobals are the function globals the operations parameters set.
func opsGlobals(w func(string, ...any)) {
	w("    MemorySize: !Ref FunctionMemorySize")
	w("    Timeout: !Ref FunctionTimeoutSeconds")
	w("    Tracing: !If [TracingActive, Active, PassThrough]")
}

// xrayStatement lets a role send trace segments when tracing is on (SAM
// adds it only to roles it makes).
func xrayStatement(w func(string, ...any)) {
	w("              - !If")
	w("                - TracingActive")
	w("                - Sid: XRay")
	w("                  Effect: Allow")
	w("                  Action: [xray:PutTraceSegments, xray:PutTelemetryRecords]")
	w("                  Resource: \"*\"")
	w("                - !Ref AWS::NoValue")
}

// tableCap writes the on-demand spend cap of the table or of an index.
func tableCap(w func(string, ...any), indent string) {
	w("%sOnDemandThroughput:", indent)
	w("%s  MaxReadRequestUnits: !Ref TableMaxReadRequestUnits", indent)
	w("%s  MaxWriteRequestUnits: !Ref TableMaxWriteRequestUnits", indent)
}

// functionOpsAlarms are a function's latency alarm (unless long is set:
// its calls wait by design) and, with a reservation, its concurrency
// alarm.
func functionOpsAlarms(w func(string, ...any), fn, reserve string, long bool) {
	base := strings.TrimSuffix(fn, "Function")
	if !long {
		alarmHead(w, base+"LatencyAlarm", fn+"'s p99 duration exceeded LatencyAlarmMilliseconds")
		w("      Namespace: AWS/Lambda")
		w("      MetricName: Duration")
		w("      Dimensions:")
		w("        - Name: FunctionName")
		w("          Value: !Ref %s", fn)
		w("      ExtendedStatistic: p99")
		w("      Period: 300")
		w("      ComparisonOperator: GreaterThanThreshold")
		w("      Threshold: !Ref LatencyAlarmMilliseconds")
		w("")
	}
	if reserve == "" {
		return
	}
	alarmHeadIf(w, base+"ConcurrencyAlarm", reserve, fn+" ran near its reserved concurrency")
	w("      ComparisonOperator: GreaterThanOrEqualToThreshold")
	w("      Threshold: !Ref ConcurrencyAlarmPercent")
	w("      Metrics:")
	metricStat(w, "concurrent", "AWS/Lambda", "ConcurrentExecutions", "Maximum", [][2]string{{"FunctionName", "!Ref " + fn}})
	w("        - Id: percent")
	w("          Expression: !Sub \"100 * concurrent / ${%s}\"", reserveParam[reserve])
	w("          Label: percent of the reservation")
	w("          ReturnData: true")
	w("")
}

// opsAlarms are the stack-wide alarms of operations: the API's 4xx rate
// and intents the sweep cannot finish.
func opsAlarms(w func(string, ...any)) {
	rateAlarm(w, "Api4xxAlarm", "more than Api4xxRatePercent of HTTP API responses were 4xx (429 throttles included)", "4xx", "Api4xxRatePercent")

	alarmHead(w, "SweepStuckAlarm", "the intent sweep could not finish an intent in any run for 5 minutes (IntentsStuck)")
	w("      Namespace: !Sub %s", q(metricsNamespace))
	w("      MetricName: IntentsStuck")
	w("      Dimensions:")
	w("        - Name: Function")
	w("          Value: %s", SweepName)
	// Minimum: stuck in every run of the period (the sweep runs each
	// minute), not one that a throttled step delayed by a minute.
	w("      Statistic: Minimum")
	w("      Period: 300")
	w("      ComparisonOperator: GreaterThanOrEqualToThreshold")
	w("      Threshold: 1")
	w("")
}

// dashboard writes the tenant's CloudWatch dashboard: calls and errors by
// tool, latency, throttles and rate limits, the table's consumed
// capacity, the sweep's figures. Tool-level widgets use SEARCH over the
// stack's namespace, so a new tool needs no new widget.
func dashboard(w func(string, ...any)) {
	ns := `"` + metricsNamespace + `"`
	search := func(dims, metric, stat string) map[string]any {
		return map[string]any{"expression": fmt.Sprintf(`SEARCH('{%s,%s} MetricName="%s"', '%s', 300)`, ns, dims, metric, stat)}
	}
	var widgets []map[string]any
	add := func(title string, stacked bool, metrics ...[]any) {
		n := len(widgets)
		widgets = append(widgets, map[string]any{
			"type": "metric", "x": (n % 2) * 12, "y": (n / 2) * 6, "width": 12, "height": 6,
			"properties": map[string]any{"title": title, "region": "${AWS::Region}", "stat": "Sum", "period": 300,
				"view": "timeSeries", "stacked": stacked, "metrics": metrics},
		})
	}
	expr := func(id string, e map[string]any) []any {
		e["id"] = id
		return []any{e}
	}
	add("Calls by tool and code", true, expr("calls", search("Code,Tool", "Calls", "Sum")))
	add("Errors by tool", true, expr("errors", search("Tool", "Errors", "Sum")))
	add("Latency p50 by tool (ms)", false, expr("p50", search("Tool", "Latency", "p50")))
	add("Latency p99 by tool (ms)", false, expr("p99", search("Tool", "Latency", "p99")))
	add("Outcomes by code (RATE_LIMITED, REVISION_CONFLICT, TEMPORARILY_UNAVAILABLE...)", false, expr("codes", search("Code", "Calls", "Sum")))
	add("Contention retries and fan-out steps by tool", false,
		expr("retries", search("Tool", "Retries", "Sum")), expr("steps", search("Tool", "FanoutSteps", "Sum")))
	add("HTTP API: requests, 4xx (429 included), 5xx", false,
		[]any{"AWS/ApiGateway", "Count", "ApiId", "${" + APIResource + "}"},
		[]any{"AWS/ApiGateway", "4xx", "ApiId", "${" + APIResource + "}"},
		[]any{"AWS/ApiGateway", "5xx", "ApiId", "${" + APIResource + "}"},
		[]any{"AWS/Lambda", "Throttles", "FunctionName", "${" + MCPFunction + "}", map[string]any{"label": "MCP function throttles"}})
	var throttles [][]any
	for _, op := range dynamoOperations {
		throttles = append(throttles, []any{"AWS/DynamoDB", "ThrottledRequests", "TableName", "${TableName}", "Operation", op})
	}
	add("Table throttled requests by operation", true, throttles...)
	add("Table consumed capacity (units per 5 min)", false,
		[]any{"AWS/DynamoDB", "ConsumedReadCapacityUnits", "TableName", "${TableName}"},
		[]any{"AWS/DynamoDB", "ConsumedWriteCapacityUnits", "TableName", "${TableName}"})
	sweep := func(name string) []any {
		return []any{metricsNamespace, name, "Function", SweepName}
	}
	add("Intent sweep: due (open past the grace), finished, stuck", false,
		sweep("IntentsDue"), sweep("IntentsFinished"), sweep("IntentsStuck"))

	// One widget per line: short enough to read, long enough not to
	// drown the template.
	lines := make([]string, len(widgets))
	for i, wd := range widgets {
		b, err := json.Marshal(wd)
		if err != nil {
			panic(err) // unreachable: strings, numbers, booleans
		}
		lines[i] = string(b)
	}
	w("  Dashboard:")
	w("    Type: AWS::CloudWatch::Dashboard")
	w("    Properties:")
	w("      DashboardName: !Sub \"agentbox-${TenantName}\"")
	w("      DashboardBody: !Sub")
	w("        - |")
	w("          {\"widgets\": [")
	w("          %s", strings.Join(lines, ",\n          "))
	w("          ]}")
	w("        - TableName: %s", tableName)
	w("")
}

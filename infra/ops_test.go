package infra_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentbox/agentbox/functions/lambdafn"
	"github.com/agentbox/agentbox/infra"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/store"
)

// isTableName reports whether n is the table's name as every reference
// must write it: the stack's table, or the one ExistingTableName attaches.
func isTableName(n *yaml.Node) bool {
	return n != nil && n.Tag == "!If" && len(n.Content) == 3 && n.Content[0].Value == "CreateTable" &&
		isRef(n.Content[1], infra.TableResource) && isRef(n.Content[2], "ExistingTableName")
}

// TestOperationsParameters: the parameters that bound a tenant exist with
// their documented defaults, and the globals and the table use them.
func TestOperationsParameters(t *testing.T) {
	root := loadTemplate(t)
	params := get(root, "Parameters")
	for name, def := range map[string]string{
		"FunctionMemorySize": "256", "FunctionTimeoutSeconds": "10",
		"TableMaxReadRequestUnits": "4000", "TableMaxWriteRequestUnits": "2000",
		"TableEncryptionKey": "AWS_MANAGED", "ExistingTableName": "", "Tracing": "Disabled",
		"LatencyAlarmMilliseconds": "5000", "ConcurrencyAlarmPercent": "80", "Api4xxRatePercent": "25",
	} {
		p := get(params, name)
		if p == nil {
			t.Errorf("parameter %s is missing", name)
			continue
		}
		if got := str(get(p, "Default")); got != def {
			t.Errorf("parameter %s defaults to %q, want %q", name, got, def)
		}
		if str(get(p, "Description")) == "<missing>" {
			t.Errorf("parameter %s has no description", name)
		}
	}
	// The timeout stays below API Gateway's 30 s and at least the MCP
	// function's bound on inbox waits.
	timeout := get(params, "FunctionTimeoutSeconds")
	if str(get(timeout, "MaxValue")) != "29" || str(get(timeout, "MinValue")) != "10" {
		t.Errorf("FunctionTimeoutSeconds bounds = [%s, %s], want [10, 29]", str(get(timeout, "MinValue")), str(get(timeout, "MaxValue")))
	}

	g := path(root, "Globals", "Function")
	if !isRef(get(g, "MemorySize"), "FunctionMemorySize") || !isRef(get(g, "Timeout"), "FunctionTimeoutSeconds") {
		t.Errorf("Globals.Function MemorySize/Timeout do not use their parameters")
	}
	if tr := get(g, "Tracing"); tr == nil || tr.Tag != "!If" || tr.Content[0].Value != "TracingActive" || tr.Content[1].Value != "Active" {
		t.Errorf("Globals.Function.Tracing is not Active under TracingActive")
	}
	ns := path(g, "Environment", "Variables", infra.MetricsNamespaceEnv)
	if ns == nil || ns.Tag != "!Sub" || ns.Value != "agentbox/${AWS::StackName}" {
		t.Errorf("the functions' metrics namespace is not agentbox/<stack>")
	}
	if infra.MetricsNamespaceEnv != lambdafn.EnvMetricsNamespace {
		t.Errorf("template sets %s, functions read %s", infra.MetricsNamespaceEnv, lambdafn.EnvMetricsNamespace)
	}
	// Every role may send trace segments when tracing is on.
	for _, role := range []string{infra.PublicRole, infra.ReaderRole, infra.WriterRole} {
		found := false
		doc := path(get(get(root, "Resources"), role), "Properties", "Policies")
		for _, st := range path(doc.Content[0], "PolicyDocument", "Statement").Content {
			if st.Tag == "!If" && st.Content[0].Value == "TracingActive" && str(get(st.Content[1], "Sid")) == "XRay" {
				found = true
			}
		}
		if !found {
			t.Errorf("role %s cannot send trace segments under TracingActive", role)
		}
	}

	table := get(get(root, "Resources"), infra.TableResource)
	capped := func(where string, n *yaml.Node) {
		c := get(n, "OnDemandThroughput")
		if !isRef(get(c, "MaxReadRequestUnits"), "TableMaxReadRequestUnits") || !isRef(get(c, "MaxWriteRequestUnits"), "TableMaxWriteRequestUnits") {
			t.Errorf("%s: OnDemandThroughput is not the spend cap's parameters", where)
		}
	}
	props := get(table, "Properties")
	capped("table", props)
	for i, ix := range get(props, "GlobalSecondaryIndexes").Content {
		capped(store.Definition().Indexes[i].Name, ix)
	}
}

// TestTemplateReattachesTable: with ExistingTableName set, the stack
// creates no table and nothing refers to the absent one: every reference
// to the table resource sits in an !If on CreateTable, the table's own
// condition, whose other branch names the existing table. (cfn-lint, in
// TestCfnLint, also rejects an unguarded reference: W1001.)
func TestTemplateReattachesTable(t *testing.T) {
	root := loadTemplate(t)
	resources := get(root, "Resources")
	if c := str(get(get(resources, infra.TableResource), "Condition")); c != "CreateTable" {
		t.Fatalf("table Condition = %q, want CreateTable", c)
	}
	if cond := path(root, "Conditions", "CreateTable"); cond == nil || cond.Tag != "!Equals" || !isRef(cond.Content[0], "ExistingTableName") || cond.Content[1].Value != "" {
		t.Errorf(`CreateTable is not !Equals [!Ref ExistingTableName, ""]`)
	}
	refersToTable := regexp.MustCompile(`^` + infra.TableResource + `(\.|$)|\$\{` + infra.TableResource + `[.}]`)
	refs := 0
	var walk func(where string, n *yaml.Node, guarded bool)
	walk = func(where string, n *yaml.Node, guarded bool) {
		if n.Tag == "!If" && len(n.Content) == 3 && n.Content[0].Value == "CreateTable" {
			walk(where, n.Content[1], true)
			walk(where, n.Content[2], false)
			if refersToTable.MatchString(n.Content[2].Value) {
				t.Errorf("%s: the attached branch refers to the table resource", where)
			}
			return
		}
		if (n.Tag == "!Ref" || n.Tag == "!GetAtt" || n.Tag == "!Sub") && refersToTable.MatchString(n.Value) {
			refs++
			if !guarded {
				t.Errorf("%s: %s %s is not guarded by CreateTable", where, n.Tag, n.Value)
			}
		}
		for _, c := range n.Content {
			walk(where, c, guarded)
		}
	}
	for _, section := range []string{"Globals", "Resources", "Outputs"} {
		for _, p := range pairs(get(root, section)) {
			if p.key != infra.TableResource {
				walk(section+"."+p.key, p.val, false)
			}
		}
	}
	// The roles, the functions' environment, the table alarms, the
	// dashboard and the output all name the table.
	if refs < 5 {
		t.Errorf("found %d references to the table, want the roles', the environment's, the alarms' and the output's", refs)
	}
}

// TestOperationsAlarms: every function alarms on its p99 latency (but the
// REST inbox_list function, whose calls wait) and, with a reservation, on
// its concurrency near it; the table alarms on ThrottledRequests per
// operation (indexes included); the API on its 4xx rate; the sweep on
// stuck intents.
func TestOperationsAlarms(t *testing.T) {
	resources := get(loadTemplate(t), "Resources")
	reg := registry.New()
	fns := []string{infra.MCPFunction, infra.SweepFunction, infra.OpviewFunction, infra.OpviewPostFunction}
	for _, tool := range reg.Tools() {
		fns = append(fns, infra.LogicalID(tool.Name))
	}
	for _, fn := range fns {
		base := strings.TrimSuffix(fn, "Function")
		lat := path(get(resources, base+"LatencyAlarm"), "Properties")
		if fn == infra.LogicalID(infra.WaitTool) {
			if lat != nil {
				t.Errorf("%s has a latency alarm; its waits would keep it firing", fn)
			}
		} else if str(get(lat, "MetricName")) != "Duration" || str(get(lat, "ExtendedStatistic")) != "p99" ||
			!isRef(get(lat, "Threshold"), "LatencyAlarmMilliseconds") || !isRef(path(get(lat, "Dimensions").Content[0], "Value"), fn) {
			t.Errorf("%sLatencyAlarm is not p99 Duration of %s over LatencyAlarmMilliseconds", base, fn)
		}
		conc := get(resources, base+"ConcurrencyAlarm")
		if c := str(get(conc, "Condition")); !strings.HasPrefix(c, "Reserve") {
			t.Errorf("%sConcurrencyAlarm condition = %q, want its reservation's", base, c)
		}
		if !isRef(path(conc, "Properties", "Threshold"), "ConcurrencyAlarmPercent") {
			t.Errorf("%sConcurrencyAlarm threshold is not ConcurrencyAlarmPercent", base)
		}
	}

	throttle := path(get(resources, "TableThrottleAlarm"), "Properties", "Metrics")
	ops := map[string]bool{}
	for _, m := range throttle.Content {
		metric := path(m, "MetricStat", "Metric")
		if metric == nil {
			continue
		}
		if name := str(get(metric, "MetricName")); name != "ThrottledRequests" {
			t.Errorf("TableThrottleAlarm reads %s, want ThrottledRequests", name)
		}
		for _, d := range get(metric, "Dimensions").Content {
			switch str(get(d, "Name")) {
			case "Operation":
				ops[str(get(d, "Value"))] = true
			case "TableName":
				if !isTableName(get(d, "Value")) {
					t.Errorf("TableThrottleAlarm's TableName is not the table's name")
				}
			}
		}
	}
	for _, op := range []string{"GetItem", "BatchGetItem", "Query", "TransactWriteItems", "PutItem", "UpdateItem", "DeleteItem"} {
		if !ops[op] {
			t.Errorf("TableThrottleAlarm misses operation %s", op)
		}
	}

	api4xx := path(get(resources, "Api4xxAlarm"), "Properties")
	if !isRef(get(api4xx, "Threshold"), "Api4xxRatePercent") || str(path(get(api4xx, "Metrics").Content[0], "MetricStat", "Metric", "MetricName")) != `4xx` {
		t.Errorf("Api4xxAlarm is not the 4xx rate over Api4xxRatePercent")
	}

	stuck := path(get(resources, "SweepStuckAlarm"), "Properties")
	if str(get(stuck, "MetricName")) != "IntentsStuck" || str(get(stuck, "Namespace")) != "agentbox/${AWS::StackName}" ||
		str(path(get(stuck, "Dimensions").Content[0], "Value")) != infra.SweepName {
		t.Errorf("SweepStuckAlarm does not read IntentsStuck of the sweep in the stack's namespace")
	}
}

// TestDashboard: the dashboard's body is valid JSON once CloudFormation
// substitutes it, and shows calls, errors and latency by tool, outcome
// codes, throttles, the table's consumed capacity and the sweep.
func TestDashboard(t *testing.T) {
	dash := get(get(loadTemplate(t), "Resources"), "Dashboard")
	if typ := str(get(dash, "Type")); typ != "AWS::CloudWatch::Dashboard" {
		t.Fatalf("Dashboard.Type = %q", typ)
	}
	body := path(dash, "Properties", "DashboardBody")
	if body == nil || body.Tag != "!Sub" || len(body.Content) != 2 {
		t.Fatalf("DashboardBody is not !Sub [body, variables]")
	}
	if !isTableName(get(body.Content[1], "TableName")) {
		t.Errorf("the dashboard's TableName is not the table's name")
	}
	// As CloudFormation substitutes: every ${...} becomes a plain value.
	text := regexp.MustCompile(`\$\{[A-Za-z0-9:.]+\}`).ReplaceAllString(body.Content[0].Value, "x")
	var parsed struct {
		Widgets []struct {
			Type       string `json:"type"`
			Properties struct {
				Title   string  `json:"title"`
				Metrics [][]any `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(text), &parsed); err != nil {
		t.Fatalf("dashboard body is not JSON: %v\n%s", err, text)
	}
	shown := map[string]bool{}
	for _, wd := range parsed.Widgets {
		if wd.Type != "metric" || len(wd.Properties.Metrics) == 0 {
			t.Errorf("widget %q shows no metric", wd.Properties.Title)
		}
		for _, m := range wd.Properties.Metrics {
			if e, ok := m[0].(map[string]any); ok {
				name := regexp.MustCompile(`MetricName="([A-Za-z]+)"`).FindStringSubmatch(e["expression"].(string))
				if len(name) == 2 {
					shown[name[1]] = true
				}
				continue
			}
			shown[m[1].(string)] = true
		}
	}
	for _, m := range []string{"Calls", "Errors", "Latency", "Retries", "FanoutSteps", "4xx", "5xx", "Throttles",
		"ThrottledRequests", "ConsumedReadCapacityUnits", "ConsumedWriteCapacityUnits", "IntentsDue", "IntentsFinished", "IntentsStuck"} {
		if !shown[m] {
			t.Errorf("the dashboard does not show %s", m)
		}
	}
}

// TestReadmeTenantCeilings: the README's account ceilings count the
// functions the template has: every function holds a copy of the binary,
// and ToolReservedConcurrency multiplies by the functions that take it.
func TestReadmeTenantCeilings(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	tools := len(registry.New().Tools())
	for _, want := range []string{
		fmt.Sprintf("%d functions\n  (every tool, MCP, the sweep, the operator view, its post and the webhook dispatcher)", tools+5),
		fmt.Sprintf("`ToolReservedConcurrency` applies to each of %d functions", tools+3),
		fmt.Sprintf("it costs %d × its value", tools+3),
		"75 GB", "1,000 per account", "must keep 100 unreserved", "What to raise first",
		"has no authentication. Is this okay?", "--config-env", `{"message":"Too Many Requests"}`, "ExistingTableName=agentbox-<tenant>",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README's tenant section lacks %q", want)
		}
	}
	// Each function reserving ToolReservedConcurrency is one of them, and
	// the template has as many functions as the README counts.
	reserving, functions := 0, 0
	for _, p := range pairs(get(loadTemplate(t), "Resources")) {
		if str(get(p.val, "Type")) == "AWS::Serverless::Function" {
			functions++
		}
		r := path(p.val, "Properties", "ReservedConcurrentExecutions")
		if r != nil && r.Tag == "!If" && r.Content[0].Value == "ReserveToolConcurrency" {
			reserving++
		}
	}
	if functions != tools+5 {
		t.Errorf("the template has %d functions, the README says %d", functions, tools+5)
	}
	if reserving != tools+3 {
		t.Errorf("%d functions reserve ToolReservedConcurrency, the README says %d", reserving, tools+3)
	}
}

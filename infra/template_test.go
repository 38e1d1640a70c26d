package infra_test

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/rest"
	"os"
	"slices"
	"strings"
	"testing"

	// yaml.v3 is a test-only dependency: the structural test must read the
	// template as CloudFormation does, and short-form tags (!Ref Table) are
	// part of what it checks. yaml.v3's Node API keeps every tag; a parser
	// written here would be more code than this test and less trustworthy.
	"gopkg.in/yaml.v3"

	"github.com/agentbox/agentbox/functions/lambdafn"
	"github.com/agentbox/agentbox/infra"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/store"
)

var update = flag.Bool("update", false, "rewrite ../template.yaml from infra.Template")

const templatePath = "../template.yaml"

// TestTemplateGolden fails when template.yaml is not what the registry and
// the table definition generate. Fix with `make template` (or go test
// ./infra -update).
func TestTemplateGolden(t *testing.T) {
	want := infra.Template(registry.New())
	if *update {
		if err := os.WriteFile(templatePath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatalf("reading template.yaml: %v (run make template)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("template.yaml is stale: it differs from infra.Template(registry.New()) at line %d; run make template", firstDiffLine(got, want))
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// node helpers over yaml.v3's tree.

func get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = get(n, k)
	}
	return n
}

type pair struct {
	key string
	val *yaml.Node
}

func pairs(n *yaml.Node) []pair {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{n.Content[i].Value, n.Content[i+1]})
	}
	return out
}

func str(n *yaml.Node) string {
	if n == nil {
		return "<missing>"
	}
	return n.Value
}

// isRef reports whether n is `!Ref target`.
func isRef(n *yaml.Node, target string) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!Ref" && n.Value == target
}

func loadTemplate(t *testing.T) *yaml.Node {
	t.Helper()
	raw, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatalf("reading template.yaml: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("yaml.Unmarshal(template.yaml): %v", err)
	}
	if len(doc.Content) != 1 {
		t.Fatalf("template.yaml has %d documents, want 1", len(doc.Content))
	}
	return doc.Content[0]
}

type routeKey struct{ method, path string }

// TestTemplateStructure reads template.yaml as deployed and checks it
// against the registry and store.Definition: the properties a reviewer
// would otherwise have to verify by eye on every change.
func TestTemplateStructure(t *testing.T) {
	root := loadTemplate(t)
	reg := registry.New()

	if got := str(get(root, "Transform")); got != "AWS::Serverless-2016-10-31" {
		t.Errorf("Transform = %q, want AWS::Serverless-2016-10-31", got)
	}
	fnGlobals := path(root, "Globals", "Function")
	for key, want := range map[string]string{"Runtime": "provided.al2023", "Handler": "bootstrap"} {
		if got := str(get(fnGlobals, key)); got != want {
			t.Errorf("Globals.Function.%s = %q, want %q", key, got, want)
		}
	}
	if arch := get(fnGlobals, "Architectures"); arch == nil || len(arch.Content) != 1 || arch.Content[0].Value != "arm64" {
		t.Errorf("Globals.Function.Architectures is not [arm64]")
	}
	if env := path(fnGlobals, "Environment", "Variables", infra.TableEnv); !isTableName(env) {
		t.Errorf("Globals.Function.Environment.Variables.%s is not the table's name", infra.TableEnv)
	}

	resources := get(root, "Resources")
	if api := get(resources, infra.APIResource); str(get(api, "Type")) != "AWS::Serverless::HttpApi" {
		t.Errorf("%s.Type = %q, want AWS::Serverless::HttpApi", infra.APIResource, str(get(api, "Type")))
	}

	// What the template must contain: one function per tool with exactly
	// its route, and the MCP function with its three.
	want := map[string][]routeKey{}
	wantRole := map[string]string{infra.MCPFunction: infra.WriterRole,
		infra.SweepFunction: infra.WriterRole, infra.OpviewFunction: infra.ReaderRole, infra.WebhookFunction: infra.DispatcherRole,
		infra.OpviewPostFunction: infra.WriterRole}
	for _, tool := range reg.Tools() {
		id := infra.LogicalID(tool.Name)
		want[id] = []routeKey{{tool.Method, tool.Path}}
		if !tool.Authenticated {
			want[id] = append(want[id], routeKey{"GET", rest.OpenAPIPath})
		}
		switch {
		case !tool.Authenticated:
			wantRole[id] = infra.PublicRole
		case tool.Scope == registry.ScopeRead:
			wantRole[id] = infra.ReaderRole
		default:
			wantRole[id] = infra.WriterRole
		}
	}
	for _, m := range infra.MCPRoutes {
		want[infra.MCPFunction] = append(want[infra.MCPFunction], routeKey{m, infra.MCPPath})
	}
	for _, rt := range infra.OAuthMetadataRoutes {
		method, p, _ := strings.Cut(rt, " ")
		want[infra.MCPFunction] = append(want[infra.MCPFunction], routeKey{method, p})
	}
	// The intent sweep has a schedule and no route; the operator view its
	// own routes.
	want[infra.SweepFunction] = []routeKey{}
	// The webhook dispatcher has the table's stream and no route.
	want[infra.WebhookFunction] = []routeKey{}
	for _, rt := range opview.Routes {
		method, p, _ := strings.Cut(rt, " ")
		want[infra.OpviewFunction] = append(want[infra.OpviewFunction], routeKey{method, p})
	}
	for _, rt := range opview.WriteRoutes {
		method, p, _ := strings.Cut(rt, " ")
		want[infra.OpviewPostFunction] = append(want[infra.OpviewPostFunction], routeKey{method, p})
	}

	got := map[string][]routeKey{}
	routeOwner := map[routeKey]string{}
	for _, res := range pairs(resources) {
		if str(get(res.val, "Type")) != "AWS::Serverless::Function" {
			continue
		}
		props := get(res.val, "Properties")
		got[res.key] = []routeKey{}
		if m := path(res.val, "Metadata", "BuildMethod"); str(m) != "makefile" {
			t.Errorf("%s: Metadata.BuildMethod = %q, want makefile", res.key, str(m))
		}
		if cu := str(get(props, "CodeUri")); cu != "." {
			t.Errorf("%s: CodeUri = %q, want . (the repository root)", res.key, cu)
		}
		checkRole(t, res.key, props, wantRole[res.key])
		if fn := str(path(props, "Environment", "Variables", infra.FunctionEnv)); infra.LogicalID(fn) != res.key {
			t.Errorf("%s: %s = %q, want the function's own tool (or %s)", res.key, infra.FunctionEnv, fn, infra.MCPName)
		}
		for _, ev := range pairs(get(props, "Events")) {
			if typ := str(get(ev.val, "Type")); typ == "Schedule" && res.key == infra.SweepFunction {
				if sch := str(path(ev.val, "Properties", "Schedule")); sch != "rate(1 minute)" {
					t.Errorf("%s: schedule %q, want rate(1 minute)", res.key, sch)
				}
				continue
			} else if typ == "Schedule" && res.key == infra.WebhookFunction {
				if sch := str(path(ev.val, "Properties", "Schedule")); sch != infra.WebhookRedeliverSchedule {
					t.Errorf("%s: schedule %q, want %s (the redelivery pass)", res.key, sch, infra.WebhookRedeliverSchedule)
				}
				continue
			} else if typ == "DynamoDB" && res.key == infra.WebhookFunction {
				p := get(ev.val, "Properties")
				if s := get(p, "Stream"); s == nil || !strings.Contains(nodeText(s), infra.TableResource+".StreamArn") {
					t.Errorf("%s: event %s is not on the table's stream", res.key, ev.key)
				}
				if d := str(path(p, "DestinationConfig", "OnFailure", "Type")); d != "SQS" {
					t.Errorf("%s: failed batches go to %q, want the SQS dead-letter queue", res.key, d)
				}
				continue
			} else if typ != "HttpApi" {
				t.Errorf("%s: event %s has Type %q, want HttpApi", res.key, ev.key, typ)
				continue
			}
			p := get(ev.val, "Properties")
			if !isRef(get(p, "ApiId"), infra.APIResource) {
				t.Errorf("%s: event %s is not on !Ref %s", res.key, ev.key, infra.APIResource)
			}
			if v := str(get(p, "PayloadFormatVersion")); v != "2.0" {
				t.Errorf("%s: event %s PayloadFormatVersion = %q, want 2.0", res.key, ev.key, v)
			}
			rk := routeKey{str(get(p, "Method")), str(get(p, "Path"))}
			if prev, dup := routeOwner[rk]; dup {
				t.Errorf("route %s %s is served by both %s and %s", rk.method, rk.path, prev, res.key)
			}
			routeOwner[rk] = res.key
			got[res.key] = append(got[res.key], rk)
		}
	}
	for id, routes := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("template has no function %s", id)
			continue
		}
		if !slices.Equal(g, routes) {
			t.Errorf("function %s routes = %v, want %v", id, g, routes)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("template has function %s, which is neither a registry tool, MCP, the sweep, the view nor the webhook dispatcher", id)
		}
	}

	checkTable(t, get(resources, infra.TableResource))

	for _, out := range []string{"ApiUrl", "McpUrl", "TableName"} {
		if path(root, "Outputs", out, "Value") == nil {
			t.Errorf("Outputs.%s is missing", out)
		}
	}
}

// checkRole: a function's rights come only from its shared role, chosen
// from the registry: get_help (unauthenticated) the public role, read-scope
// tools the reader role, every other tool and MCP the writer role.
func checkRole(t *testing.T, id string, props *yaml.Node, want string) {
	t.Helper()
	if get(props, "Policies") != nil {
		t.Errorf("%s: has Policies; its rights must come from its shared role only", id)
	}
	role := get(props, "Role")
	if role == nil || role.Tag != "!GetAtt" || role.Value != want+".Arn" {
		t.Errorf("%s: Role = %s %q, want !GetAtt %s.Arn", id, role.Tag, str(role), want)
	}
}

// checkTable compares the table resource with store.Definition.
func checkTable(t *testing.T, table *yaml.Node) {
	t.Helper()
	def := store.Definition()
	if typ := str(get(table, "Type")); typ != "AWS::DynamoDB::Table" {
		t.Fatalf("%s.Type = %q, want AWS::DynamoDB::Table", infra.TableResource, typ)
	}
	for _, key := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
		if got := str(get(table, key)); got != "Retain" {
			t.Errorf("table %s = %q, want Retain", key, got)
		}
	}
	props := get(table, "Properties")
	if got := str(get(props, "BillingMode")); got != "PAY_PER_REQUEST" {
		t.Errorf("BillingMode = %q, want PAY_PER_REQUEST", got)
	}

	attrs := map[string]string{}
	for _, a := range get(props, "AttributeDefinitions").Content {
		attrs[str(get(a, "AttributeName"))] = str(get(a, "AttributeType"))
	}
	wantAttrs := map[string]string{def.PK: "S", def.SK: "S"}
	for _, ix := range def.Indexes {
		wantAttrs[ix.PK], wantAttrs[ix.SK] = "S", "S"
	}
	if fmt.Sprint(attrs) != fmt.Sprint(wantAttrs) {
		t.Errorf("AttributeDefinitions = %v, want %v", attrs, wantAttrs)
	}

	if got, want := keys(get(props, "KeySchema")), [2]string{def.PK, def.SK}; got != want {
		t.Errorf("KeySchema = %v, want %v", got, want)
	}

	gsis := get(props, "GlobalSecondaryIndexes")
	if gsis == nil || len(gsis.Content) != len(def.Indexes) {
		t.Fatalf("GlobalSecondaryIndexes: want exactly %d indexes", len(def.Indexes))
	}
	for i, ix := range def.Indexes {
		g := gsis.Content[i]
		if name := str(get(g, "IndexName")); name != ix.Name {
			t.Errorf("GSI %d IndexName = %q, want %q", i, name, ix.Name)
		}
		if got, want := keys(get(g, "KeySchema")), [2]string{ix.PK, ix.SK}; got != want {
			t.Errorf("GSI %s KeySchema = %v, want %v", ix.Name, got, want)
		}
		if p := str(path(g, "Projection", "ProjectionType")); p != "ALL" {
			t.Errorf("GSI %s ProjectionType = %q, want ALL", ix.Name, p)
		}
	}

	ttl := get(props, "TimeToLiveSpecification")
	if str(get(ttl, "AttributeName")) != def.TTL || str(get(ttl, "Enabled")) != "true" {
		t.Errorf("TimeToLiveSpecification = {%s, %s}, want {%s, true}", str(get(ttl, "AttributeName")), str(get(ttl, "Enabled")), def.TTL)
	}
	if pitr := str(path(props, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled")); pitr != "true" {
		t.Errorf("PointInTimeRecoveryEnabled = %q, want true", pitr)
	}
	// The key option: the AWS-owned key (SSEEnabled false) or the
	// AWS-managed one (true), never unencrypted (which DynamoDB does not
	// offer).
	if sse := path(props, "SSESpecification", "SSEEnabled"); sse == nil || sse.Tag != "!If" || len(sse.Content) != 3 ||
		sse.Content[0].Value != "UseOwnedTableKey" || sse.Content[1].Value != "false" || sse.Content[2].Value != "true" {
		t.Errorf("SSEEnabled is not !If [UseOwnedTableKey, false, true]")
	}
}

// keys reads a KeySchema as (HASH, RANGE).
func keys(ks *yaml.Node) [2]string {
	var out [2]string
	if ks == nil {
		return out
	}
	for _, k := range ks.Content {
		switch str(get(k, "KeyType")) {
		case "HASH":
			out[0] = str(get(k, "AttributeName"))
		case "RANGE":
			out[1] = str(get(k, "AttributeName"))
		}
	}
	return out
}

// TestTemplateMatchesFunctions: the template configures the functions with
// the names the Lambda entry points read.
func TestTemplateMatchesFunctions(t *testing.T) {
	if infra.TableEnv != lambdafn.EnvTable {
		t.Errorf("template sets %s, functions read %s", infra.TableEnv, lambdafn.EnvTable)
	}
	if infra.FunctionEnv != lambdafn.EnvFunction || infra.MCPName != lambdafn.MCPFunction {
		t.Errorf("template names functions with %s=%s, the binary reads %s=%s",
			infra.FunctionEnv, infra.MCPName, lambdafn.EnvFunction, lambdafn.MCPFunction)
	}
	if infra.MCPPath != lambdafn.MCPPath {
		t.Errorf("template routes MCP at %s, the function serves %s", infra.MCPPath, lambdafn.MCPPath)
	}
}

func TestLogicalID(t *testing.T) {
	if got := infra.LogicalID("checkpoint_save"); got != "CheckpointSaveFunction" {
		t.Errorf("LogicalID(%q) = %q, want CheckpointSaveFunction", "checkpoint_save", got)
	}
	if got := infra.LogicalID(infra.MCPName); got != infra.MCPFunction {
		t.Errorf("LogicalID(%q) = %q, want %s", infra.MCPName, got, infra.MCPFunction)
	}
}

// TestTemplateWaits: the function serving long waits outlives the longest
// wait it grants (plus the request's and the answer's margins), its route
// lets the answer through, and the MCP function, which serves every tool,
// grants by default no wait that would hold its executions.
func TestTemplateWaits(t *testing.T) {
	root := loadTemplate(t)
	wait := path(root, "Resources", infra.LogicalID(infra.WaitTool), "Properties")
	if got := str(get(wait, "Timeout")); got != fmt.Sprint(infra.WaitTimeoutSeconds) || infra.WaitTimeoutSeconds < limits.DefaultInboxWait+3 {
		t.Errorf("%s's Timeout = %q; want %d, at least the longest wait (%d s) + 3", infra.WaitTool, got, infra.WaitTimeoutSeconds, limits.DefaultInboxWait)
	}
	if got := str(path(wait, "Events", "Route", "Properties", "TimeoutInMillis")); got != "29000" {
		t.Errorf("%s's route TimeoutInMillis = %q, want 29000", infra.WaitTool, got)
	}
	mcp := path(root, "Resources", infra.MCPFunction, "Properties")
	if env := path(mcp, "Environment", "Variables", limits.InboxWaitEnv); !isRef(env, "McpInboxWaitMaxSeconds") {
		t.Errorf("the MCP function's %s is not !Ref McpInboxWaitMaxSeconds", limits.InboxWaitEnv)
	}
	param := path(root, "Parameters", "McpInboxWaitMaxSeconds")
	if str(get(param, "Default")) != "0" || str(get(param, "MaxValue")) != fmt.Sprint(infra.MCPTimeoutSeconds-2) {
		t.Errorf("McpInboxWaitMaxSeconds = default %q, max %q; want 0 and %d (the MCP timeout less both margins)",
			str(get(param, "Default")), str(get(param, "MaxValue")), infra.MCPTimeoutSeconds-2)
	}
}

// nodeText is n and everything below it as one string: tags and values,
// so a test can find a reference inside an !If.
func nodeText(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	s := n.Tag + " " + n.Value
	for _, c := range n.Content {
		s += " " + nodeText(c)
	}
	return s
}

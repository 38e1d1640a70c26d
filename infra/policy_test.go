package infra_test

import (
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentbox/agentbox/infra"
)

// seq returns a sequence node's scalars, or a lone scalar as one element.
func seq(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

// TestRolesLeastPrivilege reads every IAM role of template.yaml: at most
// three per stack; no wildcard action; no table action outside the
// reader's and writer's sets (no Scan, BatchWriteItem, DescribeTable...);
// the public role touches no table; the reader role writes only under a
// LeadingKeys condition naming the session and cursor-secret keys; the
// writer role can write.
func TestRolesLeastPrivilege(t *testing.T) {
	resources := get(loadTemplate(t), "Resources")
	allowed := append(slices.Clone(infra.ReadActions), infra.WriteActions...)
	var roles []string
	for _, res := range pairs(resources) {
		if str(get(res.val, "Type")) != "AWS::IAM::Role" {
			continue
		}
		roles = append(roles, res.key)
		var tableActions, writes, guardedWrites []string
		for _, pol := range get(get(res.val, "Properties"), "Policies").Content {
			for _, st := range get(get(pol, "PolicyDocument"), "Statement").Content {
				if st.Tag == "!If" {
					// A statement under a condition (tracing): its
					// statement, or none.
					if len(st.Content) != 3 || !isRef(st.Content[2], "AWS::NoValue") {
						t.Errorf("%s: a conditional statement that is not [condition, statement, AWS::NoValue]", res.key)
						continue
					}
					st = st.Content[1]
				}
				if e := str(get(st, "Effect")); e != "Allow" {
					t.Errorf("%s: statement %s has Effect %q; roles only allow", res.key, str(get(st, "Sid")), e)
				}
				guard := seq(path(st, "Condition", "ForAllValues:StringLike", "dynamodb:LeadingKeys"))
				for _, a := range seq(get(st, "Action")) {
					if strings.Contains(a, "*") {
						t.Errorf("%s: wildcard action %q", res.key, a)
					}
					if !strings.HasPrefix(a, "dynamodb:") {
						continue
					}
					tableActions = append(tableActions, a)
					if !slices.Contains(allowed, a) && !(res.key == infra.DispatcherRole && slices.Contains(infra.StreamActions, a)) {
						t.Errorf("%s: grants %s, which no function calls", res.key, a)
					}
					if slices.Contains(infra.WriteActions, a) {
						if guard != nil {
							wantKeys := infra.ReaderWritableKeys
							if res.key == infra.DispatcherRole {
								wantKeys = infra.DispatcherWritableKeys
							}
							if !slices.Equal(guard, wantKeys) {
								t.Errorf("%s: %s limited to keys %v, want %v", res.key, a, guard, wantKeys)
							}
							guardedWrites = append(guardedWrites, a)
						} else {
							writes = append(writes, a)
						}
					}
				}
			}
		}
		switch res.key {
		case infra.PublicRole:
			if len(tableActions) > 0 {
				t.Errorf("%s (get_help) may call %v; it reads no table", res.key, tableActions)
			}
		case infra.ReaderRole:
			if len(writes) > 0 {
				t.Errorf("%s (read tools) may write %v on any key; only sessions and the cursor secret", res.key, writes)
			}
			if len(guardedWrites) == 0 {
				t.Errorf("%s cannot write sessions: read tools could not refresh or acknowledge them", res.key)
			}
		case infra.WriterRole:
			slices.Sort(writes)
			want := slices.Sorted(slices.Values(infra.WriteActions))
			if !slices.Equal(writes, want) {
				t.Errorf("%s writes %v, want %v", res.key, writes, want)
			}
		case infra.DispatcherRole:
			// Its own role (the rule for the webhook dispatcher):
			// no table write beyond its delivery state.
			if len(writes) > 0 {
				t.Errorf("%s (webhook dispatcher) may write %v on any key; only its delivery state", res.key, writes)
			}
			if len(guardedWrites) == 0 {
				t.Errorf("%s cannot record deliveries", res.key)
			}
		default:
			t.Errorf("unexpected role %s: the stack shares %s, %s and %s, and the dispatcher has %s", res.key, infra.PublicRole, infra.ReaderRole, infra.WriterRole, infra.DispatcherRole)
		}
	}
	if len(roles) > 4 {
		t.Errorf("template has %d IAM roles %v; at most 4 per stack (1,000 per account)", len(roles), roles)
	}
}

// TestOperations checks the tenant limits and operations resources: every
// function alarms on its errors and throttles, the API on its 5xx rate,
// the table on throttles and system errors; every alarm notifies the
// optional topic; every log group has the retention parameter and an
// explicit deletion policy; reserved concurrency is optional.
func TestOperations(t *testing.T) {
	root := loadTemplate(t)
	for _, p := range []string{"ApiThrottleRateLimit", "ApiThrottleBurstLimit", "ToolReservedConcurrency",
		"McpReservedConcurrency", "AlarmTopicArn", "LogRetentionDays", "Api5xxRatePercent"} {
		if get(get(root, "Parameters"), p) == nil {
			t.Errorf("parameter %s is missing", p)
		}
	}
	resources := get(root, "Resources")
	alarmed := map[string]bool{}
	var functions []string
	for _, res := range pairs(resources) {
		props := get(res.val, "Properties")
		switch str(get(res.val, "Type")) {
		case "AWS::Serverless::Function":
			functions = append(functions, res.key)
			if r := get(props, "ReservedConcurrentExecutions"); r == nil || r.Tag != "!If" {
				t.Errorf("%s: ReservedConcurrentExecutions is not conditional on its parameter", res.key)
			}
		case "AWS::CloudWatch::Alarm":
			if a := get(props, "AlarmActions"); a == nil || a.Tag != "!If" || len(a.Content) != 3 || a.Content[0].Value != "HasAlarmTopic" {
				t.Errorf("%s: AlarmActions do not notify AlarmTopicArn when set", res.key)
			}
			var math []*yaml.Node // nil for an alarm on one metric
			if m := get(props, "Metrics"); m != nil {
				math = m.Content
			}
			for _, m := range math {
				dims := path(m, "MetricStat", "Metric", "Dimensions")
				if dims == nil {
					continue // an expression
				}
				for _, d := range dims.Content {
					if str(get(d, "Name")) == "FunctionName" {
						alarmed[str(get(d, "Value"))] = true
					}
				}
			}
		case "AWS::Logs::LogGroup":
			if str(get(res.val, "DeletionPolicy")) == "<missing>" {
				t.Errorf("log group %s has no DeletionPolicy", res.key)
			}
			if !isRef(get(props, "RetentionInDays"), "LogRetentionDays") {
				t.Errorf("log group %s: RetentionInDays is not !Ref LogRetentionDays", res.key)
			}
		}
	}
	for _, fn := range functions {
		if !alarmed[fn] {
			t.Errorf("function %s has no errors-and-throttles alarm", fn)
		}
	}
	for _, id := range []string{"Api5xxAlarm", "TableThrottleAlarm", "TableSystemErrorsAlarm"} {
		if str(get(get(resources, id), "Type")) != "AWS::CloudWatch::Alarm" {
			t.Errorf("alarm %s is missing", id)
		}
	}
}

package infra

// Alarms. Every alarm notifies AlarmTopicArn when it is set, and treats
// missing data as fine (no traffic is not an incident). Periods are 5
// minutes, one period to fire: a tenant's operator hears of a burst of
// failures within minutes and a single failed call raises nothing but the
// error alarm of its function.
//
// Lambda errors and throttles are alarmed per function (one alarm each,
// on their sum), since CloudWatch alarms on metric math take at most 10
// metrics and a stack has more functions than that. A failed sweep run
// raises SweepErrorsAlarm; an intent it cannot finish, SweepStuckAlarm
// (ops.go).

import (
	"fmt"
	"slices"
	"strings"
)

var dynamoOperations = []string{"GetItem", "BatchGetItem", "Query", "TransactWriteItems", "PutItem", "UpdateItem", "DeleteItem"}

func alarmHead(w func(string, ...any), id, description string) {
	alarmHeadIf(w, id, "", description)
}

// alarmHeadIf is alarmHead for an alarm that exists under condition (none
// when empty).
func alarmHeadIf(w func(string, ...any), id, condition, description string) {
	w("  %s:", id)
	w("    Type: AWS::CloudWatch::Alarm")
	if condition != "" {
		w("    Condition: %s", condition)
	}
	w("    Properties:")
	w("      AlarmDescription: !Sub %s", q("agentbox ${TenantName}: "+description))
	w("      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]")
	w("      OKActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]")
	w("      EvaluationPeriods: 1")
	w("      TreatMissingData: notBreaching")
}

// metric writes one metric of an alarm's metric math, summed.
func metric(w func(string, ...any), id, namespace, name string, dims [][2]string) {
	metricStat(w, id, namespace, name, "Sum", dims)
}

// metricStat writes one metric of an alarm's metric math.
func metricStat(w func(string, ...any), id, namespace, name, stat string, dims [][2]string) {
	w("        - Id: %s", id)
	w("          ReturnData: false")
	w("          MetricStat:")
	w("            Period: 300")
	w("            Stat: %s", stat)
	w("            Metric:")
	w("              Namespace: %s", namespace)
	w("              MetricName: %s", q(name))
	w("              Dimensions:")
	for _, d := range dims {
		w("                - Name: %s", d[0])
		w("                  Value: %s", d[1])
	}
}

type alarmMetric struct {
	id, namespace, name string
	dims                [][2]string
}

// sumAlarm alarms when the sum of metrics over a period reaches 1.
func sumAlarm(w func(string, ...any), id, description, label string, metrics []alarmMetric) {
	alarmHead(w, id, description)
	w("      ComparisonOperator: GreaterThanOrEqualToThreshold")
	w("      Threshold: 1")
	w("      Metrics:")
	var ids []string
	for _, m := range metrics {
		metric(w, m.id, m.namespace, m.name, m.dims)
		ids = append(ids, m.id)
	}
	w("        - Id: total")
	w("          Expression: %s", strings.Join(ids, " + "))
	w("          Label: %s", label)
	w("          ReturnData: true")
	w("")
}

func functionAlarm(w func(string, ...any), fn string) {
	dims := [][2]string{{"FunctionName", "!Ref " + fn}}
	sumAlarm(w, strings.TrimSuffix(fn, "Function")+"ErrorsAlarm", fn+" returned errors or was throttled", "errors and throttles",
		[]alarmMetric{{"errors", "AWS/Lambda", "Errors", dims}, {"throttles", "AWS/Lambda", "Throttles", dims}})
}

// rateAlarm alarms when the HTTP API's responses of class (4xx, 5xx) are
// more than the percentage param of its requests.
func rateAlarm(w func(string, ...any), id, description, class, param string) {
	api := [][2]string{{"ApiId", "!Ref " + APIResource}}
	alarmHead(w, id, description)
	w("      ComparisonOperator: GreaterThanThreshold")
	w("      Threshold: !Ref %s", param)
	w("      Metrics:")
	metric(w, "errors", "AWS/ApiGateway", class, api)
	metric(w, "requests", "AWS/ApiGateway", "Count", api)
	w("        - Id: rate")
	w("          Expression: IF(requests > 0, 100 * errors / requests, 0)")
	w("          Label: %s percent", class)
	w("          ReturnData: true")
	w("")
}

func tableAndAPIAlarms(w func(string, ...any)) {
	rateAlarm(w, "Api5xxAlarm", "more than Api5xxRatePercent of HTTP API responses were 5xx", "5xx", "Api5xxRatePercent")

	// Per operation, ThrottledRequests counts a request throttled on the
	// table or on any of its indexes (Read/WriteThrottleEvents by
	// TableName alone leave the indexes out), the spend cap's
	// included. SystemErrors likewise: one metric per operation the
	// functions call.
	table := [][2]string{{"TableName", tableName}}
	perOperation := func(name string) []alarmMetric {
		var ops []alarmMetric
		for i, op := range dynamoOperations {
			ops = append(ops, alarmMetric{fmt.Sprintf("op%d", i), "AWS/DynamoDB", name, append(slices.Clone(table), [2]string{"Operation", op})})
		}
		return ops
	}
	sumAlarm(w, "TableThrottleAlarm", "DynamoDB throttled requests on the table or its indexes (capacity or the spend cap)", "throttled requests",
		perOperation("ThrottledRequests"))
	sumAlarm(w, "TableSystemErrorsAlarm", "DynamoDB answered the functions with system errors (HTTP 500)", "system errors",
		perOperation("SystemErrors"))
	opsAlarms(w)
}

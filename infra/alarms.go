package infra

// Alarms. Every alarm notifies AlarmTopicArn when it is set, and treats
// missing data as fine (no traffic is not an incident). Periods are 5
// minutes, one period to fire: a tenant's operator hears of a burst of
// failures within minutes and a single failed call raises nothing but the
// error alarm of its function.
//
// Lambda errors and throttles are alarmed per function (one alarm each,
// on their sum), since CloudWatch alarms on metric math take at most 10
// metrics and a stack has more functions than that. The sweeper's failure
// alarm comes with the sweeper function (not in this template yet).

import (
	"fmt"
	"slices"
	"strings"
)

var dynamoOperations = []string{"GetItem", "BatchGetItem", "Query", "TransactWriteItems", "PutItem", "UpdateItem", "DeleteItem"}

func alarmHead(w func(string, ...any), id, description string) {
	w("  %s:", id)
	w("    Type: AWS::CloudWatch::Alarm")
	w("    Properties:")
	w("      AlarmDescription: !Sub %s", q("agentbox ${TenantName}: "+description))
	w("      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]")
	w("      OKActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]")
	w("      EvaluationPeriods: 1")
	w("      TreatMissingData: notBreaching")
}

// metric writes one metric of an alarm's metric math.
func metric(w func(string, ...any), id, namespace, name string, dims [][2]string) {
	w("        - Id: %s", id)
	w("          ReturnData: false")
	w("          MetricStat:")
	w("            Period: 300")
	w("            Stat: Sum")
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

func tableAndAPIAlarms(w func(string, ...any)) {
	api := [][2]string{{"ApiId", "!Ref " + APIResource}}
	alarmHead(w, "Api5xxAlarm", "more than Api5xxRatePercent of HTTP API responses were 5xx")
	w("      ComparisonOperator: GreaterThanThreshold")
	w("      Threshold: !Ref Api5xxRatePercent")
	w("      Metrics:")
	metric(w, "errors", "AWS/ApiGateway", "5xx", api)
	metric(w, "requests", "AWS/ApiGateway", "Count", api)
	w("        - Id: rate")
	w("          Expression: IF(requests > 0, 100 * errors / requests, 0)")
	w("          Label: 5xx percent")
	w("          ReturnData: true")
	w("")

	table := [][2]string{{"TableName", "!Ref " + TableResource}}
	sumAlarm(w, "TableThrottleAlarm", "DynamoDB throttled reads or writes on the table", "throttle events",
		[]alarmMetric{{"reads", "AWS/DynamoDB", "ReadThrottleEvents", table}, {"writes", "AWS/DynamoDB", "WriteThrottleEvents", table}})

	// SystemErrors has an Operation dimension: one metric per operation
	// the functions call.
	var ops []alarmMetric
	for i, op := range dynamoOperations {
		ops = append(ops, alarmMetric{fmt.Sprintf("op%d", i), "AWS/DynamoDB", "SystemErrors", append(slices.Clone(table), [2]string{"Operation", op})})
	}
	sumAlarm(w, "TableSystemErrorsAlarm", "DynamoDB answered the functions with system errors (HTTP 500)", "system errors", ops)
}

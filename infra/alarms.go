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

import "fmt"

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

func functionAlarm(w func(string, ...any), fn string) {
	id := fn[:len(fn)-len("Function")] + "ErrorsAlarm"
	alarmHead(w, id, fn+" returned errors or was throttled")
	w("      ComparisonOperator: GreaterThanOrEqualToThreshold")
	w("      Threshold: 1")
	w("      Metrics:")
	dims := [][2]string{{"FunctionName", "!Ref " + fn}}
	metric(w, "errors", "AWS/Lambda", "Errors", dims)
	metric(w, "throttles", "AWS/Lambda", "Throttles", dims)
	w("        - Id: failures")
	w("          Expression: errors + throttles")
	w("          Label: errors and throttles")
	w("          ReturnData: true")
	w("")
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
	alarmHead(w, "TableThrottleAlarm", "DynamoDB throttled reads or writes on the table")
	w("      ComparisonOperator: GreaterThanOrEqualToThreshold")
	w("      Threshold: 1")
	w("      Metrics:")
	metric(w, "reads", "AWS/DynamoDB", "ReadThrottleEvents", table)
	metric(w, "writes", "AWS/DynamoDB", "WriteThrottleEvents", table)
	w("        - Id: throttled")
	w("          Expression: reads + writes")
	w("          Label: throttle events")
	w("          ReturnData: true")
	w("")

	alarmHead(w, "TableSystemErrorsAlarm", "DynamoDB answered the functions with system errors (HTTP 500)")
	w("      ComparisonOperator: GreaterThanOrEqualToThreshold")
	w("      Threshold: 1")
	w("      Metrics:")
	var sum string
	for i, op := range dynamoOperations {
		id := fmt.Sprintf("op%d", i)
		metric(w, id, "AWS/DynamoDB", "SystemErrors", append(table, [2]string{"Operation", op}))
		if sum != "" {
			sum += " + "
		}
		sum += id
	}
	w("        - Id: errors")
	w("          Expression: %s", sum)
	w("          Label: system errors")
	w("          ReturnData: true")
	w("")
}

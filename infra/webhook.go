package infra

// The webhook dispatcher on the stack (functions/lambdafn stream.go, internal/webhook):
// the table's stream (keys only: no item images leave the table) drives
// one function, filtered to inbox-head records; a batch it cannot deliver
// is retried (bisected) for at most WebhookRecordAgeSeconds, then its
// description goes to an SQS dead-letter queue; a scheduled full pass
// (WebhookRedeliverSchedule) delivers whatever is still pending, so a
// batch in the queue is not lost. The function has its own
// role: it reads the table, reads the stream, sends to the queue, and
// writes only its delivery state (the "webhooks" partition). Alarms: its
// errors and throttles (as every function), messages in the dead-letter
// queue, and the stream's iterator age. Everything of the dispatcher is
// here; template.go and roles.go call it at one place each.

import "strings"

// Logical ids and names of the dispatcher's resources.
const (
	WebhookFunction = "WebhookFunction"
	WebhookName     = "webhook"
	DispatcherRole  = "DispatcherRole"
	WebhookQueue    = "WebhookDeadLetters"
	// WebhookRecordAgeSeconds bounds how long a failing batch is retried.
	WebhookRecordAgeSeconds = 3600
	// WebhookRedeliverSchedule runs the dispatcher's full pass: what a
	// batch in the dead-letter queue named is still pending in the table,
	// so this pass delivers it (the queue is for visibility and its alarm).
	WebhookRedeliverSchedule = "rate(5 minutes)"
)

var (
	// DispatcherWritableKeys are the partition keys the dispatcher may
	// write: its endpoints' delivery state.
	DispatcherWritableKeys = []string{"webhooks"}
	// StreamActions read the table's stream.
	StreamActions = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"}
)

func webhookParameters(w func(string, ...any)) {
	w("  WebhookReservedConcurrency:")
	w("    Type: Number")
	w("    Description: Concurrent executions reserved for (and capping) the webhook dispatcher; 0 reserves none.")
	w("    Default: 0")
	w("    MinValue: 0")
}

func webhookConditions(w func(string, ...any)) {
	w("  ReserveWebhookConcurrency: !Not [!Equals [!Ref WebhookReservedConcurrency, 0]]")
}

// dispatcherStatements are the dispatcher role's statements beyond
// logging, table reads and its guarded writes.
func dispatcherStatements(w func(string, ...any)) {
	w("              - Sid: ReadTableStream")
	w("                Effect: Allow")
	w("                Action: [%s]", strings.Join(StreamActions, ", "))
	w("                Resource: %s", tableStreamArn)
	w("              - Sid: SendToDeadLetters")
	w("                Effect: Allow")
	w("                Action: [sqs:SendMessage]")
	w("                Resource: !GetAtt %s.Arn", WebhookQueue)
}

// webhookEvent writes the function's stream event.
func webhookEvent(w func(string, ...any)) {
	w("          Type: DynamoDB")
	w("          Properties:")
	w("            Stream: %s", tableStreamArn)
	w("            StartingPosition: LATEST")
	w("            BatchSize: 100")
	w("            MaximumBatchingWindowInSeconds: 1")
	w("            MaximumRetryAttempts: 10")
	w("            MaximumRecordAgeInSeconds: %d", WebhookRecordAgeSeconds)
	w("            BisectBatchOnFunctionError: true")
	w("            FilterCriteria:")
	w("              Filters:")
	w("                - Pattern: '{\"dynamodb\":{\"Keys\":{\"sk\":{\"S\":[\"inbox\"]}}}}'")
	w("            DestinationConfig:")
	w("              OnFailure:")
	w("                Type: SQS")
	w("                Destination: !GetAtt %s.Arn", WebhookQueue)
}

// webhookQueueAndAlarms writes the dead-letter queue and its alarms.
func webhookQueueAndAlarms(w func(string, ...any)) {
	w("  %s:", WebhookQueue)
	w("    Type: AWS::SQS::Queue")
	w("    Properties:")
	w("      MessageRetentionPeriod: 1209600")
	w("      SqsManagedSseEnabled: true")
	w("      Tags:")
	w("        - Key: agentbox:tenant")
	w("          Value: !Ref TenantName")
	w("")
	sumAlarm(w, "WebhookDeadLettersAlarm", "webhook batches could not be delivered and went to the dead-letter queue", "dead letters",
		[]alarmMetric{{"sent", "AWS/SQS", "NumberOfMessagesSent", [][2]string{{"QueueName", "!GetAtt " + WebhookQueue + ".QueueName"}}}})
	alarmHead(w, "WebhookIteratorAgeAlarm", "the webhook dispatcher lags the table's stream by over 5 minutes")
	w("      ComparisonOperator: GreaterThanThreshold")
	w("      Threshold: 300000")
	w("      Metrics:")
	w("        - Id: age")
	w("          ReturnData: true")
	w("          MetricStat:")
	w("            Period: 300")
	w("            Stat: Maximum")
	w("            Metric:")
	w("              Namespace: AWS/Lambda")
	w("              MetricName: IteratorAge")
	w("              Dimensions:")
	w("                - Name: FunctionName")
	w("                  Value: !Ref %s", WebhookFunction)
	w("")
}

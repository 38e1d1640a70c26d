package dynamo

// IAM actions. A least-privilege policy for a role that uses this adapter
// grants exactly these on the table and its indexes (arn/index/*). There is
// no IAM action for TransactWriteItems itself: DynamoDB authorizes each item
// of a transaction as its own action (PutItem, UpdateItem, DeleteItem,
// ConditionCheckItem). TestConformance (minidyn) records the calls the
// adapter makes and fails when one is missing here.

// ReadActions are what Get, BatchGet and Query need.
func ReadActions() []string {
	return []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}
}

// WriteActions are what Write needs besides ReadActions (a lone check is a
// GetItem): plain single-item writes and the items of a transaction.
func WriteActions() []string {
	return []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
}

package infra

// Least privilege with few roles. An account holds 1,000 IAM roles by
// default, so a role per function (25 per stack) would cap it at ≈ 40
// tenants; three roles per stack, shared by the functions that need the
// same rights, allow ≈ 330.
//
//   - PublicRole: get_help, which reads no table (unauthenticated, static
//     documentation). Logs only.
//   - ReaderRole: read-only tools. They read the table and its indexes
//     (GetItem, BatchGetItem, Query) and may write exactly two kinds of
//     item, by partition key (dynamodb:LeadingKeys): their caller's session
//     (ses#…, refreshed on use and acknowledged by profile_get) and the
//     cursor secret (config#cursor, created once on first use). They cannot
//     write anything else.
//   - WriterRole: every other tool, and the MCP function, which carries
//     every tool. Transactions need no action of their own: each item of a
//     TransactWriteItems is authorized as the PutItem, UpdateItem,
//     DeleteItem or ConditionCheckItem it is, which also covers the plain
//     single-item writes.
//
//   - DispatcherRole (webhook.go): the webhook dispatcher's own, so that
//     a bug in the only outbound code cannot write the table: it reads the
//     table and its stream, sends to its dead-letter queue, and writes only
//     its delivery state (the "webhooks" partition, dynamodb:LeadingKeys).
//
// No role gets Scan, BatchWriteItem, DescribeTable or any table but the
// stack's own.

import (
	"strings"

	"github.com/agentbox/agentbox/internal/registry"
)

// Role logical ids.
const (
	PublicRole = "PublicRole"
	ReaderRole = "ReaderRole"
	WriterRole = "WriterRole"
)

// Table actions per kind of access.
var (
	// ReadActions read the table and its indexes.
	ReadActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}
	// WriteActions write items, alone or inside TransactWriteItems.
	WriteActions = []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
	// ReaderWritableKeys are the partition keys (StringLike patterns) a
	// read-only tool may write: sessions and the cursor secret.
	ReaderWritableKeys = []string{"ses#*", "config#cursor"}
)

// RoleOf returns the role of a tool's function.
func RoleOf(t *registry.Tool) string {
	switch {
	case !t.Authenticated:
		return PublicRole
	case t.Hints.ReadOnly:
		return ReaderRole
	default:
		return WriterRole
	}
}

func roles(w func(string, ...any)) {
	role := func(id, description string, statements func()) {
		w("  %s:", id)
		w("    Type: AWS::IAM::Role")
		w("    Properties:")
		w("      Description: !Sub %s", q("agentbox ${TenantName}: "+description))
		w("      AssumeRolePolicyDocument:")
		w("        Version: \"2012-10-17\"")
		w("        Statement:")
		w("          - Effect: Allow")
		w("            Principal:")
		w("              Service: lambda.amazonaws.com")
		w("            Action: sts:AssumeRole")
		w("      Policies:")
		w("        - PolicyName: agentbox")
		w("          PolicyDocument:")
		w("            Version: \"2012-10-17\"")
		w("            Statement:")
		w("              - Sid: Logs")
		w("                Effect: Allow")
		w("                Action: [logs:CreateLogStream, logs:PutLogEvents]")
		w("                Resource: !Sub \"arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/agentbox/${TenantName}/*\"")
		xrayStatement(w)
		if statements != nil {
			statements()
		}
		w("      Tags:")
		w("        - Key: agentbox:tenant")
		w("          Value: !Ref TenantName")
		w("")
	}
	read := func() {
		w("              - Sid: ReadTableAndIndexes")
		w("                Effect: Allow")
		w("                Action: [%s]", strings.Join(ReadActions, ", "))
		w("                Resource:")
		w("                  - %s", tableArn)
		w("                  - %s", tableIndexArn)
	}
	role(PublicRole, "get_help, which reads no table", nil)
	// write grants the item writes, limited to the given partition keys
	// unless there are none.
	write := func(sid string, keys []string) {
		w("              - Sid: %s", sid)
		w("                Effect: Allow")
		w("                Action: [%s]", strings.Join(WriteActions, ", "))
		w("                Resource: %s", tableArn)
		if len(keys) > 0 {
			w("                Condition:")
			w("                  ForAllValues:StringLike:")
			w("                    dynamodb:LeadingKeys: [%s]", quoteAll(keys))
		}
	}
	role(ReaderRole, "read-only tools: read the table, write only sessions and the cursor secret", func() {
		read()
		write("WriteSessionsAndCursorSecret", ReaderWritableKeys)
	})
	role(WriterRole, "tools that write, and MCP (every tool)", func() {
		read()
		write("WriteTable", nil)
	})
	role(DispatcherRole, "webhook dispatcher: reads the table and its stream, writes only delivery state", func() {
		read()
		write("WriteDeliveryState", DispatcherWritableKeys)
		dispatcherStatements(w) // webhook.go
	})
}

func quoteAll(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = q(x)
	}
	return strings.Join(out, ", ")
}

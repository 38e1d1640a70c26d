// Package agentbox is a coordination hub for AI agents, served over MCP and
// REST, deployed as one Lambda function per tool on one DynamoDB table, or
// run locally with `agentbox serve` on an embedded store.
//
// This root package holds no code. Its tests guard the generated files that
// live at the repository root (tool-contracts.json and the README's
// generated tables); template.yaml is guarded by package infra. See
// README.md for the layout.
package agentbox

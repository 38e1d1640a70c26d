// Command lambda is the one Lambda binary (bootstrap) behind every function
// of template.yaml: each function runs this same artifact and learns which
// tool it serves, or that it serves MCP, from AGENTBOX_FUNCTION, which the
// template sets per function. One build, one upload per deploy.
//
// Build it as SAM does: make build (or make build-McpFunction
// ARTIFACTS_DIR=…). See internal/lambdafn for the environment it reads.
package main

import "github.com/agentbox/agentbox/internal/lambdafn"

func main() { lambdafn.Start() }

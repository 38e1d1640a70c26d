// Command functions is the one Lambda binary (bootstrap) behind every
// function of template.yaml: each function runs this same artifact and
// learns which one it is from AGENTBOX_FUNCTION, which the template sets
// per function. One build, one upload per deploy.
//
// The functions (the README's "Functions" lists them):
//
//   - one per tool (AGENTBOX_FUNCTION=<tool>): that tool's REST route;
//   - mcp: the MCP endpoint (Streamable HTTP) for every tool;
//   - sweep: every minute, finishes multi-write operations whose caller died;
//   - opview: the operator view, read-only;
//   - opview_post: the operator view's one write, the operator's post;
//   - webhook: the table's stream in, signed wake events out.
//
// What only the functions use lives under this folder: lambdafn (the
// environment, cold start, runtime, metrics and traces) and lambdahttp
// (API Gateway events to http.Handlers). Build it as SAM does: make build
// (or make build-McpFunction ARTIFACTS_DIR=…).
package main

import "github.com/agentbox/agentbox/functions/lambdafn"

func main() { lambdafn.Start() }

// Command mcp is the Lambda function behind the MCP endpoint (/mcp), which
// serves every registry tool.
package main

import "github.com/agentbox/agentbox/internal/lambdafn"

func main() { lambdafn.StartMCP() }

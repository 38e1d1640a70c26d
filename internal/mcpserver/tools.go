package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/reqlog"
)

// mcpTool is the MCP declaration of a registry tool. The schemas are the
// registry's own (strict: additionalProperties false), so what tools/list
// shows is exactly what Invoke enforces.
func mcpTool(t *registry.Tool) *mcp.Tool {
	destructive, openWorld := t.Hints.Destructive, t.Hints.OpenWorld
	tool := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.Input,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.Hints.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Hints.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
	if t.Output != nil {
		// Assigned only when set: a nil *schema.Schema in the interface
		// would be a non-nil OutputSchema that marshals to null.
		tool.OutputSchema = t.Output
	}
	return tool
}

// toolHandler runs one registry tool for the SDK. The SDK does no
// validation of its own on this low-level path: Invoke is the single gate
// (strict JSON, the input schema, then the domain), so MCP and REST reject
// exactly the same arguments with the same codes.
func (s *handler) toolHandler(t *registry.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		cr := hub.Credentials{Transport: transport}
		var args json.RawMessage
		if req.Extra != nil && req.Extra.Header != nil {
			// The session layer refused a malformed Authorization header,
			// so ok is always true here.
			cr.Bearer, _ = bearerToken(req.Extra.Header)
			// The durable session header, as REST takes it, lets a client
			// that connects once per call (the Inspector CLI) use the
			// session it primed in an earlier connection; without it, the
			// MCP session is the tool's session.
			cr.SessionID = req.Extra.Header.Get(registry.SessionHeader)
			if cr.SessionID == "" {
				cr.SessionID = req.Extra.Header.Get(SessionHeader)
			}
		}
		if req.Params != nil {
			args = req.Params.Arguments
		}
		if trimmed := bytes.TrimSpace(args); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			// Arguments are optional in MCP; absent means no arguments.
			args = json.RawMessage("{}")
		}

		out, err := t.Invoke(ctx, s.hub, cr, args)
		var res *mcp.CallToolResult
		if err == nil {
			res, err = success(t.Name, out)
		}
		if err != nil {
			e := apperr.Normalize(err)
			res = failure(t, e)
			s.logCall(ctx, t.Name, e, start)
			return res, nil
		}
		s.logCall(ctx, t.Name, nil, start)
		return res, nil
	}
}

// success renders a tool's output once, as both structuredContent and its
// text, so the two can never differ.
func success(tool string, out any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: rendering %s output: %w", tool, err)
	}
	return &mcp.CallToolResult{
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
	}, nil
}

// failure is a domain error as a tool result: the SDK's rule, and ours, is
// that a tool failure is something the model reads, not a protocol error.
// The text block carries the same whole envelope as structuredContent, so a
// host that shows the model only text loses neither next_action nor
// retryable, current_revision or retry_after_seconds.
func failure(t *registry.Tool, e *apperr.Error) *mcp.CallToolResult {
	sc := map[string]any{"error": e.EnvelopeFor(t.IntegerRevisions())}
	b, err := json.Marshal(sc)
	if err != nil {
		// Unreachable: the envelope is strings, booleans and integers.
		b = []byte(`{"error":{"code":"` + string(e.Code) + `"}}`)
	}
	return &mcp.CallToolResult{
		IsError:           true,
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
	}
}

// logCall writes the one line per tool call: which tool, the outcome code
// and how long it took; never arguments, keys or session ids. An unexpected
// failure's internal cause goes to the log only (the caller saw a generic
// message).
func (s *handler) logCall(ctx context.Context, tool string, e *apperr.Error, start time.Time) {
	attrs := []slog.Attr{
		slog.String("request_id", reqlog.ID(ctx)),
		slog.String("tool", tool),
		slog.String("code", "OK"),
		slog.Int64("duration_ms", time.Since(start).Milliseconds()),
	}
	level := slog.LevelInfo
	if e != nil {
		attrs[2] = slog.String("code", string(e.Code))
		if cause := errors.Unwrap(e); cause != nil && (e.Code == apperr.StorageFailure || e.Code == apperr.TemporarilyUnavailable) {
			level = slog.LevelError
			attrs = append(attrs, slog.String("err", cause.Error()))
		}
	}
	s.log.LogAttrs(ctx, level, "mcp tool call", attrs...)
}

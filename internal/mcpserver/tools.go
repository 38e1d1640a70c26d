package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/bearer"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/strictjson"
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

// answer is a tool call's outcome, rendered once: data is both the
// structuredContent and its text block, so the two can never differ.
type answer struct {
	data []byte
	// code is the domain error code of an isError result, "" on success,
	// so the session layer learns it without decoding its own answer.
	code apperr.Code
	// open is set for a tool that needs no session (get_help): the
	// session layer then checks the transport's session itself.
	open bool
	// challenge is set, with OAuth on, for a call whose credentials were
	// refused (AUTH_FAILED without a missing scope): the session layer
	// answers HTTP 401 instead of a tool result, so the client refreshes
	// or re-authorizes (MCP authorization: invalid or expired tokens get
	// 401). Keys get the same, so a refused token and a refused key still
	// answer alike.
	challenge bool
}

// result is the answer as the SDK's tool result.
func (a answer) result() *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError:           a.code != "",
		StructuredContent: json.RawMessage(a.data),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(a.data)}},
	}
}

// toolFunc runs one registry tool for a tools/call: header is the HTTP
// request's (the credentials and the durable session header), args the
// call's arguments.
type toolFunc func(ctx context.Context, header http.Header, args json.RawMessage) answer

// runTool is the toolFunc of t. The SDK does no validation of its own on
// this low-level path: Invoke is the single gate (strict JSON, the input
// schema, then the domain), so MCP and REST reject exactly the same
// arguments with the same codes.
func (s *handler) runTool(t *registry.Tool) toolFunc {
	return func(ctx context.Context, header http.Header, args json.RawMessage) answer {
		start := time.Now()
		ctx, tally := metrics.Begin(ctx)
		cr := hub.Credentials{Transport: transport}
		if header != nil {
			// The session layer refused a malformed Authorization header,
			// so there is no error here.
			cr.Bearer, _ = bearer.Key(header)
			// The durable session header, as REST takes it, lets a client
			// that connects once per call (the Inspector CLI) use the
			// session it primed in an earlier connection; without it, the
			// MCP session is the tool's session.
			cr.SessionID = header.Get(registry.SessionHeader)
			cr.SessionHandle = cr.SessionID != ""
			if cr.SessionID == "" {
				cr.SessionID = header.Get(SessionHeader)
			}
		}
		if isNull(args) {
			// Arguments are optional in MCP; absent means no arguments.
			args = json.RawMessage("{}")
		}

		out, err := t.Invoke(ctx, s.hub, cr, args)
		var data []byte
		if err == nil {
			if data, err = strictjson.Marshal(out); err != nil {
				err = fmt.Errorf("mcpserver: rendering %s output: %w", t.Name, err)
			}
		}
		if err != nil {
			e := apperr.Normalize(err)
			s.logCall(ctx, tally, t.Name, e, start)
			ans := failure(t, e)
			ans.open = !t.Authenticated
			ans.challenge = e.Code == apperr.AuthFailed && e.RequiredScope == "" && s.hub != nil && s.hub.TakesTokens()
			return ans
		}
		s.logCall(ctx, tally, t.Name, nil, start)
		return answer{data: data, open: !t.Authenticated}
	}
}

// toolHandler adapts a toolFunc to the SDK, which serves tools/call only
// when this layer does not (a tools/call notification).
func toolHandler(run toolFunc) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var header http.Header
		if req.Extra != nil {
			header = req.Extra.Header
		}
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		return run(ctx, header, args).result(), nil
	}
}

// failure is a domain error as a tool result: the SDK's rule, and ours, is
// that a tool failure is something the model reads, not a protocol error.
// The text block carries the same whole envelope as structuredContent, so a
// host that shows the model only text loses neither next_action nor
// retryable, current_revision or retry_after_seconds.
func failure(t *registry.Tool, e *apperr.Error) answer {
	b, err := strictjson.Marshal(map[string]any{"error": e.EnvelopeIn(registry.ErrorContext(t, apperr.MCP))})
	if err != nil {
		// Unreachable: the envelope is strings, booleans and integers.
		b = []byte(`{"error":{"code":"` + string(e.Code) + `"}}`)
	}
	return answer{data: b, code: e.Code}
}

// logCall writes the one line per tool call: which tool, the outcome code
// and how long it took; never arguments, keys or session ids. An unexpected
// failure's internal cause goes to the log only (the caller saw a generic
// message).
func (s *handler) logCall(ctx context.Context, tally *metrics.Tally, tool string, e *apperr.Error, start time.Time) {
	took := time.Since(start)
	attrs := []slog.Attr{
		slog.String("request_id", reqlog.ID(ctx)),
		slog.String("tool", tool),
		slog.String("code", "OK"),
		slog.Int64("duration_ms", took.Milliseconds()),
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
	code := "OK"
	if e != nil {
		code = string(e.Code)
	}
	s.hub.Metrics().Call(ctx, tally.Call(tool, code, took))
}

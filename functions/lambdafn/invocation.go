package lambdafn

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Log attributes of every line logged within an invocation, as the
// Powertools Logger names them, so that a request's lines join the
// platform's REPORT line (by request id) and say which function, memory
// size and start they ran in.
const (
	keyRequestID   = "function_request_id"
	keyColdStart   = "cold_start"
	keyFunction    = "function_name"
	keyMemory      = "function_memory_size"
	keyFunctionARN = "function_arn"
	keyTraceID     = "xray_trace_id"
)

// traceKey is where the Lambda runtime puts the invocation's X-Ray trace
// header in the context (aws-lambda-go sets this string key).
const traceKey = "x-amzn-trace-id"

type coldKey struct{}

// invoked wraps a Lambda handler so that its context says whether this is
// the instance's first invocation (cold_start).
func invoked[E, R any](fn func(context.Context, E) (R, error)) func(context.Context, E) (R, error) {
	var seen atomic.Bool
	return func(ctx context.Context, ev E) (R, error) {
		return fn(context.WithValue(ctx, coldKey{}, !seen.Swap(true)), ev)
	}
}

// functionLogger returns log with the function's name and memory size on
// every line and the invocation's attributes on every line logged with an
// invocation's context.
func functionLogger(log *slog.Logger) *slog.Logger {
	return slog.New(invocationHandler{log.Handler()}).With(
		slog.String(keyFunction, lambdacontext.FunctionName),
		slog.Int(keyMemory, lambdacontext.MemoryLimitInMB))
}

// invocationHandler adds function_request_id, cold_start, function_arn and
// xray_trace_id from the context.
type invocationHandler struct{ inner slog.Handler }

func (h invocationHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h invocationHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx == nil {
		return h.inner.Handle(ctx, r)
	}
	var attrs []slog.Attr
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		attrs = append(attrs, slog.String(keyRequestID, lc.AwsRequestID), slog.String(keyFunctionARN, lc.InvokedFunctionArn))
	}
	if cold, ok := ctx.Value(coldKey{}).(bool); ok {
		attrs = append(attrs, slog.Bool(keyColdStart, cold))
	}
	if trace, ok := ctx.Value(traceKey).(string); ok && trace != "" {
		attrs = append(attrs, slog.String(keyTraceID, trace))
	}
	if len(attrs) > 0 {
		r = r.Clone()
		r.AddAttrs(attrs...)
	}
	return h.inner.Handle(ctx, r)
}

func (h invocationHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return invocationHandler{h.inner.WithAttrs(attrs)}
}

func (h invocationHandler) WithGroup(name string) slog.Handler {
	return invocationHandler{h.inner.WithGroup(name)}
}

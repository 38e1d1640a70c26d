package lambdafn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// EnvXRayDaemon is where Lambda's X-Ray daemon listens (UDP host:port)
// when the function is actively traced.
const EnvXRayDaemon = "AWS_XRAY_DAEMON_ADDRESS"

// xrayHeader is the X-Ray daemon's UDP document header.
const xrayHeader = `{"format":"json","version":1}` + "\n"

// tracer sends one X-Ray subsegment per DynamoDB operation of a sampled
// invocation to the daemon, as the X-Ray SDK does, without it: the SDK
// for Go is in maintenance and its successor (OpenTelemetry with the ADOT
// collector) is a dependency tree and a layer; a subsegment is one UDP
// JSON document. Lambda's own segment for the invocation is the parent
// (the trace header's Parent).
type tracer struct {
	conn net.Conn
	now  func() time.Time
}

// newTracer returns the tracer of the daemon at addr, or nil without one.
func newTracer(addr string) *tracer {
	if addr == "" {
		return nil
	}
	// The variable may list "udp:host:port tcp:host:port"; take UDP.
	for f := range strings.FieldsSeq(addr) {
		if a, ok := strings.CutPrefix(f, "udp:"); ok {
			addr = a
		}
	}
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return nil
	}
	return &tracer{conn: conn, now: time.Now}
}

// traceHeader parses Root, Parent and Sampled of an X-Ray trace header.
func traceHeader(h string) (root, parent string, sampled bool) {
	for part := range strings.SplitSeq(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Root":
			root = v
		case "Parent":
			parent = v
		case "Sampled":
			sampled = v == "1"
		}
	}
	return root, parent, sampled
}

// subsegment is the X-Ray document of one AWS call.
type subsegment struct {
	Name      string  `json:"name"`
	ID        string  `json:"id"`
	TraceID   string  `json:"trace_id"`
	ParentID  string  `json:"parent_id"`
	StartTime float64 `json:"start_time"`
	EndTime   float64 `json:"end_time"`
	Type      string  `json:"type"`
	Namespace string  `json:"namespace"`
	Fault     bool    `json:"fault,omitempty"`
	Throttle  bool    `json:"throttle,omitempty"`
	AWS       struct {
		Operation string `json:"operation"`
		Region    string `json:"region,omitempty"`
		RequestID string `json:"request_id,omitempty"`
	} `json:"aws"`
	HTTP *xrayHTTP `json:"http,omitempty"`
}

type xrayHTTP struct {
	Response struct {
		Status int `json:"status"`
	} `json:"response"`
}

// middleware is the client's API option: it times each operation
// (retries included) and sends its subsegment when the invocation is
// sampled.
func (tr *tracer) middleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("agentboxXRay",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			header, _ := ctx.Value(traceKey).(string)
			root, parent, sampled := traceHeader(header)
			if !sampled || root == "" || parent == "" {
				return next.HandleInitialize(ctx, in)
			}
			start := tr.now()
			out, md, err := next.HandleInitialize(ctx, in)
			s := subsegment{Name: awsmiddleware.GetServiceID(ctx), ID: spanID(), TraceID: root, ParentID: parent,
				StartTime: seconds(start), EndTime: seconds(tr.now()), Type: "subsegment", Namespace: "aws"}
			s.AWS.Operation = awsmiddleware.GetOperationName(ctx)
			s.AWS.Region = awsmiddleware.GetRegion(ctx)
			s.AWS.RequestID, _ = awsmiddleware.GetRequestIDMetadata(md)
			if resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && resp != nil {
				s.HTTP = &xrayHTTP{}
				s.HTTP.Response.Status = resp.StatusCode
			}
			// A throttle is the caller's error in X-Ray's terms, any
			// other failure a fault.
			s.Throttle = isThrottle(err)
			s.Fault = err != nil && !s.Throttle
			tr.send(s)
			return out, md, err
		}), middleware.After)
}

// isThrottle: DynamoDB refused for capacity (ProvisionedThroughputExceeded,
// ThrottlingException, RequestLimitExceeded).
func isThrottle(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	code := api.ErrorCode()
	return strings.Contains(code, "Throughput") || strings.Contains(code, "Throttl") || code == "RequestLimitExceeded"
}

func (tr *tracer) send(s subsegment) {
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	_, _ = tr.conn.Write(append([]byte(xrayHeader), b...))
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func spanID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tracingOptions are the DynamoDB client's API options: the tracer's
// middleware when Lambda runs an X-Ray daemon for the function.
func tracingOptions(getenv func(string) string) []func(*middleware.Stack) error {
	if tr := newTracer(getenv(EnvXRayDaemon)); tr != nil {
		return []func(*middleware.Stack) error{tr.middleware}
	}
	return nil
}

package lambdafn

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/registry"
)

// EnvMetricsNamespace names the CloudWatch namespace of the function's
// metrics; the template sets agentbox/<stack name>, one per tenant stack.
const EnvMetricsNamespace = "AGENTBOX_METRICS_NAMESPACE"

// defaultNamespace is the namespace without EnvMetricsNamespace.
const defaultNamespace = "agentbox"

// Values of the Tool dimension that are not tool names: a request no tool
// served, and a name the registry does not hold (which a caller chose, so
// it never becomes a dimension value).
const (
	toolNone  = "none"
	toolOther = "other"
)

// emf is the metrics.Recorder of the Lambda functions: each record is one
// line of CloudWatch Embedded Metric Format on the function's log stream,
// from which CloudWatch extracts the metrics (no API call, no agent).
//
// Dimensions stay bounded: Tool takes registry names (toolNone,
// toolOther otherwise), Code the envelope's codes or OK.
//
//   - Calls (Count) by Tool and Code, and by Code alone: calls, errors by
//     code, RATE_LIMITED, REVISION_CONFLICT, TEMPORARILY_UNAVAILABLE.
//   - Latency (Milliseconds), Errors, Retries and FanoutSteps (Count) by
//     Tool: p50/p99 per tool, failed calls, contention retries, fan-out
//     steps committed within calls.
//   - IntentsDue, IntentsFinished and IntentsStuck (Count) by Function
//     (sweep): one record per sweep run.
type emf struct {
	namespace string
	tools     map[string]bool
	now       func() time.Time
	w         io.Writer
}

// lineWriter serializes whole-line writes to w.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// newEMF writes to w, one Write per line; w serializes them (lineWriter)
// when lines may be written concurrently.
func newEMF(w io.Writer, namespace string) *emf {
	if namespace == "" {
		namespace = defaultNamespace
	}
	tools := map[string]bool{}
	for _, t := range registry.New().Tools() {
		tools[t.Name] = true
	}
	return &emf{namespace: namespace, tools: tools, now: time.Now, w: w}
}

// emfDirective is one entry of _aws.CloudWatchMetrics.
type emfDirective struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []emfMetric `json:"Metrics"`
}

type emfMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

func (m *emf) Call(ctx context.Context, c metrics.Call) {
	tool := c.Tool
	switch {
	case tool == "":
		tool = toolNone
	case !m.tools[tool]:
		tool = toolOther
	}
	errs := 0
	if c.Code != "OK" {
		errs = 1
	}
	m.write(ctx, []emfDirective{
		{Namespace: m.namespace, Dimensions: [][]string{{"Tool", "Code"}, {"Code"}},
			Metrics: []emfMetric{{"Calls", "Count"}}},
		{Namespace: m.namespace, Dimensions: [][]string{{"Tool"}},
			Metrics: []emfMetric{{"Latency", "Milliseconds"}, {"Errors", "Count"}, {"Retries", "Count"}, {"FanoutSteps", "Count"}}},
	}, map[string]any{
		"Tool": tool, "Code": c.Code,
		"Calls": 1, "Errors": errs, "Retries": c.Retries, "FanoutSteps": c.FanoutSteps,
		"Latency": float64(c.Duration.Microseconds()) / 1000,
	})
}

func (m *emf) Sweep(ctx context.Context, s metrics.Sweep) {
	m.write(ctx, []emfDirective{{Namespace: m.namespace, Dimensions: [][]string{{"Function"}},
		Metrics: []emfMetric{{"IntentsDue", "Count"}, {"IntentsFinished", "Count"}, {"IntentsStuck", "Count"}}}},
		map[string]any{"Function": SweepFunction, "IntentsDue": s.Due, "IntentsFinished": s.Finished, "IntentsStuck": s.Stuck})
}

// write renders one EMF line: the metadata, then the dimension and metric
// values as top-level members, with the invocation's request id so that a
// record joins its request's log lines.
func (m *emf) write(ctx context.Context, ds []emfDirective, values map[string]any) {
	values["_aws"] = map[string]any{"Timestamp": m.now().UnixMilli(), "CloudWatchMetrics": ds}
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		values[keyRequestID] = lc.AwsRequestID
	}
	b, err := json.Marshal(values)
	if err != nil {
		return // unreachable: strings and numbers
	}
	_, _ = m.w.Write(append(b, '\n'))
}

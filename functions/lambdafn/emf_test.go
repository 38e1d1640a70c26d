package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/metrics"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/reqlog/reqlogtest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// emfRecord is an EMF line as CloudWatch reads it.
type emfRecord struct {
	AWS struct {
		Timestamp         int64          `json:"Timestamp"`
		CloudWatchMetrics []emfDirective `json:"CloudWatchMetrics"`
	} `json:"_aws"`
	Values map[string]any `json:"-"`
}

func decodeEMF(t *testing.T, line []byte) emfRecord {
	t.Helper()
	var r emfRecord
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("EMF line %s: %v", line, err)
	}
	if err := json.Unmarshal(line, &r.Values); err != nil {
		t.Fatal(err)
	}
	if r.AWS.Timestamp <= 0 || len(r.AWS.CloudWatchMetrics) == 0 {
		t.Fatalf("EMF line without metadata: %s", line)
	}
	// Every dimension and every metric a directive names is a top-level
	// member (CloudWatch drops the record otherwise); metric values are
	// numbers.
	for _, d := range r.AWS.CloudWatchMetrics {
		for _, set := range d.Dimensions {
			for _, dim := range set {
				if _, ok := r.Values[dim].(string); !ok {
					t.Errorf("dimension %s is not a string member: %s", dim, line)
				}
			}
		}
		for _, m := range d.Metrics {
			if _, ok := r.Values[m.Name].(float64); !ok {
				t.Errorf("metric %s is not a number member: %s", m.Name, line)
			}
		}
	}
	return r
}

// units returns metric name -> unit, and metric name -> its dimension sets.
func units(r emfRecord, namespace string, t *testing.T) (map[string]string, map[string][][]string) {
	u, dims := map[string]string{}, map[string][][]string{}
	for _, d := range r.AWS.CloudWatchMetrics {
		if d.Namespace != namespace {
			t.Errorf("namespace = %q, want %q", d.Namespace, namespace)
		}
		for _, m := range d.Metrics {
			u[m.Name] = m.Unit
			dims[m.Name] = d.Dimensions
		}
	}
	return u, dims
}

// TestEMFCallRecord decodes the line a tool call writes: namespace, the
// dimension sets and units of each metric, the values, the request id, and
// tool names kept to the registry's.
func TestEMFCallRecord(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	m := newEMF(&buf, "agentbox/tenant-a")
	m.now = func() time.Time { return time.UnixMilli(1_700_000_000_123) }
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	m.Call(ctx, metrics.Call{Tool: "message_send", Code: "RATE_LIMITED", Duration: 12500 * time.Microsecond, Retries: 3, FanoutSteps: 2})
	m.Call(context.Background(), metrics.Call{Tool: "drop table", Code: "OK"})
	m.Call(context.Background(), metrics.Call{Code: "FORBIDDEN"})

	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %s", len(lines), buf.Bytes())
	}
	r := decodeEMF(t, lines[0])
	if r.AWS.Timestamp != 1_700_000_000_123 {
		t.Errorf("Timestamp = %d", r.AWS.Timestamp)
	}
	u, dims := units(r, "agentbox/tenant-a", t)
	wantUnits := map[string]string{"Calls": "Count", "Errors": "Count", "Latency": "Milliseconds", "Retries": "Count", "FanoutSteps": "Count"}
	for name, unit := range wantUnits {
		if u[name] != unit {
			t.Errorf("unit of %s = %q, want %q", name, u[name], unit)
		}
	}
	if len(u) != len(wantUnits) {
		t.Errorf("metrics = %v, want %v", u, wantUnits)
	}
	if want := [][]string{{"Tool", "Code"}, {"Code"}}; !slices.EqualFunc(dims["Calls"], want, slices.Equal) {
		t.Errorf("Calls dimensions = %v, want %v", dims["Calls"], want)
	}
	for _, name := range []string{"Latency", "Errors", "Retries", "FanoutSteps"} {
		if want := [][]string{{"Tool"}}; !slices.EqualFunc(dims[name], want, slices.Equal) {
			t.Errorf("%s dimensions = %v, want %v", name, dims[name], want)
		}
	}
	want := map[string]any{"Tool": "message_send", "Code": "RATE_LIMITED", "Calls": 1.0, "Errors": 1.0,
		"Latency": 12.5, "Retries": 3.0, "FanoutSteps": 2.0, keyRequestID: "req-1"}
	for k, v := range want {
		if r.Values[k] != v {
			t.Errorf("%s = %v, want %v", k, r.Values[k], v)
		}
	}
	// A name outside the registry, or no tool, never becomes a dimension
	// value of its own.
	if v := decodeEMF(t, lines[1]).Values; v["Tool"] != toolOther || v["Errors"] != 0.0 || v[keyRequestID] != nil {
		t.Errorf("unknown tool: %v", v)
	}
	if v := decodeEMF(t, lines[2]).Values; v["Tool"] != toolNone || v["Code"] != "FORBIDDEN" {
		t.Errorf("no tool: %v", v)
	}
}

// TestEMFSweepRecord decodes the sweep's line: its three counts by
// Function, and the default namespace.
func TestEMFSweepRecord(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	newEMF(&buf, "").Sweep(context.Background(), metrics.Sweep{Due: 5, Finished: 3, Stuck: 2})
	r := decodeEMF(t, bytes.TrimSpace(buf.Bytes()))
	u, dims := units(r, defaultNamespace, t)
	for _, name := range []string{"IntentsDue", "IntentsFinished", "IntentsStuck"} {
		if u[name] != "Count" || !slices.EqualFunc(dims[name], [][]string{{"Function"}}, slices.Equal) {
			t.Errorf("%s: unit %q, dimensions %v", name, u[name], dims[name])
		}
	}
	for k, v := range map[string]any{"Function": SweepFunction, "IntentsDue": 5.0, "IntentsFinished": 3.0, "IntentsStuck": 2.0} {
		if r.Values[k] != v {
			t.Errorf("%s = %v, want %v", k, r.Values[k], v)
		}
	}
}

// TestInvocationLogFields: every line logged within an invocation carries
// the Lambda request id, cold_start (true on the instance's first
// invocation only), the function's name and memory size, under the
// Powertools Logger names, next to the transport's request_id.
func TestInvocationLogFields(t *testing.T) {
	logs := &reqlogtest.Buffer{}
	log := functionLogger(reqlog.NewLogger(logs, slog.LevelInfo))
	h := invoked(func(ctx context.Context, n int) (int, error) {
		log.InfoContext(reqlog.With(ctx, "api-1"), "line", "n", n)
		return n, nil
	})
	for i := range 2 {
		lc := &lambdacontext.LambdaContext{AwsRequestID: "lambda-req-" + string(rune('a'+i)), InvokedFunctionArn: "arn:aws:lambda:eu-west-1:1:function:f"}
		if _, err := h(lambdacontext.NewContext(context.Background(), lc), i); err != nil {
			t.Fatal(err)
		}
	}
	log.Info("outside an invocation")
	lines := logs.Lines(t)
	if len(lines) != 3 {
		t.Fatalf("%d lines: %s", len(lines), logs)
	}
	for i, want := range []map[string]any{
		{keyRequestID: "lambda-req-a", keyColdStart: true, reqlog.IDKey: "api-1", keyFunctionARN: "arn:aws:lambda:eu-west-1:1:function:f"},
		{keyRequestID: "lambda-req-b", keyColdStart: false, reqlog.IDKey: "api-1"},
		{keyRequestID: nil, keyColdStart: nil},
	} {
		got := lines[i]
		for k, v := range want {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%s)", i, k, got[k], v, lines[i])
			}
		}
		// Set from the runtime's environment; empty outside Lambda.
		if _, ok := got[keyFunction].(string); !ok {
			t.Errorf("line %d: no %s: %s", i, keyFunction, lines[i])
		}
		if _, ok := got[keyMemory].(float64); !ok {
			t.Errorf("line %d: no %s: %s", i, keyMemory, lines[i])
		}
	}
}

// failingQuery is a store whose queries fail: the sweep cannot run.
type failingQuery struct{ store.Store }

func (failingQuery) Query(context.Context, store.Query) ([]*store.Item, error) {
	return nil, store.ErrUnavailable
}

// TestSweepHandlerReportsAndFails: a scheduled run returns its figures and
// writes them as one EMF line; a run whose sweep cannot query returns an
// error (the function's error alarm) and no line.
func TestSweepHandlerReportsAndFails(t *testing.T) {
	t.Parallel()
	st := teststores.All()[0].Open(t, time.Now)
	var buf bytes.Buffer
	rec := newEMF(&buf, "agentbox/t")
	log := reqlog.NewLogger(&bytes.Buffer{}, slog.LevelInfo)
	ctx := context.Background()

	got, err := sweepHandler(hub.New(st, hub.Options{Logger: log, Metrics: rec}), log)(ctx, nil)
	if err != nil || got != (SweepResult{}) {
		t.Fatalf("sweep of an empty table = %+v, %v", got, err)
	}
	r := decodeEMF(t, bytes.TrimSpace(buf.Bytes()))
	if r.Values["IntentsStuck"] != 0.0 || r.Values["Function"] != SweepFunction {
		t.Errorf("sweep line = %v", r.Values)
	}
	buf.Reset()
	if _, err := sweepHandler(hub.New(failingQuery{st}, hub.Options{Logger: log, Metrics: rec}), log)(ctx, nil); err == nil {
		t.Fatal("a sweep that cannot query returned no error")
	}
	if buf.Len() != 0 {
		t.Errorf("a failed sweep wrote %s", buf.Bytes())
	}
}

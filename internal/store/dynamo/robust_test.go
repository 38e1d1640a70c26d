package dynamo_test

// Robustness of the client side: which calls a write becomes, attempt and
// operation timeouts, which failures are retried, parallel batch reads and
// bounded query paging (unprocessed batch keys: dynamo_test.go). Stalls and refusals are faults no local engine
// produces on demand, so they come from scripted HTTP handlers; everything
// else runs on minidyn.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/truora/minidyn/server"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
)

func TestWriteCallPerShape(t *testing.T) {
	h := newHarness(t)
	k := func(sk string) store.Key { return store.Key{PK: "P", SK: sk} }
	h.write(store.Put(&store.Item{PK: "P", SK: "there", Version: 1}, always))
	for _, tc := range []struct {
		name string
		ops  []store.Op
		want string
	}{
		{"PutIsPutItem", []store.Op{store.Put(&store.Item{PK: "P", SK: "a"}, store.Absent)}, "PutItem"},
		{"DeleteIsDeleteItem", []store.Op{store.Delete(k("there"), store.AtVersion(1))}, "DeleteItem"},
		{"AddIsUpdateItem", []store.Op{store.Add(k("n"), 1, 0)}, "UpdateItem"},
		{"LoneCheckIsGetItem", []store.Op{store.Check(k("a"), store.Present)}, "GetItem"},
		{"TwoOpsAreTransaction", []store.Op{store.Put(&store.Item{PK: "P", SK: "b"}, store.Absent), store.Check(k("a"), store.Present)}, "TransactWriteItems"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := map[string]int{}
			for _, op := range []string{"PutItem", "DeleteItem", "UpdateItem", "GetItem", "TransactWriteItems"} {
				before[op] = h.count(op)
			}
			if err := h.s.Write(h.ctx, tc.ops); err != nil {
				t.Fatalf("Write(%d ops) = %v, want nil", len(tc.ops), err)
			}
			for op, n := range before {
				want := n
				if op == tc.want {
					want++
				}
				if got := h.count(op); got != want {
					t.Errorf("Write(%d ops) sent %d %s, want %d", len(tc.ops), got-n, op, want-n)
				}
			}
		})
	}
}

// scripted is a DynamoDB endpoint whose answers the test writes: answer
// gets the request's operation and its 1-based number and writes the
// response, or returns false to stall until the client gives up.
type scripted struct {
	calls  atomic.Int64
	answer func(op string, n int64, body []byte, w http.ResponseWriter) bool
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	target := r.Header.Get("X-Amz-Target")
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if !s.answer(target[strings.LastIndexByte(target, '.')+1:], n, body, w) {
		<-r.Context().Done() // the client's attempt timeout closes the connection
	}
}

// scriptedStore is a store on a scripted endpoint with quick retries and the
// given time budgets.
func scriptedStore(t *testing.T, sc *scripted, opts dynamo.Options) *dynamo.Store {
	t.Helper()
	client := serverClient(newServer(t, sc))
	return dynamo.New(client, "t", opts)
}

var quick = dynamo.Options{AttemptTimeout: 50 * time.Millisecond, OperationTimeout: 10 * time.Second}

func TestStalledAttemptIsRetried(t *testing.T) {
	sc := &scripted{answer: func(_ string, n int64, _ []byte, w http.ResponseWriter) bool {
		if n == 1 {
			return false
		}
		fmt.Fprint(w, "{}")
		return true
	}}
	s := scriptedStore(t, sc, quick)
	it, err := s.Get(t.Context(), store.Key{PK: "P", SK: "a"})
	if it != nil || err != nil {
		t.Fatalf("Get after one stalled attempt = %v, %v, want nil, nil (the retry answers)", it, err)
	}
	if got := sc.calls.Load(); got != 2 {
		t.Errorf("Get after one stalled attempt sent %d requests, want 2", got)
	}
}

func TestTimeouts(t *testing.T) {
	stall := func(string, int64, []byte, http.ResponseWriter) bool { return false }
	key := store.Key{PK: "P", SK: "a"}
	for _, tc := range []struct {
		name      string
		opts      dynamo.Options
		call      func(s *dynamo.Store) error
		wantCalls int64
	}{
		{"GetAttemptsRunOut", quick, func(s *dynamo.Store) error { _, err := s.Get(t.Context(), key); return err }, 3},
		{"QueryAttemptsRunOut", quick, func(s *dynamo.Store) error { _, err := s.Query(t.Context(), store.Query{PK: "P"}); return err }, 3},
		{"BatchGetAttemptsRunOut", quick, func(s *dynamo.Store) error { _, err := s.BatchGet(t.Context(), []store.Key{key}); return err }, 3},
		{"GetOperationRunsOut", dynamo.Options{AttemptTimeout: time.Hour, OperationTimeout: 50 * time.Millisecond},
			func(s *dynamo.Store) error { _, err := s.Get(t.Context(), key); return err }, 1},
		// A transaction is retried with its idempotency token; the outcome
		// stays unknown when every attempt stalls.
		{"TransactionAttemptsRunOut", quick, func(s *dynamo.Store) error {
			return s.Write(t.Context(), []store.Op{store.Put(&store.Item{PK: "P", SK: "a"}, store.Absent), store.Add(store.Key{PK: "P", SK: "n"}, 1, 0)})
		}, 3},
		// A plain conditional write carries no token: a retry of a write
		// that did commit would fail its own condition, so it is not sent.
		{"PlainConditionalWriteNotRetried", quick, func(s *dynamo.Store) error {
			return s.Write(t.Context(), []store.Op{store.Put(&store.Item{PK: "P", SK: "a"}, store.Absent)})
		}, 1},
		{"PlainAddNotRetried", quick, func(s *dynamo.Store) error {
			return s.Write(t.Context(), []store.Op{store.Add(store.Key{PK: "P", SK: "n"}, 1, 0)})
		}, 1},
		// Putting unconditionally twice is putting once: retried.
		{"PlainUnconditionalPutRetried", quick, func(s *dynamo.Store) error {
			return s.Write(t.Context(), []store.Op{store.Put(&store.Item{PK: "P", SK: "a"}, always)})
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scripted{answer: stall}
			err := tc.call(scriptedStore(t, sc, tc.opts))
			if !errors.Is(err, store.ErrTimeout) || errors.Is(err, store.ErrUnavailable) {
				t.Errorf("%s on a stalled engine = %v, want store.ErrTimeout (and not ErrUnavailable)", tc.name, err)
			}
			if got := sc.calls.Load(); got != tc.wantCalls {
				t.Errorf("%s on a stalled engine sent %d requests, want %d", tc.name, got, tc.wantCalls)
			}
		})
	}
}

func TestPlainWriteRetriesOnlyRefusals(t *testing.T) {
	put := []store.Op{store.Put(&store.Item{PK: "P", SK: "a"}, store.Absent)}
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		want      error // nil: success
		opaque    bool
		wantCalls int64
	}{
		{"ThrottledThenOK", 400, errorBody("ThrottlingException", secret), nil, false, 3},
		{"ConflictThenOK", 400, errorBody("TransactionConflictException", secret), nil, false, 3},
		{"ConditionFailed", 400, errorBody("ConditionalCheckFailedException", secret), &store.ConditionFailedError{}, false, 1},
		// A server error may follow a committed write: not retried, and
		// reported as an unknown outcome.
		{"ServerErrorOpaque", 500, errorBody("InternalServerError", secret), nil, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scripted{answer: func(_ string, n int64, _ []byte, w http.ResponseWriter) bool {
				if n < 3 || tc.want != nil || tc.opaque {
					w.WriteHeader(tc.status)
					fmt.Fprint(w, tc.body)
					return true
				}
				fmt.Fprint(w, "{}")
				return true
			}}
			err := scriptedStore(t, sc, quick).Write(t.Context(), put)
			switch {
			case tc.opaque:
				if err == nil || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrTimeout) {
					t.Errorf("Write(put if absent) = %v, want an opaque error", err)
				}
			case tc.want != nil:
				cf, ok := store.ConditionFailed(err)
				if !ok || cf.Index != 0 || len(cf.Failed) != 1 {
					t.Errorf("Write(put if absent) = %v, want *ConditionFailedError on op 0", err)
				}
			case err != nil:
				t.Errorf("Write(put if absent) = %v, want nil after retries", err)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("Write error %q carries the engine's message", err)
			}
			if got := sc.calls.Load(); got != tc.wantCalls {
				t.Errorf("Write(put if absent) sent %d requests, want %d", got, tc.wantCalls)
			}
		})
	}
}

// TestBatchGetChunksInParallel: 10 chunks with BatchGetParallel 3. The
// engine holds the first three requests until all three have arrived, so a
// serial adapter fails (its first request never gets an answer), and it
// records the most requests ever in flight, which must not exceed 3.
func TestBatchGetChunksInParallel(t *testing.T) {
	const parallel = 3
	var inflight, most atomic.Int64
	arrived := make(chan struct{})
	var arrivals atomic.Int64
	engine := dynamotest.Handler(server.NewServer())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".BatchGetItem") {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			if a := arrivals.Add(1); a == parallel {
				close(arrived)
			}
			select {
			case <-arrived:
			case <-r.Context().Done():
				return
			}
		}
		engine.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	client := dynamotest.NewClient(srv.URL)
	table := dynamotest.NewTable(t, client)
	s := dynamo.New(client, table, dynamo.Options{BatchGetParallel: parallel})

	keys := putEvery(t, s, "P", 4, 1000, 7, func(i int, k store.Key) *store.Item {
		return &store.Item{PK: k.PK, SK: k.SK, Version: uint64(i)}
	})
	items, err := s.BatchGet(t.Context(), keys)
	if err != nil {
		t.Fatalf("BatchGet(1000 keys) = %v, want nil", err)
	}
	for i, it := range items {
		if (i%7 == 0) != (it != nil) || (it != nil && it.Version != uint64(i)) {
			t.Fatalf("BatchGet(1000 keys)[%d] = %+v, want the item only for multiples of 7", i, it)
		}
	}
	if got := most.Load(); got != parallel {
		t.Errorf("BatchGet(10 chunks) had at most %d chunks in flight, want exactly %d", got, parallel)
	}
}

// TestQueryPagesBounded: a partition full of expired items makes a limited
// query page on and on; past MaxQueryPages it fails instead of eating the
// function's time budget.
func TestQueryPagesBounded(t *testing.T) {
	h := newHarness(t)
	s := dynamo.New(h.client, h.table, dynamo.Options{Now: h.clock.Now, MaxQueryPages: 3})
	var ops []store.Op
	for i := range 5 {
		ops = append(ops, store.Put(&store.Item{PK: "P", SK: fmt.Sprint(i), ExpiresAt: h.unix() + 10}, always))
	}
	ops = append(ops, store.Put(&store.Item{PK: "P", SK: "z"}, always))
	h.write(ops...)
	h.clock.Advance(time.Minute)

	before := h.count("Query")
	_, err := s.Query(h.ctx, store.Query{PK: "P", Limit: 1})
	if !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("Query(Limit 1) over 5 expired items with MaxQueryPages 3 = %v, want store.ErrTooLarge", err)
	}
	if got := h.count("Query") - before; got != 3 {
		t.Errorf("Query(Limit 1) with MaxQueryPages 3 read %d pages, want 3", got)
	}
	if got := h.query(store.Query{PK: "P", Limit: 1}); len(got) != 1 || got[0].SK != "z" {
		t.Errorf("Query(Limit 1) with the default bound = %v, want [P/z]", got)
	}
}

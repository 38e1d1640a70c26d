package dynamo_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/truora/minidyn/server"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
)

// harness is a store on a private minidyn whose engine the test can reach:
// fault injection, a request log, and a settable clock.
type harness struct {
	t      *testing.T
	engine *server.Server
	client *dynamodb.Client
	table  string
	s      *dynamo.Store
	clock  *fakeClock
	ctx    context.Context

	mu    sync.Mutex
	calls map[string]int
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, engine: server.NewServer(), clock: &fakeClock{now: time.Unix(1_800_000_000, 0)}, ctx: t.Context(), calls: map[string]int{}}
	inner := dynamotest.Handler(h.engine)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.Header.Get("X-Amz-Target")
		h.mu.Lock()
		h.calls[target[strings.LastIndexByte(target, '.')+1:]]++
		h.mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.client = dynamotest.NewClient(srv.URL)
	h.table = dynamotest.NewTable(t, h.client)
	h.s = dynamo.New(h.client, h.table, dynamo.Options{Now: h.clock.Now})
	return h
}

// count returns how many requests of operation op the engine received.
func (h *harness) count(op string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[op]
}

func (h *harness) unix() int64 { return h.clock.Now().Unix() }

func (h *harness) write(ops ...store.Op) {
	h.t.Helper()
	if err := h.s.Write(h.ctx, ops); err != nil {
		h.t.Fatalf("Write(%d ops) = %v, want nil", len(ops), err)
	}
}

func (h *harness) get(k store.Key) *store.Item {
	h.t.Helper()
	it, err := h.s.Get(h.ctx, k)
	if err != nil {
		h.t.Fatalf("Get(%v) = %v, want nil error", k, err)
	}
	return it
}

func (h *harness) query(q store.Query) []store.Key {
	h.t.Helper()
	items, err := h.s.Query(h.ctx, q)
	if err != nil {
		h.t.Fatalf("Query(%+v) = %v, want nil error", q, err)
	}
	keys := make([]store.Key, len(items))
	for i, it := range items {
		keys[i] = it.Key()
	}
	return keys
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// deleteTable removes a temporary table from a shared engine, logging
// rather than failing: the tests' verdict does not depend on it.
func deleteTable(t *testing.T, client *dynamodb.Client, table string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
		t.Logf("DeleteTable(%q) = %v; delete it by hand", table, err)
	}
}

// always is the unconditional Condition.
var always = store.Condition{}

// putEvery returns the keys pk/i (i zero-padded to width digits) for i in
// 0..n-1 and writes item(i, key) at every one whose i is a multiple of
// every, in writes of at most store.MaxWriteItems.
func putEvery(t *testing.T, s store.Store, pk string, width, n, every int, item func(i int, k store.Key) *store.Item) []store.Key {
	t.Helper()
	var keys []store.Key
	var ops []store.Op
	for i := range n {
		k := store.Key{PK: pk, SK: fmt.Sprintf("%0*d", width, i)}
		keys = append(keys, k)
		if i%every == 0 {
			ops = append(ops, store.Put(item(i, k), always))
		}
	}
	for len(ops) > 0 {
		n := min(len(ops), store.MaxWriteItems)
		if err := s.Write(t.Context(), ops[:n]); err != nil {
			t.Fatalf("Write(%d ops) = %v, want nil", n, err)
		}
		ops = ops[n:]
	}
	return keys
}

// serverClient is a DynamoDB client of the engine at url (a test server),
// retrying three times with short backoffs.
func serverClient(url string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.MaxBackoff = 5 * time.Millisecond
		}),
	})
}

// newServer serves h on loopback for the life of t and returns its URL.
func newServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

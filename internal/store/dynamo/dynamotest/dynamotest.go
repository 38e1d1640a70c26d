// Package dynamotest runs minidyn, an in-memory engine speaking the DynamoDB
// JSON API, inside the test process, so that tests anywhere in the module
// can get a DynamoDB-backed store (or a loopback endpoint to hand to a
// Lambda function binary) without AWS or Docker.
//
// minidyn differs from DynamoDB in ways tests must not rely on:
//
//   - its indexes are strongly consistent;
//   - it enforces none of the size limits (the adapter checks them itself);
//   - it never deletes expired items (which lets tests prove that the
//     adapter hides them);
//   - a table key is the string pk + "." + sk, so two keys that differ only
//     in where a "." splits them are the same item;
//   - numbers are float64 inside the engine: conditions on numbers above
//     2^53 compare inexactly, and an UpdateItem rewrites every number of
//     the item it touches through float64 (a Version of 2^64-1 comes back
//     as 18446744073709552000, which no longer decodes);
//   - DescribeTable reports no TableStatus and UpdateTimeToLive is not
//     implemented (dynamo.CreateTable copes with both).
//
// Three more defects, a data race, lost index entries and cancellation
// reasons that name only the first failed condition, are repaired by
// Handler, which Start always uses.
package dynamotest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/truora/minidyn/server"

	"github.com/agentbox/agentbox/internal/store/dynamo"
)

// Region is the region test clients sign for; minidyn ignores it.
const Region = "us-east-1"

// Start serves a fresh minidyn on a loopback httptest server for the life of
// t and returns a client for it and its base URL (http://127.0.0.1:port),
// which a separate process may use as its DynamoDB endpoint.
func Start(t testing.TB) (client *dynamodb.Client, endpoint string) {
	t.Helper()
	srv := httptest.NewServer(Handler(server.NewServer()))
	t.Cleanup(srv.Close)
	return NewClient(srv.URL), srv.URL
}

// NewClient returns a client for a local endpoint with static dummy
// credentials and the SDK's default retryer.
func NewClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		// minidyn's CRC32 header does not match its bodies.
		DisableValidateResponseChecksum: true,
		Credentials:                     credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// Time budgets of the stores NewStore returns.
const (
	TestAttemptTimeout   = 30 * time.Second
	TestOperationTimeout = 2 * time.Minute
)

// NewStore starts a minidyn, creates a table on it and returns a store on
// that table whose expiry clock is now (time.Now when nil).
func NewStore(t testing.TB, now func() time.Time) *dynamo.Store {
	t.Helper()
	client, _ := Start(t)
	s := dynamo.New(client, NewTable(t, client), dynamo.Options{Now: now,
		// minidyn runs in the test process: under -race on a loaded
		// 2-core machine one attempt can take seconds without anything
		// being wrong, so the production budgets (2 s, 8 s), which are
		// for a network call to DynamoDB, would turn load into
		// TEMPORARILY_UNAVAILABLE. Tests of the budgets themselves build
		// their stores with their own Options.
		AttemptTimeout: TestAttemptTimeout, OperationTimeout: TestOperationTimeout})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// NewInProcessStore is NewStore with no socket between the adapter and
// minidyn: the client hands each request to minidyn's handler in the
// calling goroutine. Such a store can live inside a testing/synctest
// bubble, where a loopback server cannot: a goroutine in network I/O is
// never durably blocked, so the bubble's clock would never move. Open it
// inside the bubble.
func NewInProcessStore(t testing.TB, now func() time.Time) *dynamo.Store {
	t.Helper()
	client := dynamodb.New(dynamodb.Options{
		Region:                          Region,
		BaseEndpoint:                    aws.String("http://minidyn.invalid"),
		DisableValidateResponseChecksum: true,
		Credentials:                     credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:                      handlerClient{Handler(server.NewServer())},
	})
	s := dynamo.New(client, NewTable(t, client), dynamo.Options{Now: now,
		AttemptTimeout: TestAttemptTimeout, OperationTimeout: TestOperationTimeout})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// handlerClient is an SDK HTTP client that serves each request with h.
type handlerClient struct{ h http.Handler }

func (c handlerClient) Do(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

var tableSeq atomic.Int64

var unsafeTableChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// TableName returns a table name unique within the process and
// recognisable in a shared engine: prefix, then the test's name, then a
// sequence number.
func TableName(t testing.TB, prefix string) string {
	name := unsafeTableChars.ReplaceAllString(t.Name(), "_")
	name = strings.Trim(name, "_")
	if len(name) > 120 {
		name = name[:120]
	}
	return fmt.Sprintf("%s%s-%d", prefix, name, tableSeq.Add(1))
}

// NewTable creates a fresh table from the schema on client and returns its
// name. The table lives as long as the engine; minidyn's dies with the test.
func NewTable(t testing.TB, client *dynamodb.Client) string {
	t.Helper()
	table := TableName(t, "agentbox-test-")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := dynamo.CreateTable(ctx, client, table); err != nil {
		t.Fatalf("dynamo.CreateTable(%q): %v", table, err)
	}
	return table
}

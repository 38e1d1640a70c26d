package dynamo_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
	"github.com/agentbox/agentbox/internal/store/storetest"
)

// Iteration counts for the suite's races, lowered from the embedded
// store's defaults because every operation here is an HTTP round trip.
var suiteOptions = storetest.Options{Writers: 4, Appends: 15, Readers: 2, Adders: 4}

// TestConformanceEndpoint runs the suite against the DynamoDB at
// AGENTBOX_DYNAMODB_ENDPOINT (DynamoDB Local, for instance), on temporary
// tables named with AGENTBOX_DYNAMODB_TABLE_PREFIX (default
// "agentbox-test-") that it deletes afterwards.
func TestConformanceEndpoint(t *testing.T) {
	endpoint := os.Getenv("AGENTBOX_DYNAMODB_ENDPOINT")
	if endpoint == "" {
		t.Skip("AGENTBOX_DYNAMODB_ENDPOINT is not set: the conformance suite did not run against a real DynamoDB endpoint (the minidyn run is TestConformance)")
	}
	prefix := os.Getenv("AGENTBOX_DYNAMODB_TABLE_PREFIX")
	if prefix == "" {
		prefix = "agentbox-test-"
	}
	client, err := dynamo.NewClient(t.Context(), dynamo.Config{Endpoint: endpoint})
	if err != nil {
		t.Fatalf("dynamo.NewClient(endpoint %q) = %v", endpoint, err)
	}
	storetest.RunWith(t, func(t *testing.T, now func() time.Time) store.Store {
		table := dynamotest.TableName(t, prefix)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		if err := dynamo.CreateTable(ctx, client, table); err != nil {
			t.Fatalf("dynamo.CreateTable(%q) = %v", table, err)
		}
		t.Cleanup(func() { deleteTable(t, client, table) })
		s := dynamo.New(client, table, dynamo.Options{Now: now})
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, suiteOptions)
}

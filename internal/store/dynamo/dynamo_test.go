package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/truora/minidyn/server"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
)

func TestCreateTable(t *testing.T) {
	t.Run("MatchesSchema", func(t *testing.T) {
		h := newHarness(t)
		out, err := h.client.DescribeTable(h.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(h.table)})
		if err != nil {
			t.Fatalf("DescribeTable(%q) = %v", h.table, err)
		}
		def := store.Definition()
		if got, want := keyNames(out.Table.KeySchema), []string{def.PK, def.SK}; !slices.Equal(got, want) {
			t.Errorf("table key schema = %v, want %v", got, want)
		}
		indexes := map[string]types.GlobalSecondaryIndexDescription{}
		for _, ix := range out.Table.GlobalSecondaryIndexes {
			indexes[aws.ToString(ix.IndexName)] = ix
		}
		if len(indexes) != len(def.Indexes) {
			t.Errorf("table has %d GSIs, want %d", len(indexes), len(def.Indexes))
		}
		for _, want := range def.Indexes {
			got, ok := indexes[want.Name]
			if !ok {
				t.Errorf("GSI %q missing", want.Name)
				continue
			}
			if keys := keyNames(got.KeySchema); !slices.Equal(keys, []string{want.PK, want.SK}) {
				t.Errorf("GSI %q key schema = %v, want [%s %s]", want.Name, keys, want.PK, want.SK)
			}
			if got.Projection == nil || got.Projection.ProjectionType != types.ProjectionTypeAll {
				t.Errorf("GSI %q projection = %+v, want ALL", want.Name, got.Projection)
			}
		}
	})

	t.Run("ExistingTableFails", func(t *testing.T) {
		h := newHarness(t)
		err := dynamo.CreateTable(h.ctx, h.client, h.table)
		if _, ok := errors.AsType[*types.ResourceInUseException](err); !ok {
			t.Errorf("CreateTable(%q) again = %v, want a ResourceInUseException inside", h.table, err)
		}
	})

	t.Run("WaitsForIndexes", func(t *testing.T) {
		engine := server.NewServer()
		engine.SetIndexActivationDelay(300 * time.Millisecond)
		client := startEngine(t, engine)
		start := time.Now()
		if err := dynamo.CreateTable(t.Context(), client, "waits"); err != nil {
			t.Fatalf("CreateTable(waits) = %v", err)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("CreateTable returned after %v, before the indexes were ACTIVE (300ms)", d)
		}
	})

	t.Run("WaitHonoursContext", func(t *testing.T) {
		engine := server.NewServer()
		engine.SetIndexActivationDelay(time.Hour)
		client := startEngine(t, engine)
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if err := dynamo.CreateTable(ctx, client, "never"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("CreateTable(never) with indexes never ACTIVE = %v, want %v", err, context.DeadlineExceeded)
		}
	})
}

func keyNames(ks []types.KeySchemaElement) []string {
	var names []string
	for _, k := range ks {
		names = append(names, aws.ToString(k.AttributeName))
	}
	return names
}

func TestNewClient(t *testing.T) {
	// No credentials anywhere, and instance metadata is never asked for an
	// explicit endpoint.
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	_, endpoint := dynamotest.Start(t)

	t.Run("ErrNoCredentialsWithoutAny", func(t *testing.T) {
		client, err := dynamo.NewClient(t.Context(), dynamo.Config{Endpoint: endpoint})
		if !errors.Is(err, dynamo.ErrNoCredentials) || client != nil {
			t.Fatalf("NewClient(endpoint, no credentials) = %v, %v, want nil, ErrNoCredentials", client, err)
		}
		if _, err := dynamo.OpenTable(t.Context(), dynamo.Config{Endpoint: endpoint}, "t", true, dynamo.Options{}); !errors.Is(err, dynamo.ErrNoCredentials) {
			t.Errorf("OpenTable(endpoint, no credentials) = %v, want ErrNoCredentials", err)
		}
	})

	t.Run("EnvironmentCredentials", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "local")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
		client, err := dynamo.NewClient(t.Context(), dynamo.Config{Endpoint: endpoint})
		if err != nil {
			t.Fatalf("NewClient(endpoint %q) = %v", endpoint, err)
		}
		if got := client.Options().Region; got != "us-east-1" {
			t.Errorf("NewClient(no region).Options().Region = %q, want us-east-1", got)
		}
		s := dynamo.New(client, dynamotest.NewTable(t, client), dynamo.Options{})
		it := store.Item{PK: "P", SK: "a", Data: []byte("x")}
		if err := s.Write(t.Context(), []store.Op{store.Put(&it, always)}); err != nil {
			t.Fatalf("Write through NewClient = %v", err)
		}
		if got, err := s.Get(t.Context(), it.Key()); err != nil || got == nil || string(got.Data) != "x" {
			t.Errorf("Get through NewClient = %+v, %v, want the item", got, err)
		}
	})
}

func TestAttributeMapping(t *testing.T) {
	h := newHarness(t)
	full := store.Item{PK: "P", SK: "full", GSI1PK: "G1", GSI1SK: "g1", GSI2PK: "G2", GSI2SK: "g2",
		Version: 7, Count: -3, ExpiresAt: h.unix() + 60, Data: []byte{0, 1, 2}}
	bare := store.Item{PK: "P", SK: "bare"}
	h.write(store.Put(&full, always), store.Put(&bare, always))

	raw := func(k store.Key) map[string]types.AttributeValue {
		t.Helper()
		out, err := h.client.GetItem(h.ctx, &dynamodb.GetItemInput{
			TableName: aws.String(h.table),
			Key: map[string]types.AttributeValue{
				store.AttrPK: &types.AttributeValueMemberS{Value: k.PK},
				store.AttrSK: &types.AttributeValueMemberS{Value: k.SK},
			},
		})
		if err != nil {
			t.Fatalf("GetItem(%v) = %v", k, err)
		}
		return out.Item
	}
	kinds := func(m map[string]types.AttributeValue) map[string]string {
		out := map[string]string{}
		for name, v := range m {
			switch v.(type) {
			case *types.AttributeValueMemberS:
				out[name] = "S"
			case *types.AttributeValueMemberN:
				out[name] = "N"
			case *types.AttributeValueMemberB:
				out[name] = "B"
			default:
				out[name] = fmt.Sprintf("%T", v)
			}
		}
		return out
	}
	for _, tc := range []struct {
		k    store.Key
		want map[string]string
	}{
		{full.Key(), map[string]string{"pk": "S", "sk": "S", "gsi1pk": "S", "gsi1sk": "S", "gsi2pk": "S", "gsi2sk": "S", "ver": "N", "n": "N", "ttl": "N", "data": "B"}},
		{bare.Key(), map[string]string{"pk": "S", "sk": "S", "ver": "N", "n": "N"}},
	} {
		if got := kinds(raw(tc.k)); !maps.Equal(got, tc.want) {
			t.Errorf("stored attributes of %v = %v, want %v", tc.k, got, tc.want)
		}
	}

	t.Run("CounterWithoutVersionReadsAsZero", func(t *testing.T) {
		k := store.Key{PK: "P", SK: "counter"}
		h.write(store.Add(k, 2, 0))
		if got := kinds(raw(k)); got["ver"] != "" {
			t.Errorf("Add created attributes %v, want no ver", got)
		}
		h.write(store.Check(k, store.AtVersion(0)))
		err := h.s.Write(h.ctx, []store.Op{store.Check(k, store.AtVersion(1))})
		if _, ok := store.ConditionFailed(err); !ok {
			t.Errorf("Write(check %v at version 1) = %v, want *ConditionFailedError", k, err)
		}
	})
}

func TestInvalidRequests(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"GetEmptyKey", func() error { _, err := h.s.Get(h.ctx, store.Key{PK: "P"}); return err }},
		{"BatchGetEmptyKey", func() error {
			_, err := h.s.BatchGet(h.ctx, []store.Key{{PK: "P", SK: "a"}, {SK: "b"}})
			return err
		}},
		{"QueryEmptyPartition", func() error { _, err := h.s.Query(h.ctx, store.Query{}); return err }},
		{"QueryNegativeLimit", func() error { _, err := h.s.Query(h.ctx, store.Query{PK: "P", Limit: -1}); return err }},
		{"QueryUnknownIndex", func() error { _, err := h.s.Query(h.ctx, store.Query{PK: "P", Index: 7}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s = %v, want %v", tc.name, err, store.ErrInvalid)
			}
		})
	}
}

func TestQueryKeepsPagingPastExpiredItems(t *testing.T) {
	// DynamoDB's Limit counts items before the adapter drops expired ones:
	// the adapter must ask again for what is missing.
	h := newHarness(t)
	var ops []store.Op
	for i := range 10 {
		it := &store.Item{PK: "P", SK: fmt.Sprintf("%02d", i), GSI1PK: "G", GSI1SK: fmt.Sprintf("%02d", i)}
		if i < 7 {
			it.ExpiresAt = h.unix() + 10
		}
		ops = append(ops, store.Put(it, always))
	}
	h.write(ops...)
	h.clock.Advance(time.Minute)

	for _, ix := range []store.Index{store.Table, store.GSI1} {
		pk := map[store.Index]string{store.Table: "P", store.GSI1: "G"}[ix]
		before := h.count("Query")
		got := h.query(store.Query{Index: ix, PK: pk, Limit: 2})
		want := []store.Key{{PK: "P", SK: "07"}, {PK: "P", SK: "08"}}
		if !slices.Equal(got, want) {
			t.Errorf("Query(%v %s Limit=2) = %v, want %v", ix, pk, got, want)
		}
		if n := h.count("Query") - before; n < 2 {
			t.Errorf("Query(%v %s Limit=2) over 7 expired items made %d engine queries, want several", ix, pk, n)
		}
		got = h.query(store.Query{Index: ix, PK: pk, Limit: 5, Reverse: true})
		want = []store.Key{{PK: "P", SK: "09"}, {PK: "P", SK: "08"}, {PK: "P", SK: "07"}}
		if !slices.Equal(got, want) {
			t.Errorf("Query(%v %s Limit=5 Reverse) = %v, want %v", ix, pk, got, want)
		}
	}
}

func TestBatchGet(t *testing.T) {
	t.Run("ChunksOfHundredUniqueKeys", func(t *testing.T) {
		h := newHarness(t)
		keys := putEvery(t, h.s, "B", 3, 250, 2, func(i int, k store.Key) *store.Item {
			return &store.Item{PK: k.PK, SK: k.SK, Count: int64(i)}
		})
		keys = append(keys, keys[:50]...) // duplicates cost no extra key
		got, err := h.s.BatchGet(h.ctx, keys)
		if err != nil {
			t.Fatalf("BatchGet(%d keys) = %v", len(keys), err)
		}
		for i, k := range keys {
			var sk int
			fmt.Sscanf(k.SK, "%d", &sk)
			if present := got[i] != nil; present != (sk%2 == 0) || (present && (got[i].Key() != k || got[i].Count != int64(sk))) {
				t.Errorf("BatchGet(...)[%d] (key %v) = %+v", i, k, got[i])
			}
		}
		if got[0] == got[250] {
			t.Errorf("BatchGet returned one *Item for both occurrences of key %v, want independent copies", keys[0])
		}
		if n := h.count("BatchGetItem"); n != 3 {
			t.Errorf("BatchGet(250 unique keys + 50 duplicates) made %d BatchGetItem calls, want 3", n)
		}
	})

	t.Run("RetriesUnprocessedKeys", func(t *testing.T) {
		h := newHarness(t)
		a := store.Item{PK: "B", SK: "a", Data: []byte("a")}
		b := store.Item{PK: "B", SK: "b", Data: []byte("b")}
		h.write(store.Put(&a, always), store.Put(&b, always))
		// Each key is left unprocessed the first two times it is asked for.
		seen := map[string]int{}
		h.engine.EmulateUnprocessedItems(h.table, func(_ int, raw map[string]*server.AttributeValue) bool {
			sk := *raw[store.AttrSK].S
			seen[sk]++
			return seen[sk] <= 2
		})
		got, err := h.s.BatchGet(h.ctx, []store.Key{b.Key(), a.Key(), {PK: "B", SK: "none"}})
		if err != nil {
			t.Fatalf("BatchGet with unprocessed keys = %v, want nil", err)
		}
		if got[0] == nil || string(got[0].Data) != "b" || got[1] == nil || string(got[1].Data) != "a" || got[2] != nil {
			t.Errorf("BatchGet with unprocessed keys = %v, want [b a nil]", got)
		}
		if n := h.count("BatchGetItem"); n != 3 {
			t.Errorf("BatchGet made %d BatchGetItem calls, want 3 (two retries)", n)
		}
	})

	t.Run("UnprocessedForeverHonoursContext", func(t *testing.T) {
		h := newHarness(t)
		h.engine.EmulateUnprocessedItems(h.table, func(int, map[string]*server.AttributeValue) bool { return true })
		ctx, cancel := context.WithTimeout(h.ctx, 100*time.Millisecond)
		defer cancel()
		_, err := h.s.BatchGet(ctx, []store.Key{{PK: "B", SK: "a"}})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("BatchGet with keys never processed, 100ms deadline = %v, want %v", err, context.DeadlineExceeded)
		}
	})

	t.Run("UnprocessedForeverUnavailable", func(t *testing.T) {
		if testing.Short() {
			t.Skip("sleeps through the whole backoff (about two seconds)")
		}
		t.Parallel()
		h := newHarness(t)
		h.engine.EmulateUnprocessedItems(h.table, func(int, map[string]*server.AttributeValue) bool { return true })
		_, err := h.s.BatchGet(h.ctx, []store.Key{{PK: "B", SK: "a"}})
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("BatchGet with keys never processed = %v, want %v", err, store.ErrUnavailable)
		}
	})
}

func TestWriteRefusesBeforeCallingEngine(t *testing.T) {
	h := newHarness(t)
	many := make([]store.Op, store.MaxWriteItems+1)
	for i := range many {
		many[i] = store.Put(&store.Item{PK: "W", SK: fmt.Sprint(i)}, always)
	}
	big := &store.Item{PK: "W", SK: "big", Data: make([]byte, store.MaxItemBytes)}
	for _, tc := range []struct {
		name string
		ops  []store.Op
		want error
	}{
		{"TooManyOps", many, store.ErrTooLarge},
		{"ItemOver400KB", []store.Op{store.Put(big, always)}, store.ErrTooLarge},
		{"DuplicateKeys", []store.Op{store.Add(store.Key{PK: "W", SK: "a"}, 1, 0), store.Delete(store.Key{PK: "W", SK: "a"}, always)}, store.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.count("TransactWriteItems")
			if err := h.s.Write(h.ctx, tc.ops); !errors.Is(err, tc.want) {
				t.Errorf("Write(%s) = %v, want %v", tc.name, err, tc.want)
			}
			if n := h.count("TransactWriteItems") - before; n != 0 {
				t.Errorf("Write(%s) sent %d requests, want none", tc.name, n)
			}
		})
	}
}

func TestAddOverExpired(t *testing.T) {
	t.Run("SeveralCountersRestartInOneWrite", func(t *testing.T) {
		// minidyn reports one failed guard per attempt, so this takes one
		// attempt per expired counter; DynamoDB reports all at once.
		h := newHarness(t)
		var ops []store.Op
		for i := range 3 {
			ops = append(ops, store.Put(&store.Item{PK: "A", SK: fmt.Sprint(i), GSI1PK: "G", GSI1SK: fmt.Sprint(i), Version: 5, Count: 100, ExpiresAt: h.unix() + 5, Data: []byte("old")}, always))
		}
		live := store.Item{PK: "A", SK: "live", Version: 2, Count: 10, Data: []byte("keep")}
		ops = append(ops, store.Put(&live, always))
		h.write(ops...)
		h.clock.Advance(time.Minute)

		exp := h.unix() + 600
		h.write(store.Add(store.Key{PK: "A", SK: "0"}, 1, exp), store.Add(live.Key(), 1, 0),
			store.Add(store.Key{PK: "A", SK: "1"}, 2, 0), store.Add(store.Key{PK: "A", SK: "2"}, -3, exp))
		for sk, want := range map[string]store.Item{
			"0":    {PK: "A", SK: "0", Count: 1, ExpiresAt: exp},
			"1":    {PK: "A", SK: "1", Count: 2},
			"2":    {PK: "A", SK: "2", Count: -3, ExpiresAt: exp},
			"live": {PK: "A", SK: "live", Version: 2, Count: 11, Data: []byte("keep")},
		} {
			got := h.get(store.Key{PK: "A", SK: sk})
			if got == nil || got.Count != want.Count || got.ExpiresAt != want.ExpiresAt || got.Version != want.Version ||
				string(got.Data) != string(want.Data) || got.GSI1PK != "" {
				t.Errorf("Get(A/%s) after Add = %+v, want %+v", sk, got, want)
			}
		}
		if got := h.query(store.Query{Index: store.GSI1, PK: "G"}); len(got) != 0 {
			t.Errorf("Query(gsi1 G) after restarting the counters = %v, want none", got)
		}
	})

	t.Run("CallerConditionWinsOverGuard", func(t *testing.T) {
		h := newHarness(t)
		k := store.Key{PK: "A", SK: "n"}
		h.write(store.Put(&store.Item{PK: k.PK, SK: k.SK, Count: 7, ExpiresAt: h.unix() + 5}, always))
		h.clock.Advance(time.Minute)
		ops := []store.Op{store.Add(k, 1, 0), store.Check(store.Key{PK: "A", SK: "missing"}, store.Present)}
		err := h.s.Write(h.ctx, ops)
		cf, ok := store.ConditionFailed(err)
		if !ok || cf.Index != 1 {
			t.Fatalf("Write(add over expired, failing check) = %v, want *ConditionFailedError on op 1", err)
		}
		if got := h.get(k); got != nil {
			t.Errorf("Get(%v) after the aborted write = %+v, want nil (still expired)", k, got)
		}
	})
}

func TestConcurrentAddsOverExpiredCounter(t *testing.T) {
	// Every writer starts with the live variant, sees the guard fail, and
	// races to restart the counter: exactly one restart may win, and every
	// add must count once.
	h := newHarness(t)
	k := store.Key{PK: "A", SK: "n"}
	h.write(store.Put(&store.Item{PK: k.PK, SK: k.SK, Count: 1000, ExpiresAt: h.unix() + 5}, always))
	h.clock.Advance(time.Minute)
	const writers = 8
	errs := make(chan error, writers)
	for range writers {
		go func() {
			for {
				err := h.s.Write(h.ctx, []store.Op{store.Add(k, 1, 0)})
				if !errors.Is(err, store.ErrUnavailable) {
					errs <- err
					return
				}
			}
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Errorf("Write(add 1) = %v, want nil", err)
		}
	}
	if got := h.get(k); got == nil || got.Count != writers {
		t.Errorf("Get(%v) after %d adds over an expired counter = %+v, want Count %d", k, writers, got, writers)
	}
}

// startEngine serves engine (through dynamotest.Handler) and returns a client
// for it.
func startEngine(t *testing.T, engine *server.Server) *dynamodb.Client {
	t.Helper()
	srv := newServer(t, dynamotest.Handler(engine))
	return dynamotest.NewClient(srv)
}

package dynamo_test

import (
	"bytes"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
	"github.com/agentbox/agentbox/internal/store/dynamo/mototest"
)

func TestItemBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		it   store.Item
		want int
	}{
		// pk P (2+1), sk a (2+1), ver 0 (3+2), n 0 (1+2).
		{"Bare", store.Item{PK: "P", SK: "a"}, 14},
		{"DataCountsItsLength", store.Item{PK: "P", SK: "a", Data: bytes.Repeat([]byte{1}, 1000)}, 14 + 4 + 1000},
		// 123456: six significant digits, three bytes, plus one.
		{"NumberByDigitPairs", store.Item{PK: "P", SK: "a", Version: 123456}, 14 - 2 + 4},
		// Trailing zeros are trimmed: 1000 is one significant digit.
		{"TrailingZerosTrimmed", store.Item{PK: "P", SK: "a", Version: 1000}, 14},
		{"NegativeCountOneMore", store.Item{PK: "P", SK: "a", Count: -5}, 15},
		{"IndexKeysAndTTL", store.Item{PK: "P", SK: "a", GSI1PK: "G", GSI1SK: "g", ExpiresAt: 1_800_000_000}, 14 + 7 + 7 + 5},
		{"UTF8Bytes", store.Item{PK: "P", SK: "é"}, 15},
	} {
		if got := dynamo.ItemBytes(&tc.it); got != tc.want {
			t.Errorf("ItemBytes(%s) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestItemSizeBoundsEngineSize: the size the write limits use never
// undercounts DynamoDB's, so no write that store.CheckWrite lets through
// can be refused by the engine for its item size; the adapter therefore
// never needs to read size errors out of engine messages.
func TestItemSizeBoundsEngineSize(t *testing.T) {
	long := strings.Repeat("k", 1024)
	for _, it := range []store.Item{
		{PK: "P", SK: "a"},
		{PK: "P", SK: "a", Version: math.MaxUint64, Count: math.MinInt64, ExpiresAt: math.MaxInt64},
		{PK: "P", SK: "a", Count: math.MaxInt64, ExpiresAt: -1},
		{PK: long, SK: long, GSI1PK: long, GSI1SK: long, GSI2PK: long, GSI2SK: long, Data: bytes.Repeat([]byte{0}, 300<<10)},
	} {
		if got, engine := store.ItemSize(&it), dynamo.ItemBytes(&it); got < engine {
			t.Errorf("store.ItemSize(item ver=%d n=%d ttl=%d, %d data bytes) = %d, below DynamoDB's %d", it.Version, it.Count, it.ExpiresAt, len(it.Data), got, engine)
		}
	}
}

// sized returns an item of about n bytes as DynamoDB counts them,
// optionally in both indexes.
func sized(sk string, n int, indexed bool) *store.Item {
	it := &store.Item{PK: "agent#a1", SK: sk, Version: 3}
	if indexed {
		it.GSI1PK, it.GSI1SK, it.GSI2PK, it.GSI2SK = "box#b1#agents", sk, "box#b1#directory", sk
	}
	it.Data = bytes.Repeat([]byte{'x'}, max(0, n-dynamo.ItemBytes(it)-len(store.AttrData)))
	return it
}

// TestWriteCost pins the published cost table (notes/dynamo.md): each row
// is one shape of store call with typical item sizes.
func TestWriteCost(t *testing.T) {
	k := store.Key{PK: "agent#a1", SK: "key"}
	profile := sized("profile", 1500, false)
	cp := sized("checkpoint", 2048, false)
	bigCP := sized("checkpoint", 20<<10, false)
	idem := sized("idem#x", 300, false)
	listed := sized("room#r1", 600, true)
	keyItem := sized("key", 200, false)
	for _, tc := range []struct {
		name         string
		ops          []store.Op
		stored       []*store.Item
		table, index dynamo.Units
	}{
		{"PutNew2KBPlain", []store.Op{store.Put(cp, store.Absent)}, []*store.Item{nil}, dynamo.Units{Write: 2}, dynamo.Units{}},
		{"Replace2KBPlain", []store.Op{store.Put(cp, store.AtVersion(3))}, []*store.Item{cp}, dynamo.Units{Write: 2}, dynamo.Units{}},
		{"Put20KBPlain", []store.Op{store.Put(bigCP, store.Absent)}, []*store.Item{nil}, dynamo.Units{Write: 20}, dynamo.Units{}},
		{"AddCounterPlain", []store.Op{store.Add(store.Key{PK: "agent#a1", SK: "unread"}, 1, 0)}, []*store.Item{nil}, dynamo.Units{Write: 1}, dynamo.Units{}},
		{"DeleteAbsentPlain", []store.Op{store.Delete(k, store.Unconditional)}, []*store.Item{nil}, dynamo.Units{Write: 1}, dynamo.Units{}},
		{"LoneCheckIsARead", []store.Op{store.Check(k, store.Present)}, []*store.Item{keyItem}, dynamo.Units{Read: 1}, dynamo.Units{}},
		// checkpoint_save as the issue describes it: the checkpoint, two
		// condition checks (profile, key) and an idempotency record, one
		// transaction: 2 x (2 + 2 + 1 + 1).
		{"CheckpointSaveTransaction", []store.Op{
			store.Put(cp, store.AtVersion(3)), store.Check(profile.Key(), store.AtVersion(3)),
			store.Check(k, store.Present), store.Put(idem, store.Absent),
		}, []*store.Item{cp, profile, keyItem, nil}, dynamo.Units{Write: 12}, dynamo.Units{}},
		// An item in both indexes pays one index write per index.
		{"PutListedItemNew", []store.Op{store.Put(listed, store.Absent)}, []*store.Item{nil}, dynamo.Units{Write: 1}, dynamo.Units{Write: 2}},
		// Moving an index key is a delete and a put in that index.
		{"MoveIndexKey", []store.Op{store.Put(&store.Item{PK: listed.PK, SK: listed.SK, GSI1PK: listed.GSI1PK, GSI1SK: "moved", GSI2PK: listed.GSI2PK, GSI2SK: listed.GSI2SK, Data: listed.Data}, store.Unconditional)},
			[]*store.Item{listed}, dynamo.Units{Write: 1}, dynamo.Units{Write: 3}},
	} {
		table, index := dynamo.WriteCost(tc.ops, tc.stored)
		if table != tc.table || index != tc.index {
			t.Errorf("WriteCost(%s) = table %+v, indexes %+v; want table %+v, indexes %+v", tc.name, table, index, tc.table, tc.index)
		}
	}
}

func TestReadCost(t *testing.T) {
	small, mid, big := sized("a", 1000, false), sized("b", 6000, false), sized("c", 20<<10, false)
	for _, tc := range []struct {
		name string
		got  dynamo.Units
		want float64
	}{
		{"GetMissing", dynamo.GetCost(nil), 1},
		{"Get1KB", dynamo.GetCost(small), 1},
		{"Get6KB", dynamo.GetCost(mid), 2},
		{"Get20KB", dynamo.GetCost(big), 5},
		// Each BatchGetItem item rounds up alone.
		{"BatchGet1KBx4", dynamo.BatchGetCost([]*store.Item{small, small, small, small}), 4},
		// A Query rounds up the sum.
		{"QueryTable1KBx4", dynamo.QueryCost([]*store.Item{small, small, small, small}, false), 1},
		{"QueryIndex20KBx10", dynamo.QueryCost([]*store.Item{big, big, big, big, big, big, big, big, big, big}, true), 25},
	} {
		if tc.got.Read != tc.want || tc.got.Write != 0 {
			t.Errorf("%s = %+v, want %v read units", tc.name, tc.got, tc.want)
		}
	}
}

// TestOnCapacityReportsEveryCall runs one call of each kind with
// ReturnConsumedCapacity on both emulators. Neither measures capacity
// (minidyn reports none; moto reports fixed placeholders that ignore item
// size), so what is tested is the wiring: each call is reported once,
// under its name, with the units the engine returned; the units DynamoDB
// would charge are WriteCost/GetCost/QueryCost/BatchGetCost above.
func TestOnCapacityReportsEveryCall(t *testing.T) {
	t.Parallel()
	for _, engine := range []struct {
		name   string
		client func(t *testing.T) *dynamodb.Client
		// reports is whether the engine returns ConsumedCapacity for
		// single-item calls.
		reports bool
	}{
		{"minidyn", func(t *testing.T) *dynamodb.Client { c, _ := dynamotest.Start(t); return c }, false},
		{"moto", func(t *testing.T) *dynamodb.Client { return mototest.Client(t) }, true},
	} {
		t.Run(engine.name, func(t *testing.T) {
			client := engine.client(t)
			table := dynamotest.NewTable(t, client)
			var mu sync.Mutex
			got := map[string][]float64{}
			s := dynamo.New(client, table, dynamo.Options{OnCapacity: func(call string, units float64) {
				mu.Lock()
				defer mu.Unlock()
				got[call] = append(got[call], units)
			}})
			ctx := t.Context()
			it := sized("checkpoint", 3000, false)
			steps := []struct {
				call string
				run  func() error
			}{
				{"PutItem", func() error { return s.Write(ctx, []store.Op{store.Put(it, store.Absent)}) }},
				{"UpdateItem", func() error { return s.Write(ctx, []store.Op{store.Add(store.Key{PK: it.PK, SK: "n"}, 1, 0)}) }},
				{"TransactWriteItems", func() error {
					return s.Write(ctx, []store.Op{store.Check(it.Key(), store.Present), store.Put(sized("other", 500, false), store.Absent)})
				}},
				{"GetItem", func() error { _, err := s.Get(ctx, it.Key()); return err }},
				{"BatchGetItem", func() error { _, err := s.BatchGet(ctx, []store.Key{it.Key()}); return err }},
				{"Query", func() error { _, err := s.Query(ctx, store.Query{PK: it.PK}); return err }},
				{"DeleteItem", func() error { return s.Write(ctx, []store.Op{store.Delete(it.Key(), store.Present)}) }},
			}
			for _, step := range steps {
				if err := step.run(); err != nil {
					t.Fatalf("%s through the store = %v", step.call, err)
				}
				mu.Lock()
				units := got[step.call]
				mu.Unlock()
				if len(units) != 1 {
					t.Errorf("OnCapacity for one %s call: %v, want one report", step.call, units)
					continue
				}
				if engine.reports && step.call != "TransactWriteItems" && units[0] <= 0 {
					t.Errorf("OnCapacity(%s) = %v units, want the engine's positive figure", step.call, units[0])
				}
				t.Logf("%s: %s reported %v units", engine.name, step.call, units[0])
			}
		})
	}
}

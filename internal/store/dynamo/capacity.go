package dynamo

// Capacity: what each store call costs on DynamoDB, computed from item
// sizes by DynamoDB's documented rules, because neither emulator measures
// it (minidyn returns no ConsumedCapacity; moto returns fixed placeholders:
// 1.0 for any PutItem, 0.5 for a consistent GetItem of any size, nothing for
// TransactWriteItems).
//
// The rules (DynamoDB Developer Guide, "Read/write capacity mode" and
// "Item sizes"), for on-demand request units and provisioned capacity
// units alike:
//
//   - item size: the UTF-8 length of every attribute name plus its value;
//     a string is its UTF-8 length, binary its length, a number about one
//     byte per two significant digits plus one;
//   - a write costs 1 unit per started KB of the larger of the item before
//     and after (PutItem replacing, UpdateItem), or of the deleted item
//     (DeleteItem), at least 1; in TransactWriteItems every item, a
//     ConditionCheck included, costs twice that;
//   - a strongly consistent read costs 1 unit per started 4 KB, an
//     eventually consistent one half that; GetItem and each BatchGetItem
//     item round up on their own, a Query rounds up the sum of the items
//     it read; a read that finds nothing still costs the minimum;
//   - every global secondary index an item is in (before or after) takes
//     its own index write, at standard (not transactional) rates, of the
//     projected entry: the whole item here, since both indexes project ALL.
//     A changed index key is a delete plus a put in that index.

import (
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentbox/agentbox/internal/store"
)

// ItemBytes is the size DynamoDB counts for it as this adapter stores it.
// store.ItemSize, which the write limits use, never counts less (see
// TestItemSizeBoundsEngineSize), so a write that passes store.CheckWrite
// is within DynamoDB's item limit.
func ItemBytes(it *store.Item) int {
	n := 0
	for name, av := range encodeItem(it) {
		n += len(name)
		switch v := av.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += numberBytes(v.Value)
		}
	}
	return n
}

// numberBytes is DynamoDB's size of a number: one byte per two significant
// digits, plus one (plus one more for a negative number, to stay on the
// safe side of "approximately").
func numberBytes(s string) int {
	neg := strings.HasPrefix(s, "-")
	digits := strings.Trim(strings.TrimPrefix(s, "-"), "0")
	if digits == "" {
		digits = "0"
	}
	n := (len(digits)+1)/2 + 1
	if neg {
		n++
	}
	return n
}

// Units is an amount of capacity: read and write units.
type Units struct {
	Read, Write float64
}

// Add returns u plus v.
func (u Units) Add(v Units) Units { return Units{Read: u.Read + v.Read, Write: u.Write + v.Write} }

func kb(bytes int) float64  { return math.Max(1, math.Ceil(float64(bytes)/1024)) }
func kb4(bytes int) float64 { return math.Max(1, math.Ceil(float64(bytes)/4096)) }

func size(it *store.Item) int {
	if it == nil {
		return 0
	}
	return ItemBytes(it)
}

// GetCost is the cost of a strongly consistent GetItem that found it (nil:
// nothing).
func GetCost(it *store.Item) Units { return Units{Read: kb4(size(it))} }

// BatchGetCost is the cost of the strongly consistent BatchGetItem calls
// that read items (nil entries: keys that found nothing, which still cost
// the minimum each).
func BatchGetCost(items []*store.Item) Units {
	var u Units
	for _, it := range items {
		u.Read += kb4(size(it))
	}
	return u
}

// QueryCost is the cost of a Query page that read items: strongly
// consistent on the table, eventually consistent (half) on an index.
// Items the adapter drops as expired were read too, so pass them.
func QueryCost(items []*store.Item, index bool) Units {
	total := 0
	for _, it := range items {
		total += size(it)
	}
	u := Units{Read: kb4(total)}
	if index {
		u.Read /= 2
	}
	return u
}

// WriteCost is the cost of Write(ops) through this adapter, given the live
// item at each op's key before the write (stored[i], nil when none). It
// returns the table's units and, apart, the indexes' units.
func WriteCost(ops []store.Op, stored []*store.Item) (table, indexes Units) {
	if len(ops) == 1 && ops[0].Kind == store.OpCheck {
		// A lone check is a consistent GetItem (see writeOne).
		return GetCost(stored[0]), Units{}
	}
	factor := 1.0
	if len(ops) > 1 {
		factor = 2 // TransactWriteItems
	}
	for i, op := range ops {
		before := stored[i]
		after := afterOp(op, before)
		table.Write += factor * kb(max(size(before), size(after)))
		indexes = indexes.Add(indexCost(before, after))
	}
	return table, indexes
}

// afterOp is the item at op's key after op applies to before.
func afterOp(op store.Op, before *store.Item) *store.Item {
	switch op.Kind {
	case store.OpPut:
		return op.Item
	case store.OpDelete:
		return nil
	case store.OpAdd:
		next := &store.Item{PK: op.Key.PK, SK: op.Key.SK, Count: op.Delta, ExpiresAt: op.ExpiresAt}
		if before != nil {
			cp := *before
			cp.Count += op.Delta
			if op.ExpiresAt != 0 {
				cp.ExpiresAt = op.ExpiresAt
			}
			next = &cp
		}
		return next
	}
	return before // OpCheck
}

// indexCost is the index writes of replacing before with after.
func indexCost(before, after *store.Item) Units {
	if before == after {
		return Units{}
	}
	var u Units
	for _, ix := range [...]func(*store.Item) (string, string){
		func(it *store.Item) (string, string) { return it.GSI1PK, it.GSI1SK },
		func(it *store.Item) (string, string) { return it.GSI2PK, it.GSI2SK },
	} {
		var bk, ak [2]string
		if before != nil {
			bk[0], bk[1] = ix(before)
		}
		if after != nil {
			ak[0], ak[1] = ix(after)
		}
		in := func(k [2]string) bool { return k[0] != "" && k[1] != "" }
		switch {
		case in(bk) && in(ak) && bk == ak:
			u.Write += kb(max(size(before), size(after)))
		case in(bk) && in(ak):
			u.Write += kb(size(before)) + kb(size(after))
		case in(bk):
			u.Write += kb(size(before))
		case in(ak):
			u.Write += kb(size(after))
		}
	}
	return u
}

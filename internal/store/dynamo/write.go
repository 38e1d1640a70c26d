package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentbox/agentbox/internal/store"
)

// Condition expressions. Every placeholder an expression uses is declared
// and none other: DynamoDB (and minidyn) reject unused names and values.
// Attribute names always go through #placeholders: TTL and DATA are
// reserved words, and the others may become ones.
const (
	// exprLive holds when a live item is at the key.
	exprLive = "attribute_exists(#pk) AND (attribute_not_exists(#ttl) OR #ttl > :now)"
	// exprAbsent holds when no item, or only an expired one, is at the key.
	exprAbsent = "attribute_not_exists(#pk) OR (attribute_exists(#ttl) AND #ttl <= :now)"
	// exprNotExpired guards OpAdd's live variant: absent or live.
	exprNotExpired = "attribute_not_exists(#ttl) OR #ttl > :now"
	// exprAny lets an unconditional OpCheck through (ConditionCheck needs
	// an expression).
	exprAny = "attribute_not_exists(#pk) OR attribute_exists(#pk)"
)

// Write implements store.Store; see the package note for the transaction
// and counter design. A write of one operation is a plain item call (see
// writeOne); more operations are one TransactWriteItems.
func (s *Store) Write(ctx context.Context, ops []store.Op) error {
	if err := store.CheckWrite(ops); err != nil {
		return err
	}
	adds := 0
	for _, op := range ops {
		switch op.Kind {
		case store.OpAdd:
			adds++
		case store.OpPut, store.OpDelete, store.OpCheck:
		default:
			return fmt.Errorf("%w: unknown operation kind", store.ErrInvalid)
		}
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	if len(ops) == 1 {
		return s.writeOne(ctx, ops)
	}

	// restart[i] selects the restart variant of OpAdd i. Each round flips at
	// least one guard that failed, so len(adds) rounds settle every counter
	// against a quiet table; the slack absorbs concurrent writers.
	restart := make([]bool, len(ops))
	maxRounds := adds + 3
	for round := 1; ; round++ {
		now := s.nowUnix()
		items := make([]types.TransactWriteItem, len(ops))
		for i, op := range ops {
			items[i] = s.transactItem(op, now, restart[i])
		}
		// A fresh input each round: the SDK stores its idempotency token in
		// the input, and a changed request must not reuse an old token.
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}, s.callOptions())
		if err == nil {
			return nil
		}
		flips := failedAddGuards(err, ops)
		if len(flips) == 0 {
			return mapWriteError("TransactWriteItems", err, ops)
		}
		if round >= maxRounds {
			return fmt.Errorf("%w: dynamo: counters kept changing state", store.ErrUnavailable)
		}
		for _, i := range flips {
			restart[i] = !restart[i]
		}
	}
}

// writeOne applies a single operation without a transaction: a plain
// PutItem, DeleteItem or UpdateItem costs half the write units of the same
// item in TransactWriteItems. The semantics are the same: the condition is
// evaluated atomically with the item's write, a failed one is
// *store.ConditionFailedError{Index: 0}, and a clash with a transaction in
// progress on the item (TransactionConflictException) is ErrUnavailable.
//
// A lone OpCheck writes nothing, so it is a strongly consistent GetItem
// evaluated here (one read unit per 4 KB instead of two write units per
// KB):
// a consistent read sees the latest committed state, which is what a
// one-item ConditionCheck evaluates against. Its failures are read failures
// (nothing can have been written).
//
// Without a ClientRequestToken these calls are not idempotent, so only
// refused requests are retried (see client.go); any other failure leaves
// the outcome unknown, as the port allows.
func (s *Store) writeOne(ctx context.Context, ops []store.Op) error {
	op := ops[0]
	if op.Kind == store.OpCheck {
		it, err := s.getItem(ctx, op.Key)
		if err != nil {
			return err
		}
		if !store.Holds(op.Cond, it) {
			return store.NewConditionFailed(ops, []int{0})
		}
		return nil
	}
	opts := s.plainWriteOptions()
	if op.Cond.Kind == store.Always && op.Kind != store.OpAdd {
		// Putting or deleting unconditionally twice is putting or
		// deleting once: the usual retries are safe.
		opts = s.callOptions()
	}
	restart := false
	for round := 1; ; round++ {
		call, err := s.sendOne(ctx, s.transactItem(op, s.nowUnix(), restart), opts)
		if err == nil {
			return nil
		}
		_, guard := errors.AsType[*types.ConditionalCheckFailedException](err)
		if op.Kind != store.OpAdd || !guard {
			return mapWriteError(call, err, ops)
		}
		if round >= 4 {
			return fmt.Errorf("%w: dynamo: counter kept changing state", store.ErrUnavailable)
		}
		restart = !restart
	}
}

// sendOne sends one transaction item as the equivalent plain call and
// returns the call's name for error reports.
func (s *Store) sendOne(ctx context.Context, ti types.TransactWriteItem, opts func(*dynamodb.Options)) (string, error) {
	switch {
	case ti.Put != nil:
		p := ti.Put
		_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
			ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues,
		}, opts)
		return "PutItem", err
	case ti.Delete != nil:
		d := ti.Delete
		_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: d.TableName, Key: d.Key, ConditionExpression: d.ConditionExpression,
			ExpressionAttributeNames: d.ExpressionAttributeNames, ExpressionAttributeValues: d.ExpressionAttributeValues,
		}, opts)
		return "DeleteItem", err
	case ti.Update != nil:
		u := ti.Update
		_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
			ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
		}, opts)
		return "UpdateItem", err
	}
	return "", fmt.Errorf("%w: no single-item equivalent", store.ErrInvalid)
}

// transactItem translates one validated operation.
func (s *Store) transactItem(op store.Op, now int64, restart bool) types.TransactWriteItem {
	table := aws.String(s.table)
	switch op.Kind {
	case store.OpPut:
		cond, names, values := condition(op.Cond, now)
		return types.TransactWriteItem{Put: &types.Put{
			TableName:                 table,
			Item:                      encodeItem(op.Item),
			ConditionExpression:       cond,
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: values,
		}}
	case store.OpDelete:
		cond, names, values := condition(op.Cond, now)
		return types.TransactWriteItem{Delete: &types.Delete{
			TableName:                 table,
			Key:                       keyAV(op.Key),
			ConditionExpression:       cond,
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: values,
		}}
	case store.OpCheck:
		cond, names, values := condition(op.Cond, now)
		if cond == nil {
			cond, names = aws.String(exprAny), map[string]string{"#pk": store.AttrPK}
		}
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:                 table,
			Key:                       keyAV(op.Key),
			ConditionExpression:       cond,
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: values,
		}}
	}

	// OpAdd.
	if restart {
		fresh := &store.Item{PK: op.Key.PK, SK: op.Key.SK, Count: op.Delta, ExpiresAt: op.ExpiresAt}
		return types.TransactWriteItem{Put: &types.Put{
			TableName:                table,
			Item:                     encodeItem(fresh),
			ConditionExpression:      aws.String(exprAbsent),
			ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK, "#ttl": store.AttrTTL},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":now": nAV(now),
			},
		}}
	}
	// An item this creates has no ver attribute; IfVersion(0) allows for
	// that. (Setting ver with if_not_exists would rewrite every counter's
	// version on each add, and minidyn rewrites numbers through float64.)
	update := "ADD #n :d"
	names := map[string]string{"#n": store.AttrCount, "#ttl": store.AttrTTL}
	values := map[string]types.AttributeValue{":d": nAV(op.Delta), ":now": nAV(now)}
	if op.ExpiresAt != 0 {
		update += " SET #ttl = :ttl"
		values[":ttl"] = nAV(op.ExpiresAt)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 table,
		Key:                       keyAV(op.Key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(exprNotExpired),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}
}

// condition returns the expression for a caller's condition, nil for
// Always.
func condition(c store.Condition, now int64) (*string, map[string]string, map[string]types.AttributeValue) {
	switch c.Kind {
	case store.IfAbsent:
		return aws.String(exprAbsent),
			map[string]string{"#pk": store.AttrPK, "#ttl": store.AttrTTL},
			map[string]types.AttributeValue{":now": nAV(now)}
	case store.IfPresent:
		return aws.String(exprLive),
			map[string]string{"#pk": store.AttrPK, "#ttl": store.AttrTTL},
			map[string]types.AttributeValue{":now": nAV(now)}
	case store.IfVersion:
		expr := "(" + exprLive + ") AND #ver = :v"
		if c.Version == 0 {
			// A counter created by OpAdd has no ver attribute: Version 0.
			expr = "(" + exprLive + ") AND (#ver = :v OR attribute_not_exists(#ver))"
		}
		return aws.String(expr),
			map[string]string{"#pk": store.AttrPK, "#ttl": store.AttrTTL, "#ver": store.AttrVersion},
			map[string]types.AttributeValue{":now": nAV(now), ":v": uAV(c.Version)}
	}
	return nil, nil, nil
}

// failedAddGuards returns the OpAdd indexes whose variant guard failed in a
// cancelled transaction, or nil when the cancellation has another cause that
// decides the outcome (a caller's condition, a conflict).
func failedAddGuards(err error, ops []store.Op) []int {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != len(ops) {
		return nil
	}
	var flips []int
	for i, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "", "None":
		case "ConditionalCheckFailed":
			if ops[i].Kind != store.OpAdd {
				return nil
			}
			flips = append(flips, i)
		default:
			return nil
		}
	}
	return flips
}

// Package dynamo is the DynamoDB adapter of the storage port (store.Store),
// on the single table that store.Definition describes.
//
// # Design note
//
// Consistency. Get, BatchGet and table queries use ConsistentRead. Queries on
// a GSI cannot be consistent in DynamoDB (the API rejects ConsistentRead on a
// global index), so an index query may miss or show stale items for a short
// while after a write; the port documents that completeness must be served
// from the table.
//
// Expiry. DynamoDB's TTL sweeper deletes expired items lazily (typically
// within days), so every read filters items whose ttl is at or before Now,
// and every condition treats them as absent (see condition). Queries filter
// client-side rather than with a FilterExpression: DynamoDB's Limit counts
// items before filtering, so the adapter keeps paging with the remaining
// limit until it has collected Limit live items or the range is exhausted.
//
// Writes. A Write of several operations is one TransactWriteItems call: the
// SDK gives each call a ClientRequestToken and reuses it on its own
// retries, so a retry after a lost response is idempotent instead of
// failing its own IfAbsent condition or adding a counter delta twice. A
// Write of one operation is a plain PutItem, DeleteItem or UpdateItem (half
// the write units), and a lone OpCheck a consistent GetItem evaluated with
// store.Holds; without a token those are retried only on answers that
// prove the request did not run (see client.go for timeouts and retries).
//
// Counters (OpAdd). The port says an OpAdd on an expired item restarts at
// Delta. DynamoDB update expressions cannot branch on a comparison, and a
// transaction cannot hold two operations on one key, so each OpAdd is sent
// in one of two guarded variants:
//
//   - live (the default): Update "ADD n :d" (plus SET ttl when given),
//     guarded by "the item is absent or not expired";
//   - restart: Put of a fresh item {pk, sk, n: Delta, ver: 0, ttl},
//     guarded by "the item is absent or expired".
//
// The guards are complementary, so exactly one variant fits the stored item.
// When a guard fails, the transaction is cancelled (nothing written) and the
// adapter flips that operation's variant and resends; the common path needs
// no read. A guard failure is never reported as a *store.ConditionFailedError
// (OpAdd carries no caller condition): when an operation with a caller
// condition fails in the same attempt, that failure wins, and when the
// variants keep flipping under concurrent writers the Write gives up with
// store.ErrUnavailable.
//
// Errors. A cancelled transaction maps to *store.ConditionFailedError
// naming every operation whose ConditionalCheckFailed reason it carries,
// unless a reason is a conflict or throttling (then store.ErrUnavailable:
// those operations were not evaluated, so the list could be incomplete).
// Throttling and TransactionConflictException map to store.ErrUnavailable.
// An InternalServerError or TransactionInProgressException on a write leaves
// the outcome unknown, so it is returned as an opaque error, never as
// ErrUnavailable (which promises nothing was written); on a read it is
// ErrUnavailable. A call out of time is store.ErrTimeout. The SDK's error
// types decide, never message text. Returned error text names the
// operation and the engine's error code only: never an attribute value, an
// expression or the engine's message.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentbox/agentbox/internal/ctxtime"
	"github.com/agentbox/agentbox/internal/store"
)

// batchGetChunk is DynamoDB's BatchGetItem key limit.
const batchGetChunk = 100

// maxBatchStalls bounds the BatchGetItem rounds that make no progress
// (every key returned unprocessed) before BatchGet reports ErrUnavailable.
const maxBatchStalls = 8

// Defaults of the Options bounds.
const (
	DefaultBatchGetParallel = 4
	DefaultMaxQueryPages    = 64
)

// Options configures a Store. Zero fields take the defaults.
type Options struct {
	// Now is the clock against which item expiry is evaluated, in reads and
	// in conditions. Default time.Now. Every instance writing one table must
	// use the same (wall) clock, or they disagree on which items are live.
	Now func() time.Time

	// AttemptTimeout bounds one HTTP attempt (default 2 s). An attempt
	// that runs out is retried while the operation has time left; reads
	// and transactions only, see client.go.
	AttemptTimeout time.Duration
	// OperationTimeout bounds one store call, retries, query pages and
	// batch chunks included (default 8 s). Keep it below the Lambda
	// function's timeout, so that a stalled engine yields store.ErrTimeout
	// (TEMPORARILY_UNAVAILABLE for a read) and not API Gateway's own
	// timeout answer.
	OperationTimeout time.Duration

	// BatchGetParallel is how many BatchGetItem chunks (of 100 keys) one
	// BatchGet sends at once (default 4).
	BatchGetParallel int
	// MaxQueryPages bounds the DynamoDB pages (1 MB each at most) one Query
	// reads before failing with store.ErrTooLarge (default 64): a caller
	// that needs more must page with Limit and keyset bounds.
	MaxQueryPages int

	// OnCapacity, when set, makes every call ask DynamoDB for the capacity
	// it consumed (ReturnConsumedCapacity TOTAL) and receives it: the
	// call's name (GetItem, TransactWriteItems, ...) and its units, after
	// each successful call (one BatchGetItem round or Query page each). It
	// runs on the calling goroutine, and must be safe for concurrent use.
	OnCapacity func(call string, units float64)
}

// Store implements store.Store on one DynamoDB table. It is safe for
// concurrent use; it holds no state besides the client, the table name and
// its options.
type Store struct {
	client         *dynamodb.Client
	table          string
	now            func() time.Time
	attemptTimeout time.Duration
	opTimeout      time.Duration
	batchParallel  int
	maxPages       int
	onCapacity     func(call string, units float64)
}

var _ store.Store = (*Store)(nil)

// New returns a Store on table, which must have been created with
// CreateTable (or the SAM template generated from the same schema). The
// caller owns client; Close does not release it.
func New(client *dynamodb.Client, table string, opts Options) *Store {
	s := &Store{client: client, table: table, now: opts.Now,
		attemptTimeout: opts.AttemptTimeout, opTimeout: opts.OperationTimeout,
		batchParallel: opts.BatchGetParallel, maxPages: opts.MaxQueryPages, onCapacity: opts.OnCapacity}
	if s.now == nil {
		s.now = time.Now
	}
	if s.attemptTimeout <= 0 {
		s.attemptTimeout = DefaultAttemptTimeout
	}
	if s.opTimeout <= 0 {
		s.opTimeout = DefaultOperationTimeout
	}
	if s.batchParallel <= 0 {
		s.batchParallel = DefaultBatchGetParallel
	}
	if s.maxPages <= 0 {
		s.maxPages = DefaultMaxQueryPages
	}
	return s
}

func (s *Store) nowUnix() int64 { return s.now().Unix() }

// Close implements store.Store. The client is the caller's, so there is
// nothing to release.
func (s *Store) Close() error { return nil }

// Get implements store.Store with a strongly consistent GetItem.
func (s *Store) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	if k.PK == "" || k.SK == "" {
		return nil, fmt.Errorf("%w: empty key", store.ErrInvalid)
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	return s.getItem(ctx, k)
}

// getItem is Get within the caller's operation budget.
func (s *Store) getItem(ctx context.Context, k store.Key) (*store.Item, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            keyAV(k),
		ConsistentRead: aws.Bool(true),
	}, s.callOptions())
	if err != nil {
		return nil, mapReadError("GetItem", err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	it, err := decodeItem(out.Item)
	if err != nil {
		return nil, err
	}
	if !store.Live(it.ExpiresAt, s.nowUnix()) {
		return nil, nil
	}
	return it, nil
}

// BatchGet implements store.Store. Keys are deduplicated and sent in
// strongly consistent BatchGetItem calls of at most 100 keys, up to
// Options.BatchGetParallel of them at once; unprocessed keys are retried
// with jittered exponential backoff that honours ctx. The first failing
// chunk cancels the others.
func (s *Store) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	if len(keys) > store.MaxBatchGetKeys {
		return nil, fmt.Errorf("%w: %d keys", store.ErrTooLarge, len(keys))
	}
	unique := make([]store.Key, 0, len(keys))
	seen := make(map[store.Key]struct{}, len(keys))
	for _, k := range keys {
		if k.PK == "" || k.SK == "" {
			return nil, fmt.Errorf("%w: empty key", store.ErrInvalid)
		}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		unique = append(unique, k)
	}

	found, err := s.batchGetChunks(ctx, unique)
	if err != nil {
		return nil, err
	}

	out := make([]*store.Item, len(keys))
	used := make(map[store.Key]bool, len(found))
	for i, k := range keys {
		it := found[k]
		if it == nil {
			continue
		}
		if used[k] {
			// A duplicate key gets its own copy, so callers may modify
			// one result without changing another.
			it = cloneItem(it)
		}
		used[k] = true
		out[i] = it
	}
	return out, nil
}

// batchGetChunks reads unique (deduplicated) keys in parallel chunks.
func (s *Store) batchGetChunks(ctx context.Context, unique []store.Key) (map[store.Key]*store.Item, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	now := s.nowUnix()
	var chunks [][]store.Key
	for start := 0; start < len(unique); start += batchGetChunk {
		chunks = append(chunks, unique[start:min(start+batchGetChunk, len(unique))])
	}
	results := make([][]*store.Item, len(chunks))
	if len(chunks) <= 1 {
		for i, c := range chunks {
			items, err := s.batchGetChunk(ctx, c, now)
			if err != nil {
				return nil, err
			}
			results[i] = items
		}
	} else {
		ctx, stop := context.WithCancelCause(ctx)
		defer stop(nil)
		sem := make(chan struct{}, s.batchParallel)
		var wg sync.WaitGroup
		errs := make([]error, len(chunks))
		for i, c := range chunks {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				items, err := s.batchGetChunk(ctx, c, now)
				results[i], errs[i] = items, err
				if err != nil {
					stop(err)
				}
			})
		}
		wg.Wait()
		if err := firstError(errs, context.Cause(ctx)); err != nil {
			return nil, err
		}
	}
	found := make(map[store.Key]*store.Item, len(unique))
	for _, items := range results {
		for _, it := range items {
			found[it.Key()] = it
		}
	}
	return found, nil
}

// firstError returns the chunk error that cancelled the others (cause),
// else the first chunk error: a chunk's failure, not the cancellation it
// caused in the others.
func firstError(errs []error, cause error) error {
	for _, err := range errs {
		if err != nil && err == cause {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// batchGetChunk reads at most 100 keys, retrying unprocessed ones, and
// returns the live items among them.
func (s *Store) batchGetChunk(ctx context.Context, chunk []store.Key, now int64) ([]*store.Item, error) {
	pending := make([]map[string]types.AttributeValue, len(chunk))
	for i, k := range chunk {
		pending[i] = keyAV(k)
	}
	var found []*store.Item
	stalls := 0
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 0 {
			if err := ctxtime.Sleep(ctx, backoff(stalls)); err != nil {
				return nil, mapReadError("BatchGetItem", fmt.Errorf("unprocessed keys: %w", err))
			}
		}
		out, err := s.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{
				s.table: {Keys: pending, ConsistentRead: aws.Bool(true)},
			},
		}, s.callOptions())
		if err != nil {
			return nil, mapReadError("BatchGetItem", err)
		}
		for _, av := range out.Responses[s.table] {
			it, err := decodeItem(av)
			if err != nil {
				return nil, err
			}
			if store.Live(it.ExpiresAt, now) {
				found = append(found, it)
			}
		}
		next := out.UnprocessedKeys[s.table].Keys
		if len(next) >= len(pending) {
			stalls++
			if stalls > maxBatchStalls {
				return nil, fmt.Errorf("%w: dynamo: BatchGetItem: keys left unprocessed", store.ErrUnavailable)
			}
		} else {
			stalls = 0
		}
		pending = next
	}
	return found, nil
}

// Query implements store.Store. Table queries are strongly consistent;
// index queries are not and cannot be (see the package note). One Query
// reads at most Options.MaxQueryPages pages, else store.ErrTooLarge.
func (s *Store) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	if q.PK == "" {
		return nil, fmt.Errorf("%w: empty partition key", store.ErrInvalid)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("%w: negative limit", store.ErrInvalid)
	}
	pkAttr, skAttr, indexName, err := indexAttrs(q.Index)
	if err != nil {
		return nil, err
	}
	if q.From != "" && q.To != "" && q.From > q.To {
		// DynamoDB rejects BETWEEN with crossed bounds; the range is empty.
		return nil, nil
	}

	names := map[string]string{"#pk": pkAttr}
	values := map[string]types.AttributeValue{":pk": sAV(q.PK)}
	cond := "#pk = :pk"
	switch {
	case q.From != "" && q.To != "":
		cond += " AND #sk BETWEEN :from AND :to"
	case q.From != "":
		cond += " AND #sk >= :from"
	case q.To != "":
		cond += " AND #sk <= :to"
	}
	if q.From != "" || q.To != "" {
		names["#sk"] = skAttr
	}
	if q.From != "" {
		values[":from"] = sAV(q.From)
	}
	if q.To != "" {
		values[":to"] = sAV(q.To)
	}

	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(!q.Reverse),
	}
	if indexName == "" {
		in.ConsistentRead = aws.Bool(true)
	} else {
		in.IndexName = aws.String(indexName)
	}

	now := s.nowUnix()
	var items []*store.Item
	for page := 1; ; page++ {
		if page > s.maxPages {
			return nil, fmt.Errorf("%w: dynamo: query reads more than %d pages", store.ErrTooLarge, s.maxPages)
		}
		if q.Limit > 0 {
			// Ask only for what is still missing; expired items found on
			// the way are dropped and the next page asks again.
			in.Limit = aws.Int32(int32(min(q.Limit-len(items), math.MaxInt32)))
		}
		out, err := s.client.Query(ctx, in, s.callOptions())
		if err != nil {
			return nil, mapReadError("Query", err)
		}
		for _, av := range out.Items {
			it, err := decodeItem(av)
			if err != nil {
				return nil, err
			}
			if !store.Live(it.ExpiresAt, now) {
				continue
			}
			items = append(items, it)
			if q.Limit > 0 && len(items) == q.Limit {
				return items, nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func indexAttrs(i store.Index) (pk, sk, name string, err error) {
	def := store.Definition()
	switch i {
	case store.Table:
		return def.PK, def.SK, "", nil
	case store.GSI1:
		ix := def.Indexes[0]
		return ix.PK, ix.SK, ix.Name, nil
	case store.GSI2:
		ix := def.Indexes[1]
		return ix.PK, ix.SK, ix.Name, nil
	}
	return "", "", "", fmt.Errorf("%w: unknown index %v", store.ErrInvalid, i)
}

// backoff returns a full-jitter exponential delay: up to 25ms doubled per
// failed round, capped at one second.
func backoff(round int) time.Duration {
	return ctxtime.Backoff(25*time.Millisecond, time.Second, time.Millisecond, round)
}

// errMalformed reports a stored item the adapter cannot decode, without
// echoing the offending value.
var errMalformed = errors.New("dynamo: malformed stored item")

package dynamo

// Time budgets and retries per call.
//
// A Lambda function has a fixed budget (API Gateway gives up at 29 s), and a
// stalled connection must not eat it: API Gateway would then answer with
// its own body instead of the domain's TEMPORARILY_UNAVAILABLE. So every
// store call runs under an operation timeout (the whole call: SDK retries,
// query pages, batch chunks) and every HTTP attempt under an attempt
// timeout, both well below the function's timeout.
//
// The SDK does not retry an attempt that its own context cancelled, so the
// attempt-timeout middleware turns an attempt's expiry (while the operation
// still has time) into a retryable error. Whether a retry is safe is the
// retryer's business: reads and transactions (whose ClientRequestToken the
// SDK reuses on retries, making them idempotent) take the client's retryer;
// a plain single-item write is not idempotent (a retried conditional put
// would fail its own condition, a retried add would count twice), so it
// retries only answers that prove the request did not run (refused).

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Default time budgets; see Options.
const (
	DefaultAttemptTimeout   = 2 * time.Second
	DefaultOperationTimeout = 8 * time.Second
)

// opContext bounds one store call by the operation timeout.
func (s *Store) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opTimeout)
}

// callOptions are the per-call client options of reads and transactions.
func (s *Store) callOptions() func(*dynamodb.Options) {
	d, report := s.attemptTimeout, s.onCapacity
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, attemptTimeoutMiddleware(d))
		if report != nil {
			o.APIOptions = append(o.APIOptions, capacityMiddleware(report))
		}
	}
}

// plainWriteOptions are the per-call options of a non-idempotent single-item
// write: those of callOptions, and retries only of refused requests.
func (s *Store) plainWriteOptions() func(*dynamodb.Options) {
	base := s.callOptions()
	return func(o *dynamodb.Options) {
		base(o)
		if o.Retryer != nil {
			o.Retryer = refusedOnly{o.Retryer}
		}
	}
}

func capacityMiddleware(report func(call string, units float64)) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(consumedCapacity{report: report}, middleware.After)
	}
}

// consumedCapacity asks DynamoDB for the capacity each call consumed
// (ReturnConsumedCapacity TOTAL) and reports it, for Options.OnCapacity.
type consumedCapacity struct {
	report func(call string, units float64)
}

func (consumedCapacity) ID() string { return "agentbox.ConsumedCapacity" }

func (m consumedCapacity) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
	middleware.InitializeOutput, middleware.Metadata, error) {
	total := types.ReturnConsumedCapacityTotal
	switch p := in.Parameters.(type) {
	case *dynamodb.GetItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.BatchGetItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.TransactWriteItemsInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity = total
	}
	out, md, err := next.HandleInitialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	var used []types.ConsumedCapacity
	one := func(c *types.ConsumedCapacity) {
		if c != nil {
			used = append(used, *c)
		}
	}
	switch r := out.Result.(type) {
	case *dynamodb.GetItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		used = r.ConsumedCapacity
	case *dynamodb.QueryOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		used = r.ConsumedCapacity
	case *dynamodb.PutItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		one(r.ConsumedCapacity)
	}
	units := 0.0
	for _, c := range used {
		units += aws.ToFloat64(c.CapacityUnits)
	}
	m.report(awsmiddleware.GetOperationName(ctx), units)
	return out, md, err
}

// refusedOnly keeps a retryer's budget and delays but retries only errors
// that prove the request did not run.
type refusedOnly struct{ aws.Retryer }

func (refusedOnly) IsErrorRetryable(err error) bool { return refused(err) }

func attemptTimeoutMiddleware(d time.Duration) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Finalize.Insert(attemptTimeout{d: d}, "Retry", middleware.After)
	}
}

// attemptTimeout runs each attempt under its own deadline. It sits after the
// SDK's retry middleware, so it wraps each attempt and not the whole call.
type attemptTimeout struct{ d time.Duration }

func (attemptTimeout) ID() string { return "agentbox.AttemptTimeout" }

func (m attemptTimeout) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
	middleware.FinalizeOutput, middleware.Metadata, error) {
	actx, cancel := context.WithTimeout(ctx, m.d)
	defer cancel()
	out, md, err := next.HandleFinalize(actx, in)
	if err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return out, md, &attemptTimeoutError{}
	}
	return out, md, err
}

// attemptTimeoutError is one attempt running out of time. It deliberately
// hides the context error it replaces: the SDK never retries a cancelled
// request, and this one may be retried (the operation has time left).
type attemptTimeoutError struct{}

func (*attemptTimeoutError) Error() string        { return "attempt timed out" }
func (*attemptTimeoutError) RetryableError() bool { return true }

// timedOut reports a call that ran out of time: its last attempt, or the
// whole operation (or the caller's deadline).
func timedOut(err error) bool {
	if _, ok := errors.AsType[*attemptTimeoutError](err); ok {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}

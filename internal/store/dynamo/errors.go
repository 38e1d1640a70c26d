package dynamo

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/agentbox/agentbox/internal/store"
)

// engineError is an engine failure as the adapter returns it: its text
// names the operation and the engine's error code and nothing else, because
// DynamoDB messages can quote expressions and key values. The cause stays
// reachable through Unwrap (errors.As finds the SDK's error types, and
// errors.Is finds context cancellation), for code that needs it, never for
// text that leaves the process.
type engineError struct {
	op   string
	what string
	err  error
}

func (e *engineError) Error() string { return "dynamo: " + e.op + ": " + e.what }
func (e *engineError) Unwrap() error { return e.err }

func newEngineError(op string, err error) *engineError {
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		return &engineError{op: op, what: ae.ErrorCode(), err: err}
	}
	// Not an answer from the engine: transport failures, cancellation,
	// decoding. Their text carries no item data, and operators need it.
	return &engineError{op: op, what: err.Error(), err: err}
}

// refused reports an engine answer that guarantees the request did not run:
// throttling, or a conflict with another transaction on a plain write. The
// SDK's error types decide, never message text.
func refused(err error) bool {
	if _, ok := errors.AsType[*types.ThrottlingException](err); ok {
		return true
	}
	if _, ok := errors.AsType[*types.ProvisionedThroughputExceededException](err); ok {
		return true
	}
	if _, ok := errors.AsType[*types.RequestLimitExceeded](err); ok {
		return true
	}
	if _, ok := errors.AsType[*types.TransactionConflictException](err); ok {
		return true
	}
	return false
}

// transient reports a server-side failure whose effect on a write is
// unknown; a read can simply be retried.
func transient(err error) bool {
	if _, ok := errors.AsType[*types.InternalServerError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*types.TransactionInProgressException](err); ok {
		return true
	}
	if ae, ok := errors.AsType[smithy.APIError](err); ok && ae.ErrorCode() == "ServiceUnavailable" {
		// An HTTP 503 without a modelled type.
		return true
	}
	return false
}

// Cancellation reasons that mean contention or load: the transaction wrote
// nothing and may be retried. Reasons are the engine's structured codes,
// one per operation, not message text.
var retryableReasons = map[string]bool{
	"TransactionConflict":           true,
	"ThrottlingError":               true,
	"ProvisionedThroughputExceeded": true,
}

// mapReadError maps the failure of a read, which has no effect to lose: every
// transient failure is store.ErrUnavailable, and a timeout is
// store.ErrTimeout.
func mapReadError(op string, err error) error {
	ee := newEngineError(op, err)
	switch {
	case refused(err) || transient(err):
		return fmt.Errorf("%w: %w", store.ErrUnavailable, ee)
	case timedOut(err):
		return fmt.Errorf("%w: %w", store.ErrTimeout, ee)
	}
	return ee
}

// mapWriteError maps the failure of the write of ops (one TransactWriteItems
// or, for a single operation, one plain item call). Only failures that
// guarantee nothing was written become store.ErrUnavailable.
//
// A cancelled transaction names every failing operation when all its
// reasons were decided against one state: a ConditionalCheckFailed on an
// operation with a caller condition is reported with every other one. When
// any reason is a conflict or throttling, the operations it names were not
// evaluated, so a list of failed conditions could be incomplete: that is
// store.ErrUnavailable, and the caller's retry sees the whole picture.
//
// Size limits are not read from engine answers: store.CheckWrite refuses,
// before sending, any write whose items or total exceed DynamoDB's limits
// by an accounting that never undercounts (see TestItemSizeBoundsEngineSize),
// so an engine ValidationException is an opaque error like any other.
func mapWriteError(op string, err error, ops []store.Op) error {
	ee := newEngineError(op, err)
	if tce, ok := errors.AsType[*types.TransactionCanceledException](err); ok {
		reasons := tce.CancellationReasons
		if len(reasons) != len(ops) {
			// Reasons that do not line up with ops cannot name the failed
			// operation; claiming contention would invite a futile retry.
			return ee
		}
		var failed []int
		contended, guard := false, false
		for i, r := range reasons {
			switch code := aws.ToString(r.Code); {
			case retryableReasons[code]:
				contended = true
			case code == "ConditionalCheckFailed" && ops[i].Kind == store.OpAdd:
				guard = true
			case code == "ConditionalCheckFailed":
				failed = append(failed, i)
			}
		}
		switch {
		case contended:
			return fmt.Errorf("%w: %w", store.ErrUnavailable, ee)
		case len(failed) > 0:
			return store.NewConditionFailed(ops, failed)
		case guard:
			// Only an OpAdd guard: the counter raced with its own expiry
			// between attempts.
			return fmt.Errorf("%w: %w", store.ErrUnavailable, ee)
		}
		return ee
	}
	if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok && len(ops) == 1 {
		if ops[0].Kind == store.OpAdd {
			return fmt.Errorf("%w: %w", store.ErrUnavailable, ee)
		}
		return store.NewConditionFailed(ops, []int{0})
	}
	switch {
	case refused(err):
		return fmt.Errorf("%w: %w", store.ErrUnavailable, ee)
	case timedOut(err):
		return fmt.Errorf("%w: %w", store.ErrTimeout, ee)
	}
	return ee
}

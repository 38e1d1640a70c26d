package dynamo

import (
	"errors"
	"fmt"
	"strings"

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

// Engine error codes that mean the request was refused before it ran.
var refusedCodes = map[string]bool{
	"ThrottlingException":                    true,
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
}

// Engine error codes that mean a transient failure whose effect on a write
// is unknown; a read can simply be retried.
var transientCodes = map[string]bool{
	"InternalServerError":            true,
	"ServiceUnavailable":             true,
	"TransactionInProgressException": true,
}

// Cancellation reasons that mean contention or load: the transaction wrote
// nothing and may be retried.
var retryableReasons = map[string]bool{
	"TransactionConflict":           true,
	"ThrottlingError":               true,
	"ProvisionedThroughputExceeded": true,
}

// mapReadError maps the failure of a read, which has no effect to lose: every
// transient failure is store.ErrUnavailable.
func mapReadError(op string, err error) error {
	ee := newEngineError(op, err)
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		code := ae.ErrorCode()
		if refusedCodes[code] || transientCodes[code] {
			return fmt.Errorf("%w: %w", store.ErrUnavailable, ee)
		}
	}
	return ee
}

// mapWriteError maps the failure of TransactWriteItems for ops. Only
// failures that guarantee nothing was written become store.ErrUnavailable.
func mapWriteError(err error, ops []store.Op) error {
	const op = "TransactWriteItems"
	ee := newEngineError(op, err)
	if tce, ok := errors.AsType[*types.TransactionCanceledException](err); ok {
		reasons := tce.CancellationReasons
		if len(reasons) == len(ops) {
			for i, r := range reasons {
				if aws.ToString(r.Code) == "ConditionalCheckFailed" && ops[i].Kind != store.OpAdd {
					return &store.ConditionFailedError{Index: i, Key: ops[i].OpKey()}
				}
			}
		}
		retry, tooLarge, unattributed := false, false, false
		for _, r := range reasons {
			code := aws.ToString(r.Code)
			switch {
			case retryableReasons[code]:
				retry = true
			case code == "ConditionalCheckFailed" && len(reasons) == len(ops):
				// Only an OpAdd guard can be left here: the counter raced
				// with its own expiry.
				retry = true
			case code == "ConditionalCheckFailed":
				unattributed = true
			case code == "ValidationError" && mentionsSize(aws.ToString(r.Message)):
				tooLarge = true
			}
		}
		switch {
		case unattributed:
			// Reasons that do not line up with ops cannot name the failed
			// operation; claiming contention would invite a futile retry.
			return ee
		case tooLarge:
			return fmt.Errorf("%w: %w", store.ErrTooLarge, ee)
		case retry:
			return fmt.Errorf("%w: %w", store.ErrUnavailable, ee)
		}
		return ee
	}
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		switch code := ae.ErrorCode(); {
		case refusedCodes[code]:
			return fmt.Errorf("%w: %w", store.ErrUnavailable, ee)
		case code == "ValidationException" && mentionsSize(ae.ErrorMessage()):
			return fmt.Errorf("%w: %w", store.ErrTooLarge, ee)
		}
	}
	return ee
}

// mentionsSize recognises DynamoDB's size validation messages ("Item size
// has exceeded the maximum allowed size", "Transaction request cannot be
// larger than 4 MB").
func mentionsSize(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "size") || strings.Contains(msg, "larger than")
}

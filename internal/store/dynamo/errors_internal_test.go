package dynamo

// The error mapping is tested on hand-built SDK errors: transaction
// conflicts, throttling and server errors are faults no local engine
// produces on demand. (wire_test.go sends the same faults through the SDK's
// deserializer.)

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/agentbox/agentbox/internal/store"
)

const leak = "leaked-value-91c2"

// asSDK wraps err the way the SDK returns it: an operation error around
// the retryer's give-up error.
func asSDK(op string, err error) error {
	return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: op, Err: &retry.MaxAttemptsError{Attempt: 3, Err: err}}
}

func cancelled(codes ...string) error {
	reasons := make([]types.CancellationReason, len(codes))
	for i, c := range codes {
		reasons[i] = types.CancellationReason{Code: aws.String(c), Message: aws.String(leak)}
	}
	return asSDK("TransactWriteItems", &types.TransactionCanceledException{Message: aws.String(leak), CancellationReasons: reasons})
}

var testOps = []store.Op{
	store.Put(&store.Item{PK: "P", SK: "a"}, store.Absent),
	store.Add(store.Key{PK: "P", SK: "n"}, 1, 0),
	store.Delete(store.Key{PK: "P", SK: "c"}, store.Present),
}

func TestMapWriteError(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		want      error // nil: opaque
		wantIndex int
	}{
		{"ConditionFailedAtIndexTwo", cancelled("None", "None", "ConditionalCheckFailed"), &store.ConditionFailedError{}, 2},
		{"FirstCallerConditionWins", cancelled("ConditionalCheckFailed", "None", "ConditionalCheckFailed"), &store.ConditionFailedError{}, 0},
		{"AddGuardIsNotCallerCondition", cancelled("None", "ConditionalCheckFailed", "None"), store.ErrUnavailable, 0},
		{"TransactionConflictUnavailable", cancelled("None", "TransactionConflict", "None"), store.ErrUnavailable, 0},
		{"ThrottlingReasonUnavailable", cancelled("ThrottlingError", "None", "None"), store.ErrUnavailable, 0},
		{"ProvisionedReasonUnavailable", cancelled("None", "None", "ProvisionedThroughputExceeded"), store.ErrUnavailable, 0},
		// A conflicted operation's condition was not evaluated: the list of
		// failed conditions could be incomplete, so the caller retries.
		{"ConflictBeatsCondition", cancelled("None", "TransactionConflict", "ConditionalCheckFailed"), store.ErrUnavailable, 0},
		{"UnalignedReasonsOpaque", cancelled("ConditionalCheckFailed"), nil, 0},
		{"NoReasonsOpaque", cancelled(), nil, 0},
		{"ThrottlingUnavailable", asSDK("TransactWriteItems", &types.ThrottlingException{Message: aws.String(leak)}), store.ErrUnavailable, 0},
		{"ProvisionedUnavailable", asSDK("TransactWriteItems", &types.ProvisionedThroughputExceededException{Message: aws.String(leak)}), store.ErrUnavailable, 0},
		{"RequestLimitUnavailable", asSDK("TransactWriteItems", &types.RequestLimitExceeded{Message: aws.String(leak)}), store.ErrUnavailable, 0},
		{"InternalServerErrorOpaque", asSDK("TransactWriteItems", &types.InternalServerError{Message: aws.String(leak)}), nil, 0},
		{"InProgressOpaque", asSDK("TransactWriteItems", &types.TransactionInProgressException{Message: aws.String(leak)}), nil, 0},
		// Sizes are checked before sending; engine message text is never parsed.
		{"ValidationSizeOpaque", asSDK("TransactWriteItems", &smithy.GenericAPIError{Code: "ValidationException", Message: "Item size has exceeded the maximum allowed size"}), nil, 0},
		{"ConflictExceptionUnavailable", asSDK("PutItem", &types.TransactionConflictException{Message: aws.String(leak)}), store.ErrUnavailable, 0},
		{"ValidationOtherOpaque", asSDK("TransactWriteItems", &smithy.GenericAPIError{Code: "ValidationException", Message: "ExpressionAttributeValues contains " + leak}), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mapWriteError("TransactWriteItems", tc.err, testOps)
			if strings.Contains(got.Error(), leak) {
				t.Errorf("mapWriteError(...) text %q carries the engine's message", got)
			}
			cf, isCond := store.ConditionFailed(got)
			switch want := tc.want.(type) {
			case *store.ConditionFailedError:
				if !isCond || cf.Index != tc.wantIndex || cf.Key != testOps[tc.wantIndex].OpKey() {
					t.Errorf("mapWriteError(...) = %v, want *ConditionFailedError{Index: %d}", got, tc.wantIndex)
				}
			case nil:
				if isCond || errors.Is(got, store.ErrUnavailable) || errors.Is(got, store.ErrTooLarge) {
					t.Errorf("mapWriteError(...) = %v, want an opaque error", got)
				}
				if !errors.Is(got, tc.err) {
					t.Errorf("mapWriteError(...) = %v, want it to wrap the SDK error", got)
				}
			default:
				if !errors.Is(got, want) {
					t.Errorf("mapWriteError(...) = %v, want %v", got, want)
				}
			}
		})
	}
}

func TestMapReadError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"ThrottlingUnavailable", asSDK("Query", &types.ThrottlingException{Message: aws.String(leak)}), store.ErrUnavailable},
		{"ProvisionedUnavailable", asSDK("Query", &types.ProvisionedThroughputExceededException{Message: aws.String(leak)}), store.ErrUnavailable},
		{"RequestLimitUnavailable", asSDK("Query", &types.RequestLimitExceeded{Message: aws.String(leak)}), store.ErrUnavailable},
		{"InternalServerErrorUnavailable", asSDK("Query", &types.InternalServerError{Message: aws.String(leak)}), store.ErrUnavailable},
		{"ResourceNotFoundOpaque", asSDK("Query", &types.ResourceNotFoundException{Message: aws.String(leak)}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mapReadError("Query", tc.err)
			if strings.Contains(got.Error(), leak) {
				t.Errorf("mapReadError(...) text %q carries the engine's message", got)
			}
			if tc.want != nil && !errors.Is(got, tc.want) {
				t.Errorf("mapReadError(...) = %v, want %v", got, tc.want)
			}
			if tc.want == nil && errors.Is(got, store.ErrUnavailable) {
				t.Errorf("mapReadError(...) = %v, want an opaque error", got)
			}
		})
	}

	t.Run("CancellationStaysVisible", func(t *testing.T) {
		got := mapReadError("GetItem", asSDK("GetItem", context.Canceled))
		if !errors.Is(got, context.Canceled) {
			t.Errorf("mapReadError(canceled) = %v, want errors.Is context.Canceled", got)
		}
	})
}

func TestFailedAddGuards(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want []int
	}{
		{"GuardFailed", cancelled("None", "ConditionalCheckFailed", "None"), []int{1}},
		{"CallerConditionDecides", cancelled("ConditionalCheckFailed", "ConditionalCheckFailed", "None"), nil},
		{"ConflictDecides", cancelled("None", "ConditionalCheckFailed", "TransactionConflict"), nil},
		{"Unaligned", cancelled("ConditionalCheckFailed"), nil},
		{"NotCancelled", asSDK("TransactWriteItems", &types.ThrottlingException{}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := failedAddGuards(tc.err, testOps); !slices.Equal(got, tc.want) {
				t.Errorf("failedAddGuards(...) = %v, want %v", got, tc.want)
			}
		})
	}
}

package dynamo_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/dynamo"
)

// cannedEngine answers every request with one DynamoDB error response, as
// the real service would send it: the faults here (conflicts, throttling,
// server errors) are ones no local engine produces on demand.
func cannedEngine(t *testing.T, status int, body string) (*dynamo.Store, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	url := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	client := serverClient(url)
	return dynamo.New(client, "t", dynamo.Options{}), &calls
}

const secret = "secret-value-7f3a"

func errorBody(typ, msg string) string {
	return fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":%q}`, typ, msg)
}

// cancelBody is a TransactionCanceledException with one reason per code;
// a code may carry its message after a colon.
func cancelBody(codes ...string) string {
	var reasons []string
	for _, c := range codes {
		code, msg, ok := strings.Cut(c, ":")
		if !ok {
			msg = "about " + secret
		}
		reasons = append(reasons, fmt.Sprintf(`{"Code":%q,"Message":%q}`, code, msg))
	}
	return fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","Message":"Transaction cancelled [%s]","CancellationReasons":[%s]}`,
		secret, strings.Join(reasons, ","))
}

func TestWireErrorMapping(t *testing.T) {
	ops := []store.Op{
		store.Put(&store.Item{PK: "P", SK: "a", Data: []byte(secret)}, store.Absent),
		store.Add(store.Key{PK: "P", SK: "n"}, 1, 0),
		store.Put(&store.Item{PK: "P", SK: "c"}, store.AtVersion(3)),
	}
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		want      error // nil: an opaque error, neither ErrUnavailable nor a condition failure
		wantIndex int   // for *ConditionFailedError
		wantCalls int64
	}{
		{"ConditionFailedAtIndexTwo", 400, cancelBody("None", "None", "ConditionalCheckFailed"), &store.ConditionFailedError{}, 2, 1},
		{"TransactionConflictUnavailable", 400, cancelBody("None", "TransactionConflict", "None"), store.ErrUnavailable, 0, 1},
		{"ConflictAndConditionUnavailable", 400, cancelBody("ConditionalCheckFailed", "TransactionConflict", "None"), store.ErrUnavailable, 0, 1},
		{"ThrottledReasonUnavailable", 400, cancelBody("None", "None", "ThrottlingError"), store.ErrUnavailable, 0, 1},
		{"ItemSizeReasonOpaque", 400, cancelBody("ValidationError:Item size has exceeded the maximum allowed size", "None", "None"), nil, 0, 1},
		{"OtherValidationReasonOpaque", 400, cancelBody("None", "ValidationError", "None"), nil, 0, 1},
		{"UnalignedReasonsOpaque", 400, cancelBody("ConditionalCheckFailed"), nil, 0, 1},
		{"AddGuardOnlyAfterRetriesUnavailable", 400, cancelBody("None", "ConditionalCheckFailed", "None"), store.ErrUnavailable, 0, 4},
		{"ThrottlingUnavailable", 400, errorBody("ThrottlingException", "Rate of requests exceeds the allowed throughput."), store.ErrUnavailable, 0, 3},
		{"ProvisionedThroughputUnavailable", 400, errorBody("ProvisionedThroughputExceededException", "The level of configured provisioned throughput for the table was exceeded."), store.ErrUnavailable, 0, 3},
		{"RequestLimitUnavailable", 400, errorBody("RequestLimitExceeded", "Throughput exceeds the current throughput limit for your account."), store.ErrUnavailable, 0, 3},
		// Sizes are refused by store.CheckWrite before sending; an engine
		// ValidationException is never read for its text.
		{"ItemSizeMessageOpaque", 400, errorBody("ValidationException", "Item size has exceeded the maximum allowed size"), nil, 0, 1},
		{"TransactionSizeMessageOpaque", 400, errorBody("ValidationException", "Transaction request cannot be larger than 4 MB"), nil, 0, 1},
		{"OtherValidationOpaque", 400, errorBody("ValidationException", "Invalid ConditionExpression: attribute_not_exists(#pk) near "+secret), nil, 0, 1},
		{"InternalErrorOnWriteOpaque", 500, errorBody("InternalServerError", "Internal server error"), nil, 0, 3},
		{"InProgressOnWriteOpaque", 400, errorBody("TransactionInProgressException", "Transaction is in progress"), nil, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, calls := cannedEngine(t, tc.status, tc.body)
			err := s.Write(t.Context(), ops)
			if err == nil {
				t.Fatalf("Write = nil, want an error")
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "attribute_") {
				t.Errorf("Write error text %q carries engine message data", err)
			}
			cf, isCond := store.ConditionFailed(err)
			switch want := tc.want.(type) {
			case *store.ConditionFailedError:
				if !isCond || cf.Index != tc.wantIndex || cf.Key != ops[tc.wantIndex].OpKey() {
					t.Errorf("Write = %v, want *ConditionFailedError at op %d", err, tc.wantIndex)
				}
			case nil:
				if isCond || errors.Is(err, store.ErrUnavailable) {
					t.Errorf("Write = %v, want an opaque error (outcome unknown or not retryable)", err)
				}
			default:
				if !errors.Is(err, want) || isCond {
					t.Errorf("Write = %v, want %v", err, want)
				}
			}
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("Write sent %d requests, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestWireReadErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"ThrottlingUnavailable", 400, errorBody("ThrottlingException", secret), store.ErrUnavailable},
		{"InternalErrorUnavailable", 500, errorBody("InternalServerError", secret), store.ErrUnavailable},
		{"ValidationOpaque", 400, errorBody("ValidationException", secret), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := cannedEngine(t, tc.status, tc.body)
			reads := map[string]func() error{
				"Get":      func() error { _, err := s.Get(t.Context(), store.Key{PK: "P", SK: "a"}); return err },
				"BatchGet": func() error { _, err := s.BatchGet(t.Context(), []store.Key{{PK: "P", SK: "a"}}); return err },
				"Query":    func() error { _, err := s.Query(t.Context(), store.Query{PK: "P", From: secret}); return err },
			}
			for name, read := range reads {
				err := read()
				if err == nil || strings.Contains(err.Error(), secret) {
					t.Errorf("%s = %v, want an error free of engine message data", name, err)
				}
				if tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("%s = %v, want %v", name, err, tc.want)
				}
				if tc.want == nil && errors.Is(err, store.ErrUnavailable) {
					t.Errorf("%s = %v, want an opaque error", name, err)
				}
			}
		})
	}
}

func TestWriteRetriesReuseClientRequestToken(t *testing.T) {
	// The SDK retries a write after a server error; the retry must carry
	// the first attempt's ClientRequestToken, so that DynamoDB applies the
	// transaction once even if the first attempt did commit.
	var tokens []string
	url := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ ClientRequestToken string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			t.Errorf("decoding request: %v", err)
		}
		tokens = append(tokens, in.ClientRequestToken)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if len(tokens) < 3 {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, errorBody("InternalServerError", "Internal server error"))
			return
		}
		fmt.Fprint(w, "{}")
	}))
	client := serverClient(url)
	s := dynamo.New(client, "t", dynamo.Options{})
	ops := []store.Op{store.Add(store.Key{PK: "P", SK: "n"}, 1, 0), store.Put(&store.Item{PK: "P", SK: "a"}, store.Absent)}
	if err := s.Write(t.Context(), ops); err != nil {
		t.Fatalf("Write after two server errors = %v, want nil", err)
	}
	if len(tokens) != 3 || tokens[0] == "" || tokens[1] != tokens[0] || tokens[2] != tokens[0] {
		t.Errorf("ClientRequestToken per attempt = %q, want one non-empty token on all 3 attempts", tokens)
	}
}

package apperr_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
)

// TestEnvelopeRevisionRendering: seed-000 tools carry revisions as decimal
// strings, seed-002 tools (integer expected_version) as integers, and both
// transports render through EnvelopeIn.
func TestEnvelopeRevisionRendering(t *testing.T) {
	for _, tc := range []struct {
		integer bool
		want    string
	}{
		{false, `"18446744073709551615"`},
		{true, `18446744073709551615`},
	} {
		b, err := json.Marshal(apperr.Conflict(1<<64 - 1).EnvelopeIn(apperr.Context{IntegerRevisions: tc.integer}))
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if string(got["current_revision"]) != tc.want || strings.Count(string(b), `"current_revision":`) != 1 {
			t.Errorf("EnvelopeIn(integer %v) = %s, want current_revision %s once", tc.integer, b, tc.want)
		}
		if string(got["code"]) != `"REVISION_CONFLICT"` || string(got["retryable"]) != "false" {
			t.Errorf("EnvelopeIn(integer %v) = %s, want code REVISION_CONFLICT, not retryable", tc.integer, b)
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want apperr.Code
	}{
		{"Domain", apperr.Forbidden(), apperr.NotFoundOrForbidden},
		{"Deadline", context.DeadlineExceeded, apperr.TemporarilyUnavailable},
		{"Unknown", errors.New("engine said: SELECT * FROM secret"), apperr.StorageFailure},
	}
	for _, tc := range cases {
		e := apperr.Normalize(tc.err)
		if e.Code != tc.want {
			t.Errorf("Normalize(%s) = %s, want %s", tc.name, e.Code, tc.want)
		}
		if strings.Contains(e.Message, "SELECT") {
			t.Errorf("Normalize(%s) message leaks the cause: %q", tc.name, e.Message)
		}
		if env := e.Envelope(); env.Retryable != tc.want.Retryable() || env.Help == "" || env.NextAction == "" {
			t.Errorf("Normalize(%s).Envelope() = %+v, want retryable=%v with help and next action", tc.name, env, tc.want.Retryable())
		}
	}
}

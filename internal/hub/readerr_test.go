package hub_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/teststores"
)

// errDropped is an opaque engine error, as a connection that keeps
// dropping gives.
var errDropped = errors.New("read tcp: connection reset by peer")

// TestDroppedReadIsRetryable: a read whose connection drops changed
// nothing, so it answers TEMPORARILY_UNAVAILABLE, retryable, in a read's
// words (no mutation ID, no doubt about persistence) — for a read tool and
// for a mutation that failed before writing. A write whose connection
// drops keeps STORAGE_FAILURE: its outcome is unknown.
func TestDroppedReadIsRetryable(t *testing.T) {
	t.Parallel()
	var d *teststores.Faults
	f := newFixture(t, teststores.All()[0], func(s store.Store) store.Store { d = teststores.NewFaults(s); return d })
	cr := f.prime(f.a)
	read := func(name string, err error) {
		t.Helper()
		e := wantCode(t, name, err, apperr.TemporarilyUnavailable)
		if !e.Code.Retryable() || e.RetryAfter == 0 {
			t.Errorf("%s: retryable %v, retry_after %d; want retryable with a delay", name, e.Code.Retryable(), e.RetryAfter)
		}
		for _, s := range []string{e.Message, e.NextAction} {
			if strings.Contains(s, "mutation ID") || strings.Contains(s, "persisted") || strings.Contains(s, "uncertain") ||
				strings.Contains(s, "connection reset") {
				t.Errorf("%s: %q is not a read's wording", name, s)
			}
		}
	}
	d.FailReads(errDropped)
	_, err := f.h.ProfileGet(f.ctx, cr, hub.ProfileInput{})
	read("profile_get with reads dropping", err)
	_, err = f.h.InboxList(f.ctx, cr, hub.InboxListInput{})
	read("inbox_list with reads dropping", err)
	_, err = save(f, cr, "dropped-read", 0, "body")
	read("checkpoint_save whose reads drop", err)
	d.FailReads(nil)

	d.FailWrites(errDropped)
	_, err = save(f, cr, "dropped-write", 0, "body")
	d.FailWrites(nil)
	wantCode(t, "checkpoint_save whose write drops", err, apperr.StorageFailure)
	if _, err := save(f, cr, "dropped-write", 0, "body"); err != nil {
		t.Errorf("checkpoint_save retried with its key: %v", err)
	}
}

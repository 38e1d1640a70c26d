package storetest

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbox/agentbox/internal/store"
)

// scriptedStore answers Get with a counter at version 7 and each Write
// with the next scripted error (nil once the script is used up).
type scriptedStore struct {
	store.Store
	writes []error
	calls  int
}

func (s *scriptedStore) Get(context.Context, store.Key) (*store.Item, error) {
	return &store.Item{PK: "S", SK: "counter", Version: 7}, nil
}

func (s *scriptedStore) Write(_ context.Context, ops []store.Op) error {
	s.calls++
	if len(ops) == 0 || ops[0].Cond != store.AtVersion(7) || ops[0].Item.Version != 8 {
		return errors.New("scriptedStore: counter op is not first or not conditioned on version 7")
	}
	if len(s.writes) == 0 {
		return nil
	}
	err := s.writes[0]
	s.writes = s.writes[1:]
	return err
}

func failN(err error, n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

var counterLost = &store.ConditionFailedError{Index: 0, Key: store.Key{PK: "S", SK: "counter"}}

func appendRow(seq uint64) ([]store.Op, error) {
	return []store.Op{store.Put(&store.Item{PK: "S", SK: "row"}, store.Absent)}, nil
}

func TestAppendRetries(t *testing.T) {
	opaque := errors.New("connection reset")
	for _, tc := range []struct {
		name      string
		writes    []error
		wantSeq   uint64
		wantErr   error
		wantCalls int
	}{
		{"CommitsFirstTime", nil, 8, nil, 1},
		{"RetriesLostCounter", failN(counterLost, 3), 8, nil, 4},
		{"RetriesEngineUnavailable", failN(store.ErrUnavailable, 2), 8, nil, 3},
		{"GivesUpUnavailableAfterAppendAttempts", failN(counterLost, 1000), 0, store.ErrUnavailable, appendAttempts},
		{"OpaqueErrorNotRetried", []error{opaque}, 0, opaque, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &scriptedStore{writes: tc.writes}
				seq, err := appendSeq(t.Context(), s, store.Key{PK: "S", SK: "counter"}, appendRow)
				if seq != tc.wantSeq || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
					t.Errorf("Append (%s) = %d, %v, want %d, %v", tc.name, seq, err, tc.wantSeq, tc.wantErr)
				}
				if s.calls != tc.wantCalls {
					t.Errorf("Append (%s) made %d writes, want %d", tc.name, s.calls, tc.wantCalls)
				}
			})
		})
	}
}

func TestAppendGiveUpTakesSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scriptedStore{writes: failN(counterLost, 1000)}
		start := time.Now()
		appendSeq(t.Context(), s, store.Key{PK: "S", SK: "counter"}, appendRow)
		if d := time.Since(start); d > 13*time.Second {
			t.Errorf("Append on a counter that is always lost gave up after %v, want under 13s", d)
		}
	})
}

func TestAppendShiftsCallerConditionIndex(t *testing.T) {
	taken := store.Key{PK: "S", SK: "taken"}
	s := &scriptedStore{writes: []error{&store.ConditionFailedError{Index: 2, Key: taken}}}
	_, err := appendSeq(t.Context(), s, store.Key{PK: "S", SK: "counter"}, appendRow)
	cf, ok := store.ConditionFailed(err)
	if !ok || cf.Index != 1 || cf.Key != taken {
		t.Errorf("Append with Write failing on op 2 = %v, want *ConditionFailedError{Index: 1, Key: %v}", err, taken)
	}
}

func TestAppendStopsWhenCanceledDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		s := &scriptedStore{writes: failN(counterLost, 1000)}
		go func() {
			time.Sleep(5 * time.Millisecond)
			cancel()
		}()
		_, err := appendSeq(ctx, s, store.Key{PK: "S", SK: "counter"}, appendRow)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Append canceled during backoff = %v, want context.Canceled", err)
		}
		if s.calls >= 50 {
			t.Errorf("Append canceled during backoff made %d writes, want it to stop early", s.calls)
		}
	})
}

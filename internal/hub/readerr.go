package hub

import (
	"context"
	"errors"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// A read changes nothing, so a read that failed is safe to retry, whatever
// the failure: a connection that dropped, an engine that did not answer in
// time. The hub's store marks the failures of its reads (readStore), and
// storageErr answers them TEMPORARILY_UNAVAILABLE with a read's wording,
// where a failed write of unknown outcome stays STORAGE_FAILURE.

// readStore is the hub's store: reads whose failure is neither a refusal
// that the kernel retries (store.ErrUnavailable) nor a request over a
// bound come back as *readError.
type readStore struct{ store.Store }

func (r readStore) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	it, err := r.Store.Get(ctx, k)
	return it, readErr(err)
}

func (r readStore) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	items, err := r.Store.BatchGet(ctx, keys)
	return items, readErr(err)
}

func (r readStore) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	items, err := r.Store.Query(ctx, q)
	return items, readErr(err)
}

// readError is a failed read.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

func readErr(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrTooLarge) ||
		errors.Is(err, store.ErrInvalid) {
		return err
	}
	return &readError{err: err}
}

// readUnavailable answers a failed read.
func readUnavailable(cause error) *apperr.Error {
	e := apperr.Wrap(apperr.TemporarilyUnavailable, "The service could not read what this call needs; nothing was changed.", cause)
	e.NextAction = "Retry shortly: reading again is safe."
	e.RetryAfter = 1
	return e
}

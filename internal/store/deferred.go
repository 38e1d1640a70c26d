package store

import "context"

// Deferred durability.
//
// Some writes are bookkeeping that a crash may lose without harm, as long
// as losing them fails safe: a session's retrieval receipts (which rows
// it was shown) are the one case. Deferred marks a context so that the
// Writes made under it may be answered before they are durable:
//
//   - the answer is decided when it is given (conditions evaluated; a
//     failed condition is still *ConditionFailedError), and every later
//     read of the same store sees the write;
//   - it becomes durable no later than the next Write answered after
//     it, or within a short bound when none comes;
//   - a crash before then loses it whole (never part of it), and a
//     condition that no longer holds when it is committed (a write to the
//     same key queued before it) drops it.
//
// An adapter whose writes are durable when answered (DynamoDB) ignores
// the mark. Writes that the bbolt adapter cannot defer (anything but puts
// of items outside the indexes) run as usual.
func Deferred(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferredKey{}, true)
}

// IsDeferred reports whether ctx carries Deferred's mark.
func IsDeferred(ctx context.Context) bool {
	v, _ := ctx.Value(deferredKey{}).(bool)
	return v
}

type deferredKey struct{}

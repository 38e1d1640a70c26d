// Package store is the storage port: the narrow set of operations the domain
// core needs from a key-value store, and nothing more.
//
// Design note. The port is shaped after DynamoDB's single-table model because
// that is the production engine, but it promises only what both adapters can
// keep:
//
//   - Items live in partitions (PK) ordered by a sort key (SK). Two global
//     secondary indexes (GSI1, GSI2) re-key an item by (GSIxPK, GSIxSK); an
//     item with an empty GSIxPK is absent from that index (a sparse index).
//   - Get, BatchGet and Query on the table are strongly consistent. Queries on
//     an index may lag behind the table in DynamoDB; a caller that promises
//     completeness (a resume cursor) must read the table, not an index.
//   - Write applies up to MaxWriteItems operations atomically: all or none.
//     Each operation may carry a Condition; when any fails, Write returns a
//     *ConditionFailedError naming every failing operation by index.
//   - Items whose ExpiresAt is in the past are absent for every read and every
//     condition, although the engine may still store them until its TTL
//     sweeper removes them.
//
// Optimistic concurrency is the domain's business: Item.Version is a plain
// number the domain sets, and IfVersion(n) compares the stored one.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Engine limits that both adapters enforce before calling the engine, so
// the embedded store cannot accept a write DynamoDB would refuse.
const (
	// MaxWriteItems is DynamoDB's TransactWriteItems item limit.
	MaxWriteItems = 100
	// MaxWriteBytes is DynamoDB's aggregate transaction size limit (4 MB).
	MaxWriteBytes = 4 << 20
	// MaxItemBytes is DynamoDB's item size limit (400 KB).
	MaxItemBytes = 400 << 10
	// MaxBatchGetKeys bounds one BatchGet call; adapters chunk internally
	// (DynamoDB's own BatchGetItem limit is 100 keys).
	MaxBatchGetKeys = 1000
	// MaxPartitionKeyBytes is DynamoDB's limit on a partition key value
	// (PK, GSI1PK, GSI2PK).
	MaxPartitionKeyBytes = 2048
	// MaxSortKeyBytes is DynamoDB's limit on a sort key value (SK, GSI1SK,
	// GSI2SK).
	MaxSortKeyBytes = 1024
)

// Key addresses one item of the table.
type Key struct {
	PK string
	SK string
}

func (k Key) String() string { return k.PK + " / " + k.SK }

// Item is one stored record. Data is opaque to the store (the domain keeps
// JSON there); the other fields are attributes the engine can key, index,
// compare or expire on.
type Item struct {
	PK, SK string
	// GSI1PK/GSI1SK and GSI2PK/GSI2SK place the item in the secondary
	// indexes. An empty partition key leaves the item out of that index.
	GSI1PK, GSI1SK string
	GSI2PK, GSI2SK string
	// Version is the domain's optimistic-concurrency number, compared by
	// IfVersion conditions.
	Version uint64
	// Count is a signed counter that OpAdd updates atomically without a
	// read (unread counters, rate windows).
	Count int64
	// ExpiresAt is a Unix time in seconds after which the item is treated
	// as absent; 0 means it never expires.
	ExpiresAt int64
	// Data is the domain's payload, stored verbatim.
	Data []byte
}

// Key returns the item's table key.
func (it *Item) Key() Key { return Key{PK: it.PK, SK: it.SK} }

// Index names the structure a query reads.
type Index int

const (
	// Table queries the base table on PK/SK, strongly consistent.
	Table Index = iota
	// GSI1 queries the first secondary index on GSI1PK/GSI1SK.
	GSI1
	// GSI2 queries the second secondary index on GSI2PK/GSI2SK.
	GSI2
)

func (i Index) String() string {
	switch i {
	case Table:
		return "table"
	case GSI1:
		return "gsi1"
	case GSI2:
		return "gsi2"
	}
	return fmt.Sprintf("index(%d)", int(i))
}

// Query is a keyset read of one partition of the table or of an index.
//
// The sort-key range is inclusive at both ends; an empty bound is open.
// Keyset pagination is expressed through the bounds: to continue after the
// sort key s, set From to After(s) (or, reading backwards, To to Before(s)).
// Results are ordered by sort key (for an index, ties are broken by the
// table key), ascending unless Reverse. Limit caps the number of items
// returned (0 means no cap; adapters page internally).
type Query struct {
	Index   Index
	PK      string
	From    string
	To      string
	Reverse bool
	Limit   int
}

// After returns the smallest sort key strictly greater than s, for an
// exclusive lower bound.
func After(s string) string { return s + "\x00" }

// PrefixEnd returns an inclusive upper bound covering every key that starts
// with prefix (and sorts below any key that does not).
func PrefixEnd(prefix string) string { return prefix + "\U0010FFFF" }

// Before returns the greatest sort key strictly smaller than s that the
// domain's key encoding can produce, for an exclusive upper bound. Domain
// sort keys never contain the byte 0x00 nor U+10FFFF, so s with its last
// character decremented and U+10FFFF appended is strictly smaller than s and
// larger than any key below s. The result stays valid UTF-8 whenever s is
// (DynamoDB refuses, or silently rewrites, invalid UTF-8 in a key condition),
// so a decrement never borrows into the bytes of a multi-byte character.
func Before(s string) string {
	if s == "" {
		return ""
	}
	r, size := utf8.DecodeLastRuneInString(s)
	head := s[:len(s)-size]
	switch {
	case r == utf8.RuneError && size == 1:
		// Not UTF-8: plain byte arithmetic is the best that can be done.
		b := []byte(s)
		last := len(b) - 1
		if b[last] == 0 {
			return string(b[:last])
		}
		b[last]--
		return string(b) + "\U0010FFFF"
	case r == 0:
		return head
	}
	r--
	if r >= 0xD800 && r <= 0xDFFF {
		r = 0xD7FF // surrogates are not characters; skip below them
	}
	return head + string(r) + "\U0010FFFF"
}

// CondKind is the kind of precondition an operation carries.
type CondKind int

const (
	// Always applies the operation unconditionally.
	Always CondKind = iota
	// IfAbsent requires that no live item exists at the key.
	IfAbsent
	// IfPresent requires a live item at the key.
	IfPresent
	// IfVersion requires a live item at the key whose Version equals
	// Condition.Version.
	IfVersion
)

// Condition is an operation's precondition, evaluated atomically with the
// whole write.
type Condition struct {
	Kind    CondKind
	Version uint64
}

// Unconditional, Absent and Present are the conditions without a version.
var (
	Unconditional = Condition{Kind: Always}
	Absent        = Condition{Kind: IfAbsent}
	Present       = Condition{Kind: IfPresent}
)

// AtVersion requires a live item whose Version is v.
func AtVersion(v uint64) Condition { return Condition{Kind: IfVersion, Version: v} }

// OpKind is what an operation of a Write does.
type OpKind int

const (
	// OpPut stores Item whole, replacing any item at its key.
	OpPut OpKind = iota
	// OpDelete removes the item at Key (absent is not an error unless the
	// condition says so).
	OpDelete
	// OpCheck only evaluates the condition on the item at Key.
	OpCheck
	// OpAdd adds Delta to the Count of the item at Key, creating the item
	// with Count=Delta (and ExpiresAt) when it is absent or expired. It
	// never changes Data or Version.
	OpAdd
)

// Op is one operation of an atomic Write.
type Op struct {
	Kind OpKind
	// Item is the record to store (OpPut); its key is the operation's key.
	Item *Item
	// Key addresses OpDelete, OpCheck and OpAdd.
	Key Key
	// Delta is OpAdd's increment.
	Delta int64
	// ExpiresAt, for OpAdd, sets the item's expiry (0 leaves it unchanged
	// on an existing item, and never-expiring on a new one).
	ExpiresAt int64
	Cond      Condition
}

// Put, Delete, Check and Add build operations.
func Put(it *Item, c Condition) Op { return Op{Kind: OpPut, Item: it, Cond: c} }
func Delete(k Key, c Condition) Op { return Op{Kind: OpDelete, Key: k, Cond: c} }
func Check(k Key, c Condition) Op  { return Op{Kind: OpCheck, Key: k, Cond: c} }
func Add(k Key, delta, expiresAt int64) Op {
	return Op{Kind: OpAdd, Key: k, Delta: delta, ExpiresAt: expiresAt}
}

// OpKey returns the key an operation addresses.
func (o Op) OpKey() Key {
	if o.Kind == OpPut && o.Item != nil {
		return o.Item.Key()
	}
	return o.Key
}

// Reader is the read half of the port, for a reader that must not be
// able to write (the operator view): its methods are Store's.
type Reader interface {
	Get(ctx context.Context, k Key) (*Item, error)
	BatchGet(ctx context.Context, keys []Key) ([]*Item, error)
	Query(ctx context.Context, q Query) ([]*Item, error)
}

// Store is the port. Every method is safe for concurrent use. Errors are
// either one of the typed errors of this package or an opaque engine error
// that callers must treat as a storage failure of unknown outcome.
type Store interface {
	// Get returns the live item at k, or (nil, nil) when there is none.
	Get(ctx context.Context, k Key) (*Item, error)

	// BatchGet returns the live items at keys, in the order of keys, with a
	// nil entry where there is none. Duplicate keys are allowed. At most
	// MaxBatchGetKeys keys, else ErrTooLarge.
	BatchGet(ctx context.Context, keys []Key) ([]*Item, error)

	// Query reads one partition of the table or an index; see Query.
	Query(ctx context.Context, q Query) ([]*Item, error)

	// Write applies ops atomically. No two ops may address the same key.
	// More than MaxWriteItems ops, or more than MaxWriteBytes in total, or
	// an item over MaxItemBytes, is ErrTooLarge before anything is sent.
	// A failed condition is *ConditionFailedError naming every operation
	// whose condition failed, and nothing is written.
	// ErrUnavailable means the engine refused for load or contention and
	// nothing was written; the caller may retry. Any other error, ErrTimeout
	// included, leaves the outcome unknown.
	Write(ctx context.Context, ops []Op) error

	// Close releases the store's resources.
	Close() error
}

// ErrTooLarge reports a request over an engine limit, refused before any
// engine call, or a read over an adapter's bound (the DynamoDB adapter's
// pages per Query), refused before it eats the caller's time budget.
var ErrTooLarge = errors.New("store: request exceeds engine limits")

// ErrUnavailable reports that the engine declined the request for load or
// contention (throttling, a conflicting transaction) and wrote nothing.
var ErrUnavailable = errors.New("store: temporarily unavailable")

// ErrTimeout reports that the engine did not answer within the adapter's
// time budget (or the caller's deadline). For a read (Get, BatchGet, Query)
// nothing happened and a retry may succeed: the domain answers
// TEMPORARILY_UNAVAILABLE. For a Write the outcome is unknown, as for any
// other opaque error: the write may have been applied.
var ErrTimeout = errors.New("store: timed out")

// ErrInvalid reports a malformed request (duplicate keys in one write, an
// empty key): a programming error in the caller.
var ErrInvalid = errors.New("store: invalid request")

// ConditionFailedError reports the operations of a Write whose conditions
// did not hold. Nothing of the write was applied. Every condition of the
// write was evaluated against one state of the store, so Failed is complete:
// a caller can tell, say, a revoked key from a stale version in one round
// trip.
type ConditionFailedError struct {
	// Index is the position of the first failing operation in the Write
	// call (Failed[0]).
	Index int
	// Key is that operation's key.
	Key Key
	// Failed holds the position of every failing operation, ascending and
	// never empty.
	Failed []int
}

// NewConditionFailed returns the error for the failing operations failed
// (ascending, not empty) of ops.
func NewConditionFailed(ops []Op, failed []int) *ConditionFailedError {
	return &ConditionFailedError{Index: failed[0], Key: ops[failed[0]].OpKey(), Failed: failed}
}

func (e *ConditionFailedError) Error() string {
	return fmt.Sprintf("store: condition failed on operation %d", e.Index)
}

// ConditionFailed reports whether err is a failed condition and, if so,
// which operations failed.
func ConditionFailed(err error) (*ConditionFailedError, bool) {
	var cf *ConditionFailedError
	ok := errors.As(err, &cf)
	return cf, ok
}

// ItemSize is the size an item counts for against engine limits, computed
// the way DynamoDB does: attribute names plus values.
func ItemSize(it *Item) int {
	n := 0
	str := func(name, v string) {
		if v != "" {
			n += len(name) + len(v)
		}
	}
	str(AttrPK, it.PK)
	str(AttrSK, it.SK)
	str(AttrGSI1PK, it.GSI1PK)
	str(AttrGSI1SK, it.GSI1SK)
	str(AttrGSI2PK, it.GSI2PK)
	str(AttrGSI2SK, it.GSI2SK)
	n += len(AttrVersion) + 21 + len(AttrCount) + 21
	if it.ExpiresAt != 0 {
		n += len(AttrTTL) + 21
	}
	n += len(AttrData) + len(it.Data)
	return n
}

// CheckWrite validates ops against the engine limits and the port's rules;
// both adapters call it before touching the engine.
func CheckWrite(ops []Op) error {
	if len(ops) == 0 {
		return fmt.Errorf("%w: empty write", ErrInvalid)
	}
	if len(ops) > MaxWriteItems {
		return fmt.Errorf("%w: %d operations", ErrTooLarge, len(ops))
	}
	seen := make(map[Key]struct{}, len(ops))
	total := 0
	for i, op := range ops {
		k := op.OpKey()
		if k.PK == "" || k.SK == "" {
			return fmt.Errorf("%w: operation %d has an empty key", ErrInvalid, i)
		}
		if _, dup := seen[k]; dup {
			return fmt.Errorf("%w: two operations address one key", ErrInvalid)
		}
		seen[k] = struct{}{}
		if err := checkKey(k.PK, MaxPartitionKeyBytes); err != nil {
			return fmt.Errorf("operation %d: %w", i, err)
		}
		if err := checkKey(k.SK, MaxSortKeyBytes); err != nil {
			return fmt.Errorf("operation %d: %w", i, err)
		}
		switch op.Kind {
		case OpPut:
			if op.Item == nil {
				return fmt.Errorf("%w: put %d has no item", ErrInvalid, i)
			}
			if err := checkIndexKeys(op.Item); err != nil {
				return fmt.Errorf("put %d: %w", i, err)
			}
			sz := ItemSize(op.Item)
			if sz > MaxItemBytes {
				return fmt.Errorf("%w: item of %d bytes", ErrTooLarge, sz)
			}
			total += sz
		case OpAdd:
			if op.Cond.Kind != Always {
				return fmt.Errorf("%w: add %d carries a condition", ErrInvalid, i)
			}
			total += len(k.PK) + len(k.SK) + 64
		default:
			total += len(k.PK) + len(k.SK)
		}
	}
	if total > MaxWriteBytes {
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, total)
	}
	return nil
}

// checkKey enforces the key rules both engines need: DynamoDB's length
// limits, and no byte 0x00, which the embedded adapter uses as the
// separator of its composite keys (a NUL inside a key could make two
// different keys, or two partitions, collide there).
func checkKey(v string, max int) error {
	if len(v) > max {
		return fmt.Errorf("%w: key attribute of %d bytes", ErrTooLarge, len(v))
	}
	if strings.IndexByte(v, 0) >= 0 {
		return fmt.Errorf("%w: key attribute contains NUL", ErrInvalid)
	}
	return nil
}

// checkIndexKeys applies checkKey to the index attributes and refuses an
// index partition key without its sort key: DynamoDB cannot store an empty
// index key attribute, so such an item would be in the embedded adapter's
// index and not in DynamoDB's.
func checkIndexKeys(it *Item) error {
	for _, ix := range [...]struct{ pk, sk string }{{it.GSI1PK, it.GSI1SK}, {it.GSI2PK, it.GSI2SK}} {
		if ix.pk != "" && ix.sk == "" {
			return fmt.Errorf("%w: index partition key without sort key", ErrInvalid)
		}
		if err := checkKey(ix.pk, MaxPartitionKeyBytes); err != nil {
			return err
		}
		if err := checkKey(ix.sk, MaxSortKeyBytes); err != nil {
			return err
		}
	}
	return nil
}

// Holds evaluates c against live, the live item at the condition's key (nil
// when there is none or it has expired). It is the meaning of a Condition;
// an adapter that evaluates conditions itself must agree with it.
func Holds(c Condition, live *Item) bool {
	switch c.Kind {
	case IfAbsent:
		return live == nil
	case IfPresent:
		return live != nil
	case IfVersion:
		return live != nil && live.Version == c.Version
	}
	return true
}

// Live reports whether an item with the given expiry is live at now (Unix
// seconds).
func Live(expiresAt, now int64) bool { return expiresAt == 0 || expiresAt > now }

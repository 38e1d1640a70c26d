package bolt

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/internal/store"
	bbolt "go.etcd.io/bbolt"
)

// Query reads one partition of the table or an index; see store.Query.
// The entries the overlay decides are skipped in bbolt and merged from the
// overlay (overlay.go).
//
// The scan seeks near the first candidate and then compares each entry's
// decoded sort key with the bounds, rather than trusting the seek: bounds
// may contain 0x00 (store.After), which is also the separator inside index
// keys, so raw key comparison alone could admit an entry equal to an
// exclusive bound.
func (s *Store) Query(ctx context.Context, q store.Query) ([]*store.Item, error) {
	var bucket []byte
	switch q.Index {
	case store.Table:
		bucket = bucketItems
	case store.GSI1:
		bucket = bucketGSI1
	case store.GSI2:
		bucket = bucketGSI2
	default:
		return nil, fmt.Errorf("%w: query on %v", store.ErrInvalid, q.Index)
	}
	if q.PK == "" || q.Limit < 0 {
		return nil, fmt.Errorf("%w: query needs a partition key and a limit >= 0", store.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bolt: query: %w", err)
	}
	if strings.IndexByte(q.PK, 0) >= 0 {
		// No stored key holds a NUL; such a partition is empty (and must
		// not be read as a prefix of some other index partition).
		return nil, nil
	}
	view := s.group.partition(partKey{q.Index, q.PK}, q.From, q.To) // before the snapshot: see overlay.go
	now := s.now().Unix()
	from, to := []byte(q.From), []byte(q.To)
	var out []*store.Item
	err := s.db.View(func(tx *bbolt.Tx) error {
		items := tx.Bucket(bucketItems)
		index := q.Index != store.Table
		prefix := append([]byte(q.PK), 0)
		c := tx.Bucket(bucket).Cursor()

		var k, v []byte
		step := c.Next
		if !q.Reverse {
			k, v = c.Seek(append(bytes.Clone(prefix), from...))
		} else {
			step = c.Prev
			// Every entry with a sort key <= To sorts below
			// prefix+To+0xFF unless To itself holds a NUL; then start
			// from the partition's end and let the bound check skip.
			var end []byte
			if len(to) > 0 && bytes.IndexByte(to, 0) < 0 {
				end = append(append(bytes.Clone(prefix), to...), 0xFF)
			} else {
				end = append([]byte(q.PK), 1)
			}
			if k, _ = c.Seek(end); k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}

		for n := 0; k != nil && bytes.HasPrefix(k, prefix); k, v = step() {
			if n++; n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			sk := k[len(prefix):]
			if index {
				i := bytes.IndexByte(sk, 0)
				if i < 0 {
					return fmt.Errorf("bolt: corrupt index key %q", k)
				}
				sk = sk[:i]
			}
			if len(to) > 0 && bytes.Compare(sk, to) > 0 {
				if q.Reverse {
					continue
				}
				break
			}
			if bytes.Compare(sk, from) < 0 {
				if q.Reverse {
					break
				}
				continue
			}

			var pk, tsk string
			raw := v
			if index {
				if _, hid := view.hidden[string(v)]; hid {
					continue
				}
				var err error
				if pk, tsk, err = splitTableKey(v); err != nil {
					return err
				}
				if raw = items.Get(v); raw == nil {
					return fmt.Errorf("bolt: index entry %q names a missing item", k)
				}
			} else {
				if _, hid := view.hidden[string(k)]; hid {
					continue
				}
				pk, tsk = q.PK, string(sk)
			}
			it, err := decodeItem(pk, tsk, raw)
			if err != nil {
				return err
			}
			if !store.Live(it.ExpiresAt, now) {
				continue
			}
			out = append(out, it)
			if q.Limit > 0 && len(out) == q.Limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: query: %w", err)
	}
	return view.merge(out, partKey{q.Index, q.PK}, q.From, q.To, q.Reverse, q.Limit, now), nil
}

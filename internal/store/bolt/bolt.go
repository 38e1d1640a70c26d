// Package bolt is the embedded storage adapter: the store port on one bbolt
// file, for `agentbox serve` and the admin CLI on one machine with no AWS.
//
// Layout. Bucket "items" maps pk 0x00 sk to the encoded item, so that one
// partition's items are adjacent and iterate in sort-key byte order (the
// order DynamoDB uses). Buckets "gsi1" and "gsi2" map
// gsipk 0x00 gsisk 0x00 pk 0x00 sk to the table key, so an index partition
// iterates by index sort key with ties broken by table key. Keys never
// contain 0x00 (store.CheckWrite refuses it), which makes the separators
// unambiguous. An item is in an index only when both its index keys are set.
//
// Consistency. Writes run one group at a time (shared among concurrent
// Writes, see group.go): each Write's conditions are all evaluated first,
// against everything committed before it, then every item is changed, or
// nothing is. A group is durable once its record is in the journal
// (journal.go); its items wait in the overlay (overlay.go), which every
// read merges above its bbolt snapshot, until a checkpoint moves them
// into bbolt. So reads (tables and indexes alike) are strongly consistent
// and Write is serializable, stronger than the port requires.
//
// Expiry. Items whose ExpiresAt has passed stay in the file and are skipped
// by every read and treated as absent by every condition; a later put or
// add at the key replaces them. Sweep (run periodically by the local
// server) deletes them, as DynamoDB's TTL process does.
package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentbox/agentbox/internal/store"
	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrLocked reports that another process (or another Open in this one)
// holds the database file, typically the running server when the admin CLI
// tries to open it. Test with errors.Is.
var ErrLocked = errors.New("bolt: database file is locked by another process")

// Options configures Open. The zero value is ready to use.
type Options struct {
	// Now is the clock that decides expiry (default time.Now). Tests
	// inject a controllable clock.
	Now func() time.Time
	// Timeout is how long Open waits for the file lock before failing with
	// ErrLocked (default 1s). bbolt itself would wait forever, which would
	// leave a second process hanging silently.
	Timeout time.Duration
	// SerialCommit gives every Write its own bbolt commit instead of
	// sharing commits among concurrent Writes (group.go). Only benchmarks
	// comparing the two want it.
	SerialCommit bool
}

var (
	bucketItems = []byte("items")
	bucketGSI1  = []byte("gsi1")
	bucketGSI2  = []byte("gsi2")
	// bucketMeta holds keyJournalSeq: the sequence number of the last
	// journal record checkpointed into this file.
	bucketMeta    = []byte("meta")
	keyJournalSeq = []byte("journal-seq")
)

// allocSize is how much bbolt grows its file by when it needs pages:
// bbolt's default, 16 MiB, would give a store of a few thousand messages
// a file (and a mapping) many times its data.
const allocSize = 1 << 20

// Store is the bbolt adapter of store.Store. It is safe for concurrent use.
type Store struct {
	db    *bbolt.DB
	now   func() time.Time
	group *committer
}

var _ store.Store = (*Store)(nil)

// Open opens or creates the database at path (mode 0600: it holds key
// hashes and every message). It fails with ErrLocked when the file is held
// by another open store for longer than opts.Timeout.
func Open(path string, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:      opts.Timeout,
		FreelistType: bbolt.FreelistMapType,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s (waited %v)", ErrLocked, path, opts.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	db.AllocSize = allocSize
	var ckpt uint64
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketItems, bucketGSI1, bucketGSI2, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if v := tx.Bucket(bucketMeta).Get(keyJournalSeq); len(v) == 8 {
			ckpt = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("bolt: initialize %s: %w", path, err)
	}
	s, err := recoverJournal(db, path+journalSuffix, ckpt, opts)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// recoverJournal opens the two journals, replays what they hold after
// ckpt into the overlay and checkpoints it, so the store starts with an
// empty overlay and both journals rewound.
func recoverJournal(db *bbolt.DB, path string, ckpt uint64, opts Options) (*Store, error) {
	j, err := openJournal(path)
	if err != nil {
		return nil, err
	}
	spare, err := openJournal(path + spareSuffix)
	if err != nil {
		_ = j.f.Close()
		return nil, err
	}
	c := newCommitter(db, j, spare, ckpt, opts.Now, opts.SerialCommit)
	err = db.View(func(tx *bbolt.Tx) error {
		items := tx.Bucket(bucketItems)
		c.seq, err = replay(ckpt, []*journal{j, spare}, func(changes []change) {
			for _, ch := range changes {
				c.ov.set(ch.tk, ch.it, func() *store.Item {
					pk, sk, _ := splitTableKey([]byte(ch.tk))
					it, _ := load(items, store.Key{PK: pk, SK: sk})
					return it // a corrupt item is not in any index here
				})
			}
		})
		return err
	})
	if err == nil {
		err = c.checkpoint()
	}
	// Both journals hold only checkpointed records now (or none).
	for _, jj := range []*journal{c.journal, c.spare} {
		if err == nil {
			err = jj.rewind()
		}
	}
	if err != nil {
		_ = j.f.Close()
		_ = spare.f.Close()
		return nil, err
	}
	return &Store{db: db, now: opts.Now, group: c}, nil
}

// putSeq records seq as checkpointed, in the checkpoint's transaction.
func putSeq(tx *bbolt.Tx, seq uint64) error {
	return tx.Bucket(bucketMeta).Put(keyJournalSeq, binary.BigEndian.AppendUint64(nil, seq))
}

// Close commits the deferred Writes not yet committed, waits for the
// checkpoint in flight, checkpoints the rest and closes the files,
// waiting for transactions in flight. After a failed checkpoint the
// journals still hold every committed Write: the next Open replays them.
func (s *Store) Close() error {
	err := s.group.close()
	for _, j := range []*journal{s.group.journal, s.group.spare} {
		if jerr := j.f.Close(); jerr != nil && err == nil {
			err = fmt.Errorf("bolt: close journal: %w", jerr)
		}
	}
	if dberr := s.db.Close(); dberr != nil && err == nil {
		err = fmt.Errorf("bolt: close: %w", dberr)
	}
	return err
}

// Get returns the live item at k, or (nil, nil).
func (s *Store) Get(ctx context.Context, k store.Key) (*store.Item, error) {
	items, err := s.BatchGet(ctx, []store.Key{k})
	if err != nil {
		return nil, err
	}
	return items[0], nil
}

// BatchGet returns the live items at keys, in order, nil where none; all
// from one snapshot.
func (s *Store) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	if len(keys) > store.MaxBatchGetKeys {
		return nil, fmt.Errorf("%w: %d keys", store.ErrTooLarge, len(keys))
	}
	for _, k := range keys {
		if k.PK == "" || k.SK == "" {
			return nil, fmt.Errorf("%w: empty key", store.ErrInvalid)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bolt: get: %w", err)
	}
	now := s.now().Unix()
	out := make([]*store.Item, len(keys))
	over := s.group.above(keys) // before the snapshot: see overlay.go
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketItems)
		for i, k := range keys {
			var it *store.Item
			if over != nil && over[i].ok {
				it = over[i].it
			} else {
				var err error
				if it, err = load(b, k); err != nil {
					return err
				}
			}
			if it != nil && store.Live(it.ExpiresAt, now) {
				out[i] = it
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: get: %w", err)
	}
	return out, nil
}

// load returns the item stored at k, live or expired, or nil.
func load(b *bbolt.Bucket, k store.Key) (*store.Item, error) {
	raw := b.Get(tableKey(k.PK, k.SK))
	if raw == nil {
		return nil, nil
	}
	return decodeItem(k.PK, k.SK, raw)
}

// tableKey is the items bucket key of (pk, sk).
func tableKey(pk, sk string) []byte {
	b := make([]byte, 0, len(pk)+1+len(sk))
	b = append(b, pk...)
	b = append(b, 0)
	return append(b, sk...)
}

// splitTableKey is tableKey's inverse.
func splitTableKey(k []byte) (pk, sk string, err error) {
	i := strings.IndexByte(string(k), 0)
	if i < 0 {
		return "", "", fmt.Errorf("bolt: corrupt table key %q", k)
	}
	return string(k[:i]), string(k[i+1:]), nil
}

// indexKey is the index bucket key of an item indexed at (gpk, gsk).
func indexKey(gpk, gsk, pk, sk string) []byte {
	b := make([]byte, 0, len(gpk)+len(gsk)+len(pk)+len(sk)+3)
	b = append(b, gpk...)
	b = append(b, 0)
	b = append(b, gsk...)
	b = append(b, 0)
	b = append(b, pk...)
	b = append(b, 0)
	return append(b, sk...)
}

// Commits returns how many group commits (journal appends) s has made
// since it was opened. Each pays one fdatasync, so with the number of
// Writes it tells how well group commit shares them (the server's
// benchmarks report it); checkpoints are not counted.
func (s *Store) Commits() uint64 { return s.group.commits.Load() }

// Syncs returns how many fdatasyncs s's Writes have cost since it was
// opened: one per journal append, two per checkpoint (bbolt's commit).
func (s *Store) Syncs() uint64 { return s.group.commits.Load() + 2*s.group.checkpoints.Load() }

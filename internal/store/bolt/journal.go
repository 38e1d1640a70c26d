package bolt

// The journal.
//
// A bbolt commit writes every page a transaction touched, scattered over
// the file, and pays two fdatasyncs. A group of Writes is instead made
// durable by appending one record to the journal, <db>-journal beside
// the bbolt file, and paying one fdatasync; the committed items wait in
// the overlay (overlay.go) until a checkpoint applies them to bbolt in
// one transaction, many groups at a time, and the journal starts over.
//
// Record: length (uint32, of what follows the checksum), CRC32C (uint32,
// of the length and what follows), sequence number (uint64), then the
// group's changes: per key, a kind byte (put or delete), PK and SK as
// uvarint-length-prefixed strings and, for a put, the encoded item
// (codec.go) length-prefixed. A change is the key's whole new state, never
// a delta, so applying a record twice equals applying it once.
//
// Crash safety rests on this order:
//
//  1. A group's record is written and fdatasynced before any member of
//     the group is answered (and before its items enter the overlay, so
//     no reader sees them first).
//  2. A checkpoint commits the overlay to bbolt together with the
//     sequence number of the last record it holds (bucket "meta"), in
//     one bbolt transaction, synced by bbolt; only then is the overlay
//     emptied and the journal truncated to nothing.
//  3. Open replays the records after the checkpointed sequence number,
//     consecutive and with valid checksums, from the start of the
//     journal, and stops at the first record that is not: a crash in the
//     middle of an append leaves a torn record, which was never answered.
//     The truncation is not synced: a crash may bring back records from
//     before the checkpoint, which the sequence number skips (or, behind
//     newer records, ends the replay at).
//
// The journal is appended to, not preallocated: on the ext4 this was
// measured on, an fdatasync after overwriting a block of a zero-filled
// 512 KiB file wrote about the whole file, against about 6 KB for an
// append that grows the file.
//
// After a failed append or checkpoint the store refuses every later
// Write (errFailed): the state on disk is unknown, and answering success
// for something not durable is the one thing the store must never do.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentbox/agentbox/internal/store"
)

// journalSuffix names the journal beside the database file.
const journalSuffix = "-journal"

// checkpointBytes is the journal size past which a group's leader
// checkpoints after answering its group.
const checkpointBytes = 256 << 10

const recordHeader = 16 // length, checksum, sequence number

// Change kinds in a record.
const (
	changeDelete = 0
	changePut    = 1
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// journalFile is what the journal needs of its file; tests replace it to
// inject the faults a real file cannot produce on demand.
type journalFile interface {
	io.ReaderAt
	io.WriterAt
	// Datasync makes written data durable (fdatasync where there is one).
	Datasync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// osJournal is the journal's real file.
type osJournal struct{ *os.File }

func (f osJournal) Datasync() error { return datasync(f.File) }

// journal appends records at off.
type journal struct {
	f   journalFile
	off int64 // where the next record goes
}

// change is one key's new state in a record: it nil deletes.
type change struct {
	tk string // tableKey
	it *store.Item
}

// encodeRecord builds the record of seq holding changes.
func encodeRecord(seq uint64, changes []change) []byte {
	n := recordHeader
	for _, ch := range changes {
		n += 1 + 2*binary.MaxVarintLen64 + len(ch.tk) + binary.MaxVarintLen64
		if ch.it != nil {
			n += 8*binary.MaxVarintLen64 + len(ch.it.GSI1PK) + len(ch.it.GSI1SK) + len(ch.it.GSI2PK) + len(ch.it.GSI2SK) + len(ch.it.Data)
		}
	}
	b := make([]byte, recordHeader, n)
	binary.LittleEndian.PutUint64(b[8:], seq)
	for _, ch := range changes {
		pk, sk, _ := splitTableKey([]byte(ch.tk))
		kind := byte(changeDelete)
		if ch.it != nil {
			kind = changePut
		}
		b = append(b, kind)
		b = binary.AppendUvarint(b, uint64(len(pk)))
		b = append(b, pk...)
		b = binary.AppendUvarint(b, uint64(len(sk)))
		b = append(b, sk...)
		if ch.it != nil {
			enc := encodeItem(ch.it)
			b = binary.AppendUvarint(b, uint64(len(enc)))
			b = append(b, enc...)
		}
	}
	binary.LittleEndian.PutUint32(b[0:], uint32(len(b)-8))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(b[8:], crc32c)^crc32.Checksum(b[0:4], crc32c))
	return b
}

// errBadRecord ends a replay: what follows is not a whole record.
var errBadRecord = errors.New("bolt: journal record torn or invalid")

// decodeRecord reads the record at the start of b, returning its sequence
// number, its changes and its length; errBadRecord when b does not start
// with a whole, valid record.
func decodeRecord(b []byte) (seq uint64, changes []change, n int, err error) {
	if len(b) < recordHeader {
		return 0, nil, 0, errBadRecord
	}
	size := int(binary.LittleEndian.Uint32(b[0:]))
	if size < recordHeader-8 || size > len(b)-8 {
		return 0, nil, 0, errBadRecord
	}
	body := b[8 : 8+size]
	if crc32.Checksum(body, crc32c)^crc32.Checksum(b[0:4], crc32c) != binary.LittleEndian.Uint32(b[4:]) {
		return 0, nil, 0, errBadRecord
	}
	seq = binary.LittleEndian.Uint64(body)
	p := body[8:]
	str := func() (string, bool) {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return "", false
		}
		s := string(p[k : k+int(l)])
		p = p[k+int(l):]
		return s, true
	}
	for len(p) > 0 {
		kind := p[0]
		p = p[1:]
		pk, ok1 := str()
		sk, ok2 := str()
		if !ok1 || !ok2 || kind > changePut {
			return 0, nil, 0, errBadRecord
		}
		ch := change{tk: string(tableKey(pk, sk))}
		if kind == changePut {
			enc, ok := str()
			if !ok {
				return 0, nil, 0, errBadRecord
			}
			if ch.it, err = decodeItem(pk, sk, []byte(enc)); err != nil {
				return 0, nil, 0, err
			}
		}
		changes = append(changes, ch)
	}
	return seq, changes, 8 + size, nil
}

// openJournal opens (creating, zero-filled) the journal at path. A journal
// it creates has its directory synced before it holds a record: fdatasync
// makes a file's data durable, not the directory entry that names it, and
// a power loss must not take an acknowledged group away with the name.
func openJournal(path string) (*journal, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("bolt: open journal: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := syncDir(filepath.Dir(path)); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("bolt: create journal: %w", err)
		}
	}
	return &journal{f: osJournal{f}}, nil
}

// syncDir makes the entries of directory dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// replay calls apply for each record after seq ckpt, in order, and
// returns the last sequence number applied (ckpt when none). The journal
// is then at the file's end: the checkpoint that follows a replay
// truncates all of it, torn or stale records included.
func (j *journal) replay(ckpt uint64, apply func([]change)) (uint64, error) {
	fi, err := j.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("bolt: journal: %w", err)
	}
	buf := make([]byte, fi.Size())
	if _, err := j.f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("bolt: read journal: %w", err)
	}
	j.off = fi.Size()
	last := ckpt
	for p := buf; ; {
		seq, changes, n, err := decodeRecord(p)
		if errors.Is(err, errBadRecord) {
			return last, nil // a torn append, or the end
		}
		if err != nil {
			return 0, fmt.Errorf("bolt: replay journal: %w", err)
		}
		p = p[n:]
		switch {
		case seq == last+1:
			apply(changes)
			last = seq
		case last == ckpt && seq <= ckpt:
			continue // checkpointed already
		case seq > last+1:
			return 0, fmt.Errorf("bolt: replay journal: record %d follows %d: records are missing", seq, last)
		default:
			return last, nil // a record from before the last checkpoint
		}
	}
}

// append writes rec at the journal's end and makes it durable.
func (j *journal) append(rec []byte) error {
	if _, err := j.f.WriteAt(rec, j.off); err != nil {
		return fmt.Errorf("bolt: append to journal: %w", err)
	}
	if err := j.f.Datasync(); err != nil {
		return fmt.Errorf("bolt: sync journal: %w", err)
	}
	j.off += int64(len(rec))
	return nil
}

// rewind starts the journal over after a checkpoint.
func (j *journal) rewind() error {
	if j.off == 0 {
		return nil
	}
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("bolt: truncate journal: %w", err)
	}
	j.off = 0
	return nil
}

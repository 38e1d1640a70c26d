package bolt

// The journal.
//
// A bbolt commit writes every page a transaction touched, scattered over
// the file, and pays two fdatasyncs. A group of Writes is instead made
// durable by appending one record to a journal beside the bbolt file and
// paying one fdatasync; the committed items wait in the overlay
// (overlay.go) until a checkpoint applies them to bbolt in one
// transaction, many groups at a time.
//
// There are two journals, <db>-journal and <db>-journal.1, and they take
// turns. When the one appended to passes checkpointAt, the group's leader
// freezes the overlay (it becomes a read-only layer below a fresh one),
// switches the appends to the other journal, which is empty, and goes
// on; a background goroutine checkpoints the frozen layer, then drops it
// and truncates its journal. So a checkpoint holds no group. At most one
// is in flight: a leader that finds the new journal full while one runs
// waits for it (backpressure), holding the next group, which bounds the
// memory and the journals when bbolt falls behind. Close, Sweep and Open
// wait for the checkpoint in flight and checkpoint the rest the same way.
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
//     no reader sees them first). Sequence numbers run on across the
//     switch: each journal holds a consecutive run of them.
//  2. A checkpoint commits the frozen layer to bbolt together with the
//     sequence number of the last record it holds (bucket "meta"), in
//     one bbolt transaction, synced by bbolt; only then is the layer
//     dropped and its journal truncated to nothing. Records appended to
//     the other journal meanwhile have higher sequence numbers and are
//     not in that transaction; they wait for the next checkpoint.
//  3. Open reads each journal from its start up to its first record that
//     is torn, invalid or lower than the one before (a stale tail), takes
//     the records of both after the checkpointed sequence number, in
//     sequence order, and replays them; they must follow it without a
//     gap, or Open fails (records were lost, and a store without them
//     must not serve). A crash in the middle of an append leaves a torn
//     record, which was never answered. Truncations are not synced: a
//     crash may bring back records from before the checkpoint, at a
//     journal's start or behind newer records, and the sequence number
//     skips them.
//
// The journal is appended to, not preallocated: on the ext4 this was
// measured on, an fdatasync after overwriting a block of a zero-filled
// 512 KiB file wrote about the whole file, against about 6 KB for an
// append that grows the file.
//
// After a failed append or checkpoint (in the background or not) the
// store refuses every later Write (errFailed): the state on disk is
// unknown, and answering success for something not durable is the one
// thing the store must never do. Reads go on: a failed checkpoint's
// layer stays, and the journals keep its records for the next Open.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentbox/agentbox/internal/store"
)

// journalSuffix names the journal beside the database file; the second
// journal, which takes the appends while the first one's records are
// checkpointed (and the other way round), adds spareSuffix.
const (
	journalSuffix = "-journal"
	spareSuffix   = ".1"
)

// checkpointBytes is the journal size past which a group's leader
// starts a checkpoint after answering its group.
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
	var enc []byte // one item's encoding, reused across the changes
	for _, ch := range changes {
		// ch.tk is a tableKey built by this package: split in place.
		pk, sk := "", ""
		if i := strings.IndexByte(ch.tk, 0); i >= 0 {
			pk, sk = ch.tk[:i], ch.tk[i+1:]
		}
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
			enc = appendItem(enc[:0], ch.it)
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

// record is one decoded journal record.
type record struct {
	seq     uint64
	changes []change
}

// records returns the whole records from the journal's start, in order,
// up to the first that is torn or invalid or that does not follow the one
// before it: a record with a lower sequence number is a stale tail, left
// behind a truncation that did not reach the disk. The journal is then at
// the file's end.
func (j *journal) records() ([]record, error) {
	fi, err := j.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("bolt: journal: %w", err)
	}
	buf := make([]byte, fi.Size())
	if _, err := j.f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("bolt: read journal: %w", err)
	}
	j.off = fi.Size()
	var out []record
	for p := buf; ; {
		seq, changes, n, err := decodeRecord(p)
		if errors.Is(err, errBadRecord) {
			return out, nil // a torn append, or the end
		}
		if err != nil {
			return nil, fmt.Errorf("bolt: replay journal: %w", err)
		}
		p = p[n:]
		if len(out) > 0 {
			prev := out[len(out)-1].seq
			if seq <= prev {
				return out, nil // a stale tail
			}
			if seq > prev+1 {
				return nil, fmt.Errorf("bolt: replay journal: record %d follows %d: records are missing", seq, prev)
			}
		}
		out = append(out, record{seq, changes})
	}
}

// replay calls apply for each record after seq ckpt found in the
// journals, in sequence order, and returns the last sequence number
// applied (ckpt when none). Each journal holds a consecutive run of
// records (stale ones aside); together, those after ckpt must continue
// ckpt without a gap, or a journal lost records and Open fails rather
// than serve a store without them. The journals are then at their files'
// ends: the checkpoint that follows a replay truncates them, torn or
// stale records included.
func replay(ckpt uint64, journals []*journal, apply func([]change)) (uint64, error) {
	var recs []record
	for _, j := range journals {
		rs, err := j.records()
		if err != nil {
			return 0, err
		}
		for _, r := range rs {
			if r.seq > ckpt {
				recs = append(recs, r)
			}
		}
	}
	slices.SortFunc(recs, func(a, b record) int { return cmp.Compare(a.seq, b.seq) })
	last := ckpt
	for _, r := range recs {
		if r.seq != last+1 {
			return 0, fmt.Errorf("bolt: replay journal: record %d follows %d: records are missing", r.seq, last)
		}
		apply(r.changes)
		last = r.seq
	}
	return last, nil
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

package bolt

import bbolt "go.etcd.io/bbolt"

// BeforeFirstGroup makes the next leader call f, with a function returning
// how many Writes are queued, before it takes the queue; later leaders do
// not. Tests use it to hold the leader until the group they want has
// queued.
func BeforeFirstGroup(s *Store, f func(queued func() int)) {
	s.group.beforeGroup = func(c *committer) {
		c.beforeGroup = nil
		f(c.queued)
	}
}

// PutRaw stores raw at (pk, sk) bypassing the item encoding, to plant a
// corrupt item.
func PutRaw(s *Store, pk, sk string, raw []byte) error {
	return s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketItems).Put(tableKey(pk, sk), raw)
	})
}

// InGroup makes every commit group call f inside its transaction, before
// applying its members.
func InGroup(s *Store, f func()) { s.group.inGroup = f }

// CheckpointAt makes s checkpoint whenever its journal holds n bytes.
func CheckpointAt(s *Store, n int64) { s.group.checkpointAt = n }

// Abandon closes s's files the way a crash would: without committing the
// queue, checkpointing or rewinding the journal.
func Abandon(s *Store) error {
	s.group.lead <- struct{}{}
	if err := s.group.journal.f.Close(); err != nil {
		return err
	}
	return s.db.Close()
}

// JournalPath is the journal beside the database at path.
func JournalPath(path string) string { return path + journalSuffix }

// FailJournal makes s's journal file fail: its next writes when write,
// else its next syncs, with err. A real file cannot be made to fail on
// demand; this is the one fault injector.
func FailJournal(s *Store, write bool, err error) {
	s.group.journal.f = faultyJournal{journalFile: s.group.journal.f, write: write, err: err}
}

type faultyJournal struct {
	journalFile
	write bool
	err   error
}

func (f faultyJournal) WriteAt(p []byte, off int64) (int, error) {
	if f.write {
		// A short write: part of the record reaches the file.
		n, _ := f.journalFile.WriteAt(p[:len(p)/2], off)
		return n, f.err
	}
	return f.journalFile.WriteAt(p, off)
}

func (f faultyJournal) Datasync() error {
	if !f.write {
		return f.err
	}
	return f.journalFile.Datasync()
}

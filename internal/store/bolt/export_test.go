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
// queue, checkpointing or rewinding the journals. A checkpoint in flight
// either commits before the file closes or fails.
func Abandon(s *Store) error {
	s.group.lead <- struct{}{}
	for _, j := range []*journal{s.group.journal, s.group.spare} {
		if err := j.f.Close(); err != nil {
			return err
		}
	}
	return s.db.Close()
}

// JournalPaths are the two journals beside the database at path.
func JournalPaths(path string) []string {
	return []string{path + journalSuffix, path + journalSuffix + spareSuffix}
}

// CheckpointHook makes each background checkpoint of s call f before its
// bbolt transaction (committed false; an error fails the checkpoint) and
// after its commit, before it drops the frozen layer and truncates its
// journal (committed true).
func CheckpointHook(s *Store, f func(committed bool) error) { s.group.checkpointHook = f }

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

// WaitCheckpoint waits for s's background checkpoint in flight, if any.
func WaitCheckpoint(s *Store) {
	s.group.lead <- struct{}{}
	defer func() { <-s.group.lead }()
	s.group.waitCheckpoint()
}

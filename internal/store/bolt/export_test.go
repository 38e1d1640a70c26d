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

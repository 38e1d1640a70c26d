package bolt_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
)

// BenchmarkWrite measures conditional puts from W concurrent writers,
// with commits shared (the default) and one commit per Write. It reports
// fdatasync/op: bbolt pays two per commit (pages, then meta), which
// `strace -c -f -e fdatasync` on the benchmark binary confirms.
func BenchmarkWrite(b *testing.B) {
	for _, serial := range []bool{false, true} {
		for _, w := range []int{1, 4, 16} {
			name := fmt.Sprintf("group/W=%d", w)
			if serial {
				name = fmt.Sprintf("serial/W=%d", w)
			}
			b.Run(name, func(b *testing.B) {
				s := openStore(b, filepath.Join(b.TempDir(), "agentbox.db"), bolt.Options{SerialCommit: serial})
				defer s.Close()
				ctx := context.Background()
				var next atomic.Int64
				before := s.Syncs()
				b.ResetTimer()
				var wg sync.WaitGroup
				for range w {
					wg.Go(func() {
						for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
							it := &store.Item{PK: fmt.Sprintf("p%d", n%64), SK: fmt.Sprintf("%012d", n), Data: make([]byte, 256)}
							if err := s.Write(ctx, []store.Op{store.Put(it, store.Absent)}); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(s.Syncs()-before)/float64(b.N), "fdatasync/op")
			})
		}
	}
}

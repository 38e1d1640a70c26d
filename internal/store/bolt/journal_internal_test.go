package bolt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentbox/agentbox/internal/store"
)

// TestJournalTornTail: a crash in the middle of an append leaves a torn
// record; Open replays every whole record before it and nothing from it
// on, and a damaged record in the middle ends the replay there too.
func TestJournalTornTail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage int // the record damaged
		keep   int // writes found after reopening
	}{
		{"torn last record", 9, 9},
		{"bad middle record", 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "agentbox.db")
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				if err := s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: fmt.Sprint(i), Data: []byte("payload")}, store.Absent)}); err != nil {
					t.Fatal(err)
				}
			}
			s.group.lead <- struct{}{} // crash: no checkpoint
			_ = s.group.journal.f.Close()
			_ = s.db.Close()

			raw, err := os.ReadFile(path + journalSuffix)
			if err != nil {
				t.Fatal(err)
			}
			off := 0
			for range tc.damage {
				_, _, n, err := decodeRecord(raw[off:])
				if err != nil {
					t.Fatalf("decoding the journal: %v", err)
				}
				off += n
			}
			_, _, n, err := decodeRecord(raw[off:])
			if err != nil {
				t.Fatalf("decoding record %d: %v", tc.damage, err)
			}
			// The second half of the record never reached the disk.
			clear(raw[off+n/2 : off+n])
			if err := os.WriteFile(path+journalSuffix, raw, 0o600); err != nil {
				t.Fatal(err)
			}

			s, err = Open(path, Options{})
			if err != nil {
				t.Fatalf("Open after a torn append = %v, want nil", err)
			}
			defer s.Close()
			for i := range 10 {
				it, err := s.Get(ctx, store.Key{PK: "P", SK: fmt.Sprint(i)})
				if want := i < tc.keep; err != nil || (it != nil) != want {
					t.Errorf("Get(P/%d) after replay = %+v, %v, want present: %v", i, it, err, want)
				}
			}
			if err := s.Write(ctx, []store.Op{store.Put(&store.Item{PK: "P", SK: "after"}, store.Absent)}); err != nil {
				t.Errorf("Write after replaying a torn journal = %v, want nil", err)
			}
		})
	}
}

package bolt

import (
	"path/filepath"
	"testing"
)

// TestSyncsEveryCommit: an acknowledged write must survive power loss, not
// only a process crash (TestCrashDurability), so every commit is fsynced:
// the database must not run with NoSync, and Open must not relax it.
func TestSyncsEveryCommit(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "agentbox.db"), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if s.db.NoSync {
		t.Fatalf("bbolt NoSync = true, want every commit fsynced")
	}
}

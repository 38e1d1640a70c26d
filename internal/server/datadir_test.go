package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/server"
)

// TestWritableDataDirRefused: an existing data directory that group or
// others may write is refused before the store or the admin socket is
// created in it; one only its owner may write is served.
func TestWritableDataDirRefused(t *testing.T) {
	for _, tc := range []struct {
		mode   os.FileMode
		refuse bool
	}{
		{0o777, true}, {0o770, true}, {0o702, true}, {0o720, true},
		{0o700, false}, {0o750, false}, {0o755, false},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		// Chmod, not Mkdir's mode: the umask must not soften the case.
		if err := os.Chmod(dir, tc.mode); err != nil {
			t.Fatal(err)
		}
		s, err := server.Start(server.Config{Addr: "127.0.0.1:0", DataDir: dir})
		if !tc.refuse {
			if err != nil {
				t.Errorf("Start on a %#o data directory: %v, want it served", tc.mode, err)
				continue
			}
			_ = s.Shutdown(context.Background())
			continue
		}
		if err == nil {
			_ = s.Shutdown(context.Background())
			t.Errorf("Start on a %#o data directory succeeded, want it refused", tc.mode)
			continue
		}
		if !strings.Contains(err.Error(), "writable by group or others") || !strings.Contains(err.Error(), "chmod 700") {
			t.Errorf("Start on a %#o data directory: %q, want the reason and the fix", tc.mode, err)
		}
		for _, name := range []string{admincli.DBName, admincli.SocketName} {
			if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
				t.Errorf("%#o data directory: %s was created (stat: %v), want nothing created", tc.mode, name, err)
			}
		}
	}
}

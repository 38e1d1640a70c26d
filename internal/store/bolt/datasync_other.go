//go:build !linux

package bolt

import "os"

// datasync is fsync where the platform has no fdatasync.
func datasync(f *os.File) error { return f.Sync() }

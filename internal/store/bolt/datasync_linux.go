package bolt

import (
	"os"
	"syscall"
)

// datasync is fdatasync: the journal's appends need their data and size
// durable, not the file's times.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

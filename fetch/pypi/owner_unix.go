//go:build !windows

package pypi

import (
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// euid is this process's user, asked once (every file of an install
// is checked against it).
var euid = sync.OnceValue(os.Geteuid)

// mine reports whether this user owns a file.
func mine(fi fs.FileInfo) bool {
	s, ok := fi.Sys().(*syscall.Stat_t)
	return ok && s.Uid == uint32(euid())
}

// device is the file system a file is on.
func device(fi fs.FileInfo) uint64 {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev)
	}
	return 0
}

// noFollow opens a cache file without following a link at its name or
// waiting on a planted FIFO.
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

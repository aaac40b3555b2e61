//go:build !windows

package pypi

import (
	"io/fs"
	"syscall"
)

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

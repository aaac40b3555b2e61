//go:build !windows

package store

import (
	"os"
	"syscall"
)

// openOwnFile opens a file the store wrote (a receipt, a file list)
// without following a link or waiting on a pipe: a FIFO or a link put in
// its place must not hang list, doctor or the prompt hook.
func openOwnFile(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

//go:build unix

package cudabin

import (
	"os"
	"syscall"
)

// Opening never waits: a named pipe or device put where a library or a
// framework's file should be is opened without blocking, then refused by
// its descriptor's mode.
const (
	openFlags       = os.O_RDONLY | syscall.O_NONBLOCK
	openFlagsNoLink = openFlags | syscall.O_NOFOLLOW
)

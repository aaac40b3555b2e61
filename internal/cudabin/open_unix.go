//go:build unix

package cudabin

import (
	"os"
	"syscall"
)

// Opening never waits: a named pipe or device put where a library should
// be is opened without blocking, then refused by its descriptor's mode.
// (A framework's Python files are read through internal/venv.)
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

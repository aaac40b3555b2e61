//go:build unix

package resolve

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without waiting for a writer (a
// named pipe swapped in after the check) and without taking a terminal.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

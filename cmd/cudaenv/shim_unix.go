//go:build !windows

package main

import (
	"fmt"
	"io"
	"syscall"

	"github.com/cudaenv/cudaenv/shims"
)

// execShim replaces this process with the real executable, so arguments,
// standard streams, signals and the exit status are its own.
func execShim(name string, t shims.Target, stderr io.Writer) int {
	err := syscall.Exec(t.Path, t.Args, t.Env)
	fmt.Fprintf(stderr, "cudaenv: %s: exec %s: %v\n", name, t.Path, err)
	return 126
}

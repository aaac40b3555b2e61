//go:build !windows

package shims

import (
	"io"
	"syscall"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// Exec replaces this process with the target, so its arguments, standard
// streams, signals and exit status are the command's own. It returns only
// on failure.
func Exec(name string, t Target, stderr io.Writer) int {
	err := syscall.Exec(t.Path, t.Args, t.Env)
	io.WriteString(stderr, "cudaenv: "+termsafe.Escape(name+": exec "+t.Path+": "+err.Error())+"\n")
	return 126
}

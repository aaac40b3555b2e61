//go:build !windows

package shims

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// Exec replaces this process with the target, so its arguments, standard
// streams, signals and exit status are the command's own. It returns only
// on failure.
func Exec(name string, t Target, stderr io.Writer) int {
	err := syscall.Exec(t.Path, t.Args, t.Env)
	msg := name + ": exec " + t.Path + ": " + err.Error()
	if _, serr := os.Stat(t.Path); errors.Is(err, syscall.ENOENT) && errors.Is(serr, fs.ErrNotExist) {
		// Resolved a moment ago: an uninstall of its version ran since
		// (ENOENT alone may also be a script's missing interpreter).
		msg = name + ": " + t.Path + " was removed as it started (its version was uninstalled meanwhile); run it again to use what is selected now"
	}
	io.WriteString(stderr, "cudaenv: "+termsafe.Escape(msg)+"\n")
	return 126
}

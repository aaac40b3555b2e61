package shims

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// Exec runs the target as a child, since Windows cannot replace a process,
// and returns its exit code. Ctrl+C reaches the child through the console;
// the shim ignores it and waits, so the child decides what an interrupt
// means.
func Exec(name string, t Target, stderr io.Writer) int {
	signal.Ignore(os.Interrupt)
	c := exec.Command(t.Path, t.Args[1:]...)
	c.Env = t.Env
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		io.WriteString(stderr, "cudaenv: "+termsafe.Escape(name+": run "+t.Path+": "+err.Error())+"\n")
		return 126
	}
	return 0
}

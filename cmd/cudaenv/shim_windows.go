package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"

	"github.com/cudaenv/cudaenv/shims"
)

// execShim runs the real executable as a child, since Windows cannot
// replace a process, and exits with its exit code. Ctrl+C reaches the
// child through the console; the shim ignores it and waits, so the child
// decides what an interrupt means.
func execShim(name string, t shims.Target, stderr io.Writer) int {
	signal.Ignore(os.Interrupt)
	c := exec.Command(t.Path, t.Args[1:]...)
	c.Env = t.Env
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "cudaenv: %s: run %s: %v\n", name, t.Path, err)
		return 126
	}
	return 0
}

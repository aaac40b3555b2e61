package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/cudaenv/cudaenv/internal/envdiff"
)

// execWith runs cmd as a child (Windows has no exec) and passes on its
// exit status.
func execWith(e *env, vars envdiff.Env, cmd []string) error {
	path, err := lookPath(cmd[0], vars["PATH"], e.goos)
	if containsSlash(cmd[0]) {
		path, err = cmd[0], nil
	}
	if err != nil {
		return &exitError{code: 127, err: fmt.Errorf("exec: %s: command not found", cmd[0])}
	}
	c := exec.Command(path, cmd[1:]...)
	c.Env = environ(vars)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &exitError{code: ee.ExitCode()}
		}
		return &exitError{code: 126, err: fmt.Errorf("exec: %s: %w", cmd[0], err)}
	}
	return nil
}

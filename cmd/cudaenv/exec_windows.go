package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/query"
)

// execWith runs cmd as a child (Windows has no exec) and passes on its
// exit status.
func execWith(e *env, vars envdiff.Env, cmd []string) error {
	path, err := commandPath(e, vars, cmd[0])
	if err != nil {
		return err
	}
	c := exec.Command(path, cmd[1:]...)
	c.Env = vars.Pairs()
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &query.ExitError{Code: ee.ExitCode()}
		}
		return &query.ExitError{Code: 126, Err: fmt.Errorf("exec: %s: %w", cmd[0], err)}
	}
	return nil
}

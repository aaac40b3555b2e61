//go:build !windows

package main

import (
	"fmt"
	"syscall"

	"github.com/cudaenv/cudaenv/internal/envdiff"
)

// execWith replaces this process with cmd, run in the given environment.
func execWith(e *env, vars envdiff.Env, cmd []string) error {
	path, err := lookPath(cmd[0], vars["PATH"], e.goos)
	if containsSlash(cmd[0]) {
		path, err = cmd[0], nil
	}
	if err != nil {
		return &exitError{code: 127, err: fmt.Errorf("exec: %s: command not found", cmd[0])}
	}
	err = syscall.Exec(path, cmd, environ(vars))
	return &exitError{code: 126, err: fmt.Errorf("exec: %s: %w", cmd[0], err)}
}

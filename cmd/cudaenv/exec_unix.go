//go:build !windows

package main

import (
	"fmt"
	"syscall"

	"github.com/cudaenv/cudaenv/internal/envdiff"
)

// execWith replaces this process with cmd, run in the given environment.
func execWith(e *env, vars envdiff.Env, cmd []string) error {
	path, err := commandPath(e, vars, cmd[0])
	if err != nil {
		return err
	}
	err = syscall.Exec(path, cmd, vars.Pairs())
	return &exitError{code: 126, err: fmt.Errorf("exec: %s: %w", cmd[0], err)}
}

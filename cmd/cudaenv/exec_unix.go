//go:build !windows

package main

import (
	"fmt"
	"syscall"

	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/query"
)

// execWith replaces this process with cmd, run in the given environment.
func execWith(e *env, vars envdiff.Env, cmd []string) error {
	path, err := commandPath(e, vars, cmd[0])
	if err != nil {
		return err
	}
	err = syscall.Exec(path, cmd, vars.Pairs())
	return &query.ExitError{Code: 126, Err: fmt.Errorf("exec: %s: %w", cmd[0], err)}
}

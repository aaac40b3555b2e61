package main

import (
	"fmt"
	"strings"

	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/query"
)

// commandPath finds the program exec runs: a path as given, else on the
// PATH of the environment it will run in.
func commandPath(e *env, vars envdiff.Env, name string) (string, error) {
	if strings.ContainsAny(name, `/\`) {
		return name, nil
	}
	if p, err := lookPath(name, vars["PATH"], e.goos); err == nil {
		return p, nil
	}
	return "", &query.ExitError{Code: 127, Err: fmt.Errorf("exec: %s: command not found", name)}
}

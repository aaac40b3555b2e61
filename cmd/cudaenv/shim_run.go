package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/cudaenv/cudaenv/shims"
)

// isShimCall reports whether the binary was started as a shim: under a
// toolkit command's name (nvcc) rather than as cudaenv.
func isShimCall(args []string) bool {
	return len(args) > 0 && shims.IsShimName(shims.CommandName(args[0], runtime.GOOS), runtime.GOOS)
}

// runShim is the whole life of a shim call: resolve the selection for the
// working directory, then become the real executable (execShim). It runs
// before, and instead of, any CLI parsing.
func runShim(args, environ []string, stderr io.Writer) int {
	name := shims.CommandName(args[0], runtime.GOOS)
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "cudaenv: %s: cannot read the working directory: %v\n", name, err)
		return 126
	}
	t, err := shims.Resolve(shims.Call{Name: name, Args: args, Environ: environ, Dir: dir, GOOS: runtime.GOOS})
	if err != nil {
		code := 1
		var nf *shims.NotFoundError
		switch {
		case errors.Is(err, shims.ErrNothingSelected):
			err, code = fmt.Errorf("%s: %w", name, errNothingSelected), 127
		case errors.As(err, &nf):
			code = 127 // the message already starts with the name
		default:
			err = fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(stderr, "cudaenv: %s\n", err)
		return code
	}
	return execShim(name, t, stderr)
}

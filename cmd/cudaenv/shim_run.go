package main

import (
	"io"
	"runtime"

	"github.com/cudaenv/cudaenv/shims"
)

// isShimCall reports whether the binary was started as a shim: under a
// toolkit command's name (nvcc) rather than as cudaenv. That happens when
// the shims point at cudaenv itself because cudaenv-shim is not installed
// beside it.
func isShimCall(args []string) bool {
	return len(args) > 0 && shims.IsShimName(shims.CommandName(args[0], runtime.GOOS), runtime.GOOS)
}

// runShim is the whole life of a shim call (see shims.Main). It runs
// before, and instead of, any CLI parsing.
func runShim(args, environ []string, stderr io.Writer) int {
	return shims.Main(args, environ, stderr)
}

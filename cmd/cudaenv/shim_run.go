package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/shims"
)

// isShimCall reports whether the binary was started as a shim: under a
// toolkit command's name (nvcc) that has a shim in the shims folder. That
// happens when the shims point at cudaenv itself because cudaenv-shim is
// not installed beside it. A cudaenv binary merely renamed (cudaenv-1.2,
// ce) stays the CLI.
func isShimCall(args, environ []string) bool {
	if len(args) == 0 {
		return false
	}
	name := shims.CommandName(args[0], runtime.GOOS)
	if !shims.IsShimName(name, runtime.GOOS) {
		return false
	}
	env := envdiff.ParseEnv(environ, runtime.GOOS)
	d, err := dirs.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return true // shims.Main says what is wrong with the folders
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	_, err = os.Lstat(filepath.Join(d.Shims(), name))
	return err == nil
}

// runShim is the whole life of a shim call (see shims.Main). It runs
// before, and instead of, any CLI parsing.
func runShim(args, environ []string, stderr io.Writer) int {
	return shims.Main(args, environ, stderr)
}

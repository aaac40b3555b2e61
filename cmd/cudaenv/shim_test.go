package main

import (
	"os"
	"path/filepath"
	"strings"
)

// In script tests the test binary stands in for cudaenv, and shims are
// symlinks to it, so it must answer to toolkit command names (nvcc) as the
// real binary does. testscript.Main would take a name it does not know for
// the top-level test run, so a shim call is answered here, before TestMain.
// Outside a script (no CUDAENV_ROOT) or as the test binary itself
// (cudaenv.test) nothing happens.
func init() {
	base := filepath.Base(os.Args[0])
	if os.Getenv("CUDAENV_ROOT") == "" || strings.Contains(base, ".test") || !isShimCall(os.Args, os.Environ()) {
		return
	}
	os.Exit(run(os.Args, os.Environ(), os.Stdin, os.Stdout, os.Stderr))
}

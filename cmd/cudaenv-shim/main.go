// Command cudaenv-shim is what cudaenv's shims run: the shims folder holds
// one symlink to it (a hard link or copy on Windows) per toolkit command,
// and it becomes the real command of the CUDA version selected for the
// working directory. It is cudaenv's shim path alone, without the CLI, so
// that a shim call costs little more than the command itself; cudaenv
// falls back to being its own shim when this binary is not installed
// beside it.
package main

import (
	"os"
	"runtime"

	"github.com/cudaenv/cudaenv/internal/hookenv"

	"github.com/cudaenv/cudaenv/shims"
)

func main() {
	// Under its own name it also answers the prompt hook, which wants the
	// same quick start; under a toolkit command's name it is a shim.
	if len(os.Args) >= 2 && os.Args[1] == "hook-env" && !shims.IsShimName(shims.CommandName(os.Args[0], runtime.GOOS), runtime.GOOS) {
		os.Exit(hookenv.Main(os.Args[2:], os.Environ(), runtime.GOOS, os.Stdout, os.Stderr))
	}
	os.Exit(shims.Main(os.Args, os.Environ(), os.Stderr))
}

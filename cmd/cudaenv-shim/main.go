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

	"github.com/cudaenv/cudaenv/shims"
)

func main() {
	os.Exit(shims.Main(os.Args, os.Environ(), os.Stderr))
}

// Command cudaenv-shim is what cudaenv's shims run: the shims folder holds
// one symlink to it (a hard link or copy on Windows) per toolkit command,
// and it becomes the real command of the CUDA version selected for the
// working directory. It is cudaenv's shim path alone, without the CLI, so
// that a shim call costs little more than the command itself; cudaenv
// falls back to being its own shim when this binary is not installed
// beside it.
//
// Under its own name it also answers what the shell integration asks
// often and wants answered as quickly: the prompt hook (hook-env) and the
// plain forms of the read-only commands (current, which, prefix, env,
// list), with the code cudaenv runs for them; any other form of those it
// hands to the cudaenv installed beside it.
package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/query"
	"github.com/cudaenv/cudaenv/internal/termsafe"
	"github.com/cudaenv/cudaenv/shims"
)

func main() {
	if len(os.Args) >= 2 && !shims.IsShimName(shims.CommandName(os.Args[0], runtime.GOOS), runtime.GOOS) {
		switch {
		case os.Args[1] == "hook-env":
			os.Exit(hookenv.Main(os.Args[2:], os.Environ(), runtime.GOOS, os.Stdout, os.Stderr))
		case query.IsCommand(os.Args[1]):
			if code, ok := query.Run(os.Args, os.Environ(), runtime.GOOS, os.Stdout, os.Stderr); ok {
				os.Exit(code)
			}
			os.Exit(runCudaenv(os.Args, os.Environ(), runtime.GOOS, os.Stderr))
		}
	}
	os.Exit(shims.Main(os.Args, os.Environ(), os.Stderr))
}

// runCudaenv hands the command line to the cudaenv beside this binary.
func runCudaenv(args, environ []string, goos string, stderr io.Writer) int {
	p := cudaenvBeside(args[0], goos)
	if p == "" {
		io.WriteString(stderr, "cudaenv: "+termsafe.Escape("cudaenv-shim answers only the plain forms of "+args[1]+
			", and there is no cudaenv beside it to answer the rest; reinstall both (make install), or run cudaenv itself")+"\n")
		return 1
	}
	return shims.Exec("cudaenv", shims.Target{Path: p, Args: append([]string{p}, args[1:]...), Env: environ}, stderr)
}

// cudaenvBeside is the cudaenv installed in this binary's folder: the
// folder it was invoked from (so that a package manager's symlink keeps
// working), else the real file's; "" when there is none. cudaenv finds
// cudaenv-shim beside itself the same way.
func cudaenvBeside(arg0, goos string) string {
	name := "cudaenv"
	if goos == "windows" {
		name += ".exe"
	}
	var dirs []string
	if strings.ContainsAny(arg0, `/\`) {
		if abs, err := filepath.Abs(arg0); err == nil {
			dirs = append(dirs, filepath.Dir(abs))
		}
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && (goos == "windows" || fi.Mode()&0o111 != 0) {
			return p
		}
	}
	return ""
}

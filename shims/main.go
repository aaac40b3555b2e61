package shims

import (
	"errors"
	"io"
	"os"
	"runtime"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// NothingSelectedHelp ends the message of a shim call for which nothing is
// selected; cudaenv's CLI says the same when nothing is selected.
const NothingSelectedHelp = "no CUDA version selected here (looked at CUDAENV_VERSION, .cuda-version and .tool-versions up to /, and the global default); select one with: cudaenv local 12.4, cudaenv global 12.4 or cudaenv use 12.4"

// Main is a whole shim call, for the shim binary and for cudaenv called
// under a toolkit command's name: resolve, then become the real command
// (Exec). It returns an exit status only when that fails: 127 when the
// selection has no such command or nothing is selected, 1 when the
// selection cannot be used, 126 when the command cannot be started.
func Main(args, environ []string, stderr io.Writer) int {
	if len(args) == 0 {
		io.WriteString(stderr, "cudaenv: shim called without a name\n")
		return 126
	}
	name := CommandName(args[0], runtime.GOOS)
	if !IsShimName(name, runtime.GOOS) {
		io.WriteString(stderr, "cudaenv: "+termsafe.Escape(name)+" is cudaenv's shim; run it under a toolkit command's name (cudaenv rehash puts those in the shims folder)\n")
		return 2
	}
	dir, err := os.Getwd()
	if err != nil {
		io.WriteString(stderr, "cudaenv: "+termsafe.Escape(name+": cannot read the working directory: "+err.Error())+"\n")
		return 126
	}
	t, err := Resolve(Call{Name: name, Args: args, Environ: environ, Dir: dir, GOOS: runtime.GOOS})
	if err != nil {
		code := 1
		msg := name + ": " + err.Error()
		var nf *NotFoundError
		switch {
		case errors.Is(err, ErrNothingSelected):
			msg, code = name+": "+NothingSelectedHelp, 127
		case errors.As(err, &nf):
			msg, code = err.Error(), 127 // it starts with the name
		}
		io.WriteString(stderr, "cudaenv: "+termsafe.Escape(msg)+"\n")
		return code
	}
	return Exec(name, t, stderr)
}

package shims

import (
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// NothingSelectedHelp ends the message of a shim call for which nothing is
// selected; cudaenv's CLI says the same when nothing is selected.
const NothingSelectedHelp = "no CUDA version selected here (looked at CUDAENV_VERSION, .cuda-version and .tool-versions up to /, and the global default); select one with: cudaenv local 12.4, cudaenv global 12.4 or cudaenv use 12.4"

// Main is a whole shim call, for the shim binary and for cudaenv called
// under a toolkit command's name: resolve, then become the real command
// (Exec). It returns an exit status only when that fails: 127 when the
// selection has no such command or nothing is selected, 1 when the
// selection cannot be used, 126 when the command cannot be started or
// would start the shim again.
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
	depth, loop := checkLoop(environ, os.Getpid(), os.Getppid(), runtime.GOOS)
	if loop != "" {
		io.WriteString(stderr, "cudaenv: "+termsafe.Escape(name+": "+loop)+"\n")
		return 126
	}
	dir, err := os.Getwd()
	if err != nil {
		io.WriteString(stderr, "cudaenv: "+termsafe.Escape(name+": cannot read the working directory: "+err.Error())+"\n")
		return 126
	}
	warn := func(w string) { io.WriteString(stderr, "cudaenv: warning: "+termsafe.Escape(w)+"\n") }
	t, err := Resolve(Call{Name: name, Args: args, Environ: environ, Dir: dir, GOOS: runtime.GOOS, Warn: warn})
	if err != nil {
		code := 1
		msg := name + ": " + err.Error()
		var nf *NotFoundError
		var le *LoopError
		switch {
		case errors.Is(err, ErrNothingSelected):
			msg, code = name+": "+NothingSelectedHelp, 127
		case errors.As(err, &nf):
			msg, code = err.Error(), 127 // it starts with the name
		case errors.As(err, &le):
			msg, code = err.Error(), 126 // it starts with the name
		}
		io.WriteString(stderr, "cudaenv: "+termsafe.Escape(msg)+"\n")
		return code
	}
	t.Env = setVar(t.Env, LoopVar, loopMark(os.Getpid(), depth+1, t.Path))
	return Exec(name, t, stderr)
}

// LoopVar marks the environment a shim runs its command in, so that a
// loop back into a shim (a toolkit command that is a copy of the shim, or
// a script that runs one) stops with one line instead of running forever.
// Its value is "PID:DEPTH:PATH": the shim's process id, how many shims
// started one another down to this one, and what the last one ran.
const LoopVar = "__CUDAENV_SHIM"

// maxDepth is more shims inside one another than any real use has (a
// profiler running a build that runs the compiler is three).
const maxDepth = 16

func loopMark(pid, depth int, path string) string {
	return strconv.Itoa(pid) + ":" + strconv.Itoa(depth) + ":" + path
}

// checkLoop reads LoopVar from environ. A shim looped straight back into
// itself when the mark names its own process (Unix, where the shim
// becomes its command) or its parent (Windows, where it runs it as a
// child); a longer loop shows as depth. loop is the message then, else "".
func checkLoop(environ []string, pid, ppid int, goos string) (depth int, loop string) {
	var mark string
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, LoopVar+"="); ok {
			mark = v
		}
	}
	if mark == "" {
		return 0, ""
	}
	p, rest, _ := strings.Cut(mark, ":")
	d, path, _ := strings.Cut(rest, ":")
	markPid, err1 := strconv.Atoi(p)
	depth, err2 := strconv.Atoi(d)
	if err1 != nil || err2 != nil || depth < 0 {
		return 0, "" // not ours to judge; start counting afresh
	}
	self := pid
	if goos == "windows" {
		self = ppid
	}
	switch {
	case markPid == self:
		return depth, path + " started this shim again, which would loop forever; the selected toolkit's command must be the real program, not a shim or a copy of one"
	case depth >= maxDepth:
		return depth, strconv.Itoa(depth) + " shims started one another (the last ran " + path + "), which looks like a loop; the selected toolkit's command must not run a shim of its own name"
	}
	return depth, ""
}

// setVar sets KEY=VALUE in environ, replacing any earlier value.
func setVar(environ []string, key, value string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

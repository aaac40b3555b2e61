// Package hookenv answers the shell prompt hook: for a working directory and
// environment it prints, in the shell's dialect, the changes that activate
// the selection and a new __cudaenv_check, the builtin-only test that lets
// the next prompts skip the binary while nothing changes.
//
// Both binaries serve it: cudaenv, and the small cudaenv-shim, which the
// hook calls when it is installed because it starts several times faster.
package hookenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/doctor"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/termsafe"
	"github.com/cudaenv/cudaenv/shell"
)

// Input is one evaluation.
type Input struct {
	Shell  shell.Shell
	Dir    string
	Env    envdiff.Env
	Dirs   dirs.Dirs
	GOOS   string
	Stdout io.Writer
	Stderr io.Writer
}

// Run prints the hook's code. A selection that cannot be activated is
// reported on Stderr once (the new check keeps it from repeating) and the
// shell steps aside; so are the version files skipped on the way, and a
// __CUDAENV_STATE that cudaenv did not write, which is dropped, never
// obeyed. prefix is shell code to print first (use's own CUDAENV_VERSION
// change).
func Run(in Input, prefix string) {
	out := activate.Compute(activate.Input{Dir: in.Dir, Env: in.Env, Dirs: in.Dirs, GOOS: in.GOOS})
	warnState(in.Stderr, out.StateErr)
	for _, w := range out.Warnings {
		Warn(in.Stderr, w)
	}
	if out.Err != nil {
		Error(in.Stderr, out.Err)
	} else {
		WarnIfNewlyActive(out.Prev.Active, in.Env, out.Resolved, in.GOOS, in.Stderr)
	}
	check := CheckFor(in.Dirs.Stamps(), out.Watch)
	check.StateName = envdiff.StateVar
	// The state the shell will hold: the change to it, else what it has.
	check.State, check.StateSet = in.Env[envdiff.StateVar]
	for _, ch := range out.Changes {
		if ch.Name == envdiff.StateVar {
			check.State, check.StateSet = ch.Value, !ch.Unset
		}
	}
	fmt.Fprint(in.Stdout, prefix+shell.Render(in.Shell, Vars(out.Changes))+in.Shell.Check(check))
}

// Refuse is Run when cudaenv's folders are unusable (see dirs.FromEnv):
// it prints err, takes back what cudaenv activated, and leaves a check
// that fails, so the hook says it again at each prompt until it is fixed.
func Refuse(in Input, err error, prefix string) {
	prev, serr := envdiff.Decode(in.Env[envdiff.StateVar])
	warnState(in.Stderr, serr)
	Error(in.Stderr, err)
	changes, _ := envdiff.Apply(in.Env, prev, envdiff.Want{}, activate.ListSep(in.GOOS))
	fmt.Fprint(in.Stdout, prefix+shell.Render(in.Shell, Vars(changes))+in.Shell.Check(shell.Check{Never: true}))
}

// Error prints err as cudaenv prints every error: one line, "cudaenv: "
// first, control characters escaped (a directory name can hold any).
func Error(w io.Writer, err error) {
	fmt.Fprintf(w, "cudaenv: %s\n", termsafe.Escape(err.Error()))
}

// Warn prints one warning line, escaped as Error does.
func Warn(w io.Writer, msg string) {
	fmt.Fprintf(w, "cudaenv: warning: %s\n", termsafe.Escape(msg))
}

func warnState(w io.Writer, err error) {
	if err != nil {
		Warn(w, "ignoring "+envdiff.StateVar+", which cudaenv did not write: "+err.Error()+"; nothing it lists is taken back")
	}
}

// Main is the hook-env command of either binary: args are [shell].
func Main(args, environ []string, goos string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "cudaenv: hook-env needs a shell: bash, fish, pwsh or zsh")
		return 2
	}
	sh, err := shell.Get(args[0])
	if err != nil {
		Error(stderr, err)
		return 2
	}
	env := envdiff.ParseEnv(environ, goos)
	dir, err := os.Getwd()
	if err != nil {
		dir = env["PWD"]
	}
	d, err := dirs.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	in := Input{Shell: sh, Dir: dir, Env: env, Dirs: d, GOOS: goos, Stdout: stdout, Stderr: stderr}
	if err != nil {
		Refuse(in, err, "")
		return 0
	}
	Run(in, "")
	return 0
}

// Vars converts changes for the shell renderer.
func Vars(changes []envdiff.Change) []shell.Var {
	out := make([]shell.Var, len(changes))
	for i, c := range changes {
		out[i] = shell.Var{Name: c.Name, Value: c.Value, Unset: c.Unset}
	}
	return out
}

// WarnIfNewlyActive prints one line when the toolkit that becomes active
// (different from prevActive, what was active before)
// needs a newer driver than this machine has, and one when it puts an
// older library in front of the active venv's nvidia-* wheels. It reads files only (no
// nvidia-smi), so switching stays fast, and never blocks the switch.
func WarnIfNewlyActive(prevActive string, env envdiff.Env, r activate.Resolved, goos string, stderr io.Writer) {
	if r.CUDA == nil || prevActive == r.Label() {
		return
	}
	d := detect.Host{Env: env, GOOS: goos}.Driver(context.Background())
	if w := doctor.DriverWarning(r.CUDA.Version.String(), d, goos); w != "" {
		Warn(stderr, w)
	}
	warnLibraries(env, r, goos, stderr)
}

// CheckFor turns a watch list into the shell check, writing the mtime
// reference files that test -nt needs into stamps.
func CheckFor(stamps string, w resolve.Watch) shell.Check {
	c := shell.Check{Dir: w.Dir, EnvName: resolve.EnvVar, EnvSet: w.EnvSet, EnvValue: w.EnvValue, AnyDir: w.AnyDir, Within: w.Within}
	for _, f := range w.Files {
		sf := shell.File{Path: f.Path, Exists: f.Exists, ModTime: f.ModTime}
		if f.Exists {
			sf.Ref = mtimeRef(stamps, f.ModTime)
		}
		c.Files = append(c.Files, sf)
	}
	return c
}

// mtimeRef returns an empty file whose mtime is t, named after t so that
// every shell and every watched file with that mtime can share it. If it
// cannot be made, "" makes the check fail and the hook run each prompt.
func mtimeRef(dir string, t time.Time) string {
	p := filepath.Join(dir, strconv.FormatInt(t.UnixNano(), 10))
	if fi, err := os.Stat(p); err == nil && fi.ModTime().Equal(t) {
		return p
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	pruneRefs(dir)
	f, err := os.CreateTemp(dir, ".ref-")
	if err != nil {
		return ""
	}
	f.Close()
	if os.Chtimes(f.Name(), t, t) != nil || os.Rename(f.Name(), p) != nil {
		os.Remove(f.Name())
		return ""
	}
	return p
}

// maxRefs bounds the stamps folder. Past it every reference is removed: a
// shell whose reference is gone sees its check fail once (test -nt is true
// against a missing file) and the hook makes a new one.
const maxRefs = 1000

func pruneRefs(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(maxRefs + 1)
	f.Close()
	if len(names) <= maxRefs {
		return
	}
	for _, n := range names {
		os.Remove(filepath.Join(dir, n))
	}
}

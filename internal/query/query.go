// Package query answers cudaenv's read-only commands: current, which,
// prefix, env and list (what is selected here and why, where it lives, the
// environment that activates it, what is installed).
//
// Both binaries run this code. cudaenv's CLI calls the commands after
// parsing their flags; and the shell function sends these commands to
// the small cudaenv-shim binary, which starts several times faster than
// cudaenv, through Run: it takes the plain forms of them (no help, no
// unknown or repeated flags, nothing that writes files) and leaves every
// other form to cudaenv, so the output is the same either way.
package query

import (
	"errors"
	"io"
	"maps"
	"os"
	"strings"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/hookenv"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/shims"
	"github.com/cudaenv/cudaenv/store"
)

// In is what a command reads from the outside world.
type In struct {
	Vars   envdiff.Env
	Dirs   dirs.Dirs
	Cwd    string
	GOOS   string
	Stdout io.Writer
	Stderr io.Writer
}

// Store is the user's store; a lock another cudaenv holds is announced
// on Stderr while this one waits.
func (in *In) Store() *store.Store {
	st := store.New(in.Dirs)
	st.Wait = in.Stderr
	st.Warn = func(w string) { hookenv.Warn(in.Stderr, w) }
	return st
}

func (in *In) lookup(k string) (string, bool) { v, ok := in.Vars[k]; return v, ok }

// ExitError carries an exit status other than 1.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// ErrNothingSelected explains the precedence and how to select a version.
var ErrNothingSelected = errors.New(shims.NothingSelectedHelp)

// ResolveHere resolves the selection for the working directory, with a
// warning for each version file skipped on the way. As the prompt hook and
// the shims do, it reads no receipt but a linked entry's (see
// activate.ResolveFast): current, which, prefix, env and list need none,
// and the first receipt decoded costs a process more than the rest of
// such a command. Each entry's Shadows is set. WithReceipts adds the
// picked entries' receipts.
func ResolveHere(in *In) (activate.Resolved, error) {
	sel, _, err := resolve.Find(in.Cwd, in.lookup, in.Dirs.GlobalFile())
	for _, w := range sel.Warnings {
		hookenv.Warn(in.Stderr, w)
	}
	if err != nil {
		return activate.Resolved{}, err
	}
	if sel.Source.Kind == resolve.None {
		return activate.Resolved{}, ErrNothingSelected
	}
	st := in.Store()
	r, err := activate.ResolveFast(st, sel)
	if err != nil {
		return r, err
	}
	for _, e := range r.Entries() {
		if !e.System {
			e.Shadows = st.Shadows(e.Kind, e.Name)
		}
	}
	return r, nil
}

// WithReceipts replaces the picked entries of r with the store's full
// entries, receipts read (doctor reports where a toolkit came from).
func WithReceipts(in *In, r activate.Resolved) activate.Resolved {
	st := in.Store()
	ps := []**store.Entry{&r.CUDA, &r.Cudnn}
	if r.Libs != nil {
		// A copy: the caller's map is left as it was.
		libs := maps.Clone(r.Libs)
		r.Libs = libs
		for _, t := range activate.OtherLibraries() {
			if e := libs[t]; e != nil {
				if full, ok := st.Get(e.Kind, e.Name); ok && full.Dir == e.Dir {
					libs[t] = &full
				}
			}
		}
	}
	for _, p := range ps {
		if *p == nil {
			continue
		}
		if full, ok := st.Get((*p).Kind, (*p).Name); ok && full.Dir == (*p).Dir {
			*p = &full
		}
	}
	return r
}

// ChangesFor computes the changes that activate explicit specs, or the
// current selection when there are none.
func ChangesFor(in *In, specs []string) ([]envdiff.Change, activate.Resolved, error) {
	var r activate.Resolved
	var err error
	// A setting alone (exec --libraries=off -- CMD) changes the current
	// selection's; with versions it goes with them.
	var setting []string
	for _, s := range specs {
		if resolve.IsOption(s) {
			setting = append(setting, s)
		}
	}
	if len(specs) > len(setting) {
		parsed, opts, perr := resolve.ParseOptions("command line", []byte(strings.Join(specs, " ")))
		if perr != nil {
			var se *resolve.SyntaxError
			if errors.As(perr, &se) {
				se.Line = 0
			}
			return nil, r, perr
		}
		r, err = activate.ResolveFast(in.Store(), resolve.Selection{Specs: parsed, Source: resolve.Source{}, Options: opts})
	} else {
		r, err = ResolveHere(in)
		if err == nil && len(setting) > 0 && !r.Selection.System() {
			var here []string
			for _, sp := range r.Selection.Specs {
				here = append(here, sp.String())
			}
			here = append(here, setting...)
			_, opts, perr := resolve.ParseOptions("command line", []byte(strings.Join(here, " ")))
			if perr != nil {
				return nil, r, perr
			}
			r.Selection.Options = opts
		}
	}
	if err != nil {
		return nil, r, err
	}
	var want envdiff.Want
	if !r.Selection.System() {
		want = activate.Want(r, in.GOOS)
	}
	return activate.Changes(in.Vars, want, in.GOOS), r, nil
}

// Report prints err as cudaenv prints every error (once, "cudaenv: "
// first, escaped; nothing for an empty message) and returns the exit
// status: an ExitError's code, else 1; 0 without an error.
func Report(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	code := 1
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	if err.Error() != "" {
		hookenv.Error(stderr, err)
	}
	return code
}

// IsCommand reports whether word names one of the read-only commands,
// whose plain forms Parse takes.
func IsCommand(word string) bool {
	switch word {
	case "current", "which", "prefix", "env", "list", "ls":
		return true
	}
	return false
}

// Command is one parsed command, ready to run.
type Command func(in *In) error

// Parse reads args (the command word first) if they are a form of a
// read-only command that this package answers alone: the command words
// current, which, prefix, env, list and ls, with no flag but env's
// --format and --shell (each at most once, with a value) and list's
// --json. ok is false for everything else, which cudaenv's CLI answers.
func Parse(args []string) (cmd Command, ok bool) {
	if len(args) == 0 {
		return nil, false
	}
	rest := args[1:]
	switch args[0] {
	case "current":
		if len(rest) == 0 {
			return Current, true
		}
	case "which":
		if plain(rest) {
			return func(in *In) error { return Which(in, rest) }, true
		}
	case "prefix":
		if plain(rest) {
			return func(in *In) error { return Prefix(in, rest) }, true
		}
	case "env":
		if o, ok := parseEnv(rest); ok {
			return func(in *In) error { return Env(in, o) }, true
		}
	case "list", "ls":
		switch {
		case len(rest) == 0:
			return func(in *In) error { return List(in, nil, false) }, true
		case len(rest) == 1 && (rest[0] == "--json" || rest[0] == "-json"):
			return func(in *In) error { return List(in, nil, true) }, true
		}
	}
	return nil, false
}

// isFlag is how cudaenv's CLI tells a flag from an argument.
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// plain reports whether args has no flags (nor "--").
func plain(args []string) bool {
	for _, a := range args {
		if isFlag(a) {
			return false
		}
	}
	return true
}

func parseEnv(args []string) (EnvOptions, bool) {
	var o EnvOptions
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !isFlag(a) {
			o.Specs = append(o.Specs, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if (name != "format" && name != "shell") || seen[name] {
			return o, false
		}
		seen[name] = true
		if !hasValue {
			if i+1 == len(args) {
				return o, false
			}
			i++
			value = args[i]
		}
		if value == "" {
			return o, false
		}
		if name == "format" {
			o.Format = value
		} else {
			o.Shell = value
		}
	}
	return o, true
}

// NewIn reads the environment, the store's folders and the working
// directory (as $PWD when it cannot be read). The error refuses the
// folders the environment names (dirs.FromEnv).
func NewIn(environ []string, goos string, stdout, stderr io.Writer) (*In, error) {
	in := &In{Vars: envdiff.ParseEnv(environ, goos), GOOS: goos, Stdout: stdout, Stderr: stderr}
	var err error
	in.Dirs, err = dirs.FromEnv(in.lookup)
	if wd, werr := os.Getwd(); werr == nil {
		in.Cwd = wd
	} else {
		in.Cwd = in.Vars["PWD"]
	}
	return in, err
}

// Run answers args (argv, the program first) when Parse takes them, and
// returns the exit status; ok is false, and nothing is done, when it
// does not.
func Run(args, environ []string, goos string, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) < 2 {
		return 0, false
	}
	cmd, ok := Parse(args[1:])
	if !ok {
		return 0, false
	}
	in, err := NewIn(environ, goos, stdout, stderr)
	if err != nil {
		return Report(stderr, err), true
	}
	return Report(stderr, cmd(in)), true
}

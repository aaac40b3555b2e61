package shims

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/store"
)

// Call is one run of a shim.
type Call struct {
	Name    string   // the command: argv[0]'s base name, without .exe
	Args    []string // argv as the shim received it
	Environ []string // KEY=VALUE
	Dir     string   // working directory
	GOOS    string
}

// Target is what a shim runs: the real executable, its argv (the real path
// first, then the shim's arguments untouched) and its environment.
type Target struct {
	Path string
	Args []string
	Env  []string
}

// ErrNothingSelected is returned when no CUDAENV_VERSION, version file or
// global default selects anything for the call's directory.
var ErrNothingSelected = errors.New("nothing selected")

// NotFoundError is a command that the selection cannot run: the selected
// version lacks it, or cudaenv steps aside and PATH has none. A shell
// reports this as 127.
type NotFoundError struct {
	Err error
}

func (e *NotFoundError) Error() string { return e.Err.Error() }
func (e *NotFoundError) Unwrap() error { return e.Err }

// Resolve finds the executable a shim call stands for and the environment
// to run it in, with the same precedence as the shell hook: CUDAENV_VERSION,
// the nearest .cuda-version or .tool-versions, the global default. The
// environment is the caller's with cudaenv's earlier changes taken back and
// the selection's applied, and without the shims folder on PATH, so that
// nothing the child runs comes back through a shim. The real executable is
// looked up in the selected toolkit, never through PATH.
//
// This runs on every shim call: it reads a handful of small files and
// builds no CLI.
func Resolve(c Call) (Target, error) {
	env := parseEnviron(c.Environ, c.GOOS)
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	d, err := dirs.FromEnv(lookup)
	if err != nil {
		return Target{}, err
	}
	sel, _, err := resolve.Find(c.Dir, lookup, d.GlobalFile())
	if err != nil {
		return Target{}, err
	}
	if sel.Source.Kind == resolve.None {
		return Target{}, ErrNothingSelected
	}
	st := store.New(d)
	var path string
	var want envdiff.Want
	if sel.System() {
		// cudaenv steps aside: run the command PATH has outside the shims.
		env = envdiff.Result(env, activate.Changes(env, want, c.GOOS))
		env["PATH"] = withoutDir(env["PATH"], d.Shims(), c.GOOS)
		path = lookPath(c.Name, env["PATH"], c.GOOS)
		if path == "" {
			return Target{}, &NotFoundError{Err: errors.New(c.Name + ": cudaenv steps aside here (system, set by " +
				sel.Source.String() + ") and there is no " + c.Name + " on PATH outside " + d.Shims())}
		}
	} else {
		r, err := activate.ResolveFast(st, sel)
		if err != nil {
			return Target{}, err
		}
		path, err = activate.Which(st, r, c.Name, c.GOOS)
		if err != nil {
			return Target{}, &NotFoundError{Err: err}
		}
		want = activate.Want(r, c.GOOS)
		if _, hooked := env[envdiff.StateVar]; hooked {
			// A prompt hook (or cudaenv exec) activated something: take
			// that back first, as the hook would.
			env = envdiff.Result(env, activate.Changes(env, want, c.GOOS))
		} else {
			applyFresh(env, want, activate.ListSep(c.GOOS))
		}
		env["PATH"] = withoutDir(env["PATH"], d.Shims(), c.GOOS)
	}
	args := make([]string, 0, len(c.Args))
	args = append(args, path)
	if len(c.Args) > 1 {
		args = append(args, c.Args[1:]...)
	}
	return Target{Path: path, Args: args, Env: environ(env)}, nil
}

// parseEnviron reads KEY=VALUE pairs. Windows names are case-insensitive
// and its PATH usually arrives as "Path"; it is renamed to PATH, the name
// cudaenv edits, so the child does not get two.
func parseEnviron(environ []string, goos string) envdiff.Env {
	m := make(envdiff.Env, len(environ)+8)
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue // Windows' hidden "=C:=C:\dir" entries have an empty name
		}
		if goos == "windows" && k != "PATH" && strings.EqualFold(k, "PATH") {
			k = "PATH"
		}
		m[k] = v
	}
	return m
}

func environ(env envdiff.Env) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// withoutDir removes every entry naming dir from a PATH value.
func withoutDir(path, dir, goos string) string {
	if path == "" {
		return path
	}
	sep := activate.ListSep(goos)
	dir = filepath.Clean(dir)
	if goos != "windows" && !strings.Contains(path, filepath.Base(dir)) {
		return path // fast path: the shims folder cannot be there
	}
	entries := strings.Split(path, sep)
	kept := entries[:0]
	for _, e := range entries {
		if e != "" && samePath(filepath.Clean(e), dir, goos) {
			continue
		}
		kept = append(kept, e)
	}
	return strings.Join(kept, sep)
}

func samePath(a, b, goos string) bool {
	if goos == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// lookPath finds name on PATH, skipping anything that is this very binary
// under another name (a shims folder listed under another spelling).
func lookPath(name, path, goos string) string {
	var self os.FileInfo
	for _, dir := range strings.Split(path, activate.ListSep(goos)) {
		if dir == "" {
			continue
		}
		cands := []string{filepath.Join(dir, name)}
		if goos == "windows" && filepath.Ext(name) == "" {
			cands = cands[:0]
			for _, x := range winExts {
				cands = append(cands, filepath.Join(dir, name+x))
			}
		}
		for _, p := range cands {
			fi, err := os.Stat(p)
			if err != nil || fi.IsDir() || (goos != "windows" && fi.Mode()&0o111 == 0) {
				continue
			}
			if self == nil {
				if exe, err := os.Executable(); err == nil {
					self, _ = os.Stat(exe)
				}
			}
			if self != nil && os.SameFile(fi, self) {
				continue
			}
			return p
		}
	}
	return ""
}

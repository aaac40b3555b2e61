package shims

import (
	"errors"
	"os"
	"path/filepath"
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
	// Warn, when set, hears each system store entry skipped as one
	// another user could change (store.Store.Warn).
	Warn func(string)
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

// LoopError is a target that would start the shim again: the selected
// toolkit's command is a shim, or the shim binary itself.
type LoopError struct {
	Err error
}

func (e *LoopError) Error() string { return e.Err.Error() }
func (e *LoopError) Unwrap() error { return e.Err }

// Resolve finds the executable a shim call stands for and the environment
// to run it in, with the same precedence as the shell hook: CUDAENV_VERSION,
// the nearest .cuda-version or .tool-versions, the global default. The
// environment is the caller's with cudaenv's earlier changes taken back and
// the selection's applied, and without the shims folder on PATH, so that
// nothing the child runs comes back through a shim. The real executable is
// looked up in the selected toolkit, never through PATH.
//
// The shim steps aside, as if it were not there, and runs the next command
// of its name on PATH outside the shims folder, with cudaenv's changes
// taken back, when the selection is system, when nothing is selected, and
// for a command that is not NVIDIA's (Known) whenever the user's PATH has
// one outside the store: a name the user has must never be taken away,
// even if PATH gained it after the rehash that made its shim. A known
// command the selection lacks stays an error, since another version of it
// would run silently.
//
// A target that is a shim, or this binary, is refused with a LoopError.
//
// This runs on every shim call: it reads a handful of small files and
// builds no CLI.
func Resolve(c Call) (Target, error) {
	env := envdiff.ParseEnv(c.Environ, c.GOOS)
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	d, err := dirs.FromEnv(lookup)
	if err != nil {
		return Target{}, err
	}
	sel, _, err := resolve.Find(c.Dir, lookup, d.GlobalFile())
	if err != nil {
		return Target{}, err
	}
	shim := &shimFiles{dir: d.Shims(), name: c.Name, goos: c.GOOS}
	if !Known(c.Name, c.GOOS) {
		if t, ok := stepAside(c, env, shim, outsideStore(d, c.GOOS)); ok {
			return t, nil
		}
	}
	if sel.Source.Kind == resolve.None {
		if t, ok := stepAside(c, env, shim, nil); ok {
			return t, nil
		}
		return Target{}, ErrNothingSelected
	}
	if sel.System() {
		if t, ok := stepAside(c, env, shim, nil); ok {
			return t, nil
		}
		return Target{}, &NotFoundError{Err: errors.New(c.Name + ": cudaenv steps aside here (system, set by " +
			sel.Source.String() + ") and there is no " + c.Name + " on PATH outside " + d.Shims())}
	}
	st := store.New(d)
	st.Warn = c.Warn
	r, err := activate.ResolveFast(st, sel)
	if err != nil {
		return Target{}, err
	}
	path, err := activate.Which(st, r, c.Name, c.GOOS)
	if err != nil {
		return Target{}, &NotFoundError{Err: err}
	}
	if fi, err := os.Stat(path); err == nil && shim.is(fi) {
		return Target{}, &LoopError{Err: errors.New(c.Name + ": " + path + " (in CUDA " + r.Label() + ", selected by " +
			sel.Source.String() + ") is a cudaenv shim, not the real command, and would start this shim again; reinstall or relink that toolkit")}
	}
	want := activate.Want(r, c.GOOS)
	if _, hooked := env[envdiff.StateVar]; hooked {
		// A prompt hook (or cudaenv exec) activated something: take
		// that back first, as the hook would.
		env = envdiff.Result(env, activate.Changes(env, want, c.GOOS))
	} else {
		applyFresh(env, want, activate.ListSep(c.GOOS))
	}
	env["PATH"] = withoutDir(env["PATH"], d.Shims(), c.GOOS)
	return target(path, c.Args, env), nil
}

// stepAside is the call run as if the shim were not there: the next
// command of the name on PATH outside the shims folder (never a shim, under
// any name; only in folders dirOK accepts, when given), in the environment
// without cudaenv's changes. ok is false when PATH has none. env is not
// changed.
func stepAside(c Call, env envdiff.Env, shim *shimFiles, dirOK func(string) bool) (Target, bool) {
	env = envdiff.Result(env, activate.Changes(env, envdiff.Want{}, c.GOOS))
	env["PATH"] = withoutDir(env["PATH"], shim.dir, c.GOOS)
	path := FindOnPath(c.Name, env["PATH"], c.GOOS, dirOK, shim.is)
	if path == "" {
		return Target{}, false
	}
	return target(path, c.Args, env), true
}

// outsideStore accepts the PATH folders that are the user's: absolute,
// and neither in the store (its toolkits, the shims), nor in the system
// store, nor the shims folder. Rehash judges shadowing with the same rule.
func outsideStore(d dirs.Dirs, goos string) func(string) bool {
	root, shims, system := filepath.Clean(d.Root), filepath.Clean(d.Shims()), ""
	if d.System != "" {
		system = filepath.Clean(d.System)
	}
	return func(dir string) bool {
		if !filepath.IsAbs(dir) {
			return false
		}
		dir = filepath.Clean(dir)
		return !within(dir, root, goos) && !within(dir, shims, goos) && (system == "" || !within(dir, system, goos))
	}
}

func target(path string, argv []string, env envdiff.Env) Target {
	args := make([]string, 0, len(argv)+1)
	args = append(args, path)
	if len(argv) > 1 {
		args = append(args, argv[1:]...)
	}
	return Target{Path: path, Args: args, Env: env.Pairs()}
}

// shimFiles tells a shim from a real command: the files this binary and
// the shims folder's entry for the name resolve to (a symlink is
// followed, a hard link is the same file). They are read on first use.
type shimFiles struct {
	dir, name, goos string
	loaded          bool
	files           []os.FileInfo
}

func (s *shimFiles) is(fi os.FileInfo) bool {
	if !s.loaded {
		s.loaded = true
		if exe, err := os.Executable(); err == nil {
			if fi, err := os.Stat(exe); err == nil {
				s.files = append(s.files, fi)
			}
		}
		if fi, err := os.Stat(filepath.Join(s.dir, fileName(s.name, s.goos))); err == nil {
			s.files = append(s.files, fi)
		}
	}
	for _, f := range s.files {
		if os.SameFile(fi, f) {
			return true
		}
	}
	return false
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

// FindOnPath finds an executable called name on a PATH value: in the
// entries for which dirOK holds (all when nil), and not a file for which
// skip holds. On Windows a name without an extension is tried with each of
// .exe, .bat and .cmd.
func FindOnPath(name, path, goos string, dirOK func(string) bool, skip func(os.FileInfo) bool) string {
	for _, dir := range strings.Split(path, activate.ListSep(goos)) {
		if dir == "" || (dirOK != nil && !dirOK(dir)) {
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
			if skip != nil && skip(fi) {
				continue
			}
			return p
		}
	}
	return ""
}

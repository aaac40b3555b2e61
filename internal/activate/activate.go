// Package activate turns a selection into installed store entries and the
// environment they need (PATH, LD_LIBRARY_PATH, CUDA_HOME, …), and computes
// the changes from the current environment. It returns data, never shell code.
package activate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// Resolved is a selection matched to store entries. Either may be nil.
type Resolved struct {
	Selection resolve.Selection
	CUDA      *store.Entry
	Cudnn     *store.Entry
	// Libs are the other libraries selected (NCCL, cuSPARSELt, …).
	Libs map[version.Tool]*store.Entry
}

// Label says what is active: "12.4.1 cudnn@9.5.1.17".
func (r Resolved) Label() string {
	var parts []string
	if r.CUDA != nil {
		parts = append(parts, r.CUDA.Version.String())
	}
	for _, t := range version.Libraries {
		if e := r.Library(t); e != nil {
			parts = append(parts, string(t)+"@"+e.Version.String())
		}
	}
	return strings.Join(parts, " ")
}

// Selector is what selects r again (CUDAENV_VERSION for a command run
// under it): the label, and the settings the selection carries.
func (r Resolved) Selector() string {
	return strings.Join(append([]string{r.Label()}, r.Selection.Options.Words()...), " ")
}

// NotInstalledError is a spec that matches no installed entry.
type NotInstalledError struct {
	Spec      version.Spec
	Source    resolve.Source
	Installed []string
	CUDAMajor int // cuDNN: the CUDA major it was looked up for
	// InstallFlags follow the printed install command, " --source pypi"
	// where this machine installs from PyPI (the CLI knows; "" for none).
	InstallFlags string
	// NoRelease, when set, replaces the install command: the spec names
	// no release there is (the CLI knows which exist), so it says that
	// and what there is instead, never a command that cannot work.
	NoRelease string
}

func (e *NotInstalledError) Error() string {
	what := "CUDA " + e.Spec.String()
	if e.Spec.Tool.Library() {
		what = e.Spec.Tool.Title() + " " + strings.TrimPrefix(e.Spec.String(), string(e.Spec.Tool)+"@")
		if e.CUDAMajor > 0 {
			what += fmt.Sprintf(" for CUDA %d", e.CUDAMajor)
		}
	}
	from := ""
	if e.Source.Kind != resolve.None {
		from = " (selected by " + e.Source.String() + ")"
	}
	have := "no CUDA toolkit is installed yet"
	if e.Spec.Tool.Library() {
		have = "no " + e.Spec.Tool.Title() + " is installed yet"
	}
	if len(e.Installed) > 0 {
		have = "installed: " + strings.Join(e.Installed, ", ")
	}
	flags := e.InstallFlags
	if e.Spec.Tool.Library() && e.CUDAMajor > 0 {
		// Without it, install takes the CUDA major of the shell's selection.
		flags = fmt.Sprintf(" --cuda-major %d", e.CUDAMajor) + flags
	}
	if e.NoRelease != "" {
		return fmt.Sprintf("%s%s is not installed; %s; %s", what, from, have, e.NoRelease)
	}
	return fmt.Sprintf("%s%s is not installed; %s; run: cudaenv install %s%s", what, from, have, e.Spec, flags)
}

// Resolve matches the selection's specs against the store. A system
// selection resolves to nothing.
func Resolve(st *store.Store, sel resolve.Selection) (Resolved, error) {
	r := Resolved{Selection: sel}
	if sel.System() {
		return r, nil
	}
	if spec, ok := sel.Spec(version.CUDA); ok {
		list, err := st.List(store.CUDA)
		if err != nil {
			return r, err
		}
		e, err := best(spec, list, 0, sel.Source)
		if err != nil {
			return r, err
		}
		r.CUDA = e
	}
	if spec, ok := sel.Spec(version.Cudnn); ok {
		list, err := st.List(store.Cudnn)
		if err != nil {
			return r, err
		}
		major := 0
		if r.CUDA != nil {
			major = r.CUDA.Version.Major()
		}
		e, err := best(spec, list, major, sel.Source)
		if err != nil {
			return r, err
		}
		r.Cudnn = e
	}
	for _, t := range OtherLibraries() {
		spec, ok := sel.Spec(t)
		if !ok {
			continue
		}
		list, err := st.List(store.KindOf(t))
		if err != nil {
			return r, err
		}
		major := 0
		if r.CUDA != nil {
			major = r.CUDA.Version.Major()
		}
		e, err := best(spec, list, major, sel.Source)
		if err != nil {
			return r, err
		}
		r.setLibrary(t, e)
	}
	return r, nil
}

// setLibrary records the entry of a library other than cuDNN.
func (r *Resolved) setLibrary(t version.Tool, e *store.Entry) {
	if r.Libs == nil {
		r.Libs = map[version.Tool]*store.Entry{}
	}
	r.Libs[t] = e
}

func best(spec version.Spec, list []store.Entry, cudaMajor int, src resolve.Source) (*store.Entry, error) {
	var found *store.Entry
	var names []string
	for i := range list {
		e := &list[i]
		if cudaMajor > 0 && e.CUDAMajor != cudaMajor {
			if e.Kind.Library() {
				names = append(names, fmt.Sprintf("%s for CUDA %d", e.Version, e.CUDAMajor))
			}
			continue
		}
		if e.Kind.Library() {
			names = append(names, fmt.Sprintf("%s for CUDA %d", e.Version, e.CUDAMajor))
		} else {
			names = append(names, e.Version.String())
		}
		if spec.Match(e.Version) && (found == nil || version.Compare(e.Version, found.Version) >= 0) {
			found = e
		}
	}
	if found == nil {
		return nil, &NotInstalledError{Spec: spec, Source: src, Installed: names, CUDAMajor: cudaMajor}
	}
	if found.Err != nil {
		return nil, found.Err
	}
	return found, nil
}

// Want is the environment the resolved entries ask for on goos.
func Want(r Resolved, goos string) envdiff.Want {
	w := envdiff.Want{Prepend: map[string][]string{}, Set: map[string]string{}, Active: r.Label()}
	prepend := func(name string, dirs ...string) { w.Prepend[name] = append(w.Prepend[name], dirs...) }
	// libraries=off: the toolkit is there for building; the program run
	// loads what its RUNPATH names (a framework's nvidia-* wheels), which
	// LD_LIBRARY_PATH would otherwise outrank.
	noLibs := r.Selection.Options.NoLibraries
	loadPath := func(dir string) {
		if !noLibs {
			prepend("LD_LIBRARY_PATH", dir)
		}
	}
	if t := r.CUDA; t != nil {
		// A libraries-only toolkit (CUDA 12 from PyPI, --components without
		// nvcc) has no nvcc, maybe no bin: CUDACXX naming a missing nvcc
		// stops CMake even for users with another nvcc, so it is set, and
		// bin put on PATH, only where they exist.
		p := t.Path
		bin := filepath.Join(p, "bin")
		if goos == "windows" {
			if isDir(bin) {
				prepend("PATH", bin)
			}
			if t.Version.Major() >= 13 && isDir(filepath.Join(bin, "x64")) {
				prepend("PATH", filepath.Join(bin, "x64"))
			}
			w.Set[fmt.Sprintf("CUDA_PATH_V%d_%d", t.Version.Major(), minor(t.Version))] = p
			if isFile(filepath.Join(bin, "nvcc.exe")) {
				w.Set["CUDACXX"] = filepath.Join(bin, "nvcc.exe")
			}
		} else {
			if isDir(bin) {
				prepend("PATH", bin)
			}
			loadPath(libDir(p))
			// The link stubs (libcuda.so, libnvidia-ml.so) go on the link
			// path only, as NVIDIA's nvcc.profile puts them: -lcuda links
			// without a driver, and the program loads the driver's
			// libcuda.so.1 when it runs.
			if d := StubsDir(p); d != "" {
				prepend("LIBRARY_PATH", d)
			}
			if isFile(filepath.Join(bin, "nvcc")) {
				w.Set["CUDACXX"] = filepath.Join(bin, "nvcc")
			}
		}
		w.Set["CUDA_PATH"] = p
		w.Set["CUDA_HOME"] = p
		// CMake's FindCUDAToolkit looks here first.
		w.Set["CUDAToolkit_ROOT"] = p
	}
	if d := r.Cudnn; d != nil {
		p := d.Path
		if goos == "windows" {
			prepend("PATH", filepath.Join(p, "bin"))
			if isDir(filepath.Join(p, "bin", "x64")) {
				prepend("PATH", filepath.Join(p, "bin", "x64"))
			}
		} else {
			loadPath(filepath.Join(p, "lib"))
			prepend("LIBRARY_PATH", filepath.Join(p, "lib"))
			prepend("CPATH", filepath.Join(p, "include"))
		}
		w.Set["CUDNN_PATH"] = p
	}
	libs := false
	for _, t := range OtherLibraries() {
		if e := r.Libs[t]; e != nil {
			wantLibrary(&w, t, e, goos, loadPath)
			libs = true
		}
	}
	// find_package(cudss CONFIG) and the like look in the prefixes of
	// CMAKE_PREFIX_PATH for the libraries' CMake packages (and a project's
	// own find modules search them too); an environment <Package>_ROOT is
	// read only by projects that require CMake 3.12 or newer.
	for _, t := range OtherLibraries() {
		if e := r.Libs[t]; e != nil {
			prepend("CMAKE_PREFIX_PATH", e.Path)
		}
	}
	// nccl.h includes cuda_runtime.h and cusparseLt.h cusparse.h: a
	// program of these libraries builds against the toolkit's headers and
	// libraries too, so those follow theirs on the compiler's paths.
	if t := r.CUDA; t != nil && libs && goos != "windows" {
		if isDir(filepath.Join(t.Path, "include")) {
			prepend("CPATH", filepath.Join(t.Path, "include"))
		}
		if isDir(filepath.Join(t.Path, "lib")) {
			prepend("LIBRARY_PATH", filepath.Join(t.Path, "lib"))
		}
	}
	return w
}

func minor(v version.Version) int {
	if len(v) < 2 {
		return 0
	}
	return v[1]
}

// StubsDir is the toolkit's folder of link stubs, "" for none: lib/stubs
// (NVIDIA's archives, cudaenv's trees), else lib64/stubs (its installers).
func StubsDir(p string) string {
	for _, d := range []string{filepath.Join(p, "lib", "stubs"), filepath.Join(p, "lib64", "stubs")} {
		if isDir(d) {
			return d
		}
	}
	return ""
}

// libDir is lib64 when the toolkit has one (system installs, our merged
// trees link it), else lib. lib/stubs is never used: its libcuda.so is a
// link-time stand-in that fails at run time.
func libDir(p string) string {
	if isDir(filepath.Join(p, "lib64")) {
		return filepath.Join(p, "lib64")
	}
	return filepath.Join(p, "lib")
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ListSep is the list separator for goos.
func ListSep(goos string) string {
	if goos == "windows" {
		return ";"
	}
	return ":"
}

// Input is everything a hook evaluation needs.
type Input struct {
	Dir  string
	Env  envdiff.Env
	Dirs dirs.Dirs
	GOOS string
}

// Output is the result of a hook evaluation.
type Output struct {
	Resolved Resolved
	Changes  []envdiff.Change
	Watch    resolve.Watch
	// Err explains why nothing is active although something was selected;
	// the environment is reverted in that case.
	Err error
	// Prev is what cudaenv had activated before (from __CUDAENV_STATE).
	Prev envdiff.State
	// StateErr says why __CUDAENV_STATE was ignored (not one cudaenv
	// wrote); Prev is then empty and the changes drop the variable.
	StateErr error
	// Warnings name version files skipped while resolving, and why.
	Warnings []string
}

// Compute resolves the selection for in.Dir and the changes that activate
// it, reverting whatever cudaenv had activated before.
func Compute(in Input) Output {
	lookup := func(k string) (string, bool) { v, ok := in.Env[k]; return v, ok }
	sel, watch, err := resolve.Find(in.Dir, lookup, in.Dirs.GlobalFile())
	out := Output{Watch: watch, Err: err, Warnings: sel.Warnings}
	// Installing or removing a version, here or in the system store, can
	// change what a spec resolves to: the kind folders of the tools the
	// selection names are watched (each costs the idle prompt a test).
	st := store.New(in.Dirs)
	st.Warn = func(w string) { out.Warnings = append(out.Warnings, w) }
	for _, w := range []struct {
		tool version.Tool
		kind store.Kind
	}{{version.CUDA, store.CUDA}, {version.Cudnn, store.Cudnn}, {version.Nccl, store.Nccl}, {version.Cusparselt, store.Cusparselt},
		{version.Cutensor, store.Cutensor}, {version.Cudss, store.Cudss}, {version.Nvshmem, store.Nvshmem}} {
		if _, ok := sel.Spec(w.tool); !ok || sel.System() {
			continue
		}
		for _, s := range []*store.Store{st, st.System} {
			if s != nil {
				out.Watch.Files = append(out.Watch.Files, statFile(kindDir(s, w.kind)))
			}
		}
	}
	var want envdiff.Want
	if err == nil {
		// The hook runs on every directory change: read only the receipts
		// of the entries picked.
		out.Resolved, out.Err = ResolveFast(st, sel)
		if out.Err == nil {
			want = Want(out.Resolved, in.GOOS)
		}
	}
	out.Prev, out.StateErr = envdiff.Decode(in.Env[envdiff.StateVar])
	out.Changes, _ = envdiff.Apply(in.Env, out.Prev, want, ListSep(in.GOOS))
	return out
}

// Changes reverts what the environment's state says cudaenv added and
// applies want. A state variable that cannot be read, or is not one
// cudaenv wrote, is treated as empty (and replaced).
func Changes(env envdiff.Env, want envdiff.Want, goos string) []envdiff.Change {
	prev, _ := envdiff.Decode(env[envdiff.StateVar])
	changes, _ := envdiff.Apply(env, prev, want, ListSep(goos))
	return changes
}

func kindDir(s *store.Store, k store.Kind) string {
	if k.Library() {
		return filepath.Join(s.Dirs.Root, string(k))
	}
	return s.Dirs.CUDA()
}

func statFile(p string) resolve.FileState {
	fi, err := os.Stat(p)
	if err != nil {
		return resolve.FileState{Path: p}
	}
	return resolve.FileState{Path: p, Exists: true, ModTime: fi.ModTime()}
}

// Which finds a toolkit command in the resolved entries. When the selected
// version lacks it, the error names the installed versions that have it.
func Which(st *store.Store, r Resolved, name, goos string) (string, error) {
	if strings.ContainsAny(name, `/\`) || name == "" || name == "." || name == ".." {
		return "", fmt.Errorf("%q is not a command name", name)
	}
	for _, e := range r.Entries() {
		if p, ok := findIn(e.Path, name, goos); ok {
			return p, nil
		}
	}
	where := Having(st, name, goos)
	msg := fmt.Sprintf("%s: not in CUDA %s", name, r.Label())
	if r.CUDA == nil {
		msg = fmt.Sprintf("%s: no CUDA toolkit is selected (only %s)", name, r.Label())
	}
	if r.Selection.Source.Kind != resolve.None {
		msg += " (selected by " + r.Selection.Source.String() + ")"
	}
	if len(where) > 0 {
		msg += "; it is in " + strings.Join(where, ", ")
	}
	return "", errors.New(msg)
}

// Having lists the installed CUDA versions whose bin has the command.
func Having(st *store.Store, name, goos string) []string {
	var where []string
	list, _ := st.List(store.CUDA)
	for _, e := range list {
		if e.Err == nil {
			if _, ok := findIn(e.Path, name, goos); ok {
				where = append(where, e.Version.String())
			}
		}
	}
	return where
}

func findIn(root, name, goos string) (string, bool) {
	dirs := []string{filepath.Join(root, "bin")}
	names := []string{name}
	if goos == "windows" {
		dirs = append(dirs, filepath.Join(root, "bin", "x64"))
		if filepath.Ext(name) == "" {
			names = []string{name + ".exe", name + ".bat", name + ".cmd"}
		}
	}
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && (goos == "windows" || fi.Mode()&0o111 != 0) {
				return p, true
			}
		}
	}
	return "", false
}

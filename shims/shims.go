// Package shims makes toolkit commands (nvcc, ptxas, nsys, …) pick the CUDA
// version of the directory they run in, for programs that never run a shell
// hook: IDEs, make, CMake, cron, ssh. It keeps one shim per toolkit
// command in the shims folder (Rehash) and turns a call of a shim into
// the real executable and the environment to run it in (Resolve).
//
// A toolkit's bin may hold anything: a linked conda env has python3, a
// tree whose bin is /usr/bin has ls and sudo, an archive can ship its own.
// So only NVIDIA's own commands (Known, from commands.txt) always get a
// shim; any other name gets one only when the user's PATH has no command
// of that name, so a shim never shadows a program the user already runs,
// and at run time such a shim steps aside to the user's command whenever
// PATH has one. Any shim with nothing selected steps aside to the next
// command of its name on PATH, as asdf's and mise's do.
//
// A shim is the cudaenv binary under another name: a symlink on Unix, a hard
// link or a copy named NAME.exe on Windows, where symlinks need privileges.
package shims

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/envdiff"
	"github.com/cudaenv/cudaenv/store"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// Names lists the commands that may get a shim (Wanted picks those that
// do): every executable in the bin folder (and bin\x64 on Windows) of any
// installed or linked CUDA toolkit or cuDNN build, sorted, without
// duplicates. On Windows a name has no
// extension (nvcc for nvcc.exe). Broken entries are skipped.
func Names(st *store.Store, goos string) ([]string, error) {
	seen := map[string]bool{}
	for _, k := range []store.Kind{store.CUDA, store.Cudnn} {
		list, err := st.List(k)
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			if e.Err != nil {
				continue
			}
			dirs := []string{filepath.Join(e.Path, "bin")}
			if goos == "windows" {
				dirs = append(dirs, filepath.Join(e.Path, "bin", "x64"))
			}
			for _, d := range dirs {
				addExecutables(seen, d, goos)
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// winExts are the extensions Windows runs without naming them.
var winExts = []string{".exe", ".bat", ".cmd"}

func addExecutables(seen map[string]bool, dir, goos string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		if goos == "windows" {
			ext := strings.ToLower(filepath.Ext(name))
			if !contains(winExts, ext) {
				continue
			}
			name = name[:len(name)-len(ext)]
		}
		if !validName(name, goos) {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, de.Name())) // follows symlinks
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if goos != "windows" && fi.Mode()&0o111 == 0 {
			continue
		}
		seen[name] = true
	}
}

// validName keeps out names a shim cannot have: hidden files, and names the
// cudaenv binary answers to itself (see IsShimName).
func validName(name, goos string) bool {
	if name == "" || name[0] == '.' || !IsShimName(name, goos) {
		return false
	}
	return !strings.ContainsAny(name, "\x00\n\r")
}

// IsShimName reports whether a program name (argv[0]'s base name) calls
// a shim rather than cudaenv itself. Every name that starts with
// "cudaenv" (cudaenv, cudaenv.exe, cudaenv-dev, the test binary) is
// cudaenv; no toolkit command starts that way.
func IsShimName(base, goos string) bool {
	if goos == "windows" {
		base = strings.ToLower(base)
	}
	return base != "" && !strings.HasPrefix(base, "cudaenv")
}

// CommandName turns argv[0] into the command a shim stands for: the base
// name, without .exe on Windows.
func CommandName(arg0, goos string) string {
	base := arg0
	if i := strings.LastIndexAny(base, separators(goos)); i >= 0 {
		base = base[i+1:]
	}
	if goos == "windows" && strings.EqualFold(filepath.Ext(base), ".exe") {
		base = base[:len(base)-4]
	}
	return base
}

func separators(goos string) string {
	if goos == "windows" {
		return `/\`
	}
	return "/"
}

// fileName is the shim file for a command name.
func fileName(name, goos string) string {
	if goos == "windows" {
		return name + ".exe"
	}
	return name
}

// Report says what a rehash changed.
type Report struct {
	Added   []string // new or repaired shims
	Removed []string // shims of commands no toolkit has any more
	Kept    int      // shims already up to date
	Skipped []string // toolkit executables left without a shim: not NVIDIA's, and on the user's PATH
}

// Wanted splits names (from Names) into those that get a shim and those
// that do not: a name NVIDIA ships (Known) always gets one; any other
// only when userPath has no executable of that name outside the store
// (its toolkits and the shims folder). Relative PATH entries are not
// looked in: they name a different folder in every directory.
func Wanted(names []string, st *store.Store, userPath, goos string) (shim, skip []string) {
	outside := outsideStore(st.Dirs, goos)
	for _, n := range names {
		if Known(n, goos) || FindOnPath(n, userPath, goos, outside, nil) == "" {
			shim = append(shim, n)
		} else {
			skip = append(skip, n)
		}
	}
	return shim, skip
}

// within reports whether path is dir or lies below it; both are clean.
func within(path, dir, goos string) bool {
	if goos == "windows" {
		path, dir = strings.ToLower(path), strings.ToLower(dir)
	}
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// UserPath is env's PATH as the user set it: without what cudaenv's
// prompt hook or cudaenv exec added (recorded in its state variable).
// Rehash decides shadowing on it.
func UserPath(env envdiff.Env, goos string) string {
	return envdiff.Result(env, activate.Changes(env, envdiff.Want{}, goos))["PATH"]
}

// Rehash brings the shims folder in line with the store: one shim per name
// that Wanted keeps from Names, judged against userPath (see UserPath),
// each pointing at (Unix) or a copy of (Windows) the cudaenv binary self;
// anything else in the folder is removed. It is safe to run concurrently
// with shim calls (each shim is replaced with one rename) and with another
// rehash (they take turns).
func Rehash(st *store.Store, self, goos, userPath string) (Report, error) {
	var rep Report
	if !filepath.IsAbs(self) {
		return rep, fmt.Errorf("rehash: the cudaenv binary's path %q is not absolute", self)
	}
	unlock, err := st.Lock("shims", "rehash")
	if err != nil {
		return rep, fmt.Errorf("rehash: %w", err)
	}
	defer unlock()
	all, err := Names(st, goos)
	if err != nil {
		return rep, fmt.Errorf("rehash: %w", err)
	}
	names, skipped := Wanted(all, st, userPath, goos)
	rep.Skipped = skipped
	dir := st.Dirs.Shims()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rep, fmt.Errorf("rehash: %w", err)
	}
	want := make(map[string]bool, len(names))
	var errs []error
	for _, n := range names {
		file := fileName(n, goos)
		want[file] = true
		path := filepath.Join(dir, file)
		if upToDate(path, self, goos) {
			rep.Kept++
			continue
		}
		if err := place(path, self, goos); err != nil {
			errs = append(errs, err)
			continue
		}
		rep.Added = append(rep.Added, n)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return rep, fmt.Errorf("rehash: %w", err)
	}
	for _, de := range des {
		if want[de.Name()] {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// A running Windows shim cannot be deleted, only renamed; a
			// leftover is retried by the next rehash.
			if !strings.HasPrefix(de.Name(), ".") {
				errs = append(errs, fmt.Errorf("remove shim %s: %w", p, err))
			}
			continue
		}
		if !strings.HasPrefix(de.Name(), ".") {
			rep.Removed = append(rep.Removed, CommandName(de.Name(), goos))
		}
	}
	if len(errs) > 0 {
		return rep, fmt.Errorf("rehash: %w", termsafe.Join(errs...))
	}
	return rep, nil
}

// upToDate reports whether path already is a shim for self.
func upToDate(path, self, goos string) bool {
	if goos != "windows" {
		target, err := os.Readlink(path)
		return err == nil && target == self
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	si, err := os.Stat(self)
	if err != nil {
		return false
	}
	// A hard link is the same file; a copy has self's size and mtime.
	return os.SameFile(fi, si) || (fi.Size() == si.Size() && fi.ModTime().Equal(si.ModTime()))
}

// place puts a fresh shim at path with one rename, so a concurrent call
// sees either the old shim or the new one.
func place(path, self, goos string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+randomSuffix())
	var err error
	if goos == "windows" {
		err = linkOrCopy(self, tmp)
	} else {
		err = os.Symlink(self, tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create shim %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		// Windows will not replace a running executable, but it will
		// rename it: move the old one aside, for the next rehash to delete.
		old := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".old-"+randomSuffix())
		if os.Rename(path, old) == nil && os.Rename(tmp, path) == nil {
			os.Remove(old)
			return nil
		}
		os.Remove(tmp)
		return fmt.Errorf("create shim %s: %w", path, err)
	}
	return nil
}

// linkOrCopy hard-links self to dst, or copies it where links cannot be
// made (another volume, a file system without hard links). A copy gets
// self's mtime so that upToDate recognises it.
func linkOrCopy(self, dst string) error {
	if os.Link(self, dst) == nil {
		return nil
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	si, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chtimes(dst, si.ModTime(), si.ModTime())
}

var suffixes atomic.Uint64

// randomSuffix names a temporary file uniquely among concurrent rehashes
// (the process id) and within one (a counter). crypto/rand is not used:
// its package initialisation would run in every shim call too.
func randomSuffix() string {
	n := suffixes.Add(1)
	return strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(n, 10)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

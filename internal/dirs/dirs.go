// Package dirs decides where cudaenv keeps its store, its global default and
// its caches, from CUDAENV_ROOT or the XDG base directories, and refuses
// folders that would be unsafe on PATH.
package dirs

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/internal/config"
)

// Dirs is the on-disk layout.
type Dirs struct {
	Root   string // the store: cuda/, cudnn/, shims/
	Config string // holds the global default file
	Cache  string // downloads, the release index, hook stamps
	// System is the shared system store (an admin's /opt/cudaenv on NFS
	// or Lustre), read beside Root and never written by users; "" for
	// none. It is always absolute.
	System string
}

// Lookup reads one environment variable.
type Lookup func(string) (string, bool)

// FromEnv picks the layout. CUDAENV_ROOT moves the store; CUDAENV_CONFIG_DIR
// and CUDAENV_CACHE_DIR move the others. Everything else comes from XDG
// (~/.local/share/cudaenv, %LOCALAPPDATA%\cudaenv on Windows).
//
// Every folder must be absolute and free of control characters, and the
// store's free of the list separator too: its folders go on PATH, where a
// relative entry would run whatever the directory a shell is in holds,
// and a ':' would split one entry in two. Such a setting is refused, not
// repaired, so the error names the variable to fix.
func FromEnv(env Lookup) (Dirs, error) {
	data, config, cache := baseDirs(env)
	d := Dirs{
		Root:   filepath.Join(data, "cudaenv"),
		Config: filepath.Join(config, "cudaenv"),
		Cache:  filepath.Join(cache, "cudaenv"),
	}
	for _, f := range []struct {
		name   string
		field  *string
		onPath bool
		from   string // where the default comes from
	}{
		{"CUDAENV_ROOT", &d.Root, true, "HOME or XDG_DATA_HOME"},
		{"CUDAENV_CONFIG_DIR", &d.Config, false, "HOME or XDG_CONFIG_HOME"},
		{"CUDAENV_CACHE_DIR", &d.Cache, false, "HOME or XDG_CACHE_HOME"},
	} {
		what := f.name
		if v, ok := env(f.name); ok && v != "" {
			*f.field = v
		} else {
			what = "the default for " + f.name + " (from " + f.from + ")"
		}
		if err := check(what, f.name, *f.field, f.onPath); err != nil {
			return Dirs{}, err
		}
		*f.field = filepath.Clean(*f.field)
	}
	if err := checkSystem(&d, env); err != nil {
		return Dirs{}, err
	}
	return d, nil
}

func check(what, name, p string, onPath bool) error {
	q := strconv.Quote(p)
	switch why := problem(p, onPath); why {
	case "":
		return nil
	case notAbsolute:
		return fmt.Errorf("%s=%s %s; set %s to one, e.g. %s", what, q, why, name, example(name))
	default:
		return fmt.Errorf("%s=%s %s; set %s to a folder whose name has none", what, q, why, name)
	}
}

const notAbsolute = "is not an absolute path"

func hasControl(p string) bool {
	return strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0
}

// problem says what is wrong with p as a folder cudaenv uses ("" when
// nothing is): a control character, the list separator where onPath, or
// a relative path, checked in that order.
func problem(p string, onPath bool) string {
	if hasControl(p) {
		return "holds a control character"
	}
	if sep := string(filepath.ListSeparator); onPath && strings.Contains(p, sep) {
		return fmt.Sprintf("holds %q, which separates PATH entries", sep)
	}
	if !filepath.IsAbs(p) {
		return notAbsolute
	}
	return ""
}

// CheckOnPath applies the store folders' rule to any folder whose
// subfolders go on PATH and LD_LIBRARY_PATH (a linked toolkit, a path read
// back from a receipt): it must be absolute and hold no control character
// (a newline would add lines to $GITHUB_PATH and to env files) and no
// list separator (a ':' would put relative bin and lib64 folders, which
// are the working directory's, on PATH). The error says what is wrong,
// the path quoted.
func CheckOnPath(p string) error {
	if why := problem(p, true); why != "" {
		return fmt.Errorf("%s %s", strconv.Quote(p), why)
	}
	return nil
}

func example(name string) string {
	switch name {
	case "CUDAENV_CONFIG_DIR":
		return `"$HOME/.config/cudaenv"`
	case "CUDAENV_CACHE_DIR":
		return `"$HOME/.cache/cudaenv"`
	}
	return `"$HOME/.local/share/cudaenv"`
}

// checkSystem checks the system store's folder as the others: its
// entries go on PATH too.
func checkSystem(d *Dirs, env Lookup) error {
	d.System = systemRoot(env, d.Config)
	if d.System == "" {
		return nil
	}
	return check("CUDAENV_SYSTEM_ROOT (or system_root)", "CUDAENV_SYSTEM_ROOT", d.System, true)
}

// systemRoot is CUDAENV_SYSTEM_ROOT, else system_root in the settings
// file. A relative folder would name another store in every directory,
// so it counts as none (the --system commands say so).
func systemRoot(env Lookup, configDir string) string {
	v, ok := env("CUDAENV_SYSTEM_ROOT")
	if !ok || v == "" {
		data, err := config.Read(configDir)
		if err != nil {
			return ""
		}
		v, _ = config.Lookup(data, "system_root")
	}
	if v == "" || !filepath.IsAbs(v) {
		return ""
	}
	return filepath.Clean(v)
}

// CUDA is the folder of installed toolkits, one per full version.
func (d Dirs) CUDA() string { return filepath.Join(d.Root, "cuda") }

// Cudnn is the folder of installed cuDNN builds, one per version and CUDA major.
func (d Dirs) Cudnn() string { return filepath.Join(d.Root, "cudnn") }

// Shims is the folder of shim executables.
func (d Dirs) Shims() string { return filepath.Join(d.Root, "shims") }

// Staging holds half-built installs; nothing in it is ever selected.
func (d Dirs) Staging() string { return filepath.Join(d.Root, ".staging") }

// Locks holds per-version install locks.
func (d Dirs) Locks() string { return filepath.Join(d.Root, ".locks") }

// GlobalFile is the global default, same grammar as .cuda-version.
func (d Dirs) GlobalFile() string { return filepath.Join(d.Config, "version") }

// Stamps holds the reference files the shell hooks compare mtimes against.
func (d Dirs) Stamps() string { return filepath.Join(d.Cache, "stamps") }

// Downloads holds verified archives by sha256.
func (d Dirs) Downloads() string { return d.Cache }

// Package envpins reads which NVIDIA wheels a Python environment loads:
// a virtual environment or conda prefix (its installed nvidia-* and
// cutensor-* dist-infos), a uv.lock, a pylock.toml (PEP 751) or a
// requirements.txt of exact pins. Reading is a pure translation: the
// environment becomes a sorted list of exact PEP 508 requirements
// ("nvidia-cublas-cu12==12.8.4.1"), markers evaluated for the target
// platform and Python, which `install --for` resolves into a toolkit
// whose libraries are byte for byte the environment's.
//
// Every file is hostile input (a cloned repository ships its .venv and
// its lock): environments are read through internal/venv's bounded
// reader, lock files through the same reader with a size cap, and every
// name and version is checked before it is returned. What is passed over
// is said in Pins.Passed; paths and those lines are not escaped, so
// callers escape them before printing.
package envpins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/termsafe"
	"github.com/cudaenv/cudaenv/internal/venv"
)

// Kinds of environment Read understands.
const (
	KindVenv         = "venv"
	KindConda        = "conda"
	KindSitePackages = "site-packages" // a prefix with lib/python3.X/site-packages, neither venv nor conda
	KindUVLock       = "uv.lock"
	KindPylock       = "pylock.toml"
	KindRequirements = "requirements.txt"
)

// MaxLockBytes caps a lock or requirements file: a uv.lock of a large
// workspace is a few MB; one larger than this is not a real one.
const MaxLockBytes = 16 << 20

// Target is what markers are evaluated for: a uv.lock or pylock.toml
// holds the wheels of every platform and Python.
type Target struct {
	Platform string // NVIDIA's key: linux-x86_64, linux-sbsa, windows-x86_64
	Python   string // "3.12"
}

// Pins is what an environment loads of NVIDIA's wheels.
type Pins struct {
	Path string // the file or folder read
	Kind string // one of the Kind constants
	// Python is the environment's own Python (a venv's site-packages
	// names it), else the target's.
	Python string
	// Requirements are the exact pins of the NVIDIA library projects,
	// sorted by project: "nvidia-cublas-cu12==12.8.4.1".
	Requirements []string
	// Frameworks are the frameworks there that load them: "torch 2.9.0".
	Frameworks []string
	// Passed says what was passed over and why: an nvidia-* project
	// cudaenv installs nothing of, an entry whose version is not valid,
	// a marker that does not evaluate.
	Passed []string
}

// Label names an environment in what install --for says: its kind and
// path ("venv /home/me/proj/.venv"), or the path alone where its name says
// the kind ("lock/uv.lock", not "uv.lock lock/uv.lock").
func Label(kind, path string) string {
	if strings.EqualFold(filepath.Base(path), kind) {
		return path
	}
	return kind + " " + path
}

// IsPath reports whether a --for argument names a file or folder rather
// than a requirement: it has a path separator, starts with a dot (.venv,
// ., ..) or a tilde, or is named like a lock or requirements file. A PEP
// 508 requirement has none of these ("torch==2.5.1", "jax[cuda13]>=0.9":
// a project name starts with a letter or digit); one with a URL (name @
// https://…) is a requirement.
func IsPath(arg string) bool {
	if strings.Contains(arg, " @ ") || strings.Contains(arg, "://") {
		return false
	}
	if strings.HasPrefix(arg, ".") || strings.HasPrefix(arg, "~") || strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator) {
		return true
	}
	base := strings.ToLower(arg)
	return base == "uv.lock" || strings.HasSuffix(base, ".toml") || strings.HasSuffix(base, ".txt")
}

// Read reads the environment at path: a folder (a venv or conda prefix;
// else a project folder with a pylock.toml or uv.lock) or a file named
// uv.lock, pylock.toml, pylock.*.toml or *.txt. The error says what path
// is not, and what to pass instead.
func Read(ctx context.Context, path string, t Target) (Pins, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Pins{}, fmt.Errorf("%s: %w", path, unwrapPathErr(err))
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		// The folder a link names is the user's to choose; a lock file
		// behind one is read as ReadFile reads (refused).
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			fi = st
		}
	}
	if fi.IsDir() {
		// An environment's site-packages are looked for only under an
		// absolute prefix (a relative one would move with the working
		// folder): --for .venv is the one here.
		abs, err := filepath.Abs(path)
		if err != nil {
			return Pins{}, fmt.Errorf("%s: %w", path, err)
		}
		env, err := venv.Open(ctx, abs)
		if err == nil {
			return readEnv(ctx, env, t)
		}
		for _, name := range []string{"pylock.toml", "uv.lock"} {
			if _, serr := os.Lstat(filepath.Join(path, name)); serr == nil {
				return Read(ctx, filepath.Join(path, name), t)
			}
		}
		return Pins{}, fmt.Errorf("%s is neither a virtual environment or conda prefix (no lib/python3.X/site-packages) nor a project folder with a pylock.toml or uv.lock; pass the environment's folder or the lock file", path)
	}
	var read func(data []byte, c *collector, t Target) error
	switch lockKind(filepath.Base(path)) {
	case KindUVLock:
		read = readUVLock
	case KindPylock:
		read = readPylock
	case KindRequirements:
		read = readRequirements
	default:
		return Pins{}, fmt.Errorf("%s: cudaenv reads a venv or conda prefix, a uv.lock, a pylock.toml (or pylock.NAME.toml) or a requirements .txt; rename it or pass one of those", path)
	}
	if err := checkTarget(t); err != nil {
		return Pins{}, err
	}
	data, err := venv.ReadFile(ctx, path, MaxLockBytes)
	if err != nil {
		return Pins{}, lockReadErr(path, err)
	}
	p := Pins{Path: path, Python: t.Python, Kind: lockKind(filepath.Base(path))}
	var c collector
	if err := read(data, &c, t); err != nil {
		return Pins{}, fmt.Errorf("%s: %w", path, err)
	}
	c.into(&p)
	if len(p.Requirements) == 0 {
		return p, fmt.Errorf("%s names no NVIDIA CUDA wheel for %s and Python %s%s", path, t.Platform, t.Python, passedSuffix(p.Passed))
	}
	return p, nil
}

// lockKind is the kind of lock file a file's name says (uv.lock,
// pylock.toml or pylock.NAME.toml, a requirements .txt); "" for none.
func lockKind(name string) string {
	base := strings.ToLower(name)
	switch {
	case base == "uv.lock":
		return KindUVLock
	case base == "pylock.toml" || (strings.HasPrefix(base, "pylock.") && strings.HasSuffix(base, ".toml")):
		return KindPylock
	case strings.HasSuffix(base, ".txt"):
		return KindRequirements
	}
	return ""
}

// passedSuffix words what was passed over, for an error that found nothing.
func passedSuffix(passed []string) string {
	if len(passed) == 0 {
		return ""
	}
	more := ""
	if len(passed) > 3 {
		more = fmt.Sprintf(", and %d more", len(passed)-3)
		passed = passed[:3]
	}
	return " (passed over: " + strings.Join(passed, "; ") + more + ")"
}

func checkTarget(t Target) error {
	_, err := pypi.PythonEnv(t.Platform, t.Python)
	return err
}

// lockReadErr words a refused read of the lock file at path.
func lockReadErr(path string, err error) error {
	var pe *venv.PathError
	if errors.As(err, &pe) && errors.Is(err, venv.ErrTooLarge) {
		return fmt.Errorf("%s is larger than %d MiB, more than any real lock file; refusing it", pe.Path, MaxLockBytes>>20)
	}
	if errors.Is(err, venv.ErrLink) {
		// A link a repository ships may point anywhere; the file it
		// names, passed by the user, is read as any lock is.
		if target, lerr := os.Readlink(path); lerr == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(path), target)
			}
			if lockKind(filepath.Base(target)) == lockKind(filepath.Base(path)) {
				return fmt.Errorf("%w; pass the file it names instead: --for %s", err, termsafe.Arg(target))
			}
			return fmt.Errorf("%w; pass a copy of the file it names (%s) named %s", err, target, filepath.Base(path))
		}
	}
	return err
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// pin is one project at one version, where it was found.
type pin struct {
	project, version, from string
}

// collector gathers pins and frameworks, refusing two versions of one
// project.
type collector struct {
	pins       map[string]pin // by normalized project
	frameworks []string
	passed     []string
}

func (c *collector) add(name, version, from string) error {
	project := pypi.NormalizeProject(name)
	if fw := frameworkName(project); fw != "" {
		c.frameworks = append(c.frameworks, fw+" "+version)
		return nil
	}
	if !isNVIDIA(project) {
		return nil
	}
	if !venv.ValidName(name) || !venv.ValidVersion(version) {
		c.passed = append(c.passed, fmt.Sprintf("%s %s (%s): not a valid name and version", name, version, from))
		return nil
	}
	if !knownProjects()[project] {
		c.passed = append(c.passed, fmt.Sprintf("%s %s: not a CUDA library wheel cudaenv installs", project, version))
		return nil
	}
	if have, ok := c.pins[project]; ok {
		if pypi.SameVersion(have.version, version) {
			return nil
		}
		return fmt.Errorf("it has two versions of %s for the same target: %s (%s) and %s (%s); pass the one environment you mean", project, have.version, have.from, version, from)
	}
	if c.pins == nil {
		c.pins = map[string]pin{}
	}
	c.pins[project] = pin{project, version, from}
	return nil
}

func (c *collector) into(p *Pins) {
	for _, k := range slices.Sorted(maps.Keys(c.pins)) {
		p.Requirements = append(p.Requirements, k+"=="+c.pins[k].version)
	}
	sort.Strings(c.frameworks)
	p.Frameworks = slices.Compact(c.frameworks)
	p.Passed = append(p.Passed, c.passed...)
}

// isNVIDIA: the projects whose versions are NVIDIA's libraries (and
// what cudaenv passes over among them, with a word).
func isNVIDIA(project string) bool {
	return strings.HasPrefix(project, "nvidia-") || strings.HasPrefix(project, "cutensor-cu")
}

// knownProjects are the wheels cudaenv installs: every component of
// every CUDA release its catalog knows, for CUDA 11, 12 and 13, and the
// libraries (cuDNN, NCCL, cuSPARSELt, cuTENSOR, cuDSS, NVSHMEM).
var knownProjects = sync.OnceValue(func() map[string]bool {
	ids := []string{"cudnn", "nccl", "cusparselt", "cutensor", "cudss", "nvshmem"}
	for _, r := range pypi.CatalogReleases() {
		for _, c := range r.Components {
			ids = append(ids, c.ID)
		}
	}
	out := map[string]bool{}
	for _, id := range ids {
		for _, m := range []int{11, 12, 13} {
			if p, err := pypi.Project(id, m); err == nil {
				out[p] = true
			}
		}
	}
	return out
})

var reFramework = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(torch|jax-cuda[0-9]+-(plugin|pjrt)|tensorflow|tensorflow-gpu|cupy-cuda[0-9]+x?|paddlepaddle-gpu|vllm|xformers|onnxruntime-gpu)$`)
})

// frameworkName is the project when it is a framework that loads NVIDIA's
// wheels, else "".
func frameworkName(project string) string {
	if reFramework().MatchString(project) {
		return project
	}
	return ""
}

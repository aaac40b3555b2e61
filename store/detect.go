package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/internal/dirs"
	"github.com/cudaenv/cudaenv/internal/termsafe"
	"github.com/cudaenv/cudaenv/internal/version"
)

// nvccTimeout bounds bin/nvcc --version, the last way DetectCUDA tries.
var nvccTimeout = 10 * time.Second

// ReleaseTable names the CUDA releases that shipped a component build
// ("cuda_cudart", "13.0.48" → 13.0.0), oldest first; nil names none.
type ReleaseTable func(component, build string) []string

// DetectCUDA reads a toolkit's release from its files: version.json (CUDA
// 11.1 and later), else version.txt. A tree without them (a pip or conda
// environment) states only component builds: that of libcudart.so.X.Y.Z,
// else what bin/nvcc --version says; table turns the build into the
// release that shipped it (13.0.48 → 13.0.0, never the build itself, which
// would sort above 13.0.0 and take over every 13.0 pin). A build no release
// is known for, or a tree whose include/cuda.h gives only the major.minor,
// is refused (*UnnamedError) with the way to name the release (--as). nvcc
// runs only when no file names a release or build, since running a linked
// tree's program is running whatever it holds; that run is bounded in time
// even when nvcc leaves a process behind holding its output.
func DetectCUDA(dir string, table ReleaseTable) (version.Version, error) {
	if data, err := os.ReadFile(filepath.Join(dir, "version.json")); err == nil {
		var vj struct {
			CUDA struct {
				Version string `json:"version"`
			} `json:"cuda"`
		}
		if err := json.Unmarshal(data, &vj); err == nil && vj.CUDA.Version != "" {
			return parseToolkitVersion(vj.CUDA.Version)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "version.txt")); err == nil {
		// "CUDA Version 11.0.228"
		if m := regexp.MustCompile(`CUDA Version (\d+(?:\.\d+)*)`).FindSubmatch(data); m != nil {
			return parseToolkitVersion(string(m[1]))
		}
	}
	if build, lib := cudartBuild(dir); build != "" {
		return fromBuild(table, "cuda_cudart", build, lib, dir)
	}
	nvcc := filepath.Join(dir, "bin", "nvcc")
	if _, err := os.Stat(nvcc); err != nil {
		if mm, ok := headerRelease(dir); ok {
			return nil, &UnnamedError{Dir: dir, Release: mm, Evidence: "include/cuda.h"}
		}
		return nil, fmt.Errorf("%s does not look like a CUDA toolkit (no version.json, version.txt, libcudart, include/cuda.h or bin/nvcc)", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), nvccTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvcc, "--version")
	// A child that nvcc leaves behind keeps stdout open; without this,
	// Output waits for it however long it lives.
	cmd.WaitDelay = time.Second
	out, _ := cmd.Output()
	// "Cuda compilation tools, release 12.4, V12.4.131"; what nvcc said
	// counts even if it then lingered.
	if m := regexp.MustCompile(`release \d+\.\d+, V(\d+\.\d+\.\d+)`).FindSubmatch(out); m != nil {
		return fromBuild(table, "cuda_nvcc", string(m[1]), "bin/nvcc --version", dir)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s --version did not finish within %s; if %s is a CUDA toolkit, give it a version.json", nvcc, nvccTimeout, dir)
	}
	return nil, fmt.Errorf("%s does not look like a CUDA toolkit (no version.json, version.txt, libcudart or include/cuda.h, and %s --version does not name a release)", dir, nvcc)
}

// UnnamedError says that a tree's files give a CUDA build or major.minor
// but no release; the user names it (cudaenv link PATH --as 13.0.2).
type UnnamedError struct {
	Dir      string
	Release  string // what is known: "13.5" (major.minor)
	Build    string // the component build, "13.5.37"; "" when none
	Evidence string // where it was read: "libcudart.so.13.5.37", "include/cuda.h"
}

func (e *UnnamedError) Error() string {
	what := fmt.Sprintf("it holds CUDA %s (%s)", e.Release, e.Evidence)
	if e.Build != "" {
		what = fmt.Sprintf("it holds CUDA %s build %s (%s), which cudaenv's table does not name a release for", e.Release, e.Build, e.Evidence)
	}
	return fmt.Sprintf("no version.json or version.txt names its release, and %s; say which %s release it is, e.g. cudaenv link %s --as %s.0",
		what, e.Release, termsafe.Arg(e.Dir), e.Release)
}

// fromBuild names the release of a component build through the table; of
// several releases that shipped the same build it takes the newest, whose
// driver requirement is the safe one to check against.
func fromBuild(table ReleaseTable, component, build, evidence, dir string) (version.Version, error) {
	v, err := parseToolkitVersion(build)
	if err != nil {
		return nil, err
	}
	mm := fmt.Sprintf("%d.%d", v[0], v[1])
	if table != nil {
		if rels := table(component, build); len(rels) > 0 {
			return parseToolkitVersion(rels[len(rels)-1])
		}
	}
	return nil, &UnnamedError{Dir: dir, Release: mm, Build: build, Evidence: evidence}
}

// headerRelease reads CUDA_VERSION (12040 for 12.4) from cuda.h in include
// or targets/*/include (where conda keeps it): the major.minor only.
func headerRelease(dir string) (string, bool) {
	headers := []string{filepath.Join(dir, "include", "cuda.h")}
	more, _ := filepath.Glob(filepath.Join(dir, "targets", "*", "include", "cuda.h"))
	for _, h := range append(headers, more...) {
		data, err := os.ReadFile(h)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 3 || f[0] != "#define" || f[1] != "CUDA_VERSION" {
				continue
			}
			n, err := strconv.Atoi(f[2])
			if err != nil || n < 1000 {
				break
			}
			return fmt.Sprintf("%d.%d", n/1000, n%1000/10), true
		}
	}
	return "", false
}

// cudartBuild finds libcudart.so.MAJOR.MINOR.BUILD in the tree's library
// folders and returns the build ("13.0.48") and the file name. Of several
// (a conda env with two runtimes) the one whose major.minor cuda.h states
// wins, else the newest.
func cudartBuild(dir string) (build, file string) {
	var libs []string
	for _, pat := range []string{"lib64", "lib", filepath.Join("targets", "*", "lib")} {
		m, _ := filepath.Glob(filepath.Join(dir, pat, "libcudart.so.*.*.*"))
		libs = append(libs, m...)
	}
	want, _ := headerRelease(dir)
	var best version.Version
	for _, l := range libs {
		name := filepath.Base(l)
		v, err := version.Parse(strings.TrimPrefix(name, "libcudart.so."))
		if err != nil || len(v) != 3 {
			continue
		}
		if want != "" && fmt.Sprintf("%d.%d", v[0], v[1]) != want {
			continue
		}
		if best == nil || version.Compare(v, best) > 0 {
			best, file = v, name
		}
	}
	if best == nil {
		return "", ""
	}
	return best.String(), file
}

// parseToolkitVersion keeps the first three parts: 11.0.228 stays, 12.4.1 stays.
func parseToolkitVersion(s string) (version.Version, error) {
	v, err := version.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	if len(v) > 3 {
		v = v[:3]
	}
	for len(v) < 3 {
		v = append(v, 0)
	}
	return v, nil
}

// DetectCudnn reads cuDNN's version from include/cudnn_version.h (or
// cudnn.h for cuDNN 7 and older).
func DetectCudnn(dir string) (version.Version, error) {
	for _, name := range []string{"cudnn_version.h", "cudnn.h"} {
		data, err := os.ReadFile(filepath.Join(dir, "include", name))
		if err != nil {
			continue
		}
		defs := map[string]int{}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) >= 3 && f[0] == "#define" {
				if n, err := strconv.Atoi(f[2]); err == nil {
					defs[f[1]] = n
				}
			}
		}
		major, ok1 := defs["CUDNN_MAJOR"]
		minor, ok2 := defs["CUDNN_MINOR"]
		patch, ok3 := defs["CUDNN_PATCHLEVEL"]
		if ok1 && ok2 && ok3 {
			return version.Version{major, minor, patch}, nil
		}
	}
	return nil, fmt.Errorf("%s has no include/cudnn_version.h with CUDNN_MAJOR, CUDNN_MINOR and CUDNN_PATCHLEVEL", dir)
}

// ErrExists is returned when an entry of that name is already in the store.
var ErrExists = errors.New("already in the store")

// LinkOptions say how Link names what it adopts.
type LinkOptions struct {
	// CudnnFor > 0: the target is a cuDNN build for this CUDA major.
	CudnnFor int
	// As is the release, given by the user; nil means detect it.
	As version.Version
	// Releases names the release of a component build (see DetectCUDA).
	Releases ReleaseTable
}

// Link adopts a toolkit (or, with cudnnMajor > 0, a cuDNN build for that
// CUDA major) that lives at target, without copying it; see LinkWith.
func (s *Store) Link(target string, cudnnMajor int) (Entry, error) {
	return s.LinkWith(target, LinkOptions{CudnnFor: cudnnMajor})
}

// LinkWith adopts a toolkit or cuDNN build that lives at target, without
// copying it, named by o.As or by what its files say.
func (s *Store) LinkWith(target string, o LinkOptions) (Entry, error) {
	cudnnMajor := o.CudnnFor
	abs, err := filepath.Abs(target)
	if err != nil {
		return Entry{}, err
	}
	// The receipt (JSON) could not hold the path: refuse before detecting.
	if err := s.checkUTF8(abs); err != nil {
		return Entry{}, fmt.Errorf("link: %w", err)
	}
	// Its bin and lib64 go on PATH and LD_LIBRARY_PATH: the store
	// folders' rule (dirs.CheckOnPath).
	if err := dirs.CheckOnPath(abs); err != nil {
		return Entry{}, fmt.Errorf("link: path %w; move or rename it, or link a symbolic link to it whose path has none", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return Entry{}, fmt.Errorf("link %s: not a directory", target)
	}
	// Before anything in it runs (detection may run bin/nvcc): every
	// user would run what the system store's link holds.
	if s.Shared {
		if err := s.checkAdoptable(abs); err != nil {
			return Entry{}, err
		}
	}
	kind, name := CUDA, ""
	var v version.Version
	switch {
	case cudnnMajor > 0:
		kind = Cudnn
		v = o.As
		if v == nil {
			if v, err = DetectCudnn(abs); err != nil {
				return Entry{}, fmt.Errorf("link %s: %w", target, err)
			}
		}
		name = CudnnName(v, cudnnMajor)
	case o.As != nil:
		if v, err = parseToolkitVersion(o.As.String()); err != nil {
			return Entry{}, fmt.Errorf("link %s --as %s: %w", target, o.As, err)
		}
		name = v.String()
	default:
		if v, err = DetectCUDA(abs, o.Releases); err != nil {
			if _, cerr := DetectCudnn(abs); cerr == nil {
				return Entry{}, fmt.Errorf("link %s: this is a cuDNN build; say which CUDA major it is for with --cudnn-for 12", target)
			}
			var ue *UnnamedError
			if errors.As(err, &ue) {
				ue.Dir = target
			}
			return Entry{}, fmt.Errorf("link %s: %w", target, err)
		}
		name = v.String()
	}
	unlock, err := s.Lock(kind, name)
	if err != nil {
		return Entry{}, err
	}
	defer unlock()
	if e, ok := s.GetOwn(kind, name); ok { // a system store's entry is shadowed, not replaced
		how := "installed"
		if e.Linked() {
			how = "linked to " + e.Path
		}
		return Entry{}, fmt.Errorf("link %s: %s %s is %w (%s); uninstall it first", target, kind, name, ErrExists, how)
	}
	return s.Install(kind, name, func(string) (Receipt, error) {
		return Receipt{Source: "link", Target: abs}, nil
	})
}

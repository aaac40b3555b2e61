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

	"github.com/cudaenv/cudaenv/internal/version"
)

// nvccTimeout bounds bin/nvcc --version, the last way DetectCUDA tries.
var nvccTimeout = 10 * time.Second

// DetectCUDA reads a toolkit's version from its files: version.json (CUDA
// 11.1 and later), else version.txt, else CUDA_VERSION in include/cuda.h
// (a conda env or a distribution's tree, with the patch level from
// libcudart.so.X.Y.Z where there is one). Only a tree with none of these
// has its bin/nvcc run (--version), since running a linked tree's program
// is running whatever it holds; that run is bounded in time even when nvcc
// leaves a process behind holding its output.
func DetectCUDA(dir string) (version.Version, error) {
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
	if v, ok := headerVersion(dir); ok {
		return v, nil
	}
	nvcc := filepath.Join(dir, "bin", "nvcc")
	if _, err := os.Stat(nvcc); err != nil {
		return nil, fmt.Errorf("%s does not look like a CUDA toolkit (no version.json, version.txt, include/cuda.h or bin/nvcc)", dir)
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
		return parseToolkitVersion(string(m[1]))
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s --version did not finish within %s; if %s is a CUDA toolkit, give it a version.json", nvcc, nvccTimeout, dir)
	}
	return nil, fmt.Errorf("%s does not look like a CUDA toolkit (no version.json, version.txt or include/cuda.h, and %s --version does not name a release)", dir, nvcc)
}

// headerVersion reads CUDA_VERSION (12040 for 12.4) from cuda.h in
// include or targets/*/include (where conda keeps it). The patch level
// comes from a libcudart.so.12.4.127 of the same release beside it, else
// it is 0.
func headerVersion(dir string) (version.Version, bool) {
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
			v := version.Version{n / 1000, n % 1000 / 10, 0}
			v[2] = cudartPatch(dir, v[0], v[1])
			return v, true
		}
	}
	return nil, false
}

// cudartPatch finds libcudart.so.MAJOR.MINOR.PATCH in the tree's library
// folders and returns PATCH, or 0.
func cudartPatch(dir string, major, minor int) int {
	prefix := "libcudart.so." + strconv.Itoa(major) + "." + strconv.Itoa(minor) + "."
	var libs []string
	for _, pat := range []string{"lib64", "lib", filepath.Join("targets", "*", "lib")} {
		m, _ := filepath.Glob(filepath.Join(dir, pat, prefix+"*"))
		libs = append(libs, m...)
	}
	for _, l := range libs {
		if p, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(l), prefix)); err == nil && p >= 0 {
			return p
		}
	}
	return 0
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

// Link adopts a toolkit (or, with cudnnMajor > 0, a cuDNN build for that
// CUDA major) that lives at target, without copying it.
func (s *Store) Link(target string, cudnnMajor int) (Entry, error) {
	abs, err := filepath.Abs(target)
	if err != nil {
		return Entry{}, err
	}
	// The receipt (JSON) could not hold the path: refuse before detecting.
	if err := s.checkUTF8(abs); err != nil {
		return Entry{}, fmt.Errorf("link: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return Entry{}, fmt.Errorf("link %s: not a directory", target)
	}
	kind, name := CUDA, ""
	var v version.Version
	if cudnnMajor > 0 {
		kind = Cudnn
		if v, err = DetectCudnn(abs); err != nil {
			return Entry{}, fmt.Errorf("link %s: %w", target, err)
		}
		name = CudnnName(v, cudnnMajor)
	} else {
		if v, err = DetectCUDA(abs); err != nil {
			if _, cerr := DetectCudnn(abs); cerr == nil {
				return Entry{}, fmt.Errorf("link %s: this is a cuDNN build; say which CUDA major it is for with --cudnn-for 12", target)
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

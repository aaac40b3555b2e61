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

// DetectCUDA reads a toolkit's version: version.json (CUDA 11.1 and later),
// else version.txt, else what bin/nvcc --version says.
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
	nvcc := filepath.Join(dir, "bin", "nvcc")
	if _, err := os.Stat(nvcc); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, nvcc, "--version").Output()
		if err == nil {
			// "Cuda compilation tools, release 12.4, V12.4.131"
			if m := regexp.MustCompile(`release \d+\.\d+, V(\d+\.\d+\.\d+)`).FindSubmatch(out); m != nil {
				return parseToolkitVersion(string(m[1]))
			}
		}
	}
	return nil, fmt.Errorf("%s does not look like a CUDA toolkit (no version.json, version.txt or bin/nvcc)", dir)
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
	if e, ok := s.Get(kind, name); ok {
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

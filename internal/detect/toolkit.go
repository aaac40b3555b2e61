package detect

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/linkstub"
)

// Toolkit is what a CUDA toolkit directory holds.
type Toolkit struct {
	Dir           string
	Version       string   // "12.4.1", or "12.4" when only cuda.h or nvcc says
	VersionSource string   // "version.json", "version.txt", "include/cuda.h" or "nvcc --version"
	NVCC          string   // path of nvcc, "" if missing
	Missing       []string // key files that are absent, relative to Dir
	// LinkMissing are the files nvcc needs to link a program (checked only
	// where there is an nvcc): the stubs every link passes to the host
	// compiler, and the static runtime nvcc links by default.
	LinkMissing []string

	// MissingStubs are the link stubs a Linux tree lacks for the libraries
	// it holds (lib/stubs/libcuda.so with the runtime, libnvidia-ml.so
	// with nvml.h): -lcuda and -lnvidia-ml fail without a driver then.
	MissingStubs []string
	// VersionFiles are the version files the tree has, of version.json
	// and version.txt: what CMake's FindCUDAToolkit reads where there is
	// no nvcc (version.txt always, version.json from CMake 3.27).
	VersionFiles []string

	// MissingExtensionHeaders are the headers of compat.ExtensionHeaders
	// (what ATen/cuda/CUDAContext.h includes) absent from the toolkit's
	// include folders, as "include/cusparse.h".
	MissingExtensionHeaders []string

	HostLimits    compat.HostLimits
	HasHostLimits bool     // host_config.h was found and states limits
	HostConfig    string   // path of the host_config.h read
	Archs         []string // compute capabilities nvcc can target, "9.0", lowest first
	ArchSource    string   // "nvcc --list-gpu-arch" or "table"
}

// keyFiles a working toolkit must have, for each OS.
var keyFiles = map[string][]string{
	"linux":   {"bin/nvcc", "nvvm/bin/cicc", "include/cuda_runtime.h", "include/crt/host_config.h"},
	"windows": {"bin/nvcc.exe", "nvvm/bin/cicc.exe", "include/cuda_runtime.h", "include/crt/host_config.h"},
}

// Toolkit inspects a toolkit directory: its version (version.json,
// version.txt, include/cuda.h, then `nvcc --version`), which key files are
// missing, the host compiler limits of include/crt/host_config.h, and the
// GPU architectures nvcc can target (`nvcc --list-gpu-arch`, else the table
// in compat). It fails only when dir does not exist.
func (h Host) Toolkit(ctx context.Context, dir string) (Toolkit, error) {
	if !h.isDir(dir) {
		return Toolkit{}, fmt.Errorf("toolkit %s: not a directory", dir)
	}
	tk := Toolkit{Dir: dir}
	goos := "linux"
	if h.GOOS == "windows" {
		goos = "windows"
	}
	for _, f := range keyFiles[goos] {
		if !h.isFile(filepath.Join(dir, f)) {
			tk.Missing = append(tk.Missing, f)
		}
	}
	if !h.hasCudart(dir) {
		tk.Missing = append(tk.Missing, "lib/libcudart")
	}
	if p := filepath.Join(dir, "bin", h.exe("nvcc")); h.isFile(p) {
		tk.NVCC = p
		for _, f := range []string{"bin/crt/link.stub", "bin/crt/prelink.stub"} {
			if !h.isFile(filepath.Join(dir, f)) {
				tk.LinkMissing = append(tk.LinkMissing, f)
			}
		}
		if !h.hasStaticCudart(dir) {
			tk.LinkMissing = append(tk.LinkMissing, map[bool]string{true: "lib/x64/cudart_static.lib", false: "lib64/libcudart_static.a"}[goos == "windows"])
		}
	}
	if goos == "linux" {
		tk.MissingStubs = linkstub.Wanted(h.file(dir))
	}
	for _, f := range []string{"version.json", "version.txt"} {
		if h.isFile(filepath.Join(dir, f)) {
			tk.VersionFiles = append(tk.VersionFiles, f)
		}
	}
	tk.Version, tk.VersionSource = h.toolkitVersion(ctx, tk)
	for _, eh := range compat.ExtensionHeaders {
		found := false
		for _, inc := range []string{"include", "targets/x86_64-linux/include", "targets/sbsa-linux/include"} {
			if h.isFile(filepath.Join(dir, inc, eh.Header)) {
				found = true
				break
			}
		}
		if !found {
			tk.MissingExtensionHeaders = append(tk.MissingExtensionHeaders, "include/"+eh.Header)
		}
	}

	for _, p := range []string{"include/crt/host_config.h", "targets/x86_64-linux/include/crt/host_config.h", "targets/sbsa-linux/include/crt/host_config.h"} {
		src, err := h.readFile(filepath.Join(dir, p))
		if err != nil {
			continue
		}
		tk.HostConfig = filepath.Join(dir, p)
		if lim, err := compat.ParseHostConfig(src); err == nil {
			tk.HostLimits, tk.HasHostLimits = lim, true
		}
		break
	}

	if tk.NVCC != "" {
		if out, err := h.run(ctx, tk.NVCC, "--list-gpu-arch"); err == nil {
			if archs := ParseGPUArchList(out); len(archs) > 0 {
				tk.Archs, tk.ArchSource = archs, "nvcc --list-gpu-arch"
			}
		}
	}
	if tk.Archs == nil && tk.Version != "" {
		tk.Archs, tk.ArchSource = compat.ArchsFor(tk.Version), "table"
	}
	return tk, nil
}

func (h Host) hasStaticCudart(dir string) bool {
	if h.GOOS == "windows" {
		return h.isFile(filepath.Join(dir, "lib", "x64", "cudart_static.lib"))
	}
	for _, lib := range []string{"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"} {
		if h.isFile(filepath.Join(dir, lib, "libcudart_static.a")) {
			return true
		}
	}
	return false
}

func (h Host) hasCudart(dir string) bool {
	if h.GOOS == "windows" {
		return h.isFile(filepath.Join(dir, "lib", "x64", "cudart.lib"))
	}
	for _, lib := range []string{"lib", "lib64", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"} {
		if len(h.DirsWithFile([]string{filepath.Join(dir, lib)}, "libcudart.so")) > 0 {
			return true
		}
	}
	return false
}

var (
	reVersionTxt  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`CUDA Version\s+(\d+\.\d+(?:\.\d+)?)`) })
	reCudaH       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`#define\s+CUDA_VERSION\s+(\d+)`) })
	reNvccRelease = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`release (\d+\.\d+)`) })
)

func (h Host) toolkitVersion(ctx context.Context, tk Toolkit) (string, string) {
	if b, err := h.readFile(filepath.Join(tk.Dir, "version.json")); err == nil {
		var v struct {
			Cuda struct {
				Version string `json:"version"`
			} `json:"cuda"`
		}
		if json.Unmarshal(b, &v) == nil && v.Cuda.Version != "" {
			return v.Cuda.Version, "version.json"
		}
	}
	if b, err := h.readFile(filepath.Join(tk.Dir, "version.txt")); err == nil {
		if m := reVersionTxt().FindSubmatch(b); m != nil {
			return string(m[1]), "version.txt"
		}
	}
	if b, err := h.readFile(filepath.Join(tk.Dir, "include", "cuda.h")); err == nil {
		if m := reCudaH().FindSubmatch(b); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			return fmt.Sprintf("%d.%d", n/1000, n%1000/10), "include/cuda.h"
		}
	}
	if tk.NVCC != "" {
		if out, err := h.run(ctx, tk.NVCC, "--version"); err == nil {
			if m := reNvccRelease().FindSubmatch(out); m != nil {
				return string(m[1]), "nvcc --version"
			}
		}
	}
	return "", ""
}

// ParseGPUArchList reads `nvcc --list-gpu-arch` (compute_50 ... compute_90)
// or `--list-gpu-code` (sm_50 ...) output into compute capabilities, lowest
// first; architecture- and family-specific ones (sm_90a, sm_100f) fold into
// their base.
func ParseGPUArchList(out []byte) []string {
	seen := map[string]bool{}
	var caps []string
	for _, tok := range strings.Fields(string(out)) {
		if !strings.HasPrefix(tok, "compute_") && !strings.HasPrefix(tok, "sm_") {
			continue
		}
		c, ok := compat.ParseCapability(tok)
		if !ok || seen[c] {
			continue
		}
		seen[c] = true
		caps = append(caps, c)
	}
	sort.Slice(caps, func(i, j int) bool { return compat.CompareVersions(caps[i], caps[j]) < 0 })
	return caps
}

var reCudnnDefine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^#define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)`)
})

// CudnnVersion reads the cuDNN version of a cuDNN directory from
// include/cudnn_version.h (cuDNN 8+) or include/cudnn.h (older).
func (h Host) CudnnVersion(dir string) (string, error) {
	for _, f := range []string{"include/cudnn_version.h", "include/cudnn.h"} {
		b, err := h.readFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		if v, ok := ParseCudnnVersionH(b); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("cudnn %s: no CUDNN_MAJOR in include/cudnn_version.h or include/cudnn.h", dir)
}

// ParseCudnnVersionH reads CUDNN_MAJOR, CUDNN_MINOR and CUDNN_PATCHLEVEL
// from a cuDNN header into "9.5.1".
func ParseCudnnVersionH(src []byte) (string, bool) {
	parts := map[string]string{}
	for _, m := range reCudnnDefine().FindAllSubmatch(src, -1) {
		if _, dup := parts[string(m[1])]; !dup {
			parts[string(m[1])] = string(m[2])
		}
	}
	if parts["MAJOR"] == "" || parts["MINOR"] == "" {
		return "", false
	}
	v := parts["MAJOR"] + "." + parts["MINOR"]
	if parts["PATCHLEVEL"] != "" {
		v += "." + parts["PATCHLEVEL"]
	}
	return v, true
}

// Package catalog knows which redist components NVIDIA publishes as wheels
// and renders the pypi package's built-in catalog (catalog_gen.go) from the
// CUDA redist manifests kept in the repository.
package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/format"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Wheel describes how one redist component is published on PyPI.
type Wheel struct {
	// Component is the redist component id (cuda_cudart).
	Component string
	// Base is the project name without the nvidia- prefix and the -cuXX
	// suffix (cuda-runtime → nvidia-cuda-runtime-cu12, nvidia-cuda-runtime).
	Base string
	// Dir is the per-package folder under nvidia/ in CUDA 11/12 wheels
	// (cuda_runtime → nvidia/cuda_runtime/lib/libcudart.so.12). CUDA 13
	// wheels all use nvidia/cu13.
	Dir string
	// MinMajor and MaxMajor bound the CUDA majors that have this wheel
	// (0: no bound).
	MinMajor, MaxMajor int
	// KeepSuffix keeps -cuXX from CUDA 13 on (cuDNN: nvidia-cudnn-cu13).
	KeepSuffix bool
	// Bare projects have no nvidia- prefix and keep their files in <Dir>/
	// rather than nvidia/<Dir>/ (cuTENSOR: cutensor-cu13, whose wheel has
	// cutensor/include/cutensor.h and cutensor/lib/libcutensor.so.2;
	// nvidia-cutensor-cu13 does not exist on PyPI).
	Bare bool
}

// Wheels lists the components with wheels on PyPI. Each entry was checked
// on the real index for CUDA 11.8.0, 12.4.1, 12.9.0 and 13.0.0 on
// linux-x86_64, linux-sbsa and windows-x86_64 (fetch/pypi/e2e_test.go).
// Not every release has every wheel: nvidia-cufile-cu12 starts at 1.11
// (CUDA 12.6), and some CUDA 12.4 wheels exist for aarch64 only as
// .post1 re-uploads. cuda_nvprune has no wheel at all.
var Wheels = []Wheel{
	{Component: "cuda_nvcc", Base: "cuda-nvcc", Dir: "cuda_nvcc"},
	{Component: "cuda_cudart", Base: "cuda-runtime", Dir: "cuda_runtime"},
	{Component: "cuda_nvrtc", Base: "cuda-nvrtc", Dir: "cuda_nvrtc"},
	{Component: "cuda_cupti", Base: "cuda-cupti", Dir: "cuda_cupti"},
	{Component: "cuda_cccl", Base: "cuda-cccl", Dir: "cuda_cccl"},
	{Component: "cccl", Base: "cuda-cccl", Dir: "cuda_cccl"},
	{Component: "cuda_crt", Base: "cuda-crt", MinMajor: 13},
	{Component: "libnvvm", Base: "nvvm", MinMajor: 13},
	{Component: "libcublas", Base: "cublas", Dir: "cublas"},
	{Component: "libnvjitlink", Base: "nvjitlink", Dir: "nvjitlink"},
	{Component: "libcufft", Base: "cufft", Dir: "cufft"},
	{Component: "libcurand", Base: "curand", Dir: "curand"},
	{Component: "libcusolver", Base: "cusolver", Dir: "cusolver"},
	{Component: "libcusparse", Base: "cusparse", Dir: "cusparse"},
	{Component: "cuda_nvtx", Base: "nvtx", Dir: "nvtx"},
	{Component: "libcufile", Base: "cufile", Dir: "cufile", MinMajor: 12},
	{Component: "libnvfatbin", Base: "nvfatbin", Dir: "nvfatbin"},
	{Component: "libnpp", Base: "npp", Dir: "npp"},
	{Component: "libnvjpeg", Base: "nvjpeg", Dir: "nvjpeg"},
	{Component: "cuda_sanitizer_api", Base: "cuda-sanitizer-api", Dir: "cuda_sanitizer_api"},
	{Component: "cuda_opencl", Base: "cuda-opencl", Dir: "cuda_opencl"},
	// cuobjdump and nvdisasm wheels start with CUDA 13.2; 13.0 is skipped by
	// the index, not by this table.
	{Component: "cuda_cuobjdump", Base: "cuda-cuobjdump", MinMajor: 13},
	{Component: "cuda_nvdisasm", Base: "cuda-nvdisasm", MinMajor: 13},
	{Component: "cuda_cuxxfilt", Base: "cuda-cuxxfilt", Dir: "cuda_cuxxfilt"},
	{Component: "cuda_nvml_dev", Base: "nvml-dev", Dir: "nvml"},
	{Component: "cuda_profiler_api", Base: "cuda-profiler-api", Dir: "cuda_profiler_api"},
	{Component: "cuda_culibos", Base: "cuda-culibos", MinMajor: 13},
	{Component: "libnvptxcompiler", Base: "nvptxcompiler", MinMajor: 13},
	{Component: "cudnn", Base: "cudnn", Dir: "cudnn", KeepSuffix: true},
	// The other libraries cudaenv installs beside CUDA, one wheel each per
	// CUDA major, all keeping -cuXX: nvidia-nccl-cu13 unpacks to
	// nvidia/nccl/{include/nccl.h,lib/libnccl.so.2}.
	{Component: "nccl", Base: "nccl", Dir: "nccl", MinMajor: 11, KeepSuffix: true},
	{Component: "cusparselt", Base: "cusparselt", Dir: "cusparselt", MinMajor: 12, KeepSuffix: true},
	{Component: "cutensor", Base: "cutensor", Dir: "cutensor", MinMajor: 11, KeepSuffix: true, Bare: true},
	{Component: "cudss", Base: "cudss", Dir: "cudss", MinMajor: 12, KeepSuffix: true},
	{Component: "nvshmem", Base: "nvshmem", Dir: "nvshmem", MinMajor: 12, KeepSuffix: true},
}

// Platforms are the redist platforms that have wheels; the catalog keeps
// only these.
var Platforms = []string{"linux-x86_64", "linux-sbsa", "windows-x86_64", "windows-arm64"}

// Lookup returns the wheel of a component for a CUDA major.
func Lookup(component string, major int) (Wheel, bool) {
	for _, w := range Wheels {
		if w.Component != component {
			continue
		}
		if (w.MinMajor != 0 && major < w.MinMajor) || (w.MaxMajor != 0 && major > w.MaxMajor) {
			return Wheel{}, false
		}
		return w, true
	}
	return Wheel{}, false
}

// Project returns the wheel project name of w for a CUDA major.
func (w Wheel) Project(major int) string {
	if w.Bare {
		return w.Base + "-cu" + strconv.Itoa(major)
	}
	if major >= 13 && !w.KeepSuffix {
		return "nvidia-" + w.Base
	}
	return "nvidia-" + w.Base + "-cu" + strconv.Itoa(major)
}

var manifestName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^redistrib_(\d+(?:\.\d+){2,3})\.json$`) })

type release struct {
	version, date, sha string
	components         []component
}

type component struct {
	id, version string
	platforms   []string
}

type cudnnRelease struct {
	version, cudnn, sha string
	majors              []int
	platforms           []string
}

// Render reads every redistrib_<version>.json in fsys's root (CUDA) and in
// its cudnn folder (cuDNN) and returns the formatted Go source of
// catalog_gen.go for package pkg.
func Render(fsys fs.FS, pkg, source string) ([]byte, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("list manifests: %w", err)
	}
	var rels []release
	for _, e := range entries {
		m := manifestName().FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("read manifest: %w", err)
		}
		rel, err := decode(m[1], data)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", e.Name(), err)
		}
		rels = append(rels, rel)
	}
	if len(rels) == 0 {
		return nil, fmt.Errorf("no redistrib_<version>.json manifests in %s", source)
	}
	slices.SortFunc(rels, func(a, b release) int { return compareDotted(a.version, b.version) })

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gencatalog from %s; DO NOT EDIT.\n\n", path.Clean(source))
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	b.WriteString("// catalog holds, for each CUDA release whose redist manifest is in the\n")
	b.WriteString("// repository, the components that NVIDIA publishes as wheels.\n")
	b.WriteString("var builtinReleases = []Release{\n")
	for _, r := range rels {
		fmt.Fprintf(&b, "{Version: %q, ReleaseDate: %q, ManifestSHA256: %q, Components: []Component{\n", r.version, r.date, r.sha)
		for _, c := range r.components {
			fmt.Fprintf(&b, "{ID: %q, Version: %q, Platforms: []string{", c.id, c.version)
			for i, p := range c.platforms {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q", p)
			}
			b.WriteString("}},\n")
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n\n")

	cudnn, err := readCudnn(fsys)
	if err != nil {
		return nil, err
	}
	b.WriteString("// builtinCudnn holds the cuDNN releases whose redist manifest is in the\n")
	b.WriteString("// repository; each has wheels nvidia-cudnn-cu<major> of the same version.\n")
	b.WriteString("var builtinCudnn = []CudnnRelease{\n")
	for _, r := range cudnn {
		fmt.Fprintf(&b, "{Version: %q, CudnnVersion: %q, ManifestSHA256: %q, CUDAMajors: %#v, Platforms: %#v},\n",
			r.version, r.cudnn, r.sha, r.majors, r.platforms)
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format generated catalog: %w", err)
	}
	return out, nil
}

// decode reads the parts of a manifest the catalog needs. Top-level strings
// are metadata and objects are components; within a component, object values
// are platforms (variant keys such as cuda_variant are lists, not objects).
func decode(version string, data []byte) (release, error) {
	sum := sha256.Sum256(data)
	rel := release{version: version, sha: hex.EncodeToString(sum[:])}
	major, err := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	if err != nil {
		return release{}, fmt.Errorf("version %q: %w", version, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return release{}, err
	}
	if raw, ok := top["release_date"]; ok {
		_ = json.Unmarshal(raw, &rel.date)
	}
	for id, raw := range top {
		if _, ok := Lookup(id, major); !ok {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			continue // not an object: metadata
		}
		var c component
		c.id = id
		if err := json.Unmarshal(fields["version"], &c.version); err != nil || c.version == "" {
			return release{}, fmt.Errorf("component %s: no version", id)
		}
		for key, v := range fields {
			if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' && slices.Contains(Platforms, key) {
				c.platforms = append(c.platforms, key)
			}
		}
		slices.Sort(c.platforms)
		if len(c.platforms) == 0 {
			continue
		}
		rel.components = append(rel.components, c)
	}
	slices.SortFunc(rel.components, func(a, b component) int { return strings.Compare(a.id, b.id) })
	return rel, nil
}

func compareDotted(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x - y
		}
	}
	return len(as) - len(bs)
}

// readCudnn decodes the cuDNN manifests in fsys's cudnn folder, if any.
// The CUDA majors come from cuda_variant ("12", "13.1" → 13) or, for the
// old flat format, from release_product (cudnn-v8-9-cuda-12 → 12).
func readCudnn(fsys fs.FS) ([]cudnnRelease, error) {
	entries, err := fs.ReadDir(fsys, "cudnn")
	if err != nil {
		return nil, nil
	}
	var out []cudnnRelease
	for _, e := range entries {
		m := manifestName().FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join("cudnn", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read manifest: %w", err)
		}
		sum := sha256.Sum256(data)
		r := cudnnRelease{version: m[1], sha: hex.EncodeToString(sum[:])}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, fmt.Errorf("decode cudnn/%s: %w", e.Name(), err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(top["cudnn"], &fields); err != nil {
			return nil, fmt.Errorf("decode cudnn/%s: no cudnn component", e.Name())
		}
		if err := json.Unmarshal(fields["version"], &r.cudnn); err != nil || r.cudnn == "" {
			return nil, fmt.Errorf("decode cudnn/%s: no cudnn version", e.Name())
		}
		var variants []string
		_ = json.Unmarshal(fields["cuda_variant"], &variants)
		for _, v := range variants {
			if n, err := strconv.Atoi(strings.SplitN(v, ".", 2)[0]); err == nil && !slices.Contains(r.majors, n) {
				r.majors = append(r.majors, n)
			}
		}
		if len(variants) == 0 {
			var product string
			_ = json.Unmarshal(top["release_product"], &product)
			if i := strings.LastIndex(product, "-cuda-"); i >= 0 {
				if n, err := strconv.Atoi(product[i+len("-cuda-"):]); err == nil {
					r.majors = append(r.majors, n)
				}
			}
		}
		slices.Sort(r.majors)
		for key, v := range fields {
			if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' && slices.Contains(Platforms, key) {
				r.platforms = append(r.platforms, key)
			}
		}
		slices.Sort(r.platforms)
		out = append(out, r)
	}
	// By cuDNN version; the same build published twice (8.9.7.29 flat for
	// CUDA 12, 8.9.7 with variants) puts the one with more CUDA majors last,
	// where a newest-first lookup finds it.
	slices.SortFunc(out, func(a, b cudnnRelease) int {
		if c := compareDotted(a.cudnn, b.cudnn); c != 0 {
			return c
		}
		if c := len(a.majors) - len(b.majors); c != 0 {
			return c
		}
		return strings.Compare(a.version, b.version)
	})
	return out, nil
}

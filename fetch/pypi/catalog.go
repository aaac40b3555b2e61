package pypi

//go:generate go run ./internal/catalog/gencatalog -sync ../../../shared/nvidia/manifests -in catalog/manifests -out catalog_gen.go

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Release is a CUDA release as far as wheels are concerned: the components
// that NVIDIA publishes as wheels, with the component versions (which are
// the wheel versions) and the redist platforms the manifest offers them on.
// The built-in catalog provides Releases for the manifests in the
// repository; callers that read a live manifest build one themselves.
type Release struct {
	Version        string // 12.4.1
	ReleaseDate    string // from the manifest, may be empty
	ManifestSHA256 string // sha256 of the manifest file the release came from
	Components     []Component
	// FromToolkit marks a release known only from the index's cuda-toolkit
	// meta-package (see ToolkitReleases): no manifest, its wheels as the
	// meta-package pins them.
	FromToolkit bool
}

// Component is a redist component with its version.
type Component struct {
	ID        string   // cuda_cudart
	Version   string   // 12.4.127
	Platforms []string // redist platform keys; nil means not known (assume all)
}

// Major returns the CUDA major version of the release, or 0.
func (r Release) Major() int {
	return majorOf(r.Version)
}

// Component returns the component with id, accepting the cuda_cccl ⇄ cccl
// rename either way.
func (r Release) Component(id string) (Component, bool) {
	for _, want := range aliases(id) {
		for _, c := range r.Components {
			if c.ID == want {
				return c, true
			}
		}
	}
	return Component{}, false
}

// OnPlatform reports whether the component is offered for platform.
func (c Component) OnPlatform(platform string) bool {
	return c.Platforms == nil || slices.Contains(c.Platforms, platform)
}

func aliases(id string) []string {
	switch id {
	case "cuda_cccl", "cccl":
		return []string{id, map[string]string{"cuda_cccl": "cccl", "cccl": "cuda_cccl"}[id]}
	}
	return []string{id}
}

func majorOf(version string) int {
	m, err := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	if err != nil {
		return 0
	}
	return m
}

// CatalogReleases returns the built-in releases, oldest first.
func CatalogReleases() []Release {
	out := make([]Release, len(builtinReleases))
	for i, r := range builtinReleases {
		out[i] = cloneRelease(r)
	}
	return out
}

// CatalogRelease returns the built-in release with exactly this version
// (12.4.1).
func CatalogRelease(version string) (Release, bool) {
	for _, r := range builtinReleases {
		if r.Version == version {
			return cloneRelease(r), true
		}
	}
	return Release{}, false
}

// LatestCatalogRelease returns the newest built-in release matching a
// version prefix by whole segments: "12.4" → 12.4.1, "12" → 12.9.0, "12.4.0"
// → 12.4.0.
func LatestCatalogRelease(prefix string) (Release, bool) {
	want := strings.Split(strings.TrimSuffix(prefix, "."), ".")
	for i := len(builtinReleases) - 1; i >= 0; i-- {
		have := strings.Split(builtinReleases[i].Version, ".")
		if len(want) <= len(have) && slices.Equal(want, have[:len(want)]) {
			return cloneRelease(builtinReleases[i]), true
		}
	}
	return Release{}, false
}

func cloneRelease(r Release) Release {
	r.Components = slices.Clone(r.Components)
	for i := range r.Components {
		r.Components[i].Platforms = slices.Clone(r.Components[i].Platforms)
	}
	return r
}

// CudnnRelease is a cuDNN release as far as wheels are concerned. Its wheels
// are nvidia-cudnn-cu<major>==CudnnVersion for each of CUDAMajors, and they
// unpack to nvidia/cudnn/{include,lib} whatever the major.
type CudnnRelease struct {
	Version        string // release label: 9.5.1
	CudnnVersion   string // the cudnn component and wheel version: 9.5.1.17
	ManifestSHA256 string
	CUDAMajors     []int    // CUDA majors with a build, from cuda_variant
	Platforms      []string // redist platforms with a build
}

// CatalogCudnnReleases returns the built-in cuDNN releases, oldest first.
func CatalogCudnnReleases() []CudnnRelease {
	out := make([]CudnnRelease, len(builtinCudnn))
	for i, r := range builtinCudnn {
		r.CUDAMajors = slices.Clone(r.CUDAMajors)
		r.Platforms = slices.Clone(r.Platforms)
		out[i] = r
	}
	return out
}

// LatestCatalogCudnn returns the newest built-in cuDNN release matching a
// version prefix by whole segments ("9.5" → 9.5.1, "8.9.7.29" → itself).
func LatestCatalogCudnn(prefix string) (CudnnRelease, bool) {
	want := strings.Split(strings.TrimSuffix(prefix, "."), ".")
	rels := CatalogCudnnReleases()
	for i := len(rels) - 1; i >= 0; i-- {
		for _, v := range []string{rels[i].Version, rels[i].CudnnVersion} {
			have := strings.Split(v, ".")
			if len(want) <= len(have) && slices.Equal(want, have[:len(want)]) {
				return rels[i], true
			}
		}
	}
	return CudnnRelease{}, false
}

// PlanCudnn pins the cuDNN wheel of a release for a CUDA major. A release
// without a build for that major is an error that names the majors it has.
func PlanCudnn(rel CudnnRelease, cudaMajor int, platform string) (Requirement, error) {
	if len(rel.CUDAMajors) > 0 && !slices.Contains(rel.CUDAMajors, cudaMajor) {
		var has []string
		for _, m := range rel.CUDAMajors {
			has = append(has, strconv.Itoa(m))
		}
		return Requirement{}, fmt.Errorf("cuDNN %s has no build for CUDA %d (it has CUDA %s)",
			rel.Version, cudaMajor, strings.Join(has, ", "))
	}
	if !KnownPlatform(platform) {
		return Requirement{}, fmt.Errorf("plan cuDNN %s: NVIDIA publishes no wheels for platform %s", rel.Version, platform)
	}
	if rel.Platforms != nil && !slices.Contains(rel.Platforms, platform) {
		return Requirement{}, fmt.Errorf("cuDNN %s is not offered for %s", rel.Version, platform)
	}
	project, err := Project("cudnn", cudaMajor)
	if err != nil {
		return Requirement{}, err
	}
	return Requirement{Component: "cudnn", Project: project, Version: rel.CudnnVersion}, nil
}

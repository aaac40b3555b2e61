package pypi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi/internal/catalog"
)

// Profiles, as for the NVIDIA source.
const (
	ProfileMinimal = "minimal"
	// ProfileExtensions is minimal plus the libraries and headers framework
	// extensions build against (fetch.InExtensions). From CUDA 11 and 12
	// wheels, which carry no nvcc, it is their libraries and headers only.
	ProfileExtensions = "extensions"
	ProfileDefault    = "default"
	ProfileFull       = "full"
)

// Project returns the wheel project for a redist component and CUDA major:
// cuda_cudart → nvidia-cuda-runtime-cu12 (12) or nvidia-cuda-runtime (13),
// cudnn → nvidia-cudnn-cu12 or nvidia-cudnn-cu13. The error says when the
// component has no wheel for that major.
func Project(component string, cudaMajor int) (string, error) {
	w, ok := catalog.Lookup(component, cudaMajor)
	if !ok {
		return "", fmt.Errorf("component %s has no wheel on PyPI for CUDA %d", component, cudaMajor)
	}
	return w.Project(cudaMajor), nil
}

// HasWheel reports whether NVIDIA publishes the component as a wheel for a
// CUDA major.
func HasWheel(component string, cudaMajor int) bool {
	_, ok := catalog.Lookup(component, cudaMajor)
	return ok
}

// ProvidesCompiler reports whether the wheels of a CUDA major include nvcc.
// CUDA 11 and 12 wheels carry ptxas but no nvcc.
func ProvidesCompiler(cudaMajor int) bool { return cudaMajor >= 13 }

// Requirement pins one wheel: project==version for a redist component.
type Requirement struct {
	Component string
	Project   string
	Version   string
	// Optional requirements come from a profile rather than from the user:
	// Resolve skips them, with the reason, when the index has no wheel.
	Optional bool
}

// Selection is what the user asked for: a profile, or explicit components
// (which win when both are set). The zero Selection is the default profile.
type Selection struct {
	Profile    string
	Components []string
}

// NoCompilerError refuses a compiler profile for a CUDA major whose wheels
// have no nvcc.
type NoCompilerError struct {
	Release string // 12.4.1
	Profile string
}

func (e *NoCompilerError) Error() string {
	return fmt.Sprintf("profile %s for CUDA %s is not available from PyPI: NVIDIA's CUDA %d wheels carry no nvcc, only ptxas; "+
		"take its libraries from PyPI (--profile %s: runtime, libraries and the headers they need; "+
		"or --components such as cuda_cudart,libcublas) with an nvcc you have, "+
		"or a toolkit that compiles from PyPI: CUDA 13 (cudaenv install 13 --source pypi --profile %s)",
		e.Profile, e.Release, majorOf(e.Release), ProfileDefault, ProfileMinimal)
}

// minimalComponents is what compiles and runs CUDA code.
func minimalComponents(major int) []string {
	ids := []string{"cuda_nvcc", "cuda_cudart", "cuda_cccl"}
	if major >= 13 {
		ids = append(ids, "cuda_crt", "libnvvm")
	}
	return ids
}

// Plan turns a release, a platform and a selection into pinned wheel
// requirements, one per component, in a stable order.
//
//   - minimal: nvcc, cudart and CCCL, plus crt and nvvm from CUDA 13 on; every
//     one must have a wheel. Refused for CUDA 11 and 12 with a
//     *NoCompilerError, because their wheels have no nvcc.
//   - default and full: every component of the release that has a wheel and
//     is offered for the platform. On PyPI the two are the same (no driver,
//     GUI or documentation wheels exist). These requirements are Optional.
//   - explicit components: each must be in the release and have a wheel.
func Plan(rel Release, platform string, sel Selection) ([]Requirement, error) {
	major := rel.Major()
	if major == 0 {
		return nil, fmt.Errorf("plan wheels: release version %q has no CUDA major", rel.Version)
	}
	if !KnownPlatform(platform) {
		return nil, fmt.Errorf("plan wheels for CUDA %s: NVIDIA publishes no wheels for platform %s", rel.Version, platform)
	}
	var ids []string
	optional := false
	switch {
	case len(sel.Components) > 0:
		ids = sel.Components
	case sel.Profile == ProfileMinimal:
		if !ProvidesCompiler(major) {
			return nil, &NoCompilerError{Release: rel.Version, Profile: sel.Profile}
		}
		ids = minimalComponents(major)
	case sel.Profile == ProfileExtensions:
		optional = true
		for _, c := range rel.Components {
			if fetch.InExtensions(c.ID) && HasWheel(c.ID, major) && c.OnPlatform(platform) {
				ids = append(ids, c.ID)
			}
		}
	case sel.Profile == "" || sel.Profile == ProfileDefault || sel.Profile == ProfileFull:
		optional = true
		for _, c := range rel.Components {
			if HasWheel(c.ID, major) && c.OnPlatform(platform) {
				ids = append(ids, c.ID)
			}
		}
	default:
		return nil, fmt.Errorf("plan wheels: unknown profile %q (want %s, %s, %s or %s)",
			sel.Profile, ProfileMinimal, ProfileExtensions, ProfileDefault, ProfileFull)
	}
	var reqs []Requirement
	seen := map[string]bool{}
	var errs []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		c, ok := rel.Component(id)
		if !ok {
			errs = append(errs, fmt.Sprintf("%s is not a component of CUDA %s", id, rel.Version))
			continue
		}
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		if err := checkPlainVersion(c.ID, c.Version); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		project, err := Project(c.ID, major)
		if err != nil {
			errs = append(errs, err.Error()+" (leave it out of --components)")
			continue
		}
		if !optional && !c.OnPlatform(platform) {
			errs = append(errs, fmt.Sprintf("%s is not offered for %s in CUDA %s", c.ID, platform, rel.Version))
			continue
		}
		reqs = append(reqs, Requirement{Component: c.ID, Project: project, Version: c.Version, Optional: optional})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("plan wheels for CUDA %s: %s", rel.Version, strings.Join(errs, "; "))
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("plan wheels for CUDA %s on %s: nothing to install", rel.Version, platform)
	}
	slices.SortStableFunc(reqs, func(a, b Requirement) int { return strings.Compare(a.Component, b.Component) })
	return reqs, nil
}

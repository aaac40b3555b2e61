package fetch

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// HostPlatform maps a Go GOOS/GOARCH pair to NVIDIA's platform key.
// linux/arm64 maps to linux-sbsa (servers); Jetson boards before CUDA 13
// need "linux-aarch64", which the caller must ask for explicitly.
func HostPlatform(goos, goarch string) (string, error) {
	switch goos + "/" + goarch {
	case "linux/amd64":
		return "linux-x86_64", nil
	case "linux/arm64":
		return "linux-sbsa", nil
	case "linux/ppc64le":
		return "linux-ppc64le", nil
	case "windows/amd64":
		return "windows-x86_64", nil
	case "windows/arm64":
		return "windows-arm64", nil
	}
	return "", fmt.Errorf("no NVIDIA redistributables for %s/%s (supported: linux/amd64, linux/arm64, windows/amd64, windows/arm64)", goos, goarch)
}

// Profiles names the selection profiles, smallest first.
var Profiles = []string{"minimal", "extensions", "default", "full"}

// minimalSet is what compiles and runs CUDA code. cuda_crt and libnvvm
// exist from CUDA 13 on, cccl is cuda_cccl's name from 13.3 on; cudnn makes
// "minimal" meaningful for cuDNN manifests. Members a manifest lacks are
// skipped.
var minimalSet = map[string]bool{
	"cuda_nvcc": true, "cuda_cudart": true, "cuda_cccl": true, "cccl": true,
	"cuda_crt": true, "libnvvm": true,
	"cudnn": true,
}

// extensionsSet is "minimal" plus what framework extensions build against
// (torch.utils.cpp_extension, flash-attn, xformers, detectron2): the
// libraries whose headers ATen's CUDA headers include (cuBLAS, cuSPARSE,
// cuSOLVER), those extensions commonly use (cuRAND, cuFFT, NVTX, NVRTC,
// the profiler API) and nvJitLink, which cuSPARSE and cuSOLVER load.
// compat.ExtensionHeaders names the headers.
var extensionsSet = map[string]bool{
	"libcublas": true, "libcusparse": true, "libcusolver": true,
	"libcurand": true, "libcufft": true, "libnvjitlink": true,
	"cuda_nvtx": true, "cuda_nvrtc": true, "cuda_profiler_api": true,
}

// InExtensions reports whether a component belongs to the "extensions"
// profile.
func InExtensions(id string) bool { return minimalSet[id] || extensionsSet[id] }

// driverPieces belong to the driver or to datacenter fabric management,
// not to a toolkit; no profile installs them (explicit Components can).
var driverPieces = map[string]bool{
	"nvidia_driver": true, "fabricmanager": true, "libnvidia_nscq": true,
	"nvidia_fs": true, "imex": true, "driver_assistant": true,
	"libnvsdm": true, // NVSwitch device management, ships with fabric manager
	"nvlsm":    true, "collectx_bringup": true, "cuda_sandbox_dev": true,
}

var driverPrefixes = []string{"cuda_compat", "mft"}

// notDefault are GUI tools and docs: in "full", not in "default".
var notDefault = map[string]bool{
	"nsight_systems": true, "nsight_compute": true, "nsight_vse": true,
	"cuda_nvvp": true, "cuda_nsight": true, "cuda_documentation": true,
}

// IsDriverPiece reports whether a component belongs to the driver side
// (never installed by a profile).
func IsDriverPiece(id string) bool {
	if driverPieces[id] {
		return true
	}
	for _, p := range driverPrefixes {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

// aliases maps renamed components to their other names.
var aliases = map[string][]string{
	"cuda_cccl": {"cccl"},
	"cccl":      {"cuda_cccl"},
}

// Selection says which artifacts of a manifest to install.
type Selection struct {
	Platform string // NVIDIA platform key, e.g. "linux-x86_64"
	Profile  string // "minimal", "default" (when empty) or "full"
	// Components, when not empty, replaces the profile: exactly these
	// components (aliases such as cuda_cccl ⇄ cccl are accepted).
	Components []string
	// CUDAMajor picks the variant of components built per CUDA major
	// (cuDNN): variant "cuda<CUDAMajor>". 0 accepts a component's only variant.
	CUDAMajor int
}

// VariantError says a component has no build for the requested CUDA major.
type VariantError struct {
	Component string
	Version   string
	Platform  string
	CUDAMajor int      // 0 when none was given and there is more than one
	Have      []string // the CUDA versions it has builds for: "11", "12", "13.3"
}

func (e *VariantError) Error() string {
	if e.CUDAMajor == 0 {
		return fmt.Sprintf("%s %s is built per CUDA major; choose one (it has: %s)", e.Component, e.Version, strings.Join(e.Have, ", "))
	}
	return fmt.Sprintf("%s %s has no build for CUDA %d (it has: %s)", e.Component, e.Version, e.CUDAMajor, strings.Join(e.Have, ", "))
}

// Select returns the artifacts a Selection asks for, sorted by component id.
// Profiles skip components the platform does not offer; explicit
// Components fail for them, and for unknown names (listing the known ones).
// The "source" and "linux-all" platforms are used only for explicitly named
// components that have nothing for a linux platform.
func (m *Manifest) Select(sel Selection) ([]Artifact, error) {
	if sel.Platform == "" {
		return nil, fmt.Errorf("select from %s: no platform given", m.Version)
	}
	var ids []string
	explicit := len(sel.Components) > 0
	if explicit {
		seen := map[string]bool{}
		for _, name := range sel.Components {
			id, ok := m.resolve(strings.TrimSpace(name))
			if !ok {
				return nil, fmt.Errorf("%s has no component %q (available: %s)", m.Version, name, strings.Join(m.ComponentIDs(), ", "))
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	} else {
		profile := sel.Profile
		if profile == "" {
			profile = "default"
		}
		for _, id := range m.ComponentIDs() {
			in := false
			switch profile {
			case "minimal":
				in = minimalSet[id]
			case "extensions":
				in = InExtensions(id)
			case "default":
				in = !IsDriverPiece(id) && !notDefault[id]
			case "full":
				in = !IsDriverPiece(id)
			default:
				return nil, fmt.Errorf("unknown profile %q (profiles: %s)", sel.Profile, strings.Join(Profiles, ", "))
			}
			if in {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)

	var out []Artifact
	for _, id := range ids {
		c := m.Components[id]
		p := c.Platforms[sel.Platform]
		if p == nil && explicit && strings.HasPrefix(sel.Platform, "linux-") {
			p = c.Platforms["linux-all"]
		}
		if p == nil && explicit {
			p = c.Platforms["source"]
		}
		if p == nil {
			if explicit {
				return nil, fmt.Errorf("%s %s is not offered for %s (it has: %s)", id, c.Version, sel.Platform, strings.Join(c.platformKeys(), ", "))
			}
			continue
		}
		a, err := c.pick(p, sel)
		if err != nil {
			return nil, err
		}
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("manifest %s: %w", m.Version, err)
		}
		out = append(out, *a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no components for %s in this selection (platforms: %s)", m.Version, sel.Platform, strings.Join(m.Platforms(), ", "))
	}
	return out, nil
}

// resolve maps a requested name to a component id present in m.
func (m *Manifest) resolve(name string) (string, bool) {
	if _, ok := m.Components[name]; ok {
		return name, true
	}
	for _, alt := range aliases[name] {
		if _, ok := m.Components[alt]; ok {
			return alt, true
		}
	}
	return "", false
}

func (c *Component) platformKeys() []string {
	keys := make([]string, 0, len(c.Platforms))
	for k := range c.Platforms {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// flatVariantRE finds the CUDA version a flat artifact was built for, from
// names like cudnn-windows-arm64-9.27.0.41_cuda13.4-archive.zip.
var flatVariantRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`_cuda([0-9]+(?:\.[0-9]+)?)-archive\.`) })

// pick chooses the artifact of a platform entry for sel.CUDAMajor.
func (c *Component) pick(p *PlatformEntry, sel Selection) (*Artifact, error) {
	if len(p.Variants) == 0 {
		return p.Artifact, nil
	}
	// Candidates: CUDA version ("12", "13.3") → artifact.
	cands := map[string]*Artifact{}
	for key, a := range p.Variants {
		if v, ok := strings.CutPrefix(key, "cuda"); ok && v != "" {
			cands[v] = a
		}
	}
	if p.Artifact != nil {
		if mm := flatVariantRE().FindStringSubmatch(p.Artifact.RelativePath); mm != nil {
			if _, dup := cands[mm[1]]; !dup {
				a := *p.Artifact
				a.Variant = "cuda" + mm[1]
				cands[mm[1]] = &a
			}
		}
	}
	have := make([]string, 0, len(cands))
	for v := range cands {
		have = append(have, v)
	}
	sort.Slice(have, func(i, j int) bool { return compareVersions(have[i], have[j]) < 0 })
	verr := &VariantError{Component: c.ID, Version: c.Version, Platform: sel.Platform, CUDAMajor: sel.CUDAMajor, Have: have}
	if sel.CUDAMajor == 0 {
		if len(have) == 1 {
			return cands[have[0]], nil
		}
		return nil, verr
	}
	want := strconv.Itoa(sel.CUDAMajor)
	if a, ok := cands[want]; ok {
		return a, nil
	}
	// "cuda13.3"-style keys: the newest minor of the major.
	for i := len(have) - 1; i >= 0; i-- {
		if majorOf(have[i]) == sel.CUDAMajor {
			return cands[have[i]], nil
		}
	}
	return nil, verr
}

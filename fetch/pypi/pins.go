package pypi

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Framework names a framework release to build the CUDA environment of:
// torch==2.15.0, jax[cuda13]==0.9.0, tensorflow[and-cuda]==2.21.0.
type Framework struct {
	Project string // normalized
	Extras  []string
	Version string
}

func (f Framework) String() string {
	s := f.Project
	if len(f.Extras) > 0 {
		s += "[" + strings.Join(f.Extras, ",") + "]"
	}
	return s + "==" + f.Version
}

var frameworkArg = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?:\[([A-Za-z0-9._,-]*)\])?==([0-9][A-Za-z0-9.+!-]*)$`)
})

// ParseFramework reads NAME[EXTRAS]==VERSION.
func ParseFramework(arg string) (Framework, error) {
	m := frameworkArg().FindStringSubmatch(strings.TrimSpace(arg))
	if m == nil {
		return Framework{}, fmt.Errorf("want NAME==VERSION, e.g. torch==2.15.0 or jax[cuda13]==0.9.0 (got %s)", strconv.Quote(truncate(arg, 80)))
	}
	if _, ok := parseVersion(m[3]); !ok {
		return Framework{}, fmt.Errorf("%s is not a version", strconv.Quote(m[3]))
	}
	f := Framework{Project: NormalizeProject(m[1]), Version: m[3]}
	for _, e := range strings.Split(m[2], ",") {
		if e = strings.TrimSpace(e); e != "" {
			f.Extras = append(f.Extras, NormalizeProject(e))
		}
	}
	return f, nil
}

// Pins is what a framework wheel's metadata says of CUDA, resolved as
// pip does (see ResolveRequirements): the release it names, the cuDNN
// build, and the requirements that said so.
type Pins struct {
	Framework Framework
	Wheel     string // the file whose metadata was read
	Via       string // how (see Metadata.Via)
	// Applied are the NVIDIA requirements that hold for the platform and
	// Python, "project<specifiers>" as written, with who stated them.
	Applied []PinLine
	// CUDA is the release the pinned builds are named by (see
	// NameToolkit), its major.minor.patch past the table's when the
	// runtime belongs to no release cudaenv knows, or the bare major
	// when no runtime or nvcc is pinned. CUDAFrom says which pin and
	// CUDAExact whether it was exact.
	CUDA      string
	CUDAFrom  string
	CUDAExact bool
	// Cudnn is the cuDNN build (9.26.0.51) or ""; CudnnFrom the pin.
	Cudnn     string
	CudnnFrom string
	// Toolkit is every component build the requirements take.
	Toolkit *ToolkitPins
	// Differs are the components whose builds are not CUDA's own release
	// builds (nil when CUDA is not a known release).
	Differs []Differ
	// Products are the other NVIDIA libraries the wheel pins (NCCL,
	// cuSPARSELt, NVSHMEM, cuTENSOR, cuDSS).
	Products []ProductPin
	// Extra is an extra cudaenv turned on itself because only it pulls
	// the CUDA wheels (jax-cuda13-plugin's with-cuda, tensorflow's
	// and-cuda); "" when none.
	Extra string
	// Notes: yanked pins, requirements left unread.
	Notes []string
}

// productLibraries are the libraries besides cuDNN that framework wheels
// pin as nvidia-<library>-cu<major>.
var productLibraries = []string{"nccl", "cusparselt", "nvshmem", "cutensor", "cudss"}

// productOf is the library of an nvidia-<library>-cu<N> project, else "".
func productOf(project string) string {
	for _, l := range productLibraries {
		if s, ok := strings.CutPrefix(project, "nvidia-"+l+"-cu"); ok && s != "" && strings.Trim(s, "0123456789") == "" {
			return l
		}
	}
	return ""
}

// PinLine is one applied requirement and the wheel that stated it.
type PinLine struct {
	From        string // torch 2.15.0
	Requirement string // nvidia-cudnn-cu13==9.26.0.51
}

// ErrNoFrameworkWheel is returned (wrapped) when the index has no wheel
// of the framework release for the platform and Python.
var ErrNoFrameworkWheel = errors.New("no wheel of the framework for this platform and Python")

type noFrameworkWheel string

func (e noFrameworkWheel) Error() string        { return string(e) }
func (e noFrameworkWheel) Is(target error) bool { return target == ErrNoFrameworkWheel }

// FrameworkPins resolves a framework release (see ResolveRequirements)
// for a platform and CPython version and names what it takes: the CUDA
// release (NameToolkit over the built-in table; a runtime the table does
// not know by the releases its index lists), the cuDNN build and the other
// libraries.
func (ix *Index) FrameworkPins(ctx context.Context, fw Framework, platform, python, cacheDir string) (*Pins, error) {
	res, err := ix.ResolveRequirements(ctx, []string{fw.String()}, WheelTarget{Platform: platform, Python: python}, cacheDir)
	if err != nil {
		return nil, err // it names the project
	}
	p, err := ix.PinsOf(ctx, res, CatalogReleases())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fw, err)
	}
	p.Framework = fw
	return p, nil
}

// PinsOf names what a resolution takes against the known releases.
func (ix *Index) PinsOf(ctx context.Context, res *Resolved, known []Release) (*Pins, error) {
	out := &Pins{Notes: res.Notes}
	if len(res.Top) > 0 {
		top := res.Top[0]
		out.Framework = Framework{Project: top.Project, Extras: top.Extras, Version: top.Version}
		out.Wheel, out.Via = top.File.Filename, top.Via
	}
	if len(res.Extras) > 0 {
		_, e, _ := strings.Cut(res.Extras[0], "[")
		out.Extra = strings.TrimSuffix(e, "]")
	}
	// Applied: what the requirements' own wheels say of NVIDIA's.
	tops := map[string]bool{}
	for _, t := range res.Top {
		tops[t.Project+" "+t.Version] = true
	}
	for _, p := range append(slices.Clone(res.NVIDIA), res.Followed...) {
		if !isNVIDIAProject(p.Project) && p.Project != ToolkitProject {
			continue
		}
		for _, c := range p.Constraints {
			if tops[c.From] {
				out.Applied = append(out.Applied, PinLine{From: c.From, Requirement: p.Project + extrasString(p.Extras) + specString(c.Specifiers)})
			}
		}
	}
	slices.SortStableFunc(out.Applied, func(a, b PinLine) int { return strings.Compare(a.Requirement, b.Requirement) })
	tk, err := res.Toolkit()
	if err != nil {
		return nil, err
	}
	out.Toolkit = tk
	if tk.Major == 0 {
		return nil, fmt.Errorf("%s pins no NVIDIA CUDA wheels for %s (a CPU build, or one that bundles CUDA)", out.Wheel, res.Target.Platform)
	}
	if err := ix.nameCUDA(ctx, out, tk, known); err != nil {
		return nil, err
	}
	if tk.Cudnn != nil {
		out.Cudnn, out.CudnnFrom = tk.Cudnn.Version, tk.Cudnn.From
	}
	for _, l := range tk.Libraries {
		out.Products = append(out.Products, ProductPin{Library: l.Library, Version: l.Version, From: l.From})
	}
	for _, m := range res.Missing {
		if lib := productOf(m.Project); lib != "" {
			out.Products = append(out.Products, ProductPin{Library: lib, From: m.Project + specString(mergedSpecs(m.Constraints)), Err: m.Err})
		}
	}
	return out, nil
}

// nameCUDA sets CUDA, CUDAFrom, CUDAExact and Differs.
func (ix *Index) nameCUDA(ctx context.Context, out *Pins, tk *ToolkitPins, known []Release) error {
	pins := tk.Versions()
	by, ok := tk.Component("cuda_cudart")
	if !ok {
		by, ok = tk.Component("cuda_nvcc")
	}
	if ok {
		out.CUDAExact, out.CUDAFrom = by.Exact, by.From
	}
	if rel, found := NameToolkit(pins, tk.Major, known); found {
		out.CUDA, out.Differs = rel.Version, Differences(rel, pins)
		if !ok {
			out.CUDAFrom = tk.Components[0].From + " (the release that shipped the pinned builds; no CUDA runtime pin)"
		}
		return nil
	}
	if !ok {
		// Only cuDNN or libraries: the CUDA major of their wheels.
		out.CUDA = strconv.Itoa(tk.Major)
		what := "its NVIDIA wheels"
		switch {
		case tk.Cudnn != nil:
			what = tk.Cudnn.Project
		case len(tk.Components) > 0:
			what = tk.Components[0].Project
		case len(tk.Libraries) > 0:
			what = tk.Libraries[0].Project
		}
		out.CUDAFrom = what + " (its CUDA major; no CUDA runtime pin)"
		return nil
	}
	// A runtime no known release has: the name the index's runtime
	// versions give it (13.5.0 for 13.5.37).
	if by.ID == "cuda_cudart" {
		if name, ok := ix.UnknownRelease(ctx, by.Project, by.Version, known); ok {
			out.CUDA = name
			return nil
		}
	}
	return fmt.Errorf("no CUDA release cudaenv knows has %s %s, and the index names none for it", by.Project, by.Version)
}

// UnknownRelease is the name the index's runtime versions give a runtime
// build no known release has (Offers): 13.5.0 for 13.5.37, 12.5.1 for
// 12.5.82 after the table's 12.5.0.
func (ix *Index) UnknownRelease(ctx context.Context, runtimeProject, runtime string, known []Release) (string, bool) {
	runtimes, err := ix.Versions(ctx, runtimeProject)
	if err != nil {
		return "", false
	}
	for _, o := range Offers(known, runtimes) {
		if !o.Known && SameVersion(o.Runtime, runtime) {
			return o.Name(), true
		}
	}
	return "", false
}

func parseDependencies(lines []string) ([]Dependency, error) {
	out := make([]Dependency, 0, len(lines))
	for _, l := range lines {
		d, err := ParseDependency(l)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// isCUDAProject: NVIDIA's wheels and the cuda-toolkit meta-package. All
// are reported; the catalog's components, cuDNN and cuda-toolkit decide.
func isCUDAProject(p string) bool {
	return p == "cuda-toolkit" || strings.HasPrefix(p, "nvidia-")
}

// cudaExtra is the one extra whose requirements, and only its, pull NVIDIA
// CUDA wheels on this platform; "" when there is none or more than one.
func cudaExtra(deps []Dependency, platform, python string) string {
	env, err := PythonEnv(platform, python)
	if err != nil {
		return ""
	}
	found := ""
	for _, d := range deps {
		if !isCUDAProject(d.Project) {
			continue
		}
		if ok, err := d.Applies(env); err == nil && ok {
			return "" // pulled without any extra
		}
		for _, e := range extraNames(d.Marker) {
			with := env
			with.Extras = []string{e}
			if ok, err := d.Applies(with); err == nil && ok {
				if found != "" && found != e {
					return ""
				}
				found = e
			}
		}
	}
	return found
}

var extraInMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`extra\s*==\s*["']([A-Za-z0-9._-]+)["']`)
})

func extraNames(marker string) []string {
	var out []string
	for _, m := range extraInMarker().FindAllStringSubmatch(marker, 8) {
		out = append(out, NormalizeProject(m[1]))
	}
	return out
}

// projectComponents maps each wheel project of the catalog to its
// component and CUDA major: nvidia-cuda-runtime-cu12 → cuda_cudart, 12.
var projectComponents = sync.OnceValue(func() map[string]projectComponent {
	out := map[string]projectComponent{}
	for _, r := range CatalogReleases() {
		for _, c := range r.Components {
			if p, err := Project(c.ID, r.Major()); err == nil {
				out[p] = projectComponent{c.ID, r.Major()}
			}
		}
	}
	return out
})

type projectComponent struct {
	id    string
	major int
}

// cudnnMajorOf is N for nvidia-cudnn-cuN, else 0.
func cudnnMajorOf(project string) int {
	s, ok := strings.CutPrefix(project, "nvidia-cudnn-cu")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 11 || n > 99 {
		return 0
	}
	return n
}

// toolkitRelease is the CUDA release a cuda-toolkit version stands for:
// NVIDIA uploaded some as four parts (13.0.3.0 for 13.0.3).
func toolkitRelease(v string) string {
	if parts := strings.Split(v, "."); len(parts) == 4 && parts[3] == "0" {
		return strings.Join(parts[:3], ".")
	}
	return v
}

// ProductPin is a library pinned by its nvidia-<library>-cu<major> wheel.
type ProductPin struct {
	Library string // nccl
	Version string // 2.30.7: the pin, or the newest on the index a range takes
	From    string // nvidia-nccl-cu13==2.30.7
	Err     error  // why no version could be picked (Version is ""), or nil
}

func extrasString(e []string) string {
	if len(e) == 0 {
		return ""
	}
	return "[" + strings.Join(e, ",") + "]"
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

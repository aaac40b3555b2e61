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

// Pins is what a framework wheel's metadata says of CUDA: the release, the
// cuDNN build, and the lines that said so.
type Pins struct {
	Framework Framework
	Wheel     string // the file whose metadata was read
	Via       string // how (see Metadata.Via)
	// Applied are the NVIDIA requirements that hold for the platform and
	// Python, "project==version" as written, with the wheel they came from.
	Applied []PinLine
	// CUDA is the release the pins name: exactly (13.2.2), or its
	// major.minor when the pinned runtime belongs to no release cudaenv
	// knows. CUDAFrom says which pin and CUDAExact whether it was exact.
	CUDA      string
	CUDAFrom  string
	CUDAExact bool
	// Cudnn is the cuDNN build (9.26.0.51) or ""; CudnnFrom the pin.
	Cudnn     string
	CudnnFrom string
	// Libraries are the exact library pins of the cuda-toolkit release an
	// exact pin names, read from the meta-package's extras; empty when
	// the index lacks its wheel or the pin is a range.
	Libraries []PinLine
	// Products are the other NVIDIA libraries the wheel pins (NCCL,
	// cuSPARSELt, NVSHMEM, cuTENSOR, cuDSS), in the order of its
	// requirements.
	Products []ProductPin
	// Extra is an extra cudaenv turned on itself because only it pulls
	// the CUDA wheels (jax-cuda13-plugin's with-cuda, tensorflow's
	// and-cuda); "" when none.
	Extra string
}

// ProductPin is a library pinned by its nvidia-<library>-cu<major> wheel.
type ProductPin struct {
	Library string // nccl
	Version string // 2.30.7: the pin, or the newest on the index a range takes
	From    string // nvidia-nccl-cu13==2.30.7
	Err     error  // why no version could be picked (Version is ""), or nil
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

// maxFollow bounds how many wheels one framework's pins are read from (jax
// → jax-cuda13-plugin → its pins).
const maxFollow = 4

// FrameworkPins reads the CUDA pins of a framework release's wheel for a
// platform and CPython version, and resolves them to a CUDA release and a
// cuDNN build: an exact pin names it, a range takes the newest release the
// index has that satisfies every pin (pre-releases only if a pin names
// one). Requirements on other projects that an asked-for extra pulls with
// an exact pin (jax[cuda13] → jax-cuda13-plugin[with-cuda]==0.9.0) are
// followed.
func (ix *Index) FrameworkPins(ctx context.Context, fw Framework, platform, python, cacheDir string) (*Pins, error) {
	out := &Pins{Framework: fw}
	var deps []Dependency
	type job struct {
		fw      Framework
		top     bool
		toolkit bool // the cuda-toolkit meta-package an exact pin names
		depth   int
	}
	queue := []job{{fw: fw, top: true}}
	for n := 0; len(queue) > 0; n++ {
		j := queue[0]
		queue = queue[1:]
		if n >= maxFollow {
			return nil, fmt.Errorf("%s: requirements lead through more than %d wheels", fw, maxFollow)
		}
		page, err := ix.Project(ctx, j.fw.Project)
		var file File
		if err == nil {
			file, err = selectPythonWheel(page, j.fw.Version, platform, python)
		}
		if err != nil && j.toolkit && (errors.Is(err, ErrProjectNotFound) || errors.Is(err, ErrNoFrameworkWheel)) {
			continue // the release still stands; its library pins are unknown
		}
		if err != nil {
			return nil, err
		}
		meta, err := ix.WheelMetadata(ctx, file, cacheDir)
		if err != nil {
			return nil, err
		}
		if j.top {
			out.Wheel, out.Via = file.Filename, meta.Via
		}
		all, err := parseDependencies(meta.RequiresDist)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file.Filename, err)
		}
		extras := j.fw.Extras
		if len(extras) == 0 {
			if e := cudaExtra(all, platform, python); e != "" {
				extras = []string{e}
				if j.top {
					out.Extra = e
				}
			}
		}
		env, err := PythonEnv(platform, python, extras...)
		if err != nil {
			return nil, err
		}
		from := j.fw.Project + " " + j.fw.Version
		for _, d := range all {
			ok, err := d.Applies(env)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file.Filename, err)
			}
			if !ok {
				continue
			}
			line := PinLine{From: from, Requirement: d.Project + extrasString(d.Extras) + d.SpecString()}
			if j.toolkit {
				if strings.HasPrefix(d.Project, "nvidia-") {
					out.Libraries = append(out.Libraries, line)
				}
				continue
			}
			if isCUDAProject(d.Project) {
				deps = append(deps, d)
				out.Applied = append(out.Applied, line)
				// The meta-package's extras name each library's build.
				if v := d.Exact(); d.Project == "cuda-toolkit" && v != "" {
					queue = append(queue, job{fw: Framework{Project: d.Project, Extras: d.Extras, Version: v}, toolkit: true, depth: j.depth + 1})
				}
				continue
			}
			// A plugin an extra pulls by exact pin: jax[cuda13] →
			// jax-cuda13-plugin[with-cuda]==0.9.0 (not jaxlib, also pinned).
			if v := d.Exact(); v != "" && strings.Contains(d.Marker, "extra") && j.depth < 2 && (len(d.Extras) > 0 || strings.Contains(d.Project, "cuda")) {
				queue = append(queue, job{fw: Framework{Project: d.Project, Extras: d.Extras, Version: v}, depth: j.depth + 1})
			}
		}
	}
	if len(deps) == 0 {
		return nil, fmt.Errorf("%s: the wheel %s pins no NVIDIA CUDA wheels for %s (a CPU build, or one that bundles CUDA)", fw, out.Wheel, platform)
	}
	if err := ix.resolvePins(ctx, out, deps); err != nil {
		return nil, fmt.Errorf("%s: %w", fw, err)
	}
	return out, nil
}

func extrasString(e []string) string {
	if len(e) == 0 {
		return ""
	}
	return "[" + strings.Join(e, ",") + "]"
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

// resolvePins turns the applied requirements into the CUDA release and the
// cuDNN build.
func (ix *Index) resolvePins(ctx context.Context, out *Pins, deps []Dependency) error {
	var toolkit, runtime *Dependency
	var cudnn []Dependency
	for i := range deps {
		d := &deps[i]
		if lib := productOf(d.Project); lib != "" {
			from := d.Project + d.SpecString()
			v, exact, err := ix.pickVersion(ctx, *d)
			if err != nil {
				// A library beside CUDA does not stop the rest: it is named
				// with why it is left out.
				out.Products = append(out.Products, ProductPin{Library: lib, From: from, Err: err})
				continue
			}
			if !exact {
				from += " (newest on the index: " + v + ")"
			}
			out.Products = append(out.Products, ProductPin{Library: lib, Version: v, From: from})
			continue
		}
		switch {
		case d.Project == "cuda-toolkit":
			if toolkit != nil {
				return fmt.Errorf("cuda-toolkit is required twice (%s, %s)", toolkit.SpecString(), d.SpecString())
			}
			toolkit = d
		case cudnnMajorOf(d.Project) > 0:
			cudnn = append(cudnn, *d)
		case projectComponents()[d.Project].id == "cuda_cudart":
			runtime = d
		}
	}
	switch {
	case toolkit != nil:
		v, exact, err := ix.pickVersion(ctx, *toolkit)
		if err != nil {
			return err
		}
		out.CUDA, out.CUDAExact = toolkitRelease(v), exact
		out.CUDAFrom = "cuda-toolkit" + toolkit.SpecString()
		if !exact {
			out.CUDAFrom += " (newest on the index: " + v + ")"
		}
	case runtime != nil:
		if err := ix.releaseFromRuntime(ctx, out, *runtime, deps); err != nil {
			return err
		}
	default:
		// Only cuDNN or a library: the CUDA major of the cuDNN wheel.
	}
	if len(cudnn) > 1 {
		return fmt.Errorf("cuDNN is required for more than one CUDA major (%s, %s)", cudnn[0].Project, cudnn[1].Project)
	}
	if len(cudnn) == 1 {
		v, exact, err := ix.pickVersion(ctx, cudnn[0])
		if err != nil {
			return err
		}
		out.Cudnn = v
		out.CudnnFrom = cudnn[0].Project + cudnn[0].SpecString()
		if !exact {
			out.CudnnFrom += " (newest on the index: " + v + ")"
		}
		if out.CUDA == "" {
			out.CUDA = strconv.Itoa(cudnnMajorOf(cudnn[0].Project))
			out.CUDAFrom = cudnn[0].Project + " (its CUDA major; no CUDA runtime pin)"
		}
	}
	if out.CUDA == "" {
		return errors.New("its NVIDIA requirements name neither cuda-toolkit, the CUDA runtime nor cuDNN")
	}
	return nil
}

// toolkitRelease is the CUDA release a cuda-toolkit version stands for:
// NVIDIA uploaded some as four parts (13.0.3.0 for 13.0.3).
func toolkitRelease(v string) string {
	if parts := strings.Split(v, "."); len(parts) == 4 && parts[3] == "0" {
		return strings.Join(parts[:3], ".")
	}
	return v
}

// pickVersion is the version an exact pin names, or the newest on the
// index that satisfies a range.
func (ix *Index) pickVersion(ctx context.Context, d Dependency) (string, bool, error) {
	if v := d.Exact(); v != "" {
		if err := checkPlainVersion(d.Project, v); err != nil {
			return "", false, err
		}
		return v, true, nil
	}
	page, err := ix.Project(ctx, d.Project)
	if err != nil {
		return "", false, err
	}
	best := ""
	for _, v := range allWheelVersions(page) {
		if d.Allows(v) && plainVersion().MatchString(v) && (best == "" || compareVersions(v, best) > 0) {
			best = v
		}
	}
	if best == "" {
		return "", false, fmt.Errorf("%s at %s has no version that satisfies %s", d.Project, page.URL, d.SpecString())
	}
	return best, false, nil
}

// allWheelVersions lists each wheel version on a page once, pre-releases
// included (Allows decides about them).
func allWheelVersions(page *Page) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range page.Files {
		w, err := ParseWheelName(f.Filename)
		if err != nil || w.Project != page.Project || f.Yanked || seen[w.Version] {
			continue
		}
		seen[w.Version] = true
		out = append(out, w.Version)
	}
	return out
}

// releaseFromRuntime finds the release of a pinned CUDA runtime wheel: the
// newest known release whose runtime satisfies the pin and whose other
// components satisfy theirs; failing that, the release Offers names for
// the runtime (13.5.0).
func (ix *Index) releaseFromRuntime(ctx context.Context, out *Pins, runtime Dependency, deps []Dependency) error {
	var runtimes []string
	if v := runtime.Exact(); v != "" {
		runtimes = []string{canonical(v)}
	} else {
		page, err := ix.Project(ctx, runtime.Project)
		if err != nil {
			return err
		}
		for _, v := range WheelVersions(page) {
			if runtime.Allows(v) {
				runtimes = append(runtimes, v)
			}
		}
	}
	offers := Offers(CatalogReleases(), runtimes)
	for i := len(offers) - 1; i >= 0; i-- {
		o := offers[i]
		if !o.Known || !releaseSatisfies(o.Release, deps) {
			continue
		}
		out.CUDA, out.CUDAExact = o.Release.Version, runtime.Exact() != ""
		out.CUDAFrom = runtime.Project + runtime.SpecString()
		return nil
	}
	for i := len(offers) - 1; i >= 0; i-- {
		if o := offers[i]; !o.Known {
			out.CUDA = o.Release.Version
			out.CUDAFrom = runtime.Project + runtime.SpecString() + " (a CUDA " + o.Release.Version + " release cudaenv's table does not know)"
			return nil
		}
	}
	return fmt.Errorf("no CUDA release has a runtime that satisfies %s%s", runtime.Project, runtime.SpecString())
}

// releaseSatisfies reports whether every pinned component the release has
// a version of satisfies its pin.
func releaseSatisfies(r Release, deps []Dependency) bool {
	for _, d := range deps {
		pc, ok := projectComponents()[d.Project]
		if !ok || pc.major != r.Major() {
			continue
		}
		c, ok := r.Component(pc.id)
		if !ok {
			continue
		}
		if len(d.Specifiers) > 0 && !d.Allows(c.Version) {
			return false
		}
	}
	return true
}

// selectPythonWheel picks the wheel of project==version for a platform and
// CPython version: a binary wheel for it beats a pure one; a newer build
// tag wins (torch 2.10.0-3).
func selectPythonWheel(page *Page, version, platform, python string) (File, error) {
	cp := "cp" + strings.ReplaceAll(python, ".", "")
	var best File
	bestRank, bestBuild := 0, -1
	var versions []string
	for _, f := range page.Files {
		if f.Yanked || !wheelFilename().MatchString(f.Filename) {
			continue
		}
		w, err := ParseWheelName(f.Filename)
		if err != nil || w.Project != page.Project {
			continue
		}
		if !slices.Contains(versions, w.Version) {
			versions = append(versions, w.Version)
		}
		if !SameVersion(w.Version, version) {
			continue
		}
		pyOK := slices.ContainsFunc(w.Python, func(t string) bool { return t == cp || t == "py3" || t == "py"+strings.ReplaceAll(python, ".", "") })
		abiOK := slices.ContainsFunc(w.ABI, func(t string) bool { return t == cp || t == "abi3" || t == "none" })
		if !pyOK || !abiOK {
			continue
		}
		rank := 0
		for _, tag := range w.Platforms {
			rank = max(rank, platformRank(platform, tag))
		}
		if rank == 0 {
			continue
		}
		build, _ := strconv.Atoi(leadingDigits(w.Build)) // no build tag is 0
		if rank > bestRank || rank == bestRank && build > bestBuild {
			best, bestRank, bestBuild = f, rank, build
		}
	}
	if bestRank == 0 {
		slices.SortFunc(versions, compareVersions)
		if len(versions) > 8 {
			versions = versions[len(versions)-8:]
		}
		return File{}, noFrameworkWheel(fmt.Sprintf("%s has no wheel of %s for %s and Python %s at %s (newest there: %s)",
			page.Project, version, platform, python, page.URL, strings.Join(versions, ", ")))
	}
	return best, nil
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

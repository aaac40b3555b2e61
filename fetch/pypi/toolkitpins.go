package pypi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A toolkit is a set of component versions. A resolution (Resolved) says
// which builds of NVIDIA's wheels a framework's environment loads; they
// may come from several CUDA releases (torch 2.7.1 pins nvrtc from 12.6.2
// and cuBLAS from 12.6.3) or from none (a range that takes a cuBLAS newer
// than any release ships). ToolkitPins is those builds by component;
// NameToolkit names the set by the release whose runtime and nvcc they
// are, the differences listed.

// ComponentPin is one component's build as a resolution picked it.
type ComponentPin struct {
	ID      string // redist component: libcublas
	Project string // its wheel: nvidia-cublas
	Version string // the wheel version: 13.1.1.3
	From    string // why: "torch 2.12.0 requires >=13.1.0.3,<=13.1.1.3"
	Exact   bool   // pinned exactly (not the newest a range allows)
}

// LibraryPin is a library built per CUDA major (cuDNN, NCCL, …) as a
// resolution picked it.
type LibraryPin struct {
	Library string // cudnn, nccl, cusparselt, cutensor, cudss, nvshmem
	Project string // nvidia-nccl-cu13
	Version string
	From    string
	Exact   bool
}

// ToolkitPins is what a resolution installs.
type ToolkitPins struct {
	// Major is the CUDA major of the NVIDIA wheels (0 when none of the
	// toolkit's, cuDNN's or a library's).
	Major      int
	Components []ComponentPin // sorted by id
	Cudnn      *LibraryPin
	Libraries  []LibraryPin // in productLibraries order
	// Toolkit is the cuda-toolkit meta-package version the requirements
	// took ("" for none): where a pin names it, the release it stands for.
	Toolkit string
	// Others are NVIDIA wheels cudaenv does not install (nvidia-ml-py,
	// nvidia-cudnn-frontend): said, not installed.
	Others []string
}

// Component is the pin of a component id, if any.
func (t *ToolkitPins) Component(id string) (ComponentPin, bool) {
	for _, want := range aliases(id) {
		for _, c := range t.Components {
			if c.ID == want {
				return c, true
			}
		}
	}
	return ComponentPin{}, false
}

// Versions maps each pinned component id to its version.
func (t *ToolkitPins) Versions() map[string]string {
	out := make(map[string]string, len(t.Components))
	for _, c := range t.Components {
		out[c.ID] = c.Version
	}
	return out
}

// whyPicked says what made a pick: the requirement and who stated it,
// "nvidia-cuda-runtime==13.2.86.* (cuda-toolkit 13.2.2)", and for a range
// the version it took, "nvidia-cublas>=13.0.0.19 (jax-cuda13-plugin
// 0.9.0; newest on the index: 13.8.0.4)".
func whyPicked(p Picked, quiet ...string) string {
	var specs, froms []string
	for _, c := range p.Constraints {
		if sp := specString(c.Specifiers); sp != "" && !slices.Contains(specs, sp) {
			specs = append(specs, sp)
		}
		if c.From != "--for" && !slices.Contains(froms, c.From) && !slices.Contains(quiet, c.From) {
			froms = append(froms, c.From)
		}
	}
	s := p.Project + strings.Join(specs, ",")
	if !p.Exact() {
		froms = append(froms, "newest on the index: "+p.Version)
	}
	if len(froms) > 0 {
		s += " (" + strings.Join(froms, "; ") + ")"
	}
	return s
}

// Toolkit sorts a resolution's NVIDIA wheels into a toolkit's components,
// cuDNN and the other libraries. Wheels of two CUDA majors cannot make one
// toolkit: that is an error naming one of each.
func (r *Resolved) Toolkit() (*ToolkitPins, error) {
	out := &ToolkitPins{}
	if tk, ok := r.Project(ToolkitProject); ok {
		out.Toolkit = toolkitRelease(tk.Version)
	}
	// With one requirement, what its own wheel pins needs no name.
	var quiet []string
	if len(r.Top) == 1 {
		quiet = append(quiet, r.Top[0].Project+" "+r.Top[0].Version)
	}
	whyPicked := func(p Picked) string { return whyPicked(p, quiet...) }
	var majorFrom Picked
	setMajor := func(m int, p Picked) error {
		if out.Major == 0 {
			out.Major, majorFrom = m, p
			return nil
		}
		if out.Major != m {
			return fmt.Errorf("the requirements take NVIDIA wheels of two CUDA majors, %s %s (CUDA %d: %s) and %s %s (CUDA %d: %s); one toolkit is one major",
				majorFrom.Project, majorFrom.Version, out.Major, whyPicked(majorFrom), p.Project, p.Version, m, whyPicked(p))
		}
		return nil
	}
	for _, p := range r.NVIDIA {
		if err := checkPlainVersion(p.Project, p.Version); err != nil {
			return nil, err
		}
		switch {
		case cudnnMajorOf(p.Project) > 0:
			if err := setMajor(cudnnMajorOf(p.Project), p); err != nil {
				return nil, err
			}
			out.Cudnn = &LibraryPin{Library: "cudnn", Project: p.Project, Version: p.Version, From: whyPicked(p), Exact: p.Exact()}
		case productOf(p.Project) != "":
			m, _ := strconv.Atoi(p.Project[strings.LastIndex(p.Project, "-cu")+3:])
			if err := setMajor(m, p); err != nil {
				return nil, err
			}
			out.Libraries = append(out.Libraries, LibraryPin{Library: productOf(p.Project), Project: p.Project, Version: p.Version, From: whyPicked(p), Exact: p.Exact()})
		default:
			pc, ok := projectComponents()[p.Project]
			if !ok {
				out.Others = append(out.Others, p.Project+"=="+p.Version)
				continue
			}
			if err := setMajor(pc.major, p); err != nil {
				return nil, err
			}
			out.Components = append(out.Components, ComponentPin{ID: pc.id, Project: p.Project, Version: p.Version, From: whyPicked(p), Exact: p.Exact()})
		}
	}
	slices.SortFunc(out.Components, func(a, b ComponentPin) int { return strings.Compare(a.ID, b.ID) })
	slices.SortStableFunc(out.Libraries, func(a, b LibraryPin) int {
		return slices.Index(productLibraries, a.Library) - slices.Index(productLibraries, b.Library)
	})
	return out, nil
}

// Differ is a component whose build in a toolkit is not its release's own.
type Differ struct {
	ID      string
	Version string // the toolkit's
	Release string // the release's own build; "" when the release has none
}

// Differences lists, sorted by id, the pinned components whose versions
// are not rel's own.
func Differences(rel Release, pins map[string]string) []Differ {
	var out []Differ
	for id, v := range pins {
		c, ok := rel.Component(id)
		switch {
		case !ok:
			out = append(out, Differ{ID: id, Version: v})
		case !SameVersion(c.Version, v):
			out = append(out, Differ{ID: id, Version: v, Release: c.Version})
		}
	}
	slices.SortFunc(out, func(a, b Differ) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// NameToolkit names a set of component builds of one CUDA major by a
// release in known: among the releases whose runtime (cuda_cudart) and
// nvcc builds are the pinned ones (either, where only one is pinned), the
// one whose own builds differ from the pins least, the newest of equals.
// With neither pinned (nvidia-cublas-cu12==12.4.5.8 alone), the release
// that shipped the most of the pinned builds. ok is false when no known
// release has the pinned runtime (nor, with no runtime pinned, the nvcc),
// or, with neither pinned, any pinned build.
func NameToolkit(pins map[string]string, major int, known []Release) (Release, bool) {
	rt, hasRT := pins["cuda_cudart"]
	nvcc, hasNvcc := pins["cuda_nvcc"]
	same := func(r Release, id, v string) bool {
		c, ok := r.Component(id)
		return ok && SameVersion(c.Version, v)
	}
	if !hasRT && !hasNvcc {
		best, bestSame, found := Release{}, 0, false
		for _, r := range known {
			if r.Major() != major {
				continue
			}
			n := len(pins) - len(Differences(r, pins))
			if n > 0 && (!found || n > bestSame || n == bestSame && compareVersions(r.Version, best.Version) > 0) {
				best, bestSame, found = r, n, true
			}
		}
		return best, found
	}
	pick := func(match func(Release) bool) (Release, bool) {
		best, bestDiff, found := Release{}, 0, false
		for _, r := range known {
			if r.Major() != major || !match(r) {
				continue
			}
			d := len(Differences(r, pins))
			if !found || d < bestDiff || d == bestDiff && compareVersions(r.Version, best.Version) > 0 {
				best, bestDiff, found = r, d, true
			}
		}
		return best, found
	}
	if hasRT && hasNvcc {
		if r, ok := pick(func(r Release) bool { return same(r, "cuda_cudart", rt) && same(r, "cuda_nvcc", nvcc) }); ok {
			return r, true
		}
	}
	if hasRT {
		return pick(func(r Release) bool { return same(r, "cuda_cudart", rt) })
	}
	return pick(func(r Release) bool { return same(r, "cuda_nvcc", nvcc) })
}

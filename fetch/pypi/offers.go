package pypi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	cudaver "github.com/cudaenv/cudaenv/internal/version"
)

// An index names no CUDA releases, only wheel versions. The releases it can
// install are read from the versions of the runtime wheels
// (nvidia-cuda-runtime-cu11, -cu12, and nvidia-cuda-runtime from CUDA 13 on):
// every cuda_cudart version of a release in cudaenv's table (the built-in
// catalog, plus any manifest the caller has) that the index has makes that
// release available; a runtime version that no known release has stands for
// a release the table does not know yet, named by its CUDA major.minor and
// a patch past the newest known one and past the older runtimes of that
// major.minor on the index (12.5.1 after 12.5.0; 12.2.2 after runtimes
// 12.2.53 and 12.2.128; 13.5.0 when there is nothing before it). The index's cuda-toolkit
// meta-package, where it has one, names its releases outright (see
// ToolkitReleases, WithToolkit).

// RuntimeProjects are the projects whose versions list the CUDA releases
// an index has.
func RuntimeProjects() []string {
	var out []string
	for _, major := range []int{11, 12, 13} {
		if p, err := Project("cuda_cudart", major); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Offer is one CUDA release an index has wheels of.
type Offer struct {
	// Release is the release as far as it is known: for a known one every
	// component with its version; for an unknown one only the name
	// (13.5.0) until Index.Complete fills in the components.
	Release Release
	Known   bool   // in cudaenv's table (or a manifest or meta-package release the caller passed)
	Runtime string // the cuda_cudart wheel version that stands for it: 13.0.96
	// ToolkitNamed: the index's cuda-toolkit meta-package names a release
	// so too (its pins are read when it is installed).
	ToolkitNamed bool
}

// Name is what the release is called: 13.0.2.
func (o Offer) Name() string { return o.Release.Version }

// Note says what is special about the offer, or "": a release the table
// does not know, or one whose wheels are known not to work.
func (o Offer) Note() string {
	if o.Release.FromToolkit {
		return "not in cudaenv's table: its wheels as the index's " + ToolkitProject + " " + o.Release.Version + " pins them"
	}
	if !o.Known && o.ToolkitNamed {
		return fmt.Sprintf("not in cudaenv's table: the runtime is %s %s, and the index's %s %s names it", runtimeProject(o.Release.Major()), o.Runtime, ToolkitProject, o.Release.Version)
	}
	if !o.Known {
		return fmt.Sprintf("not in cudaenv's table: the runtime is %s %s, the other wheels the newest that fit", runtimeProject(o.Release.Major()), o.Runtime)
	}
	if b, ok := o.Release.BrokenWheel(); ok {
		return "cannot link programs: " + b.Reason
	}
	return ""
}

// WithToolkitNames adds to offers the releases the index's cuda-toolkit
// meta-package names that the runtime wheels do not (13.4.3, whose wheels
// are 13.4.2's): each after the newest offer of its major.minor below it,
// sharing that offer's runtime, marked FromToolkit (its pins are read
// when it is installed). A name the offers have already is theirs:
// NVIDIA's table names releases, and a meta-package does not rename them
// (PyPI's cuda-toolkit 12.5.1 pins 12.5.0's wheels; the index's 12.5.1 is
// the runtime 12.5.82). A name with no offer of its major.minor below it
// is left out: its wheels are not on the index; so is a release of known
// (cudaenv's table) that offers lacks: its runtime is not on the index.
func WithToolkitNames(offers []Offer, names []string, known []Release) []Offer {
	out := slices.Clone(offers)
	for _, n := range names {
		if i := slices.IndexFunc(out, func(o Offer) bool { return SameVersion(o.Name(), n) }); i >= 0 {
			out[i].ToolkitNamed = !out[i].Known
			continue
		}
		if slices.ContainsFunc(known, func(r Release) bool { return SameVersion(r.Version, n) }) {
			continue
		}
		var below *Offer
		for i := range offers {
			o := &offers[i]
			if majorMinor(o.Name()) == majorMinor(n) && compareVersions(o.Name(), n) < 0 && (below == nil || compareVersions(o.Name(), below.Name()) > 0) {
				below = o
			}
		}
		if below == nil {
			continue
		}
		out = append(out, Offer{Release: Release{Version: n, FromToolkit: true}, Runtime: below.Runtime})
	}
	slices.SortStableFunc(out, func(a, b Offer) int {
		if c := compareVersions(a.Runtime, b.Runtime); c != 0 {
			return c
		}
		return compareVersions(a.Release.Version, b.Release.Version)
	})
	return out
}

// AdoptToolkit makes an offer of the release the index's meta-package
// pins (read with ToolkitReleaseNamed), unless its runtime is not the
// offer's: then the meta-package disagrees with what the index's runtime
// wheels say of that release, and the offer stays as it is (ok false).
func AdoptToolkit(o Offer, rel Release) (Offer, bool) {
	c, ok := rel.Component("cuda_cudart")
	if !ok || (o.Runtime != "" && !SameVersion(c.Version, o.Runtime)) {
		return o, false
	}
	rel.FromToolkit = true
	return Offer{Release: rel, Known: true, Runtime: c.Version}, true
}

func runtimeProject(major int) string {
	p, err := Project("cuda_cudart", major)
	if err != nil {
		return "the runtime wheel"
	}
	return p
}

// Offers lists what an index offers, oldest first (by runtime version,
// then by release): each known release whose runtime version the index has,
// and, per CUDA major.minor, the newest runtime version no known release
// has when it is newer than every known release of that major.minor (an
// older one is a patch the table superseded). runtime is the versions of
// the RuntimeProjects, post-releases already folded into their base.
func Offers(known []Release, runtime []string) []Offer {
	have := map[string]string{} // canonical → as listed
	for _, v := range runtime {
		if pv, ok := parseVersion(v); ok && pv.preKind == 0 && !pv.hasDev {
			have[canonical(v)] = v
		}
	}
	var out []Offer
	used := map[string]bool{}
	newestKnown := map[string]string{} // major.minor → newest runtime of a known release
	newestPatch := map[string]int{}    // major.minor → newest patch of a known release
	for _, r := range known {
		if parts := strings.Split(r.Version, "."); len(parts) == 3 {
			if n, err := strconv.Atoi(parts[2]); err == nil {
				mm := parts[0] + "." + parts[1]
				if p, ok := newestPatch[mm]; !ok || n > p {
					newestPatch[mm] = n
				}
			}
		}
		c, ok := r.Component("cuda_cudart")
		if !ok {
			continue
		}
		key := canonical(c.Version)
		used[key] = true
		mm := majorMinor(c.Version)
		if n := newestKnown[mm]; n == "" || compareVersions(c.Version, n) > 0 {
			newestKnown[mm] = c.Version
		}
		if _, ok := have[key]; ok {
			out = append(out, Offer{Release: cloneRelease(r), Known: true, Runtime: c.Version})
		}
	}
	unknown := map[string]string{} // major.minor → newest unused runtime
	for key, v := range have {
		if used[key] {
			continue
		}
		mm := majorMinor(v)
		if u := unknown[mm]; u == "" || compareVersions(v, u) > 0 {
			unknown[mm] = v
		}
	}
	for mm, v := range unknown {
		if n := newestKnown[mm]; n != "" && compareVersions(v, n) < 0 {
			continue
		}
		// Its patch: past the newest known one, and past each older
		// runtime of the major.minor on the index (each was a release:
		// 12.2.53, 12.2.128 → 12.2.140 is 12.2.2).
		patch := 0
		if p, ok := newestPatch[mm]; ok {
			patch = p + 1
		}
		older := 0
		for _, w := range have {
			if majorMinor(w) == mm && compareVersions(w, v) < 0 {
				older++
			}
		}
		name := mm + "." + strconv.Itoa(max(patch, older))
		out = append(out, Offer{Release: Release{Version: name}, Runtime: v})
	}
	slices.SortStableFunc(out, func(a, b Offer) int {
		if c := compareVersions(a.Runtime, b.Runtime); c != 0 {
			return c
		}
		return compareVersions(a.Release.Version, b.Release.Version)
	})
	return out
}

// NoReleaseError says that a spec matches nothing the index offers.
type NoReleaseError struct {
	Spec  string   // as typed: 12.7
	Index string   // the index URL, for the message
	Near  []string // offers of the same major, oldest first
}

func (e *NoReleaseError) Error() string {
	msg := fmt.Sprintf("no CUDA release matching %s has wheels on %s", e.Spec, e.Index)
	if len(e.Near) > 0 {
		return msg + "; it has " + strings.Join(e.Near, ", ")
	}
	return msg + "; see: cudaenv ls-remote --source pypi"
}

// PickOffer returns the newest offer a spec matches. When compiler is set
// (the selection installs nvcc) releases with a wheel known not to work are
// passed over, and a spec that matches only such releases is refused with
// a *BrokenError naming the nearest release that works.
func PickOffer(offers []Offer, sp cudaver.Spec, compiler bool, index string) (Offer, error) {
	var brokenMatch *Offer
	for i := len(offers) - 1; i >= 0; i-- {
		o := offers[i]
		v, err := cudaver.Parse(o.Name())
		if err != nil || !sp.Match(v) {
			continue
		}
		if _, bad := o.Release.BrokenWheel(); bad && compiler {
			if brokenMatch == nil {
				brokenMatch = &offers[i]
			}
			continue
		}
		return o, nil
	}
	if brokenMatch != nil {
		b, _ := brokenMatch.Release.BrokenWheel()
		return Offer{}, &BrokenError{Release: brokenMatch.Name(), Broken: b, Nearest: nearestWorking(offers, *brokenMatch)}
	}
	e := &NoReleaseError{Spec: sp.String(), Index: index}
	if sp.Kind == cudaver.Prefix {
		for _, o := range offers {
			if o.Release.Major() == sp.Prefix.Major() {
				e.Near = append(e.Near, o.Name())
			}
		}
	}
	return Offer{}, e
}

// nearestWorking is the release of the same major that works and is
// closest to bad: the oldest newer one, else the newest older one.
func nearestWorking(offers []Offer, bad Offer) string {
	var older string
	for _, o := range offers {
		if o.Release.Major() != bad.Release.Major() {
			continue
		}
		if _, broken := o.Release.BrokenWheel(); broken {
			continue
		}
		if compareVersions(o.Runtime, bad.Runtime) > 0 {
			return o.Name()
		}
		older = o.Name()
	}
	return older
}

// canonical is a version's PEP 440 base release as text: 12.4.127.post1 →
// 12.4.127, 13.0 → 13.0.
func canonical(v string) string {
	pv, ok := parseVersion(v)
	if !ok {
		return v
	}
	parts := make([]string, len(pv.release))
	for i, n := range pv.release {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ".")
}

// majorMinor is "13.0" for "13.0.96".
func majorMinor(v string) string {
	parts := strings.SplitN(canonical(v), ".", 3)
	if len(parts) < 2 {
		return parts[0]
	}
	return parts[0] + "." + parts[1]
}

// PickVersion returns the newest of versions that a spec matches by whole
// parts ("9.1" matches 9.1.0.70 and 9.1.1.17, not 9.10.2.21); versions
// that are not dotted numbers are skipped.
func PickVersion(versions []string, sp cudaver.Spec) (string, bool) {
	var vs []cudaver.Version
	byString := map[string]string{}
	for _, s := range versions {
		if v, err := cudaver.Parse(canonical(s)); err == nil {
			vs = append(vs, v)
			byString[v.String()] = canonical(s)
		}
	}
	best, ok := cudaver.Best(sp, vs)
	return byString[best.String()], ok
}

// Siblings are the other offers that share o's runtime version (CUDA 13.0.2
// and 13.0.3 both ship cudart 13.0.96), newest first: the index may have
// the wheels of only some of them, which its runtime versions cannot tell.
// With compiler set, those with a wheel known not to work are left out.
func Siblings(offers []Offer, o Offer, compiler bool) []Offer {
	var out []Offer
	for i := len(offers) - 1; i >= 0; i-- {
		s := offers[i]
		if s.Name() == o.Name() || !s.Known || !SameVersion(s.Runtime, o.Runtime) {
			continue
		}
		if _, bad := s.Release.BrokenWheel(); bad && compiler {
			continue
		}
		out = append(out, s)
	}
	return out
}

package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// needsIndex is the error of what needs the PyPI index under --offline;
// it is a fetch.ErrOffline, as a file missing from the cache is.
type needsIndex string

func (e needsIndex) Error() string        { return string(e) }
func (e needsIndex) Is(target error) bool { return target == fetch.ErrOffline }

// planPyPI pins the release's components as NVIDIA's wheels on a PEP 691/503
// index. Which releases there are comes from the index itself (the versions
// of its runtime wheels), named by cudaenv's table: the built-in catalog
// and any NVIDIA manifest in the cache (NVIDIA is not asked: PyPI may be
// all the network there is). A spec means the newest release the index has.
func (in *Installer) planPyPI(ctx context.Context, p fetch.Product, sp version.Spec, t Target) (*Plan, error) {
	if in.client.Offline {
		return nil, needsIndex("install --source pypi: the PyPI index is needed to find the wheels; run without --offline")
	}
	idx, err := in.pypiIndex()
	if err != nil {
		return nil, err
	}
	pl := &Plan{product: p, platform: t.Platform, Receipt: store.Receipt{Source: "pypi", URL: idx.URL(), Platform: t.Platform, Profile: t.Profile}}
	if len(t.Components) > 0 {
		pl.Receipt.Profile = ""
	}
	resolveAll := func(reqs []pypi.Requirement) ([]fetch.Artifact, error) {
		res, err := idx.Resolve(ctx, t.Platform, reqs)
		if err != nil {
			return nil, err
		}
		for _, sk := range res.Skipped {
			pl.skipped = append(pl.skipped, SkippedWheel{Component: sk.Requirement.Component, Reason: sk.Reason})
		}
		arts := in.wheelArtifacts(res.Artifacts)
		in.rememberWheels(idx.URL(), arts)
		return arts, nil
	}

	if version.Tool(p).Library() {
		req, rel, err := in.pypiCudnn(ctx, idx, sp, t)
		if err != nil {
			return nil, err
		}
		if pl.Artifacts, err = resolveAll([]pypi.Requirement{req}); err != nil {
			return nil, fmt.Errorf("install %s %s from %s: %w", p, req.Version, idx.URL(), err)
		}
		release := rel.Version
		if release == "" {
			// A build the table does not know (9.1.0.70, PyTorch's): its
			// wheel's version names it, so a lock can pin it.
			release = req.Version
		}
		pl.Receipt.ManifestSHA256, pl.Release, pl.release = rel.ManifestSHA256, release, release
		pl.reselect = func([]string) ([]fetch.Artifact, error) { return pl.Artifacts, nil }
		return pl, pl.setName(p, req.Version, req.Version, t.CUDAMajor)
	}

	offers, known, err := in.pypiOffers(ctx, idx)
	if err != nil {
		return nil, fmt.Errorf("install %s --source pypi: %w", sp, err)
	}
	psel := pypi.Selection{Profile: t.Profile, Components: t.Components}
	offer, err := in.pickOffer(ctx, idx, offers, sp, installsCompiler(psel))
	if err != nil {
		return nil, fmt.Errorf("install %s --source pypi: %w", sp, err)
	}
	offer, known, err = in.withToolkitRelease(ctx, idx, offer, known)
	if err != nil {
		return nil, fmt.Errorf("install %s --source pypi: %w", sp, err)
	}
	planFor := func(sel pypi.Selection) ([]pypi.Requirement, pypi.Release, map[string]string, error) {
		rel, err := idx.Complete(ctx, offer, known, sel)
		if err != nil {
			return nil, rel, nil, err
		}
		reqs, err := pypi.Plan(rel, t.Platform, sel)
		if err != nil {
			return nil, rel, nil, err
		}
		reqs, differs := pinRequirements(rel, reqs, t.pins)
		return reqs, rel, differs, nil
	}
	reqs, rel, differs, err := planFor(psel)
	if err != nil {
		return nil, fmt.Errorf("install %s --source pypi: %w", offer.Name(), err)
	}
	if (!offer.Known || offer.Release.FromToolkit) && in.said.first("unlisted "+offer.Name()) {
		in.event(UnlistedRelease{Release: offer.Name(), Note: offer.Note()})
	}
	res, err := idx.Resolve(ctx, t.Platform, reqs)
	if err != nil {
		return nil, fmt.Errorf("install %s from %s: %w", rel.Version, idx.URL(), err)
	}
	// The release asked for is the one installed, whatever the profile
	// (#36): wheels its index lacks are left out, and said in one line
	// with an older release that has them.
	for _, sk := range res.Skipped {
		pl.skipped = append(pl.skipped, SkippedWheel{Component: sk.Requirement.Component, Reason: sk.Reason})
	}
	if len(res.Skipped) > 0 {
		pl.skippedOlder = in.olderWithWheels(ctx, idx, offers, offer, res.Skipped, t.Platform)
	}
	pl.Artifacts = in.wheelArtifacts(res.Artifacts)
	in.rememberWheels(idx.URL(), pl.Artifacts)
	if len(pl.Artifacts) == 0 {
		in.reportSkipped(pl)
		return nil, fmt.Errorf("install %s --source pypi: the index has none of its wheels for %s", rel.Version, t.Platform)
	}
	pl.Receipt.ManifestSHA256, pl.Release, pl.release = rel.ManifestSHA256, rel.Version, rel.Version
	pl.pinned = t.pins != nil
	if t.pins != nil && t.pins.known {
		pl.Receipt.Differs = differs
	}
	pl.reselect = func(ids []string) ([]fetch.Artifact, error) {
		reqs, _, _, err := planFor(pypi.Selection{Components: ids})
		if err != nil {
			return nil, err
		}
		return resolveAll(reqs)
	}
	return pl, pl.setName(p, rel.Version, "", 0)
}

// pinRequirements puts the pinned builds into a release's requirements:
// a pinned component takes the pinned version (and must be there), and a
// pinned component the profile lacks is added unless a profile or
// components were named (forPins.extend). differs maps each component
// whose build is not the release's own to the release's own ("" where it
// has none).
func pinRequirements(rel pypi.Release, reqs []pypi.Requirement, p *forPins) ([]pypi.Requirement, map[string]string) {
	if p == nil {
		return reqs, nil
	}
	major := rel.Major()
	differs := map[string]string{}
	pinned := func(id string) (string, bool) {
		for _, a := range []string{id, map[string]string{"cuda_cccl": "cccl", "cccl": "cuda_cccl"}[id]} {
			if v, ok := p.pins[a]; ok && a != "" {
				return v, true
			}
		}
		return "", false
	}
	have := map[string]bool{}
	for i := range reqs {
		have[reqs[i].Component] = true
		if v, ok := pinned(reqs[i].Component); ok {
			reqs[i].Version, reqs[i].Optional = v, false
		}
	}
	ids := slices.Sorted(maps.Keys(p.pins))
	for _, id := range ids {
		if !p.extend || have[id] || (id == "cccl" && have["cuda_cccl"]) || (id == "cuda_cccl" && have["cccl"]) {
			continue
		}
		project, err := pypi.Project(id, major)
		if err != nil {
			continue
		}
		reqs = append(reqs, pypi.Requirement{Component: id, Project: project, Version: p.pins[id]})
	}
	for _, r := range reqs {
		v, ok := pinned(r.Component)
		if !ok {
			continue
		}
		own, inRel := rel.Component(r.Component)
		switch {
		case !inRel:
			differs[r.Component] = ""
		case !pypi.SameVersion(own.Version, v):
			differs[r.Component] = own.Version
		}
	}
	slices.SortStableFunc(reqs, func(a, b pypi.Requirement) int { return strings.Compare(a.Component, b.Component) })
	if len(differs) == 0 {
		differs = nil
	}
	return reqs, differs
}

// olderWithWheels names an older release of the same major.minor whose
// wheels of the skipped components the index has (its pages are read
// already), and how to take it; "" when none.
func (in *Installer) olderWithWheels(ctx context.Context, idx *pypi.Index, offers []pypi.Offer, o pypi.Offer, skipped []pypi.Skipped, platform string) string {
	mm := func(v string) string {
		parts := strings.SplitN(v, ".", 3)
		if len(parts) < 2 {
			return v
		}
		return parts[0] + "." + parts[1]
	}
	for i := len(offers) - 1; i >= 0; i-- {
		older := offers[i]
		if !older.Known || mm(older.Name()) != mm(o.Name()) || pypi.CompareVersions(older.Name(), o.Name()) >= 0 {
			continue
		}
		all := true
		for _, sk := range skipped {
			c, ok := older.Release.Component(sk.Requirement.Component)
			if !ok {
				all = false
				break
			}
			page, err := idx.Project(ctx, sk.Requirement.Project)
			if err != nil {
				all = false
				break
			}
			if _, err := pypi.SelectWheel(page, c.Version, platform); err != nil {
				all = false
				break
			}
		}
		if all {
			return fmt.Sprintf("CUDA %s has them: cudaenv install %s --source pypi", older.Name(), older.Name())
		}
	}
	return ""
}

// installsCompiler reports whether a selection installs nvcc's wheel, the
// one known-broken wheel sets are broken in.
func installsCompiler(sel pypi.Selection) bool {
	if len(sel.Components) == 0 {
		return true // every profile has cuda_nvcc
	}
	return slices.ContainsFunc(sel.Components, func(id string) bool { return strings.TrimSpace(id) == "cuda_nvcc" })
}

// pypiOffers lists the CUDA releases the index has, and the known releases
// they were named with (cudaenv's table: the built-in catalog and any
// NVIDIA manifest in the cache), with the releases the index's
// cuda-toolkit meta-package names besides (13.4.3): its page only, no
// meta-package wheel is read here (withToolkitRelease reads the one a
// plan needs). The list is also cached for shell completion.
func (in *Installer) pypiOffers(ctx context.Context, idx *pypi.Index) ([]pypi.Offer, []pypi.Release, error) {
	projects := append(pypi.RuntimeProjects(), pypi.ToolkitProject)
	byProject, err := idx.ManyVersions(ctx, projects)
	if err != nil {
		return nil, nil, fmt.Errorf("list CUDA releases on %s: %w", idx.URL(), err)
	}
	names, err := idx.ToolkitVersions(ctx) // its page is read already
	if err != nil {
		return nil, nil, fmt.Errorf("list CUDA releases on %s: %w", idx.URL(), err)
	}
	known := in.knownReleases(ctx)
	var runtime []string
	for p, vs := range byProject {
		if p != pypi.ToolkitProject {
			runtime = append(runtime, vs...)
		}
	}
	offers := pypi.WithToolkitNames(pypi.Offers(known, runtime), names, known)
	if len(offers) == 0 {
		return nil, nil, fmt.Errorf("%s has no CUDA runtime wheels (%s); is CUDAENV_PYPI_INDEX a mirror of PyPI's NVIDIA projects?", idx.URL(), strings.Join(pypi.RuntimeProjects(), ", "))
	}
	listing := make([]string, 0, len(offers))
	for _, o := range offers {
		listing = append(listing, o.Name())
	}
	in.cacheListing(idx.URL(), fetch.CUDA, listing)
	return offers, known, nil
}

// pickOffer is the newest release on the index that the spec matches,
// whatever the profile (#36). The runtime wheels cannot tell releases
// that share their runtime apart (CUDA 13.0.2 and 13.0.3 both ship cudart
// 13.0.96): such a release is on the index when the index's cuda-toolkit
// meta-package names it, or has a wheel of one of the builds that set it
// apart from the older one (13.0.3's cuBLAS 13.1.1.3). One that is not is
// passed over for the older.
func (in *Installer) pickOffer(ctx context.Context, idx *pypi.Index, offers []pypi.Offer, sp version.Spec, compiler bool) (pypi.Offer, error) {
	names, _ := idx.ToolkitVersions(ctx) // read already by pypiOffers
	for {
		o, err := pypi.PickOffer(offers, sp, compiler, idx.URL())
		if err != nil || !o.Known || slices.Contains(names, o.Name()) || in.hasOwnWheel(ctx, idx, offers, o) {
			return o, err
		}
		offers = slices.DeleteFunc(slices.Clone(offers), func(x pypi.Offer) bool { return x.Name() == o.Name() })
	}
}

// hasOwnWheel reports whether the index has a wheel of a build that only
// o, of the releases sharing its runtime, ships for the platform; true
// when o shares its runtime with no older release.
func (in *Installer) hasOwnWheel(ctx context.Context, idx *pypi.Index, offers []pypi.Offer, o pypi.Offer) bool {
	var older *pypi.Offer
	for i := range offers {
		x := &offers[i]
		if x.Known && x.Name() != o.Name() && pypi.SameVersion(x.Runtime, o.Runtime) && pypi.CompareVersions(x.Name(), o.Name()) < 0 &&
			(older == nil || pypi.CompareVersions(x.Name(), older.Name()) > 0) {
			older = x
		}
	}
	if older == nil {
		return true
	}
	for _, c := range o.Release.Components {
		oc, ok := older.Release.Component(c.ID)
		if ok && pypi.SameVersion(oc.Version, c.Version) {
			continue
		}
		project, err := pypi.Project(c.ID, o.Release.Major())
		if err != nil {
			continue
		}
		page, err := idx.Project(ctx, project)
		if err != nil {
			continue
		}
		for _, v := range pypi.WheelVersions(page) {
			if pypi.SameVersion(v, c.Version) {
				return true
			}
		}
	}
	return false
}

// withToolkitRelease reads, for an offer cudaenv's table does not know,
// the index's cuda-toolkit meta-package release of that name (one wheel's
// metadata, cached): where its runtime is the offer's, its pins are the
// release's wheels, and it joins known. A meta-package that disagrees
// with the index's runtime wheels (PyPI's cuda-toolkit 12.5.1 pins 12.5.0's
// runtime) is not believed; the offer is completed from its neighbours.
func (in *Installer) withToolkitRelease(ctx context.Context, idx *pypi.Index, o pypi.Offer, known []pypi.Release) (pypi.Offer, []pypi.Release, error) {
	if o.Known {
		return o, known, nil
	}
	rel, ok, err := idx.ToolkitReleaseNamed(ctx, o.Name(), in.opts.CacheDir)
	if err != nil {
		return o, known, fmt.Errorf("read the index's %s %s: %w; nothing was installed: check that CUDAENV_PYPI_INDEX is PyPI or a faithful mirror of it", pypi.ToolkitProject, o.Name(), err)
	}
	if !ok {
		if o.Release.FromToolkit {
			return o, known, fmt.Errorf("the index's %s %s pins no CUDA runtime wheel; nothing to install it from", pypi.ToolkitProject, o.Name())
		}
		return o, known, nil
	}
	adopted, ok := pypi.AdoptToolkit(o, rel)
	if !ok {
		return o, known, nil
	}
	return adopted, append(slices.Clone(known), adopted.Release), nil
}

// knownReleases is cudaenv's table of releases: the built-in catalog, and
// the releases of NVIDIA manifests in the download cache that it lacks.
func (in *Installer) knownReleases(ctx context.Context) []pypi.Release {
	known := pypi.CatalogReleases()
	have := map[string]bool{}
	for _, r := range known {
		have[r.Version] = true
	}
	cached := *in.client
	cached.Offline = true
	if releases, err := cached.Releases(ctx, fetch.CUDA, false); err == nil {
		for _, r := range releases {
			if have[r] {
				continue
			}
			if m, err := cached.Manifest(ctx, fetch.CUDA, r); err == nil {
				known = append(known, releaseFromManifest(m))
			}
		}
	}
	return known
}

// pypiCudnn pins the wheel of a library (cuDNN, NCCL, …) for the target's
// CUDA major: the newest version of nvidia-<library>-cu<major> on the
// index that the spec matches.
func (in *Installer) pypiCudnn(ctx context.Context, idx *pypi.Index, sp version.Spec, t Target) (pypi.Requirement, pypi.CudnnRelease, error) {
	lib := string(sp.Tool)
	want := strings.TrimPrefix(sp.String(), lib+"@")
	project, err := pypi.Project(lib, t.CUDAMajor)
	if err != nil {
		return pypi.Requirement{}, pypi.CudnnRelease{}, fmt.Errorf("install %s %s: %w", lib, want, err)
	}
	if !pypi.KnownPlatform(t.Platform) {
		return pypi.Requirement{}, pypi.CudnnRelease{}, fmt.Errorf("install %s %s: NVIDIA publishes no wheels for platform %s", lib, want, t.Platform)
	}
	vs, err := idx.Versions(ctx, project)
	if err != nil {
		return pypi.Requirement{}, pypi.CudnnRelease{}, fmt.Errorf("install %s %s: %w", lib, want, err)
	}
	ver, ok := pypi.PickVersion(vs, sp)
	if !ok {
		near := vs
		if len(near) > 8 {
			near = near[len(near)-8:]
		}
		msg := fmt.Sprintf("install %s %s: %s has no version %s for CUDA %d", lib, want, idx.URL(), want, t.CUDAMajor)
		if len(near) > 0 {
			msg += "; its newest: " + strings.Join(near, ", ")
		}
		return pypi.Requirement{}, pypi.CudnnRelease{}, errors.New(msg + "; see: cudaenv ls-remote " + lib + " --source pypi")
	}
	var rel pypi.CudnnRelease
	if sp.Tool == version.Cudnn {
		for _, r := range pypi.CatalogCudnnReleases() {
			if pypi.SameVersion(r.CudnnVersion, ver) {
				rel = r
			}
		}
	}
	return pypi.Requirement{Component: lib, Project: project, Version: ver}, rel, nil
}

// pypiCudnnVersions lists the cuDNN versions the index has for a CUDA
// major (every major with a cuDNN wheel when major is 0), oldest first.
func (in *Installer) pypiCudnnVersions(ctx context.Context, idx *pypi.Index, major int) (map[string][]int, error) {
	return in.pypiLibraryVersions(ctx, idx, fetch.CUDNN, major)
}

// pypiLibraryVersions lists the versions of a library's wheels (cudnn,
// nccl, …) the index has for a CUDA major (every major when 0).
func (in *Installer) pypiLibraryVersions(ctx context.Context, idx *pypi.Index, p fetch.Product, major int) (map[string][]int, error) {
	majors := []int{11, 12, 13}
	if major != 0 {
		majors = []int{major}
	}
	projects := map[string]int{}
	var names []string
	for _, m := range majors {
		if proj, err := pypi.Project(string(p), m); err == nil {
			projects[proj] = m
			names = append(names, proj)
		}
	}
	byProject, err := idx.ManyVersions(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("list %s releases on %s: %w", version.Tool(p).Title(), idx.URL(), err)
	}
	out := map[string][]int{}
	for p, vs := range byProject {
		for _, v := range vs {
			out[v] = append(out[v], projects[p])
		}
	}
	for v := range out {
		sort.Ints(out[v])
	}
	return out, nil
}

// cacheListing keeps what an index offers where shell completion reads
// cached release indexes (fetch.CachedReleases); it never downloads.
func (in *Installer) cacheListing(indexURL string, p fetch.Product, names []string) {
	if in.opts.CacheDir == "" || len(names) == 0 {
		return
	}
	sum := sha256.Sum256([]byte(indexURL))
	data, err := json.Marshal(struct {
		Base     string    `json:"base"`
		Fetched  time.Time `json:"fetched"`
		Releases []string  `json:"releases"`
	}{indexURL, time.Now().UTC(), names})
	if err != nil {
		return
	}
	_ = in.client.WriteTrusted(filepath.Join("index", "pypi-"+hex.EncodeToString(sum[:6]), string(p)+".json"), data)
}

// ReleasesShipping names the CUDA releases in cudaenv's table that shipped
// a component build ("cuda_nvcc", "13.0.48" → 13.0.0), oldest first: what
// link names a pip or conda tree by (store.ReleaseTable).
func ReleasesShipping(component, build string) []string {
	var out []string
	for _, r := range pypi.CatalogReleases() {
		if c, ok := r.Component(component); ok && pypi.SameVersion(c.Version, build) {
			out = append(out, r.Version)
		}
	}
	return out
}

// releaseFromManifest lists a manifest's components with their versions
// and platforms, as the PyPI planner wants them.
func releaseFromManifest(m *fetch.Manifest) pypi.Release {
	r := pypi.Release{Version: m.Version, ReleaseDate: m.Date, ManifestSHA256: m.SHA256}
	for _, id := range m.ComponentIDs() {
		c := m.Components[id]
		var plats []string
		for p := range c.Platforms {
			plats = append(plats, p)
		}
		sort.Strings(plats)
		r.Components = append(r.Components, pypi.Component{ID: id, Version: c.Version, Platforms: plats})
	}
	return r
}

// wheelArtifacts turns resolved wheels into fetch artifacts that unpack
// with the wheel layout (nvidia/<pkg>/… or nvidia/cu13/… → bin, include,
// lib), so the store cannot tell a PyPI install from a redist one.
func (in *Installer) wheelArtifacts(ws []pypi.Artifact) []fetch.Artifact {
	out := make([]fetch.Artifact, len(ws))
	for i, w := range ws {
		// The file's own version: a post-release (12.4.127.post1) of w.Version.
		fileVersion := w.Version
		if wn, err := pypi.ParseWheelName(w.Filename); err == nil {
			fileVersion = wn.Version
		}
		out[i] = fetch.Artifact{
			Component: w.Component, Name: w.Project, Version: w.Version, Platform: w.Platform,
			RelativePath: w.RelativePath, SHA256: w.SHA256, Size: w.Size, URL: w.URL,
			License: "NVIDIA (see the wheel's license)",
		}
		in.cachedWheel(&out[i], w.Project, fileVersion)
	}
	return out
}

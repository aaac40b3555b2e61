package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/atomicfile"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// planPyPI pins the release's components as NVIDIA's wheels on a PEP 691/503
// index. Which releases there are comes from the index itself (the versions
// of its runtime wheels), named by cudaenv's table: the built-in catalog
// and any NVIDIA manifest in the cache (NVIDIA is not asked: PyPI may be
// all the network there is). A spec means the newest release the index has.
func (in *Installer) planPyPI(ctx context.Context, p fetch.Product, sp version.Spec, t Target) (*Plan, error) {
	if in.client.Offline {
		return nil, errors.New("install --source pypi: the PyPI index is needed to find the wheels; run without --offline")
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
	offer, err := pypi.PickOffer(offers, sp, installsCompiler(psel), idx.URL())
	if err != nil {
		return nil, fmt.Errorf("install %s --source pypi: %w", sp, err)
	}
	rel, err := idx.Complete(ctx, offer, known, psel)
	if err != nil {
		return nil, fmt.Errorf("install %s --source pypi: %w", sp, err)
	}
	if (!offer.Known || offer.Release.FromToolkit) && in.said.first("unlisted "+offer.Name()) {
		in.event(UnlistedRelease{Release: offer.Name(), Note: offer.Note()})
	}
	reqs, err := pypi.Plan(rel, t.Platform, psel)
	if err != nil {
		return nil, fmt.Errorf("install %s --source pypi: %w", rel.Version, err)
	}
	res, err := idx.Resolve(ctx, t.Platform, reqs)
	if err != nil {
		return nil, fmt.Errorf("install %s from %s: %w", rel.Version, idx.URL(), err)
	}
	// Releases that share a runtime version look alike in the listing; of
	// those, the newest whose wheels the index has is meant.
	for _, sib := range pypi.Siblings(offers, offer, installsCompiler(psel)) {
		if len(res.Skipped) == 0 {
			break
		}
		if v, err := version.Parse(sib.Name()); err != nil || !sp.Match(v) {
			continue
		}
		sreqs, err := pypi.Plan(sib.Release, t.Platform, psel)
		if err != nil {
			continue
		}
		if sres, err := idx.Resolve(ctx, t.Platform, sreqs); err == nil && len(sres.Skipped) < len(res.Skipped) {
			offer, rel, res = sib, sib.Release, sres
		}
	}
	for _, sk := range res.Skipped {
		pl.skipped = append(pl.skipped, SkippedWheel{Component: sk.Requirement.Component, Reason: sk.Reason})
	}
	pl.Artifacts = in.wheelArtifacts(res.Artifacts)
	in.rememberWheels(idx.URL(), pl.Artifacts)
	if len(pl.Artifacts) == 0 {
		in.reportSkipped(pl)
		return nil, fmt.Errorf("install %s --source pypi: the index has none of its wheels for %s", rel.Version, t.Platform)
	}
	pl.Receipt.ManifestSHA256, pl.Release, pl.release = rel.ManifestSHA256, rel.Version, rel.Version
	pl.reselect = func(ids []string) ([]fetch.Artifact, error) {
		full := rel
		if !offer.Known {
			if full, err = idx.Complete(ctx, offer, known, pypi.Selection{Components: ids}); err != nil {
				return nil, err
			}
		}
		reqs, err := pypi.Plan(full, t.Platform, pypi.Selection{Components: ids})
		if err != nil {
			return nil, err
		}
		return resolveAll(reqs)
	}
	return pl, pl.setName(p, rel.Version, "", 0)
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
// they were named with: cudaenv's table, with the index's cuda-toolkit
// meta-package over it (its releases by their real names, their wheels as
// it pins them). The list is also cached for shell completion.
func (in *Installer) pypiOffers(ctx context.Context, idx *pypi.Index) ([]pypi.Offer, []pypi.Release, error) {
	byProject, err := idx.ManyVersions(ctx, pypi.RuntimeProjects())
	if err != nil {
		return nil, nil, fmt.Errorf("list CUDA releases on %s: %w", idx.URL(), err)
	}
	toolkit, err := idx.ToolkitReleases(ctx, in.opts.CacheDir)
	if err != nil {
		return nil, nil, fmt.Errorf("list CUDA releases on %s: %w; nothing was installed: check that CUDAENV_PYPI_INDEX is PyPI or a faithful mirror of it", idx.URL(), err)
	}
	known := pypi.WithToolkit(in.knownReleases(ctx), toolkit)
	var runtime []string
	for _, vs := range byProject {
		runtime = append(runtime, vs...)
	}
	offers := pypi.Offers(known, runtime)
	if len(offers) == 0 {
		return nil, nil, fmt.Errorf("%s has no CUDA runtime wheels (%s); is CUDAENV_PYPI_INDEX a mirror of PyPI's NVIDIA projects?", idx.URL(), strings.Join(pypi.RuntimeProjects(), ", "))
	}
	var names []string
	for _, o := range offers {
		names = append(names, o.Name())
	}
	in.cacheListing(idx.URL(), fetch.CUDA, names)
	return offers, known, nil
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
	_ = atomicfile.Write(filepath.Join(in.opts.CacheDir, "index", "pypi-"+hex.EncodeToString(sum[:6]), string(p)+".json"), data, 0o644)
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

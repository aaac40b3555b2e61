package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// planPyPI pins the release's components as NVIDIA's wheels on a PEP 691/503
// index. Component versions come from the release's manifest when one is
// in the cache (NVIDIA is not asked: PyPI may be all the network there is),
// else from the catalog built into cudaenv.
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
			in.event(SkippedWheel{Component: sk.Requirement.Component, Reason: sk.Reason})
		}
		return wheelArtifacts(res.Artifacts), nil
	}

	if p == fetch.CUDNN {
		rel, ok := pypi.LatestCatalogCudnn(specPrefix(sp))
		if !ok {
			return nil, fmt.Errorf("install --source pypi: no cuDNN release matches %s in cudaenv's catalog; use --source nvidia", strings.TrimPrefix(sp.String(), "cudnn@"))
		}
		req, err := pypi.PlanCudnn(rel, t.CUDAMajor, t.Platform)
		if err != nil {
			return nil, fmt.Errorf("install cudnn %s: %w", rel.Version, err)
		}
		if pl.Artifacts, err = resolveAll([]pypi.Requirement{req}); err != nil {
			return nil, fmt.Errorf("install cudnn %s from %s: %w", rel.Version, idx.URL(), err)
		}
		pl.Receipt.ManifestSHA256, pl.release = rel.ManifestSHA256, rel.Version
		pl.reselect = func([]string) ([]fetch.Artifact, error) { return pl.Artifacts, nil }
		return pl, pl.setName(p, rel.Version, rel.CudnnVersion, t.CUDAMajor)
	}

	rel, err := in.pypiRelease(ctx, sp)
	if err != nil {
		return nil, err
	}
	psel := pypi.Selection{Profile: t.Profile, Components: t.Components}
	reqs, err := pypi.Plan(rel, t.Platform, psel)
	if err != nil {
		return nil, fmt.Errorf("install %s --source pypi: %w", rel.Version, err)
	}
	if pl.Artifacts, err = resolveAll(reqs); err != nil {
		return nil, fmt.Errorf("install %s from %s: %w", rel.Version, idx.URL(), err)
	}
	if len(pl.Artifacts) == 0 {
		return nil, fmt.Errorf("install %s --source pypi: the index has none of its wheels for %s", rel.Version, t.Platform)
	}
	pl.Receipt.ManifestSHA256, pl.release = rel.ManifestSHA256, rel.Version
	pl.reselect = func(ids []string) ([]fetch.Artifact, error) {
		reqs, err := pypi.Plan(rel, t.Platform, pypi.Selection{Components: ids})
		if err != nil {
			return nil, err
		}
		return resolveAll(reqs)
	}
	return pl, pl.setName(p, rel.Version, "", 0)
}

// pypiRelease finds the CUDA release for a spec: from a cached NVIDIA
// manifest if there is one, else from the built-in catalog.
func (in *Installer) pypiRelease(ctx context.Context, sp version.Spec) (pypi.Release, error) {
	cached := *in.client
	cached.Offline = true
	if releases, err := cached.Releases(ctx, fetch.CUDA, false); err == nil {
		if rel, err := pickRelease(fetch.CUDA, sp, releases); err == nil {
			if m, err := cached.Manifest(ctx, fetch.CUDA, rel); err == nil {
				return releaseFromManifest(m), nil
			}
		}
	}
	byVersion := map[string]pypi.Release{}
	var names []string
	for _, r := range pypi.CatalogReleases() {
		byVersion[r.Version] = r
		names = append(names, r.Version)
	}
	best, ok := bestOf(sp, names)
	if !ok {
		return pypi.Release{}, fmt.Errorf("install --source pypi: no CUDA release matches %s in cudaenv's catalog (it has %s); use --source nvidia", sp, strings.Join(names, ", "))
	}
	return byVersion[best], nil
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

func specPrefix(sp version.Spec) string {
	if sp.Kind == version.Latest {
		return ""
	}
	return sp.Prefix.String()
}

// wheelArtifacts turns resolved wheels into fetch artifacts that unpack
// with the wheel layout (nvidia/<pkg>/… or nvidia/cu13/… → bin, include,
// lib), so the store cannot tell a PyPI install from a redist one.
func wheelArtifacts(ws []pypi.Artifact) []fetch.Artifact {
	out := make([]fetch.Artifact, len(ws))
	for i, w := range ws {
		out[i] = fetch.Artifact{
			Component: w.Component, Name: w.Project, Version: w.Version, Platform: w.Platform,
			RelativePath: w.RelativePath, SHA256: w.SHA256, Size: w.Size, URL: w.URL,
			License: "NVIDIA (see the wheel's license)",
			Unpack:  unpackWheel,
		}
	}
	return out
}

func unpackWheel(path, dest string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return pypi.ExtractWheel(f, fi.Size(), dest)
}

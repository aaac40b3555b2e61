package pypi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// NVIDIA's cuda-toolkit meta-package has one release per CUDA release
// from 12.9.0 on, and its "all" extra pins every component wheel of that
// release exactly (nvidia-cuda-nvcc==13.0.88.*). It is PyPI's own word on
// which releases there are and which wheels make them, so it names the
// releases it has by their real version and picks their wheels; the
// built-in catalog stays the table for older releases and for a mirror
// without the meta-package.

// ToolkitProject is the meta-package's project name.
const ToolkitProject = "cuda-toolkit"

// maxToolkitPins bounds the "all" extra of one meta-package release: real
// ones pin about 25 wheels.
const maxToolkitPins = 256

// ToolkitReleases reads the CUDA releases of the index's cuda-toolkit
// meta-package, oldest first, each once, with the components its "all"
// extra pins. Pre-releases (13.4.0rc1), dev builds, yanked files and
// releases with no wheel (sdist only) are left out; a four-part version
// (13.0.3.0) is the release it denotes (13.0.3), and the three-part upload
// wins where both exist. An index without the project has none. A release
// whose metadata pins something other than NVIDIA's wheels, or cannot be
// read, is an error: the index is not what it claims. Metadata is cached
// under cacheDir by index, file and sha256 (see WheelMetadata).
func (ix *Index) ToolkitReleases(ctx context.Context, cacheDir string) ([]Release, error) {
	page, err := ix.Project(ctx, ToolkitProject)
	if errors.Is(err, ErrProjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	files := toolkitFiles(page)
	names := make([]string, 0, len(files))
	for r := range files {
		names = append(names, r)
	}
	slices.SortFunc(names, compareVersions)
	out := make([]Release, len(names))
	use := make([]bool, len(names))
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f := files[name]
			what := ToolkitProject + " " + name
			meta, err := ix.WheelMetadata(ctx, f, cacheDir) // its error names the file
			if err == nil {
				what += " (" + f.Filename + ")"
				out[i], use[i], err = ToolkitRelease(name, meta.RequiresDist)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", what, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := termsafe.Join(errs...); err != nil {
		return nil, err
	}
	var rels []Release
	for i, r := range out {
		if use[i] {
			rels = append(rels, r)
		}
	}
	return rels, nil
}

// ToolkitVersions lists the CUDA releases the index's cuda-toolkit
// meta-package names, oldest first, from its page alone: no wheel is
// read (the names are what listing and picking a release need; a
// release's pins are read when it is installed, ToolkitReleaseNamed). An
// index without the project names none.
func (ix *Index) ToolkitVersions(ctx context.Context) ([]string, error) {
	page, err := ix.Project(ctx, ToolkitProject)
	if errors.Is(err, ErrProjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for r := range toolkitFiles(page) {
		names = append(names, r)
	}
	slices.SortFunc(names, compareVersions)
	return names, nil
}

// ToolkitReleaseNamed reads the one meta-package release named so (13.5.0;
// its 13.5.0.0 upload too), as ToolkitReleases reads each: one wheel's
// metadata, cached under cacheDir by its sha256. ok is false when the
// index has no such release or it pins no runtime.
func (ix *Index) ToolkitReleaseNamed(ctx context.Context, name, cacheDir string) (Release, bool, error) {
	page, err := ix.Project(ctx, ToolkitProject)
	if errors.Is(err, ErrProjectNotFound) {
		return Release{}, false, nil
	}
	if err != nil {
		return Release{}, false, err
	}
	f, ok := toolkitFiles(page)[name]
	if !ok {
		return Release{}, false, nil
	}
	meta, err := ix.WheelMetadata(ctx, f, cacheDir)
	if err != nil {
		return Release{}, false, fmt.Errorf("%s %s: %w", ToolkitProject, name, err)
	}
	rel, ok, err := ToolkitRelease(name, meta.RequiresDist)
	if err != nil {
		return Release{}, false, fmt.Errorf("%s %s (%s): %w", ToolkitProject, name, f.Filename, err)
	}
	rel.FromToolkit = true
	return rel, ok, nil
}

// toolkitFiles picks one wheel per CUDA release from the meta-package's
// page.
func toolkitFiles(page *Page) map[string]File {
	out := map[string]File{}
	exact := map[string]bool{}
	for _, f := range page.Files {
		w, err := ParseWheelName(f.Filename)
		if err != nil || w.Project != page.Project || f.Yanked || !plainVersion().MatchString(w.Version) {
			continue // sdists, pre-, post- and dev releases, other projects
		}
		release := toolkitRelease(w.Version)
		if len(strings.Split(release, ".")) != 3 {
			continue // 13.0 or 13.0.3.1: not a CUDA release's name
		}
		isExact := release == w.Version
		if _, have := out[release]; have && (exact[release] || !isExact) {
			continue
		}
		out[release], exact[release] = f, isExact
	}
	return out
}

// ToolkitRelease builds the release a cuda-toolkit meta-package version
// stands for from its Requires-Dist lines: each wheel its "all" extra pins
// that cudaenv maps to a component, with the platforms the pin's marker
// allows. ok is false when the extra pins no CUDA runtime (an old or
// partial meta-package: the catalog decides then). A pin on a project
// that is not NVIDIA's, on another CUDA major's wheel, or not exact, is
// an error.
func ToolkitRelease(version string, requires []string) (rel Release, ok bool, err error) {
	if err := checkPlainVersion(ToolkitProject, version); err != nil {
		return Release{}, false, err
	}
	if len(requires) > maxToolkitPins {
		return Release{}, false, fmt.Errorf("%d requirements, more than the %d a meta-package has", len(requires), maxToolkitPins)
	}
	deps, err := parseDependencies(requires)
	if err != nil {
		return Release{}, false, err
	}
	major := majorOf(version)
	envs := map[string]MarkerEnv{}
	plats := []string{LinuxX86_64, LinuxSBSA, WindowsX86_64, WindowsARM64}
	for _, p := range plats {
		if envs[p], err = PythonEnv(p, "3.12", "all"); err != nil {
			return Release{}, false, err
		}
	}
	rel = Release{Version: version}
	seen := map[string]bool{}
	for _, d := range deps {
		var on []string
		for _, p := range plats {
			applies, err := d.Applies(envs[p])
			if err != nil {
				return Release{}, false, err
			}
			if applies {
				on = append(on, p)
			}
		}
		if len(on) == 0 {
			continue // another extra, or no platform cudaenv knows
		}
		if !strings.HasPrefix(d.Project, "nvidia-") {
			return Release{}, false, fmt.Errorf("its \"all\" extra requires %s, which is not an NVIDIA wheel; refusing the index's meta-package", strconv.Quote(truncate(d.Project, 60)))
		}
		pin := toolkitPin(d)
		if pin == "" {
			return Release{}, false, fmt.Errorf("its \"all\" extra requires %s%s, not one exact version", d.Project, truncate(d.SpecString(), 60))
		}
		if err := checkPlainVersion(d.Project, pin); err != nil {
			return Release{}, false, err
		}
		pc, known := projectComponents()[d.Project]
		if !known {
			continue // a wheel cudaenv does not install
		}
		if pc.major != major {
			return Release{}, false, fmt.Errorf("its \"all\" extra requires %s, a CUDA %d wheel, for CUDA %s", d.Project, pc.major, version)
		}
		if seen[pc.id] {
			return Release{}, false, fmt.Errorf("its \"all\" extra requires %s twice", d.Project)
		}
		seen[pc.id] = true
		rel.Components = append(rel.Components, Component{ID: pc.id, Version: pin, Platforms: on})
	}
	if !seen["cuda_cudart"] {
		return Release{}, false, nil
	}
	slices.SortFunc(rel.Components, func(a, b Component) int { return strings.Compare(a.ID, b.ID) })
	return rel, true, nil
}

// toolkitPin is the version a meta-package requirement pins: X for ==X.*
// or ==X, and for the range NVIDIA writes for nvJitLink from 12.9.2 on
// (>=13.0.88,<14: any newer build of the major links) its lower bound, the
// release's own build. "" for anything else.
func toolkitPin(d Dependency) string {
	if len(d.Specifiers) == 1 && d.Specifiers[0].Op == "==" {
		return strings.TrimSuffix(d.Specifiers[0].Version, ".*")
	}
	lower := ""
	for _, sp := range d.Specifiers {
		switch {
		case sp.Op == ">=" && lower == "":
			lower = sp.Version
		case sp.Op == "<" && !strings.Contains(sp.Version, "*"):
		default:
			return ""
		}
	}
	return lower
}

// WithToolkit merges the meta-package's releases into cudaenv's table: a
// release the table has takes the meta-package's pin for each component
// the meta-package pins and keeps the rest (its date, its manifest, the
// components that have no wheel); a release the table lacks is added,
// marked FromToolkit. The result is sorted by version.
func WithToolkit(known, toolkit []Release) []Release {
	out := make([]Release, 0, len(known)+len(toolkit))
	for _, r := range known {
		out = append(out, cloneRelease(r))
	}
	for _, t := range toolkit {
		i := slices.IndexFunc(out, func(r Release) bool { return r.Version == t.Version })
		if i < 0 {
			t = cloneRelease(t)
			t.FromToolkit = true
			out = append(out, t)
			continue
		}
		for _, tc := range t.Components {
			j := slices.IndexFunc(out[i].Components, func(c Component) bool { return slices.Contains(aliases(c.ID), tc.ID) })
			if j < 0 {
				out[i].Components = append(out[i].Components, tc)
				continue
			}
			out[i].Components[j].Version = tc.Version
		}
	}
	slices.SortStableFunc(out, func(a, b Release) int { return compareVersions(a.Version, b.Version) })
	return out
}

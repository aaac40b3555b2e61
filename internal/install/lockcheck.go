package install

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/internal/version"
)

// checkLockedWheels refuses, before anything is downloaded, a PyPI lock
// whose wheels are not the ones a --source pypi install of its release
// would plan: each file must be a wheel of the project its component and
// CUDA major map to, and, where cudaenv's table knows the release, of the
// version the table gives that component. The lock comes from a cloned
// repository; without this its file name alone would choose the project,
// and anyone's upload could be installed as nvcc.
func (in *Installer) checkLockedWheels(ctx context.Context, lk *lockfile.Lock, platform, lockName string) error {
	var known []pypi.Release
	for _, lp := range lk.Products() {
		if lp.Source != "pypi" {
			continue
		}
		major, want, err := in.lockedWheelVersions(ctx, lp, &known)
		if err != nil {
			return fmt.Errorf("%s: %w", lockName, err)
		}
		for _, f := range lp.Platforms[platform] {
			if t := lp.Tool(); t.Library() && t != version.Cudnn && f.Component != string(t) {
				// A library's wheel is its one component: a [nccl] table
				// listing cuda_nvcc would install nvcc as NCCL.
				return fmt.Errorf("%s: [%s] lists %s; a %s lock from PyPI has only its %s wheel; delete it and run cudaenv lock to write it again", lockName, t, f.Component, t.Title(), t)
			}
			if _, err := pypi.CheckLockedWheel(f.Component, major, f.Version, platform, f.Name); err != nil {
				return fmt.Errorf("%s: %w; delete it and run cudaenv lock to write it again", lockName, err)
			}
			if want == nil {
				continue
			}
			v, ok := want[f.Component]
			switch {
			case !ok:
				return fmt.Errorf("%s: %s: no wheel of it belongs to %s %s; delete it and run cudaenv lock to write it again", lockName, f.Component, productName(lp), lp.Release)
			case !pypi.SameVersion(v, f.Version) && !shippedBy(known, major, f.Component, f.Version):
				// A toolkit install --for made takes a framework's builds,
				// each one NVIDIA shipped in a release of the major.
				return fmt.Errorf("%s: %s: version %s is not the one of %s %s (%s), nor of any CUDA %d release cudaenv knows; delete it and run cudaenv lock to write it again", lockName, f.Component, f.Version, productName(lp), lp.Release, v, major)
			}
		}
	}
	return nil
}

// lockedWheelVersions is the CUDA major of a PyPI product's wheels and,
// when cudaenv's table knows its release, the version of each component
// in it (nil when it does not: a release the index had that the table
// lacks, whose wheels are then held to their project and version only).
func (in *Installer) lockedWheelVersions(ctx context.Context, lp *lockfile.Product, known *[]pypi.Release) (int, map[string]string, error) {
	if lp.Tool() == version.Cudnn {
		for _, r := range pypi.CatalogCudnnReleases() {
			if r.Version != lp.Release && r.CudnnVersion != lp.Release {
				continue
			}
			return lp.CUDAMajor, map[string]string{"cudnn": r.CudnnVersion}, nil
		}
		return lp.CUDAMajor, nil, nil
	}
	if lp.Tool().Library() {
		// cudaenv's table has no releases of the other libraries: their
		// wheels are held to their project and version.
		return lp.CUDAMajor, nil, nil
	}
	rel, err := version.Parse(lp.Release)
	if err != nil {
		return 0, nil, fmt.Errorf("release %q: %w", lp.Release, err)
	}
	if *known == nil {
		*known = in.knownReleases(ctx)
	}
	if !slices.ContainsFunc(*known, func(r pypi.Release) bool { return r.Version == lp.Release }) {
		*known = in.withIndexToolkit(ctx, *known, lp.Release)
	}
	for _, r := range *known {
		if r.Version != lp.Release {
			continue
		}
		want := map[string]string{}
		for _, c := range r.Components {
			want[c.ID] = c.Version
		}
		// The cuda_cccl ⇄ cccl rename: either id names the one wheel.
		for _, pair := range [][2]string{{"cuda_cccl", "cccl"}, {"cccl", "cuda_cccl"}} {
			if v, ok := want[pair[0]]; ok {
				if _, ok := want[pair[1]]; !ok {
					want[pair[1]] = v
				}
			}
		}
		return rel.Major(), want, nil
	}
	return rel.Major(), nil, nil
}

// withIndexToolkit adds the release of the PyPI index's cuda-toolkit
// meta-package named release to known, for a locked release the table
// lacks: an install planned its wheels as the meta-package pins them. Only
// that one meta-package wheel is read (#35). Offline, or when the index
// cannot be read, known is returned as it is (the wheels are then held to
// their project and version only, as before).
func (in *Installer) withIndexToolkit(ctx context.Context, known []pypi.Release, release string) []pypi.Release {
	if in.client.Offline {
		return known
	}
	idx, err := in.pypiIndex()
	if err != nil {
		return known
	}
	rel, ok, err := idx.ToolkitReleaseNamed(ctx, release, in.opts.CacheDir)
	if err != nil || !ok {
		return known
	}
	return append(slices.Clone(known), rel)
}

// unpackWheelAs unpacks a wheel planned as project==version, refusing
// one whose METADATA says it is something else.
func unpackWheelAs(project, version string) func(context.Context, *os.File, int64, string) error {
	return func(ctx context.Context, f *os.File, size int64, dest string) error {
		return pypi.ExtractPlannedWheel(ctx, f, size, dest, project, version)
	}
}

// cachedWheel has the wheel artifact a (planned as project==version)
// unpacked through the download cache's cache of unpacked wheels, and
// installed from there, as hard links, when that holds it (see
// pypi.WheelCache).
func (in *Installer) cachedWheel(a *fetch.Artifact, project, version string) {
	if in.opts.CacheDir == "" {
		a.Unpack = unpackWheelAs(project, version)
		return
	}
	c := pypi.NewWheelCache(in.opts.CacheDir, in.opts.Notice)
	// A system store's users check its files on their own: it owns them.
	c.OwnFiles = in.opts.Store != nil && in.opts.Store.Shared
	sha := a.SHA256
	a.Unpack = func(ctx context.Context, f *os.File, size int64, dest string) error {
		return c.Unpack(ctx, f, size, sha, dest, project, version)
	}
	a.Reuse = func(ctx context.Context, dest string) (bool, error) {
		return c.Reuse(ctx, sha, dest, project, version)
	}
}

func productName(lp *lockfile.Product) string {
	return lp.Tool().Title()
}

// shippedBy reports whether a known release of the CUDA major has the
// component at that build.
func shippedBy(known []pypi.Release, major int, component, build string) bool {
	for _, r := range known {
		if r.Major() != major {
			continue
		}
		if c, ok := r.Component(component); ok && pypi.SameVersion(c.Version, build) {
			return true
		}
	}
	return false
}

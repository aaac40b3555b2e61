package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// LockUpdated: the lock no longer matched .cuda-version, or had no files
// for this platform, so it was written again (keeping every release that
// still matches) before installing from it.
type LockUpdated struct {
	Path   string
	Reason string
	DryRun bool // a dry run: the lock would be written again, and is not
}

// NotAsLocked: an installed entry has components from other archives than
// the lock lists; it is left as it is (Request.Force reinstalls it).
type NotAsLocked struct {
	Label      string
	Lock       string
	Components []string // sorted
}

func (LockUpdated) event() {}
func (NotAsLocked) event() {}

// installLocked installs exactly what the lock lists for the platform,
// each file checked against the lock's sha256.
func (in *Installer) installLocked(ctx context.Context, req Request, versionFile string, specs []version.Spec, lockPath string, lk *lockfile.Lock, platform string) ([]Result, error) {
	name := filepath.Base(lockPath)
	lk, err := in.currentLock(ctx, "install", lockChecks{profile: req.Profile, components: req.Components, locked: req.Locked, source: req.Source, dryRun: req.DryRun}, versionFile, specs, lockPath, lk, []string{platform})
	if err != nil {
		return nil, err
	}

	if err := in.checkLockedWheels(ctx, lk, platform, name); err != nil {
		return nil, err
	}
	if req.DryRun {
		// What the lock would install, planned as a real run plans it;
		// nothing is written.
		d := &dryReport{in: in, force: req.Force, cudaMajor: req.CUDAMajor}
		for _, p := range lk.Products() {
			pl, err := in.planLocked(lk, p, platform, name)
			if err != nil {
				return nil, err
			}
			d.report(pl)
		}
		return nil, nil
	}
	in.opts.Store.CleanStaging()
	// Planned from the lock one after another, installed at once.
	pp := in.newPipeline(ctx, req.Force)
	for _, p := range lk.Products() {
		if _, ok := pp.plan(func(_ context.Context, in *Installer) (*Plan, error) {
			return in.planLocked(lk, p, platform, name)
		}); !ok {
			break
		}
	}
	return pp.wait()
}

// lockChecks are what a command asks of a lock: the components typed
// (the lock decides them), whether it must match (--locked), and the
// source for products a rewritten lock adds.
type lockChecks struct {
	profile    string
	components []string
	locked     bool
	source     string
	dryRun     bool // say what would be written again, write nothing
}

// currentLock is the lock to work from: lk when it lists what versionFile
// selects for every platform; otherwise, unless c.locked refuses it, the
// lock written again (keeping every release that still matches) and
// reported as LockUpdated. cmd names the command in errors.
func (in *Installer) currentLock(ctx context.Context, cmd string, c lockChecks, versionFile string, specs []version.Spec, lockPath string, lk *lockfile.Lock, platforms []string) (*lockfile.Lock, error) {
	name := filepath.Base(lockPath)
	if (c.profile != "" && c.profile != lk.Profile) || (len(c.components) > 0 && !slices.Equal(sortedUnique(c.components), lk.Components)) {
		return nil, fmt.Errorf("%s: %s decides the components (%s); change them with cudaenv lock --profile or --components", cmd, lockPath, lockChoice(lk))
	}
	var why []string
	if a, b := specString(specs), specString(lk.Specs()); a != b {
		why = append(why, fmt.Sprintf("%s asks for %s, the lock has %s", versionFile, a, b))
	}
	for _, platform := range platforms {
		if !lk.HasPlatform(platform) {
			why = append(why, fmt.Sprintf("the lock has no files for %s", platform))
		}
	}
	if len(why) == 0 {
		return lk, nil
	}
	reason := strings.Join(why, "; ")
	if c.locked {
		return nil, fmt.Errorf("%s --locked: %s is out of date: %s; run cudaenv lock and commit %s", cmd, lockPath, reason, name)
	}
	nl, err := in.relock(ctx, specs, lk, relockOpts{platforms: platforms, defaultSource: c.source})
	if err != nil {
		return nil, err
	}
	if c.dryRun {
		in.event(LockUpdated{Path: lockPath, Reason: reason, DryRun: true})
		return nl, nil
	}
	if _, err := writeLock(lockPath, nl); err != nil {
		return nil, err
	}
	in.event(LockUpdated{Path: lockPath, Reason: reason})
	return nl, nil
}

func lockChoice(lk *lockfile.Lock) string {
	if lk.Profile != "" {
		return "profile " + lk.Profile
	}
	return "components " + strings.Join(lk.Components, ",")
}

// specString is specs in a fixed order, to compare selections.
func specString(specs []version.Spec) string {
	var s []string
	for _, sp := range specs {
		s = append(s, sp.String())
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// planLocked turns a locked product into a plan: the lock's files, by
// name, size and sha256, which prepare finds on the mirror or index.
func (in *Installer) planLocked(lk *lockfile.Lock, lp *lockfile.Product, platform, lockName string) (*Plan, error) {
	p := fetch.CUDA
	if lp.Tool().Library() {
		p = fetch.Product(lp.Tool())
	}
	profile := lk.Profile
	if lp.Tool().Library() && (lk.CUDA != nil || profile != "" || lp.Tool() != version.Cudnn) {
		profile = "full"
	}
	var arts []fetch.Artifact
	cudnnVer := ""
	for _, f := range lp.Platforms[platform] {
		a := fetch.Artifact{Component: f.Component, Version: f.Version, Platform: platform, RelativePath: f.Name, SHA256: f.SHA256, Size: f.Size}
		if lp.Source == "pypi" {
			// checkLockedWheels has checked the name against the project.
			wn, err := pypi.ParseWheelName(f.Name)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", lockName, f.Component, err)
			}
			a.Name, a.License = wn.Project, "NVIDIA (see the wheel's license)"
			in.cachedWheel(&a, wn.Project, wn.Version)
		}
		if lp.Tool().Library() && (f.Component == string(lp.Tool()) || (cudnnVer == "" && strings.HasPrefix(f.Component, "lib"))) {
			// The library's own component (cudnn, nccl; libcutensor in a
			// redist manifest) names the store entry.
			cudnnVer = f.Version
		}
		arts = append(arts, a)
	}
	pl := &Plan{
		Release:   lp.Release,
		Artifacts: arts,
		Receipt:   store.Receipt{Source: lp.Source, Platform: platform, Profile: profile, Differs: lockedDiffers(p, lp, arts)},
		lockName:  lockName,
	}
	switch lp.Source {
	case "pypi":
		idx, err := in.pypiIndex()
		if err != nil {
			return nil, err
		}
		pl.Receipt.URL = idx.URL()
	default:
		pl.Receipt.URL = in.client.Base
		if pl.Receipt.URL == "" {
			pl.Receipt.URL = fetch.DefaultBase
		}
	}
	if err := pl.setName(p, lp.Release, cudnnVer, lp.CUDAMajor); err != nil {
		return nil, err
	}
	pl.reselect = func(ids []string) ([]fetch.Artifact, error) {
		var out, extra []string
		var sel []fetch.Artifact
		for _, id := range ids {
			i := slices.IndexFunc(arts, func(a fetch.Artifact) bool { return a.Component == id })
			if i < 0 {
				extra = append(extra, id)
				continue
			}
			out = append(out, id)
			sel = append(sel, arts[i])
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			return nil, fmt.Errorf("it is installed with components %s does not list (%s); cudaenv install --force replaces it with exactly what the lock lists", lockName, strings.Join(extra, ", "))
		}
		return sel, nil
	}
	pl.prepare = func(ctx context.Context, arts []fetch.Artifact) ([]fetch.Artifact, error) {
		return in.locate(ctx, p, lp, arts)
	}
	return pl, nil
}

// lockedDiffers are the locked wheels that are not their release's own
// builds (a lock of an install --for toolkit), as a receipt records them.
func lockedDiffers(p fetch.Product, lp *lockfile.Product, arts []fetch.Artifact) map[string]string {
	rel, ok := pypi.CatalogRelease(lp.Release)
	if p != fetch.CUDA || lp.Source != "pypi" || !ok {
		return nil
	}
	pins := map[string]string{}
	for _, a := range arts {
		pins[a.Component] = a.Version
	}
	out := map[string]string{}
	for _, d := range pypi.Differences(rel, pins) {
		out[d.ID] = d.Release
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// notAsLocked lists the components an installed entry has from other
// archives than the plan's (by sha256).
func notAsLocked(have store.Entry, arts []fetch.Artifact) []string {
	want := map[string]string{}
	for _, a := range arts {
		want[a.Component] = a.SHA256
	}
	var out []string
	for _, c := range have.Receipt.Components {
		if w, ok := want[c.ID]; ok && c.SHA256 != w {
			out = append(out, c.ID)
		}
	}
	sort.Strings(out)
	return out
}

// locate makes a locked plan's artifacts ready to fetch. Every locked
// sha256, for an archive in the download cache as much as for one to
// download, must be listed for its component and platform by a source
// this user trusts: NVIDIA's manifest (fetched now, or cached by this
// user or root) or the index's page of the component's project (fetched
// now; offline, this user's record of it). The lock comes from a cloned
// repository and the cache may be shared, so neither alone decides what
// is installed. Files are found by sha256, so a lock written from NVIDIA's
// server installs from any mirror serving the same files, and the lock
// never names a URL. A file the source lists under the same name with
// another sha256 fails before anything is downloaded; an archive in the
// cache with other contents fails with both hashes; every download is
// verified against the lock's sha256 by fetch.
func (in *Installer) locate(ctx context.Context, p fetch.Product, lp *lockfile.Product, arts []fetch.Artifact) ([]fetch.Artifact, error) {
	arts = slices.Clone(arts)
	var err error
	if lp.Source == "pypi" {
		err = in.locateWheels(ctx, arts)
	} else {
		err = in.locateArchives(ctx, p, lp, arts)
	}
	if err != nil {
		return nil, err
	}
	if _, err := in.checkCache(arts); err != nil {
		return nil, err
	}
	return arts, nil
}

// locateArchives finds each locked archive in NVIDIA's manifest of the
// release, under its component and platform.
func (in *Installer) locateArchives(ctx context.Context, p fetch.Product, lp *lockfile.Product, arts []fetch.Artifact) error {
	m, err := in.client.Manifest(ctx, p, lp.Release)
	if err != nil {
		if errors.Is(err, fetch.ErrOffline) {
			return fmt.Errorf("%w (the locked sha256, of cached archives too, are believed only as NVIDIA's manifest lists them)", err)
		}
		return err
	}
	where := fetch.Redact(in.client.ProductURL(p)) + "redistrib_" + lp.Release + ".json"
	if m.Version != lp.Release {
		// Another release's manifest under this one's name (renamed in a
		// shared cache) would vouch for its archives as this release's.
		return fmt.Errorf("%s says it is release %s, not %s; run cudaenv cache prune and install again", where, m.Version, lp.Release)
	}
	for i := range arts {
		a := &arts[i]
		var listed []*fetch.Artifact
		if c := m.Components[a.Component]; c != nil {
			if pe := c.Platforms[a.Platform]; pe != nil {
				listed = append(listed, pe.Artifact)
				for k, v := range pe.Variants {
					// A cuDNN build is listed per CUDA major (cuda12).
					if lp.CUDAMajor == 0 || k == fmt.Sprintf("cuda%d", lp.CUDAMajor) {
						listed = append(listed, v)
					}
				}
			}
		}
		var same, byName *fetch.Artifact
		for _, l := range listed {
			switch {
			case l == nil || l.URL == "":
			case l.SHA256 == a.SHA256:
				same = l
			case path.Base(l.RelativePath) == a.RelativePath:
				byName = l
			}
		}
		switch {
		case same != nil:
			a.URL, a.Name, a.License, a.Variant = same.URL, same.Name, same.License, same.Variant
		case byName != nil:
			return &MismatchError{Component: a.Component, File: a.RelativePath, Want: a.SHA256, Got: byName.SHA256, Where: "the mirror lists",
				Hint: "the file changed since it was locked (" + where + "); use a mirror that serves the locked files, or accept the new ones with cudaenv lock --upgrade"}
		default:
			return fmt.Errorf("%s (%s): no file with the locked sha256 %s in %s for %s on %s; use a mirror that serves the locked files, or run cudaenv lock --upgrade", a.Component, a.RelativePath, a.SHA256, where, a.Component, a.Platform)
		}
	}
	return nil
}

// locateWheels finds each locked wheel on the index page of the project
// planLocked derived for its component (a.Name), by sha256. Offline, the
// record of an earlier look at that page stands in for it. A page that
// lists the wheel without a sha256 cannot vouch for the lock's.
func (in *Installer) locateWheels(ctx context.Context, arts []fetch.Artifact) error {
	idx, err := in.pypiIndex()
	if err != nil {
		return err
	}
	if in.client.Offline {
		return in.recalledWheels(idx.URL(), arts)
	}
	pages := map[string]*pypi.Page{}
	for i := range arts {
		a := &arts[i]
		project := a.Name
		page := pages[project]
		if page == nil {
			if page, err = idx.Project(ctx, project); err != nil {
				return fmt.Errorf("%s: %w", a.Component, err)
			}
			pages[project] = page
		}
		var same, byName *pypi.File
		for j := range page.Files {
			f := &page.Files[j]
			switch {
			case f.SHA256 == a.SHA256 && f.SHA256 != "":
				// The same bytes, listed as this project's wheel for the platform.
				if f.Filename == a.RelativePath || pypi.WheelFor(f.Filename, project, a.Platform) {
					same = f
				}
			case f.Filename == a.RelativePath:
				byName = f
			}
			if same != nil {
				break
			}
		}
		switch {
		case same != nil:
			a.URL = same.URL
			in.rememberWheel(idx.URL(), project, a.RelativePath, a.SHA256)
		case byName != nil && byName.SHA256 == "":
			return fmt.Errorf("%s (%s): %s lists the wheel without a sha256, so the lock's %s cannot be checked; use an index that gives sha256 (PEP 691 hashes or PEP 503 #sha256= links)", a.Component, a.RelativePath, page.URL, a.SHA256)
		case byName != nil:
			return &MismatchError{Component: a.Component, File: a.RelativePath, Want: a.SHA256, Got: byName.SHA256, Where: "the index lists",
				Hint: "the wheel changed since it was locked (" + page.URL + "); use an index that serves the locked wheels, or accept the new ones with cudaenv lock --upgrade"}
		default:
			return fmt.Errorf("%s (%s): no wheel with the locked sha256 %s on %s; use an index that serves the locked wheels, or run cudaenv lock --upgrade", a.Component, a.RelativePath, a.SHA256, page.URL)
		}
	}
	return nil
}

// checkCache reports which artifacts the download cache holds, verified.
// The cache keeps archives as <cache>/archives/<sha256> (see fetch.Fetch);
// one there with other contents fails with both hashes.
func (in *Installer) checkCache(arts []fetch.Artifact) ([]bool, error) {
	cached := make([]bool, len(arts))
	if in.opts.CacheDir == "" {
		return cached, nil
	}
	errs := make([]error, len(arts))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range arts {
		a := &arts[i]
		p := filepath.Join(in.opts.CacheDir, "archives", a.SHA256)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			got := "a non-file"
			if fi.Mode().IsRegular() {
				sum, err := fetch.HashFile(p)
				if err != nil {
					errs[i] = fmt.Errorf("check %s in the download cache: %w", a.Component, err)
					return
				}
				got = sum
			}
			if got == a.SHA256 && fi.Size() == a.Size {
				cached[i] = true
				return
			}
			errs[i] = &MismatchError{Component: a.Component, File: a.RelativePath, Want: a.SHA256, Got: got, Where: "the download cache has",
				Hint: "something changed " + p + ": run cudaenv cache prune and install again"}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first, in the lock's order
		}
	}
	return cached, nil
}

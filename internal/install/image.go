package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// ImageRequest is what `cudaenv image` puts in an image: versions as
// install takes them (none: what Here selects, from its lock when it has
// one), for one or several platforms. Nothing is installed: an image is
// built from the verified archives (or wheels) in the download cache,
// downloading what it lacks.
type ImageRequest struct {
	// Args are the versions as typed, and maybe libraries=off.
	Args []string
	Here Here
	// Source, SourceTyped, Profile, Components and CUDAMajor are as in
	// Request. A version that is installed is imaged as installed (its
	// release, and its components unless Profile or Components is given).
	Source      string
	SourceTyped bool
	Profile     string
	Components  []string
	CUDAMajor   int
	// Platforms are NVIDIA platform keys of Linux; none means this
	// machine's.
	Platforms []string
	// Locked refuses to build unless a .cuda-version.lock lists exactly
	// what .cuda-version selects here, for every platform (CI).
	Locked bool
}

// ImageContents are the store entries an image holds, per platform.
type ImageContents struct {
	Platforms []string                 // as asked, each once
	Entries   map[string][]*ImageEntry // by platform: CUDA first, then the libraries in version.Libraries order
	// Options are the selection's settings (libraries=off).
	Options resolve.Options
	// Lock is the lock file the contents were read from ("" for none),
	// and LockSHA256 the sha256 of its bytes.
	Lock, LockSHA256 string

	progress []*entryProgress
}

// ImageEntry is one store entry of an image: a CUDA toolkit or a library
// build, and its components, each of which becomes a layer.
type ImageEntry struct {
	Kind      store.Kind
	Name      string // the store entry: 12.4.1, 9.5.1.17-cuda12
	Label     string // CUDA 12.4.1, cuDNN 9.5.1.17-cuda12
	Version   version.Version
	CUDAMajor int // a library's CUDA major
	Platform  string
	Source    string // nvidia or pypi
	// Components in the order install merges them (a file two of them
	// hold is the later one's).
	Components []ImageComponent

	progress *entryProgress
}

// ImageComponent is one archive (or wheel) of an entry.
type ImageComponent struct {
	ID      string
	Version string
	File    string // the archive's or wheel's file name
	SHA256  string // of the archive
	Size    int64
	art     fetch.Artifact
}

// ImageContents plans what an image of the request holds, as install would
// plan it, for every platform; nothing is downloaded but release indexes,
// manifests and index pages.
func (in *Installer) ImageContents(ctx context.Context, req ImageRequest) (*ImageContents, error) {
	source, profile, err := checkSourceProfile(req.Source, req.Profile)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	platforms, err := in.imagePlatforms(req.Platforms)
	if err != nil {
		return nil, err
	}
	out := &ImageContents{Platforms: platforms, Entries: map[string][]*ImageEntry{}}
	var specs []version.Spec
	if len(req.Args) > 0 {
		if req.Locked {
			return nil, errors.New("image --locked builds what .cuda-version.lock lists; drop the version arguments")
		}
		if specs, out.Options, err = parseArgs("image", req.Args, "image: system is no version to put in an image; name one, e.g. cudaenv image 12.4"); err != nil {
			return nil, err
		}
	} else {
		sel, err := req.Here.find()
		if err != nil {
			return nil, err
		}
		if sel.Source.Kind == resolve.None || sel.System() {
			return nil, errors.New("image needs a version, e.g. cudaenv image 12.4 cudnn@9.5 --output oci:cuda (with none, it builds what .cuda-version selects, and nothing selects a version here)")
		}
		out.Options = sel.Options
		specs = sel.AsWritten()
		lockPath, fromFile := lockOf(sel)
		var lk *lockfile.Lock
		if fromFile {
			if lk, err = readLock(lockPath); err != nil {
				return nil, err
			}
		}
		switch {
		case lk != nil:
			return out, in.imageLocked(ctx, req, out, sel.Source.Path, specs, lockPath, lk)
		case req.Locked && fromFile:
			return nil, fmt.Errorf("image --locked: no %s beside %s; write it with cudaenv lock and commit it", lockfile.FileName, sel.Source.Path)
		case req.Locked:
			return nil, fmt.Errorf("image --locked builds what a .cuda-version.lock lists, and the versions here come from %s; run it where a .cuda-version and its lock are", sel.Source)
		}
	}
	explicit := req.Profile != "" || len(req.Components) > 0
	st := in.opts.Store
	ireq := Request{Source: source, SourceTyped: req.SourceTyped}
	for _, platform := range platforms {
		major := req.CUDAMajor
		hasCUDA := false
		var plans []*Plan
		for _, sp := range specs {
			if sp.Tool != version.CUDA {
				continue
			}
			if e, ok := installedFor(st, sp, 0); ok {
				// The release this machine uses for the spec.
				if sp, err = exactSpec(version.CUDA, e.Version.String()); err != nil {
					return nil, err
				}
			}
			t := Target{Source: ireq.sourceFor(st, sp, 0), Platform: platform, Profile: profile, Components: req.Components}
			if !explicit {
				// As installed: the builds it has (an install --for's
				// nvrtc of another release), not the release's own.
				t.pins = installedBuilds(st, sp, platform)
			}
			pl, err := in.Plan(ctx, sp, t)
			if err != nil {
				return nil, err
			}
			if err := in.asInstalled(pl, explicit); err != nil {
				return nil, err
			}
			plans = append(plans, pl)
			hasCUDA = true
			if v, err := version.Parse(pl.Name); err == nil {
				major = v.Major()
			}
		}
		for _, sp := range specs {
			if !sp.Tool.Library() {
				continue
			}
			if major == 0 {
				return nil, fmt.Errorf("image: %s is built per CUDA major; put a CUDA version in the image too (cudaenv image 12.4 %s), or pass --cuda-major 12", sp.Tool.Title(), sp)
			}
			var comps []string
			if !hasCUDA {
				comps = req.Components
			}
			src := ireq.sourceFor(st, sp, major)
			if !req.SourceTyped && !fetch.Product(sp.Tool).Redist() {
				src = "pypi" // its only source
			}
			pl, err := in.Plan(ctx, sp, Target{Source: src, Platform: platform, Profile: "full", Components: comps, CUDAMajor: major})
			if err != nil {
				return nil, err
			}
			if err := in.asInstalled(pl, !hasCUDA && explicit); err != nil {
				return nil, err
			}
			plans = append(plans, pl)
		}
		if err := in.imageNeeds(plans, platform == platforms[0]); err != nil {
			return nil, err
		}
		for _, pl := range plans {
			out.add(platform, pl)
		}
	}
	return out, nil
}

// imageNeeds adds to the image's toolkit of each library's CUDA major
// the components the library needs and it lacks (libraryNeeds), as
// install brings them into the toolkit the library is used with: an
// image of cuSPARSELt with a minimal CUDA holds libcusparse, as the
// installed toolkit does. With no toolkit of that major in the image, a
// note says which command gives one what it needs. say: the events are
// reported (once for all platforms).
func (in *Installer) imageNeeds(plans []*Plan, say bool) error {
	event := func(e Event) {
		if say {
			in.event(e)
		}
	}
	for _, lib := range plans {
		if !lib.Kind.Library() {
			continue
		}
		v, err := version.Parse(strings.TrimSuffix(lib.Name, fmt.Sprintf("-cuda%d", lib.CUDAMajor)))
		if err != nil {
			continue
		}
		var cuda *Plan
		for _, pl := range plans {
			if pl.Kind != store.CUDA {
				continue
			}
			if cv, err := version.Parse(pl.Name); err == nil && cv.Major() == lib.CUDAMajor {
				cuda = pl
			}
		}
		var have []string
		if cuda != nil {
			for _, a := range cuda.Artifacts {
				have = append(have, a.Component)
			}
		}
		var ids, whys []string
		for _, n := range libraryNeeds(version.Tool(lib.Kind), v) {
			if !slices.Contains(have, n.Component) {
				ids, whys = append(ids, n.Component), append(whys, n.Why)
			}
		}
		if len(ids) == 0 {
			continue
		}
		why, comps := strings.Join(whys, "; "), strings.Join(ids, ",")
		if cuda == nil {
			event(Needs{Library: lib.Label, CUDAMajor: lib.CUDAMajor, Components: ids, Why: why,
				Command: fmt.Sprintf("cudaenv image %d %s@%s --components cuda_cudart,%s", lib.CUDAMajor, lib.Kind, v, comps)})
			continue
		}
		if cuda.reselect == nil {
			return fmt.Errorf("image: %s needs %s in %s (%s); name them: --components %s", lib.Label, comps, cuda.Label, why, comps)
		}
		arts, err := cuda.reselect(append(have, ids...))
		if err != nil {
			return fmt.Errorf("image: %s needs %s in %s (%s): %w", lib.Label, comps, cuda.Label, why, err)
		}
		cuda.Artifacts = arts
		event(Needs{Library: lib.Label, CUDA: cuda.Name, CUDAMajor: lib.CUDAMajor, Components: ids, Why: why})
	}
	return nil
}

// asInstalled narrows a plan to the components its installed entry has,
// unless the user chose them: an image of an installed version holds
// what this machine uses.
func (in *Installer) asInstalled(pl *Plan, explicit bool) error {
	if explicit || pl.reselect == nil {
		return nil
	}
	have, ok := in.opts.Store.Get(pl.Kind, pl.Name)
	if !ok || have.Err != nil || have.Linked() || len(have.Receipt.Components) == 0 || have.Receipt.Platform != pl.platform {
		return nil
	}
	arts, err := pl.reselect(componentIDs(have))
	if err != nil {
		return fmt.Errorf("image %s: %w", pl.Label, err)
	}
	pl.Artifacts = arts
	return nil
}

// imageLocked fills the contents from a lock, written again first when it
// no longer matches (refused with Locked), as install does.
func (in *Installer) imageLocked(ctx context.Context, req ImageRequest, out *ImageContents, versionFile string, specs []version.Spec, lockPath string, lk *lockfile.Lock) error {
	lk, err := in.currentLock(ctx, "image", lockChecks{profile: req.Profile, components: req.Components, locked: req.Locked, source: req.Source}, versionFile, specs, lockPath, lk, out.Platforms)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(lockPath)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	out.Lock, out.LockSHA256 = lockPath, hex.EncodeToString(sum[:])
	name := filepath.Base(lockPath)
	for _, platform := range out.Platforms {
		if err := in.checkLockedWheels(ctx, lk, platform, name); err != nil {
			return err
		}
		for _, p := range lk.Products() {
			pl, err := in.planLocked(lk, p, platform, name)
			if err != nil {
				return err
			}
			if pl.Artifacts, err = pl.prepare(ctx, pl.Artifacts); err != nil {
				return fmt.Errorf("image %s: %w", pl.Label, err)
			}
			pl.platform = platform
			out.add(platform, pl)
		}
	}
	return nil
}

func (c *ImageContents) add(platform string, pl *Plan) {
	e := &ImageEntry{Kind: pl.Kind, Name: pl.Name, Label: pl.Label, CUDAMajor: pl.CUDAMajor, Platform: platform, Source: pl.Receipt.Source}
	e.Version, _ = version.Parse(strings.TrimSuffix(pl.Name, fmt.Sprintf("-cuda%d", pl.CUDAMajor)))
	for _, a := range pl.Artifacts {
		e.Components = append(e.Components, ImageComponent{ID: a.Component, Version: a.Version, File: filepath.Base(a.RelativePath), SHA256: a.SHA256, Size: a.Size, art: a})
	}
	c.Entries[platform] = append(c.Entries[platform], e)
}

// imagePlatforms are the platforms asked for, each once, or this
// machine's; images are Linux.
func (in *Installer) imagePlatforms(keys []string) ([]string, error) {
	if len(keys) == 0 {
		p, err := fetch.HostPlatform(in.opts.GOOS, in.opts.GOARCH)
		if err != nil || !strings.HasPrefix(p, "linux-") {
			return nil, errors.New("image: container images are Linux; name the platform, e.g. --platform linux-x86_64 (or linux-sbsa for arm64 servers)")
		}
		return []string{p}, nil
	}
	out, err := in.platforms(keys)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	for _, p := range out {
		if !strings.HasPrefix(p, "linux-") {
			return nil, fmt.Errorf("image: container images are Linux, and %s is not; use linux-x86_64, linux-sbsa or linux-aarch64", p)
		}
	}
	return out, nil
}

// Track has what the contents' downloads and unpacking report go to the
// Reporter, one display per entry (all its components together); Close
// ends the displays left open by a build that failed.
func (c *ImageContents) Track(r Reporter) {
	if r == nil {
		return
	}
	for _, platform := range c.Platforms {
		for _, e := range c.Entries[platform] {
			label := e.Label
			if len(c.Platforms) > 1 {
				label += " (" + platform + ")"
			}
			p := r.Progress(label)
			if p == nil {
				continue
			}
			e.progress = &entryProgress{p: p, left: len(e.Components)}
			for _, comp := range e.Components {
				e.progress.total += comp.Size
			}
			c.progress = append(c.progress, e.progress)
		}
	}
}

// Close finishes the displays Track started that are still open.
func (c *ImageContents) Close() {
	for _, p := range c.progress {
		p.close()
	}
}

// UnpackComponent puts one component of an entry into dest, an empty
// folder: verified (downloaded when the cache lacks it) and unpacked as
// install unpacks it into the store, but alone, and without the layout
// links (lib64 → lib, targets/…) that LinkLayout adds to a whole entry.
func (in *Installer) UnpackComponent(ctx context.Context, e *ImageEntry, c ImageComponent, dest string) error {
	a := c.art
	// No platform: Fetch makes the layout links for a platform's tree,
	// and the image makes them once, for the entry's.
	a.Platform = ""
	client := *in.client
	client.Progress = nil
	if e.progress != nil {
		client.Progress = e.progress
	}
	if _, err := client.Fetch(ctx, []fetch.Artifact{a}, dest); err != nil {
		return fmt.Errorf("image %s: %w", e.Label, err)
	}
	return nil
}

// RemoveUnpacked deletes a folder UnpackComponent filled, with the ledger
// carrying the cache files it linked (as the work folder's done does):
// unlinking a name changes the file's ctime in every store that holds it,
// and without this every store's list said its files were touched.
func (in *Installer) RemoveUnpacked(dir string) error {
	return fetch.NewUnpackedCache(in.opts.CacheDir, nil).Ledger().Remove(dir)
}

// LinkLayout adds to a Linux entry's tree the links install adds to every
// merged tree (see fetch.LinkLinuxLayout).
func LinkLayout(dir, platform string) error { return fetch.LinkLinuxLayout(dir, platform) }

// WorkDir makes a folder for building an image in the download cache
// (where the cache of unpacked wheels is, so reusing one links instead of
// copying), held until done removes it; a killed build's is removed by the
// next command that uses the cache.
func (in *Installer) WorkDir() (string, func(), error) {
	return fetch.NewWorkDir(in.opts.CacheDir, fetch.UnpackPrefix)
}

// entryProgress gathers the one-component fetches of an entry into one
// display: started once with the entry's size, finished when the last
// component is done (or by close).
type entryProgress struct {
	p     Progress
	total int64

	mu       sync.Mutex
	started  bool
	left     int
	finished bool
}

func (p *entryProgress) Start(int64, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		p.started = true
		p.p.Start(p.total, p.left)
	}
}

func (p *entryProgress) Add(n int64) { p.p.Add(n) }

// ComponentDone of a fetch is not yet the component's: Done says when
// its layer is written.
func (p *entryProgress) ComponentDone(string) {}

// Done reports a component of the entry finished (its layer written).
func (e *ImageEntry) Done(id string) {
	if e.progress != nil {
		e.progress.done(id)
	}
}

func (p *entryProgress) done(id string) {
	p.p.ComponentDone(id)
	p.mu.Lock()
	p.left--
	last := p.left == 0 && !p.finished
	if last {
		p.finished = true
	}
	p.mu.Unlock()
	if last {
		p.p.Finish()
	}
}

// Finish of one component's fetch: the display stays for the others.
func (p *entryProgress) Finish() {}

func (p *entryProgress) Cached(n int64) {
	if pp, ok := p.p.(fetch.PhaseProgress); ok {
		pp.Cached(n)
		return
	}
	p.p.Add(n)
}

func (p *entryProgress) Unpacking(id string) {
	if pp, ok := p.p.(fetch.PhaseProgress); ok {
		pp.Unpacking(id)
	}
}

func (p *entryProgress) close() {
	p.mu.Lock()
	open := p.started && !p.finished
	p.finished = true
	p.mu.Unlock()
	if open {
		p.p.Finish()
	}
}

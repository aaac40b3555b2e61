package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/atomicfile"
	"github.com/cudaenv/cudaenv/internal/lockfile"
	"github.com/cudaenv/cudaenv/internal/resolve"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// LockRequest is one `cudaenv lock`: the nearest .cuda-version above
// Here.Dir is locked (CUDAENV_VERSION and the global default play no part:
// a lock belongs to a file).
type LockRequest struct {
	Here Here
	// Platforms are locked besides this machine's and those already in
	// the lock.
	Platforms []string
	// Source is nvidia, pypi or auto; "" keeps each product's source from
	// the lock, and for a product the lock does not have yet uses the
	// source its installed entry came from, else DefaultSource, else
	// nvidia.
	Source        string
	DefaultSource string
	// Profile or Components choose the components; both empty keep the
	// lock's choice (for a new lock, the installed CUDA entry's profile or
	// components, else the default profile).
	Profile    string
	Components []string
	// CUDAMajor is the CUDA major of a cuDNN locked without a CUDA.
	CUDAMajor int
	// Upgrade moves every product to the newest release its spec matches
	// and accepts files that changed on the server; without it a release
	// already locked stays, and so do its files.
	Upgrade bool
}

// LockResult is what Lock wrote.
type LockResult struct {
	Path    string // the lock file
	Lock    *lockfile.Lock
	Written bool // false when the file already said exactly this
}

// Lock writes .cuda-version.lock beside the nearest .cuda-version: for each
// product it selects, the exact release, the source, and every component's
// file, size and sha256 on every platform.
func (in *Installer) Lock(ctx context.Context, req LockRequest) (LockResult, error) {
	versionFile, specs, err := lockedFile(req.Here.Dir)
	if err != nil {
		return LockResult{}, err
	}
	p := lockfile.PathFor(versionFile)
	old, err := readLock(p)
	if err != nil {
		return LockResult{}, err
	}
	lk, err := in.relock(ctx, specs, old, relockOpts{
		platforms: req.Platforms, source: req.Source, defaultSource: req.DefaultSource, profile: req.Profile,
		components: req.Components, cudaMajor: req.CUDAMajor, upgrade: req.Upgrade,
	})
	if err != nil {
		return LockResult{}, err
	}
	written, err := writeLock(p, lk)
	if err != nil {
		return LockResult{}, err
	}
	return LockResult{Path: p, Lock: lk, Written: written}, nil
}

// lockedFile finds the nearest .cuda-version above dir and its specs.
func lockedFile(dir string) (string, []version.Spec, error) {
	noEnv := func(string) (string, bool) { return "", false }
	sel, _, err := resolve.Find(dir, noEnv, "")
	if err != nil {
		return "", nil, err
	}
	switch {
	case sel.Source.Kind == resolve.None:
		return "", nil, errors.New("lock: no .cuda-version here or in a folder above; write one first, e.g. cudaenv local 12.4 cudnn@9.5")
	case filepath.Base(sel.Source.Path) != resolve.FileName:
		return "", nil, fmt.Errorf("lock: the versions here come from %s; cudaenv lock locks a .cuda-version file (write one with cudaenv local 12.4)", sel.Source.Path)
	case sel.System():
		return "", nil, fmt.Errorf("lock: %s selects system; there is nothing to lock", sel.Source.Path)
	}
	return sel.Source.Path, sel.AsWritten(), nil
}

// lockOf is the lock of a selection read from a .cuda-version; ok is false
// for any other source.
func lockOf(sel resolve.Selection) (string, bool) {
	if sel.Source.Kind != resolve.FromFile || filepath.Base(sel.Source.Path) != resolve.FileName {
		return "", false
	}
	return lockfile.PathFor(sel.Source.Path), true
}

// readLock reads a lock; a missing one is nil.
func readLock(p string) (*lockfile.Lock, error) {
	lk, err := lockfile.Read(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w; delete it and run cudaenv lock to write it again", err)
	}
	return lk, nil
}

// writeLock writes the lock unless the file already holds these bytes.
func writeLock(p string, lk *lockfile.Lock) (bool, error) {
	data, err := lockfile.Encode(lk)
	if err != nil {
		return false, err
	}
	if have, err := os.ReadFile(p); err == nil && bytes.Equal(have, data) {
		return false, nil
	}
	if err := atomicfile.Write(p, data, 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", p, err)
	}
	return true, nil
}

type relockOpts struct {
	platforms     []string
	source        string
	defaultSource string // for products the old lock lacks
	profile       string
	components    []string
	cudaMajor     int
	upgrade       bool
}

// relock computes the lock for specs: releases already locked for an
// unchanged spec stay (unless upgrade), new specs get the newest matching
// release, and every product gets its files for every platform (this
// machine's, the requested ones and the old lock's).
func (in *Installer) relock(ctx context.Context, specs []version.Spec, old *lockfile.Lock, o relockOpts) (*lockfile.Lock, error) {
	host, err := fetch.HostPlatform(in.opts.GOOS, in.opts.GOARCH)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{host: true}
	for _, p := range o.platforms {
		if err := checkPlatform(p); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		set[p] = true
	}
	if old != nil {
		for _, p := range old.Platforms() {
			set[p] = true
		}
	}
	var plats []string
	for p := range set {
		plats = append(plats, p)
	}
	sort.Strings(plats)
	if len(plats) > lockfile.MaxPlatforms {
		return nil, fmt.Errorf("lock: more than %d platforms", lockfile.MaxPlatforms)
	}
	for _, src := range []string{o.source, o.defaultSource} {
		if src != "" {
			if _, err := checkSource(src); err != nil {
				return nil, fmt.Errorf("lock: %w", err)
			}
		}
	}

	lk := &lockfile.Lock{}
	switch {
	case len(o.components) > 0:
		lk.Components = sortedUnique(o.components)
	case o.profile != "":
		lk.Profile = o.profile
	case old != nil:
		lk.Profile, lk.Components = old.Profile, old.Components
	default:
		lk.Profile, lk.Components = installedChoice(in.opts.Store, specs)
	}
	if lk.Profile != "" {
		if _, err := checkProfile(lk.Profile); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
	}

	var oldCUDA *lockfile.Product
	if old != nil {
		oldCUDA = old.CUDA
	}
	cudaMajor := o.cudaMajor
	var cudaSpec *version.Spec
	libSpecs := map[version.Tool]*version.Spec{}
	for i := range specs {
		switch t := specs[i].Tool; {
		case t == version.CUDA:
			cudaSpec = &specs[i]
		case t.Library():
			libSpecs[t] = &specs[i]
		}
	}
	if cudaSpec != nil {
		t := Target{Source: o.source, Profile: lk.Profile, Components: lk.Components}
		if lk.CUDA, err = in.lockProduct(ctx, *cudaSpec, oldCUDA, t, o.defaultSource, plats, o.upgrade); err != nil {
			return nil, err
		}
		cudaMajor = version.MustParse(lk.CUDA.Release).Major()
	}
	// Each library (cuDNN, NCCL, …) is locked per the CUDA major, in
	// version.Libraries order.
	for _, tool := range version.Libraries {
		sp := libSpecs[tool]
		if sp == nil {
			continue
		}
		var oldLib *lockfile.Product
		if old != nil {
			oldLib = old.Lib(tool)
		}
		major := cudaMajor
		if major == 0 && oldLib != nil {
			major = oldLib.CUDAMajor
		}
		if major == 0 {
			return nil, fmt.Errorf("lock: %s is built per CUDA major; put a CUDA version beside it in .cuda-version (12.4 %s) or pass --cuda-major 12", tool.Title(), sp)
		}
		t := Target{Source: o.source, Profile: "full", CUDAMajor: major}
		if cudaSpec == nil && tool == version.Cudnn {
			t.Components = lk.Components
		}
		defaultSource := o.defaultSource
		if !fetch.Product(tool).Redist() && t.Source != "nvidia" {
			// NCCL and NVSHMEM have PyPI wheels only; --source nvidia
			// still fails with the plan's word on it.
			t.Source, defaultSource = "pypi", "pypi"
		}
		p, err := in.lockProduct(ctx, *sp, oldLib, t, defaultSource, plats, o.upgrade)
		if err != nil {
			return nil, err
		}
		lk.SetLib(tool, p)
	}
	if err := lk.Validate(); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return lk, nil
}

// lockProduct plans one product on every platform. The first platform
// fixes the release and (for source auto) the source for the others.
func (in *Installer) lockProduct(ctx context.Context, sp version.Spec, old *lockfile.Product, t Target, defaultSource string, plats []string, upgrade bool) (*lockfile.Product, error) {
	remembered := rememberedSource(in.opts.Store, sp, t.CUDAMajor)
	switch {
	case t.Source != "":
	case old != nil:
		t.Source = old.Source
	case remembered != "":
		// A new lock of an installed version: where it came from.
		t.Source = remembered
	case defaultSource != "":
		t.Source = defaultSource
	default:
		t.Source = "nvidia"
	}
	keep := old != nil && !upgrade && old.Spec.String() == sp.String() && (!sp.Tool.Library() || old.CUDAMajor == t.CUDAMajor)
	pin := sp
	if keep {
		var err error
		if pin, err = exactSpec(sp.Tool, old.Release); err != nil {
			return nil, err
		}
	}
	p := &lockfile.Product{Spec: sp, CUDAMajor: t.CUDAMajor, Platforms: map[string][]lockfile.File{}}
	for i, plat := range plats {
		tt := t
		tt.Platform = plat
		pl, err := in.Plan(ctx, pin, tt)
		if err != nil {
			return nil, fmt.Errorf("lock %s for %s: %w", sp, plat, err)
		}
		if i == 0 {
			p.Release, p.Source = pl.Release, pl.Receipt.Source
			t.Source = p.Source
			if pin, err = exactSpec(sp.Tool, pl.Release); err != nil {
				return nil, err
			}
			if fp := installedPins(in.opts.Store, pl); fp != nil && t.pins == nil {
				// An entry install --for made with a framework's builds:
				// the lock keeps those builds.
				t.pins, tt.pins = fp, fp
				if pl, err = in.Plan(ctx, pin, tt); err != nil {
					return nil, fmt.Errorf("lock %s for %s: %w", sp, plat, err)
				}
			}
		}
		files := make([]lockfile.File, 0, len(pl.Artifacts))
		for _, a := range pl.Artifacts {
			files = append(files, lockfile.File{Component: a.Component, Version: a.Version, Name: path.Base(a.RelativePath), Size: a.Size, SHA256: a.SHA256})
		}
		if keep && old.Release == p.Release {
			if err := sameFiles(sp, plat, old.Platforms[plat], files); err != nil {
				return nil, fmt.Errorf("lock: %w", err)
			}
		}
		p.Platforms[plat] = files
	}
	return p, nil
}

// installedPins are the builds an installed PyPI toolkit has that are
// not its release's own (install --for), as pins; nil for none.
func installedPins(st *store.Store, pl *Plan) *forPins {
	if pl.Kind != store.CUDA || pl.Receipt.Source != "pypi" {
		return nil
	}
	have, ok := st.Get(store.CUDA, pl.Name)
	if !ok || have.Err != nil || have.Receipt.Source != "pypi" || len(have.Receipt.Differs) == 0 {
		return nil
	}
	fp := &forPins{release: pl.Release, pins: map[string]string{}, known: true}
	for _, c := range have.Receipt.Components {
		if _, ok := have.Receipt.Differs[c.ID]; ok {
			fp.pins[c.ID] = c.Version
		}
	}
	return fp
}

// installedBuilds pins every component of an installed PyPI toolkit for
// platform to the build its receipt lists, those the profile lacks
// included (Request.Repair; an image of it); nil for any other entry.
func installedBuilds(st *store.Store, sp version.Spec, platform string) *forPins {
	if sp.Tool != version.CUDA {
		return nil
	}
	have, ok := st.Get(store.CUDA, sp.String())
	if !ok || have.Err != nil || have.Linked() || have.Receipt.Source != "pypi" || len(have.Receipt.Components) == 0 || have.Receipt.Platform != platform {
		return nil
	}
	fp := &forPins{release: sp.String(), pins: map[string]string{}, known: len(have.Receipt.Differs) > 0, extend: true}
	for _, c := range have.Receipt.Components {
		fp.pins[c.ID] = c.Version
	}
	return fp
}

// sameFiles refuses a locked file that the source now serves with other
// contents: the lock keeps what it has until --upgrade.
func sameFiles(sp version.Spec, plat string, old, now []lockfile.File) error {
	byName := map[string]lockfile.File{}
	for _, f := range old {
		byName[f.Component+"\x00"+f.Name] = f
	}
	for _, f := range now {
		if o, ok := byName[f.Component+"\x00"+f.Name]; ok && (o.SHA256 != f.SHA256 || o.Size != f.Size) {
			return &MismatchError{Component: f.Component, File: f.Name, Want: o.SHA256, Got: f.SHA256, Where: "the source now lists",
				Hint: fmt.Sprintf("the file changed since it was locked for %s on %s; keep the old file (a mirror that serves it) or accept the new one with cudaenv lock --upgrade", sp, plat)}
		}
	}
	return nil
}

// exactSpec is a spec that matches one release only.
func exactSpec(t version.Tool, release string) (version.Spec, error) {
	v, err := version.Parse(release)
	if err != nil {
		return version.Spec{}, fmt.Errorf("lock: release %q: %w", release, err)
	}
	return version.Spec{Tool: t, Kind: version.Prefix, Prefix: v}, nil
}

func sortedUnique(ids []string) []string {
	out := slices.Clone(ids)
	sort.Strings(out)
	return slices.Compact(out)
}

// MismatchError is a file that is not the one a lock lists: the expected
// and the received sha256, and where the other one came from.
type MismatchError struct {
	Component string
	File      string
	Want      string // the lock's sha256
	Got       string // what Where has
	Where     string // "the download cache has", "the mirror lists", …
	Hint      string // what to do
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s (%s): sha256 mismatch: the lock has %s, %s %s; %s", e.Component, e.File, e.Want, e.Where, e.Got, e.Hint)
}

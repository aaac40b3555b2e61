package install

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// WouldInstall: a dry run planned one version. Nothing was fetched but
// the release index and manifests (or index pages) that name its files.
type WouldInstall struct {
	Label   string // CUDA 13.2.2, cuDNN 9.26.0.51-cuda13
	Product string // cuda, cudnn, nccl, cusparselt, cutensor, cudss, nvshmem
	Version string // the release (13.2.2) or the library build (9.26.0.51)
	Source  string // where the files would come from: an URL
	From    string // nvidia or pypi
	Use     string // what `cudaenv use` would take to select it
	Files   int
	Bytes   int64
	Entries []WouldFile // sorted by component
	// Installed: the store already has the entry; Have is it. A real run
	// (Apply) leaves it as it is, unless Reinstall (--force) or Adds.
	Installed bool
	// Unlisted says why the files are not listed: an exact version from
	// cudaenv's tables whose release index, manifest or index page
	// cannot be read (offline, nothing cached; or the network is cut).
	// Files, Bytes and Entries are then empty, and Source is "".
	Unlisted string
	Have     store.Entry
	// Missing are the planned components the installed entry lacks, and
	// MissingBytes their size: a real run adds them when Adds (the
	// profile or components were named), else only says how to.
	Missing      []string
	MissingBytes int64
	Adds         bool
	Reinstall    bool
}

// WouldFile is one archive or wheel a dry run would fetch.
type WouldFile struct {
	Component, Version string
	Project            string // the wheel's project (nvidia-cublas); "" for an archive
	Size               int64
	// Own is, for a build that is not the release's own (a framework's
	// pin), the release's own version ("" when the release has none);
	// NotOwn says such a build.
	Own    string
	NotOwn bool
}

func (WouldInstall) event() {}

// dryReport reports plans as WouldInstall events, in the words of the run
// it stands for.
type dryReport struct {
	in    *Installer
	force bool
	// cudaMajor and useWith are the CUDA planned in this command, which a
	// library's selection names as the real run's does (12.4.1
	// cudnn@9.5.1.17); the major alone without one.
	cudaMajor int
	useWith   string
}

func (d *dryReport) libUse(kind string, build string) string {
	with := d.useWith
	if with == "" {
		with = strconv.Itoa(d.cudaMajor)
	}
	return with + " " + kind + "@" + build
}

// report reports one plan as Apply would take it.
func (d *dryReport) report(pl *Plan) {
	in := d.in
	ev := WouldInstall{Label: pl.Label, Product: string(pl.Kind), Version: pl.Release, Source: pl.Receipt.URL, From: pl.Receipt.Source, Use: pl.Name, Files: len(pl.Artifacts)}
	if pl.Kind.Library() {
		// The build names a library (9.26.0.51), as its store entry
		// and the real run's line do.
		ev.Version = strings.TrimSuffix(pl.Name, "-cuda"+strconv.Itoa(pl.CUDAMajor))
		ev.Use = d.libUse(string(pl.Kind), ev.Version)
	} else {
		d.cudaMajor, d.useWith = majorOfRelease(pl.Release), pl.Name
	}
	for _, a := range pl.Artifacts {
		ev.Bytes += a.Size
		own, notOwn := pl.Receipt.Differs[a.Component]
		project := ""
		if pl.Receipt.Source == "pypi" {
			project = a.Name
		}
		ev.Entries = append(ev.Entries, WouldFile{Component: a.Component, Version: a.Version, Project: project, Size: a.Size, Own: own, NotOwn: notOwn})
	}
	slices.SortFunc(ev.Entries, func(a, b WouldFile) int { return cmp.Compare(a.Component, b.Component) })
	if have, ok := in.opts.Store.Get(pl.Kind, pl.Name); ok && have.Err == nil {
		// As Apply would take it.
		ev.Installed, ev.Have = true, have
		ev.Reinstall = d.force && !have.Linked()
		if !ev.Reinstall && !have.Linked() {
			ev.Missing = missingComponents(have, pl.Artifacts)
			ev.Adds = len(ev.Missing) > 0 && pl.Explicit && !have.System
			var adds []WouldFile
			for _, f := range ev.Entries {
				if slices.Contains(ev.Missing, f.Component) {
					ev.MissingBytes += f.Size
					adds = append(adds, f)
				}
			}
			if ev.Adds {
				ev.Entries, ev.Files, ev.Bytes = adds, len(adds), ev.MissingBytes
			}
		}
	}
	in.event(ev)
}

// dryRun plans each spec as Install would, CUDA first and cuDNN for the
// CUDA major planned, each from the source Install would take (untold: no
// source was named anywhere), and reports each plan; it writes nothing.
func (in *Installer) dryRun(ctx context.Context, req Request, specs []version.Spec, t Target, untold bool) error {
	d := &dryReport{in: in, force: req.Force, cudaMajor: req.CUDAMajor}
	// t.Explicit as Install has it: a profile or components named, or
	// --for's extensions profile, which a real run adds.
	cudaT := t
	for _, sp := range specs {
		if sp.Tool != version.CUDA {
			continue
		}
		cudaT.pins = in.pinsFor(sp)
		cudaT.Source = req.sourceFor(in.opts.Store, sp, 0)
		pl, err := in.Plan(ctx, sp, cudaT)
		if err != nil {
			if !in.unlisted(sp, sp.Prefix.String(), cudaT.Source, err) {
				return err
			}
			d.cudaMajor, d.useWith = sp.Prefix.Major(), sp.Prefix.String()
			continue
		}
		d.report(pl)
	}
	for _, sp := range specs {
		if !sp.Tool.Library() {
			continue
		}
		if d.cudaMajor == 0 {
			return fmt.Errorf("install --dry-run: %s is built per CUDA major; name a CUDA version with it or pass --cuda-major 12", sp.Tool.Title())
		}
		ct := t
		ct.Profile, ct.CUDAMajor, ct.Explicit = "full", d.cudaMajor, false
		ct.Source = req.librarySource(in.opts.Store, sp, d.cudaMajor, untold)
		pl, err := in.Plan(ctx, sp, ct)
		if err != nil {
			if !in.unlisted(sp, d.libUse(string(sp.Tool), sp.Prefix.String()), ct.Source, err) {
				return err
			}
			continue
		}
		d.report(pl)
	}
	return nil
}

// unlisted reports an exact version from cudaenv's tables whose files
// cannot be listed because nothing can be read (offline and not cached,
// or the network cut), and says whether it did: the answer stands
// without them. It names the product and version as a listed plan does
// (install --dry-run --json prints them), and the source it would come
// from when that is one.
func (in *Installer) unlisted(sp version.Spec, use, source string, err error) bool {
	if !in.fromTables || sp.Kind != version.Prefix || ctxErr(err) || !(errors.Is(err, fetch.ErrOffline) || fetch.Unreachable(err)) {
		return false
	}
	ev := WouldInstall{Label: sp.Tool.Title() + " " + sp.Prefix.String(), Product: string(sp.Tool), Version: sp.Prefix.String(), Use: use, Unlisted: err.Error()}
	if source == "nvidia" || source == "pypi" {
		ev.From = source
	}
	in.event(ev)
	return true
}

func ctxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func majorOfRelease(r string) int {
	v, err := version.Parse(r)
	if err != nil {
		return 0
	}
	return v.Major()
}

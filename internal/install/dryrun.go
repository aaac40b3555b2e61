package install

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// WouldInstall: a dry run planned one version. Nothing was fetched but
// the release index and manifests (or index pages) that name its files.
type WouldInstall struct {
	Label   string // CUDA 13.2.2, cuDNN 9.26.0.51-cuda13
	Source  string // where the files would come from: an URL
	Use     string // what `cudaenv use` would take to select it
	Files   int
	Bytes   int64
	Entries []WouldFile // sorted by component
	// Installed: the store already has the entry; Have is it. A real run
	// (Apply) leaves it as it is, unless Reinstall (--force) or Adds.
	Installed bool
	Have      store.Entry
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
	Size               int64
}

func (WouldInstall) event() {}

// dryRun plans each spec as Install would, CUDA first and cuDNN for the
// CUDA major planned, and reports each plan; it writes nothing.
func (in *Installer) dryRun(ctx context.Context, req Request, specs []version.Spec, t Target) error {
	cudaMajor := req.CUDAMajor
	report := func(pl *Plan) {
		ev := WouldInstall{Label: pl.Label, Source: pl.Receipt.URL, Use: pl.Name, Files: len(pl.Artifacts)}
		if pl.Kind.Library() {
			rel := pl.Release
			if rel == "" && len(pl.Artifacts) > 0 {
				rel = pl.Artifacts[0].Version // a wheel plan names the build
			}
			ev.Use = strconv.Itoa(pl.CUDAMajor) + " " + string(pl.Kind) + "@" + rel
		}
		for _, a := range pl.Artifacts {
			ev.Bytes += a.Size
			ev.Entries = append(ev.Entries, WouldFile{Component: a.Component, Version: a.Version, Size: a.Size})
		}
		slices.SortFunc(ev.Entries, func(a, b WouldFile) int { return cmp.Compare(a.Component, b.Component) })
		if have, ok := in.opts.Store.Get(pl.Kind, pl.Name); ok && have.Err == nil {
			// As Apply would take it.
			ev.Installed, ev.Have = true, have
			ev.Reinstall = req.Force && !have.Linked()
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
	cudaT := t
	cudaT.Explicit = req.Profile != "" || len(req.Components) > 0
	for _, sp := range specs {
		if sp.Tool != version.CUDA {
			continue
		}
		pl, err := in.Plan(ctx, sp, cudaT)
		if err != nil {
			return err
		}
		report(pl)
		cudaMajor = majorOfRelease(pl.Release)
	}
	for _, sp := range specs {
		if !sp.Tool.Library() {
			continue
		}
		if cudaMajor == 0 {
			return fmt.Errorf("install --dry-run: %s is built per CUDA major; name a CUDA version with it or pass --cuda-major 12", sp.Tool.Title())
		}
		ct := t
		ct.Profile, ct.CUDAMajor = "full", cudaMajor
		if !fetch.Product(sp.Tool).Redist() && !req.SourceTyped {
			ct.Source = "pypi"
		} else if req.For != "" && sp.Tool != version.Cudnn && !req.SourceTyped {
			ct.Source = "pypi"
		}
		pl, err := in.Plan(ctx, sp, ct)
		if err != nil {
			return err
		}
		report(pl)
	}
	return nil
}

func majorOfRelease(r string) int {
	v, err := version.Parse(r)
	if err != nil {
		return 0
	}
	return v.Major()
}

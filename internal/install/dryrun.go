package install

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/version"
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
	// Installed: the store already has the entry (Apply would leave it,
	// or add only components asked for by name).
	Installed bool
	// Unlisted says why the files are not listed: an exact version from
	// cudaenv's tables whose release index, manifest or index page
	// cannot be read (offline, nothing cached; or the network is cut).
	// Files, Bytes and Entries are then empty, and Source is "".
	Unlisted string
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
			ev.Installed = true
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
			if !in.unlisted(sp, cudaMajor, err) {
				return err
			}
			cudaMajor = sp.Prefix.Major()
			continue
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
		if !fetch.Product(sp.Tool).Redist() && (!req.SourceTyped || req.For != "") {
			ct.Source = "pypi"
		} else if req.For != "" && sp.Tool != version.Cudnn && !req.SourceTyped {
			ct.Source = "pypi"
		}
		pl, err := in.Plan(ctx, sp, ct)
		if err != nil {
			if !in.unlisted(sp, cudaMajor, err) {
				return err
			}
			continue
		}
		report(pl)
	}
	return nil
}

// unlisted reports an exact version from cudaenv's tables whose files
// cannot be listed because nothing can be read (offline and not cached,
// or the network cut), and says whether it did: the answer stands
// without them.
func (in *Installer) unlisted(sp version.Spec, cudaMajor int, err error) bool {
	if !in.fromTables || sp.Kind != version.Prefix || ctxErr(err) || !(errors.Is(err, fetch.ErrOffline) || fetch.Unreachable(err)) {
		return false
	}
	ev := WouldInstall{Label: sp.Tool.Title() + " " + sp.Prefix.String(), Use: sp.Prefix.String(), Unlisted: err.Error()}
	if sp.Tool.Library() {
		ev.Use = strconv.Itoa(cudaMajor) + " " + string(sp.Tool) + "@" + sp.Prefix.String()
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

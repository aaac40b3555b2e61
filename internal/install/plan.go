package install

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// Target is how one version is installed: where from, for which platform,
// and which of its components.
type Target struct {
	Source     string   // nvidia, pypi or auto
	Platform   string   // an NVIDIA platform key, e.g. linux-x86_64
	Profile    string   // minimal, default or full
	Components []string // instead of the profile
	CUDAMajor  int      // cuDNN: the CUDA major of the build
	// Explicit: the user named the profile or components, so components
	// an installed entry lacks are added; otherwise it is left as it is.
	Explicit bool
	// applySkips leaves the skipped wheels to Apply, which reports them only
	// when it fetches something (install); other callers hear them at once.
	applySkips bool
	// pins are the builds Request.For pins, which a PyPI plan takes
	// instead of the release's own; nil for none.
	pins *forPins
}

func (t Target) selection() fetch.Selection {
	return fetch.Selection{Platform: t.Platform, Profile: t.Profile, Components: t.Components, CUDAMajor: t.CUDAMajor}
}

// Plan is what installing one version will fetch and how the store names it.
type Plan struct {
	Kind      store.Kind
	Release   string // the release as its source names it: "12.4.1", "9.5.1"
	Name      string // the store entry: "12.4.1", "9.5.1.17-cuda12"
	Label     string // "CUDA 12.4.1", "cuDNN 9.5.1.17-cuda12"
	CUDAMajor int    // cuDNN: the CUDA major of the build
	// Artifacts are the archives (or wheels) to fetch, verified by sha256.
	Artifacts []fetch.Artifact
	// Receipt is the entry's receipt before Fetch adds the components:
	// source, URL, platform, profile, manifest hash.
	Receipt store.Receipt
	// Explicit is Target.Explicit.
	Explicit bool
	// reselect chooses the archives for exactly these component ids, to
	// complete an installed entry.
	reselect func(ids []string) ([]fetch.Artifact, error)
	// prepare, when set, readies the artifacts just before they are
	// fetched (a plan read from a lock checks the cache and finds each
	// file on the mirror or index).
	prepare func(ctx context.Context, arts []fetch.Artifact) ([]fetch.Artifact, error)
	// lockName is the lock file a plan was read from, "" for none.
	lockName string
	// useWith is the CUDA a cuDNN's Result.Use names: the version installed
	// in the same command, "" for its major (a bare major selects the
	// newest installed CUDA of it, perhaps another one).
	useWith string
	// skipped are the wheels the index lacks, reported (reportSkipped)
	// only when something is fetched: an install that finds everything in
	// place says nothing about them again.
	skipped []SkippedWheel
	// pinned: the plan takes the builds Request.For pins (Apply replaces
	// an installed entry's other builds of them).
	pinned bool
	// skippedOlder names an older release whose wheels the index has of
	// the skipped components, and how to take it ("" for none).
	skippedOlder string
	// What an offline bundle records: the product and release, the
	// platform, and NVIDIA's manifest (nil for wheels).
	product  fetch.Product
	release  string
	platform string
	manifest *fetch.Manifest
}

// Plan picks the release a spec means from the target's source and the
// archives to fetch. With source auto an unreachable NVIDIA server means
// the PyPI index (reported as FallbackToPyPI).
func (in *Installer) Plan(ctx context.Context, sp version.Spec, t Target) (*Plan, error) {
	p := fetch.CUDA
	if sp.Tool.Library() {
		p = fetch.Product(sp.Tool)
	}
	pl, err := in.plan(ctx, p, sp, t)
	if pl != nil {
		pl.Explicit = t.Explicit
		if !t.applySkips {
			in.reportSkipped(pl)
		}
	}
	return pl, err
}

func (in *Installer) plan(ctx context.Context, p fetch.Product, sp version.Spec, t Target) (*Plan, error) {
	if !p.Redist() {
		if t.Source == "nvidia" {
			return nil, fmt.Errorf("install %s: NVIDIA publishes no redist manifest of %s, only its PyPI wheels (nvidia-%s-cu12, nvidia-%s-cu13); run with --source pypi", sp, sp.Tool.Title(), p, p)
		}
		return in.planPyPI(ctx, p, sp, t)
	}
	switch t.Source {
	case "pypi":
		return in.planPyPI(ctx, p, sp, t)
	case "auto":
		// Ask NVIDIA once, briefly: an unreachable server means PyPI.
		probe := *in.client
		probe.Retries, probe.RetryDelay = 1, 200*time.Millisecond
		// A server that accepts and then says nothing means PyPI too.
		probe.HeaderTimeout, probe.DocumentTimeout = 10*time.Second, 30*time.Second
		pl, err := in.planNVIDIA(ctx, &probe, p, sp, t)
		if err != nil && fetch.Unreachable(err) && !in.client.Offline {
			in.fallBack(err)
			return in.planPyPI(ctx, p, sp, t)
		}
		return pl, err
	}
	pl, err := in.planNVIDIA(ctx, in.client, p, sp, t)
	if err != nil && fetch.Unreachable(err) {
		err = in.unreachableHint(ctx, err)
	}
	return pl, err
}

// reportSkipped reports the plan's skipped wheels, in one event, each
// wheel once a command.
func (in *Installer) reportSkipped(pl *Plan) {
	ev := SkippedWheel{Label: pl.Label, Older: pl.skippedOlder}
	for _, sk := range pl.skipped {
		if slices.Contains(ev.Components, sk.Component) || !in.said.first(fmt.Sprintf("skipped %s: %v", sk.Component, sk.Reason)) {
			continue
		}
		if len(ev.Components) == 0 {
			ev.Component, ev.Reason = sk.Component, sk.Reason
		}
		ev.Components = append(ev.Components, sk.Component)
	}
	pl.skipped = nil
	if len(ev.Components) == 0 {
		return
	}
	if ev.Label == "" {
		ev.Label = "CUDA " + pl.Release
	}
	in.event(ev)
}

// fallBack reports, once per Installer, that NVIDIA's server could not be
// reached and PyPI is used instead.
func (in *Installer) fallBack(err error) {
	if !in.fellBack {
		in.fellBack = true
		in.event(FallbackToPyPI{Err: err})
	}
}

// planNVIDIA resolves the spec against NVIDIA's release index (or a
// mirror of it) and selects the archives.
func (in *Installer) planNVIDIA(ctx context.Context, client *fetch.Client, p fetch.Product, sp version.Spec, t Target) (*Plan, error) {
	releases, err := client.Releases(ctx, p, in.opts.Refresh)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", sp, err)
	}
	rel, err := pickRelease(p, sp, releases)
	if err != nil {
		return nil, err
	}
	m, err := client.Manifest(ctx, p, rel)
	if err != nil {
		return nil, fmt.Errorf("install %s %s: %w", p, rel, err)
	}
	sel := t.selection()
	arts, err := m.Select(sel)
	if err != nil {
		return nil, fmt.Errorf("install %s %s: %w", p, rel, err)
	}
	url := client.Base
	if url == "" {
		url = fetch.DefaultBase
	}
	pl := &Plan{
		Release: rel,
		product: p, release: rel, platform: sel.Platform, manifest: m,
		Artifacts: arts,
		Receipt:   store.Receipt{Source: "nvidia", URL: fetch.Redact(url), Platform: sel.Platform, Profile: sel.Profile, ManifestSHA256: m.SHA256},
		reselect: func(ids []string) ([]fetch.Artifact, error) {
			s := sel
			s.Profile, s.Components = "", ids
			return m.Select(s)
		},
	}
	if len(sel.Components) > 0 {
		pl.Receipt.Profile = ""
	}
	if err := pl.setName(p, rel, cudnnVersion(m, arts), sel.CUDAMajor); err != nil {
		return nil, err
	}
	return pl, nil
}

// setName fills kind, name and label: CUDA by release, cuDNN by the cudnn
// component's own four-part version and the CUDA major of the build.
func (pl *Plan) setName(p fetch.Product, rel, cudnnVer string, cudaMajor int) error {
	if t := version.Tool(p); t.Library() {
		v, err := version.Parse(cudnnVer)
		if err != nil {
			return fmt.Errorf("install %s %s: %w", p, rel, err)
		}
		pl.Kind, pl.Name, pl.CUDAMajor = store.KindOf(t), store.CudnnName(v, cudaMajor), cudaMajor
		pl.Label = t.Title() + " " + pl.Name
		return nil
	}
	v, err := version.Parse(rel)
	if err != nil {
		return fmt.Errorf("install cuda %s: %w", rel, err)
	}
	pl.Kind, pl.Name, pl.Label = store.CUDA, v.String(), "CUDA "+v.String()
	return nil
}

// pickRelease finds the newest release matching the spec.
func pickRelease(p fetch.Product, sp version.Spec, releases []string) (string, error) {
	rel, ok := bestOf(sp, releases)
	if !ok {
		var near []string
		for _, r := range releases {
			if v, err := version.Parse(r); err == nil && sp.Kind == version.Prefix && v.Major() == sp.Prefix.Major() {
				near = append(near, v.String())
			}
		}
		hint := "see: cudaenv ls-remote " + string(p)
		if len(near) > 0 {
			hint = "available: " + strings.Join(near, ", ")
		}
		return "", fmt.Errorf("install: no %s release matches %s; %s", p, strings.TrimPrefix(sp.String(), string(sp.Tool)+"@"), hint)
	}
	return rel, nil
}

// bestOf returns the newest of names (release labels) that the spec
// matches; names that are not versions are skipped.
func bestOf(sp version.Spec, names []string) (string, bool) {
	var vs []version.Version
	byString := map[string]string{}
	for _, n := range names {
		if v, err := version.Parse(n); err == nil {
			vs = append(vs, v)
			byString[v.String()] = n
		}
	}
	best, ok := version.Best(sp, vs)
	return byString[best.String()], ok
}

// cudnnVersion is the cudnn component's own four-part version (9.5.1.17),
// which names the store entry; the release label (9.5.1) is the fallback.
func cudnnVersion(m *fetch.Manifest, arts []fetch.Artifact) string {
	for _, a := range arts {
		if a.Component == "cudnn" && a.Version != "" {
			return a.Version
		}
	}
	// The other libraries' manifests hold one component, named for the
	// library (libcutensor 2.8.1.0, libcusparse_lt 0.10.0.12): its version
	// names the entry as cudnn's does.
	for _, a := range arts {
		if strings.HasPrefix(a.Component, "lib") && a.Version != "" {
			return a.Version
		}
	}
	return m.Version
}

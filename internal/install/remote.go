package install

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// Remote is one release a source offers.
type Remote struct {
	Release   string // as the source names it: "12.4.1", "9.5.1", "13.5" (PyPI, not in the table)
	Installed bool   // in the store (a cuDNN release by its first three parts)
	Note      string // what is special about it, or ""
}

// Releases lists the releases of tool (cuda or cudnn) that source offers,
// oldest first, those under prefix only when prefix is not nil: NVIDIA's
// server (or mirror, or with Offline the cached index), the PyPI index
// (CUDA releases read from its runtime wheels; cuDNN from its
// nvidia-cudnn-cu<major> wheels; with Offline cudaenv's built-in table),
// or auto (NVIDIA, the PyPI index when the server cannot be reached).
func (in *Installer) Releases(ctx context.Context, tool version.Tool, prefix version.Version, source string) ([]Remote, error) {
	p, kind := fetch.CUDA, store.CUDA
	if tool.Library() {
		p, kind = fetch.Product(tool), store.KindOf(tool)
	}
	if source == "" && tool.Library() && tool != version.Cudnn {
		// NVIDIA's server, else the PyPI index, where most of these
		// libraries' users get them: no --source needed.
		source = "auto"
	}
	source, err := checkSource(source)
	if err != nil {
		return nil, fmt.Errorf("ls-remote: %w", err)
	}
	if !p.Redist() {
		source = "pypi" // NVIDIA publishes it only there
	}
	var all []Remote
	switch source {
	case "pypi":
		all, err = in.pypiReleases(ctx, p)
	case "auto":
		probe := *in.client
		probe.Retries, probe.RetryDelay = 1, 200*time.Millisecond
		probe.HeaderTimeout, probe.DocumentTimeout = 10*time.Second, 30*time.Second
		all, err = nvidiaReleases(ctx, &probe, p, in.opts.Refresh)
		if err != nil && fetch.Unreachable(err) && !in.client.Offline {
			in.fallBack(err)
			all, err = in.pypiReleases(ctx, p)
		}
	default:
		all, err = nvidiaReleases(ctx, in.client, p, in.opts.Refresh)
		if err != nil && fetch.Unreachable(err) {
			err = in.unreachableHint(ctx, err)
		}
	}
	if err != nil {
		return nil, err
	}
	installed := map[string]bool{}
	list, _ := in.opts.Store.List(kind)
	for _, ent := range list {
		installed[ent.Version.String()] = true
		if kind.Library() && len(ent.Version) > 3 {
			installed[ent.Version[:3].String()] = true
		}
	}
	var out []Remote
	for _, r := range all {
		v, err := version.Parse(r.Release)
		if err != nil || (prefix != nil && !v.HasPrefix(prefix)) {
			continue
		}
		r.Installed = installed[v.String()]
		out = append(out, r)
	}
	return out, nil
}

func nvidiaReleases(ctx context.Context, client *fetch.Client, p fetch.Product, refresh bool) ([]Remote, error) {
	releases, err := client.Releases(ctx, p, refresh)
	if err != nil {
		return nil, err
	}
	out := make([]Remote, len(releases))
	for i, r := range releases {
		out[i] = Remote{Release: r}
	}
	return out, nil
}

// pypiReleases are what the PyPI index offers; offline, cudaenv's table.
func (in *Installer) pypiReleases(ctx context.Context, p fetch.Product) ([]Remote, error) {
	if in.client.Offline {
		var out []Remote
		if p == fetch.CUDNN {
			for _, r := range pypi.CatalogCudnnReleases() {
				out = append(out, Remote{Release: r.CudnnVersion, Note: "from cudaenv's table (offline)"})
			}
			return dedupe(out), nil
		}
		for _, r := range pypi.CatalogReleases() {
			out = append(out, Remote{Release: r.Version, Note: "from cudaenv's table (offline)"})
		}
		return out, nil
	}
	idx, err := in.pypiIndex()
	if err != nil {
		return nil, err
	}
	if version.Tool(p).Library() {
		have, err := in.pypiLibraryVersions(ctx, idx, p, 0)
		if err != nil {
			return nil, err
		}
		var vs []string
		for v := range have {
			vs = append(vs, v)
		}
		sortVersions(vs)
		out := make([]Remote, len(vs))
		for i, v := range vs {
			var majors []string
			for _, m := range have[v] {
				majors = append(majors, strconv.Itoa(m))
			}
			out[i] = Remote{Release: v, Note: "for CUDA " + strings.Join(majors, " and ")}
		}
		in.cacheListing(idx.URL(), p, vs)
		return out, nil
	}
	offers, _, err := in.pypiOffers(ctx, idx)
	if err != nil {
		return nil, err
	}
	out := make([]Remote, len(offers))
	for i, o := range offers {
		out[i] = Remote{Release: o.Name(), Note: listingNote(o)}
	}
	return out, nil
}

// listingNote is ls-remote's note on a PyPI offer: for a release the
// table lacks, normal on PyPI (nearly half of its releases), only where
// its wheel set comes from, in a few words that do not read as a warning;
// install says the whole of it once, when one is taken. A release whose
// wheels are known not to work keeps its reason.
func listingNote(o pypi.Offer) string {
	_, broken := o.Release.BrokenWheel()
	switch {
	case !o.Known && o.ToolkitNamed:
		// Its pins are read, and believed where their runtime is this
		// one, when it is installed.
		return "wheels: runtime " + o.Runtime + ", named by " + pypi.ToolkitProject
	case !o.Known:
		return "wheels: runtime " + o.Runtime + ", the rest the newest that fit"
	case o.Release.FromToolkit && !broken:
		return "wheels as " + pypi.ToolkitProject + " pins them"
	}
	return o.Note()
}

func dedupe(rs []Remote) []Remote {
	seen := map[string]bool{}
	var out []Remote
	for _, r := range rs {
		if !seen[r.Release] {
			seen[r.Release] = true
			out = append(out, r)
		}
	}
	return out
}

func sortVersions(vs []string) {
	slices.SortFunc(vs, func(a, b string) int {
		va, ea := version.Parse(a)
		vb, eb := version.Parse(b)
		if ea != nil || eb != nil {
			return strings.Compare(a, b)
		}
		return version.Compare(va, vb)
	})
}

// CachedReleases are the releases of tool in every release index cached
// under cacheDir, newest first and each once; nothing is downloaded (shell
// completion lists them).
func CachedReleases(cacheDir string, tool version.Tool) []version.Version {
	p := fetch.CUDA
	if tool.Library() {
		p = fetch.Product(tool)
	}
	seen := map[string]bool{}
	var vs []version.Version
	for _, r := range fetch.CachedReleases(cacheDir, p) {
		v, err := version.Parse(r)
		if err != nil || seen[v.String()] {
			continue
		}
		seen[v.String()] = true
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b version.Version) int { return version.Compare(b, a) })
	return vs
}

// KnownReleases are the CUDA releases cudaenv knows of without asking
// the network: its table of releases and the release index cached from
// NVIDIA's server, newest first.
func KnownReleases(cacheDir string) []version.Version {
	vs := CachedReleases(cacheDir, version.CUDA)
	seen := map[string]bool{}
	for _, v := range vs {
		seen[v.String()] = true
	}
	for _, r := range pypi.CatalogReleases() {
		if v, err := version.Parse(r.Version); err == nil && !seen[v.String()] {
			seen[v.String()] = true
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b version.Version) int { return version.Compare(b, a) })
	return vs
}

// ComponentIDs are the component ids of every release in cudaenv's table,
// sorted: what --components names are checked against for typos.
func ComponentIDs() []string {
	seen := map[string]bool{}
	var ids []string
	for _, r := range pypi.CatalogReleases() {
		for _, c := range r.Components {
			if !seen[c.ID] {
				seen[c.ID] = true
				ids = append(ids, c.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

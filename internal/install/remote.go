package install

import (
	"context"
	"fmt"
	"slices"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// Remote is one release the server offers.
type Remote struct {
	Release   string // as the server names it: "12.4.1", "9.5.1"
	Installed bool   // in the store (a cuDNN release by its first three parts)
}

// Releases lists the releases of tool (cuda or cudnn) the server (or
// mirror, or with Offline the cached index) offers, oldest first, those
// under prefix only when prefix is not nil.
func (in *Installer) Releases(ctx context.Context, tool version.Tool, prefix version.Version) ([]Remote, error) {
	p, kind := fetch.CUDA, store.CUDA
	if tool == version.Cudnn {
		p, kind = fetch.CUDNN, store.Cudnn
	}
	releases, err := in.client.Releases(ctx, p, in.opts.Refresh)
	if err != nil {
		if fetch.Unreachable(err) {
			err = fmt.Errorf("%w; check the network, set CUDAENV_MIRROR to a mirror, or run with --offline to list the cached index", err)
		}
		return nil, err
	}
	installed := map[string]bool{}
	list, _ := in.opts.Store.List(kind)
	for _, ent := range list {
		installed[ent.Version.String()] = true
		if kind == store.Cudnn && len(ent.Version) > 3 {
			installed[ent.Version[:3].String()] = true
		}
	}
	var out []Remote
	for _, r := range releases {
		v, err := version.Parse(r)
		if err != nil || (prefix != nil && !v.HasPrefix(prefix)) {
			continue
		}
		out = append(out, Remote{Release: r, Installed: installed[v.String()]})
	}
	return out, nil
}

// CachedReleases are the releases of tool in every release index cached
// under cacheDir, newest first and each once; nothing is downloaded (shell
// completion lists them).
func CachedReleases(cacheDir string, tool version.Tool) []version.Version {
	p := fetch.CUDA
	if tool == version.Cudnn {
		p = fetch.CUDNN
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

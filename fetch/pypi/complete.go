package pypi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/termsafe"
)

// Versions lists the versions a project has wheels of (for any platform),
// oldest first, each once: post-releases fold into their base
// (12.4.127.post1 is 12.4.127), pre- and dev releases and sdists (NVIDIA's
// 0.0.1.dev5 placeholders) are left out. A project the index lacks has no
// versions and no error.
func (ix *Index) Versions(ctx context.Context, project string) ([]string, error) {
	page, err := ix.Project(ctx, project)
	if errors.Is(err, ErrProjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return WheelVersions(page), nil
}

// WheelVersions are the versions Versions returns, read from a page.
func WheelVersions(page *Page) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range page.Files {
		w, err := ParseWheelName(f.Filename)
		if err != nil || w.Project != page.Project {
			continue
		}
		pv, ok := parseVersion(w.Version)
		if !ok || pv.preKind != 0 || pv.hasDev {
			continue
		}
		base := canonical(w.Version)
		if !seen[base] {
			seen[base] = true
			out = append(out, base)
		}
	}
	slices.SortFunc(out, compareVersions)
	return out
}

// ManyVersions runs Versions for several projects, a few at a time.
func (ix *Index) ManyVersions(ctx context.Context, projects []string) (map[string][]string, error) {
	out := make(map[string][]string, len(projects))
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	for _, p := range projects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			vs, err := ix.Versions(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[p] = vs
		}()
	}
	wg.Wait()
	return out, termsafe.Join(errs...)
}

// Complete fills in the components of an offer the table does not know,
// as far as the selection needs them, from the versions the index has.
// Which components a release has comes from the nearest known release of
// its major (the previous one, else the next). A component whose versions
// follow the CUDA release there (cudart 13.4.92 in 13.4.2) takes the
// newest version of the offer's major.minor; one with its own numbering
// (cuBLAS, CCCL from 13.3) the newest at or after the previous known
// release's and before the next one's. A component with no such version
// is left out. A known offer is returned as it is.
func (ix *Index) Complete(ctx context.Context, o Offer, known []Release, sel Selection) (Release, error) {
	if o.Known {
		return o.Release, nil
	}
	prev, next := neighbours(o, known)
	ref := prev
	if ref == nil {
		ref = next
	}
	if ref == nil {
		return Release{}, fmt.Errorf("CUDA %s: cudaenv's table knows no release to take its components from", o.Name())
	}
	major := o.Release.Major()
	ids := selectedIDs(*ref, sel, major)
	projects := map[string]string{}
	var names []string
	for _, id := range ids {
		c, ok := ref.Component(id)
		if !ok {
			continue
		}
		if p, err := Project(c.ID, major); err == nil {
			projects[c.ID] = p
			names = append(names, p)
		}
	}
	avail, err := ix.ManyVersions(ctx, names)
	if err != nil {
		return Release{}, fmt.Errorf("CUDA %s: %w", o.Name(), err)
	}
	rel := Release{Version: o.Name()}
	for _, id := range ids {
		c, ok := ref.Component(id)
		if !ok || projects[c.ID] == "" {
			continue
		}
		var prevV, nextV string
		if prev != nil {
			if pc, ok := prev.Component(c.ID); ok {
				prevV = pc.Version
			}
		}
		if next != nil {
			if nc, ok := next.Component(c.ID); ok {
				nextV = nc.Version
			}
		}
		tracking := majorMinor(c.Version) == majorMinor(ref.Version)
		v := pickComponentVersion(avail[projects[c.ID]], tracking, majorMinor(o.Name()), prevV, nextV)
		if c.ID == "cuda_cudart" {
			v = canonical(o.Runtime)
		}
		if v != "" {
			rel.Components = append(rel.Components, Component{ID: c.ID, Version: v})
		}
	}
	return rel, nil
}

// neighbours are the known releases of the offer's major just before and
// just after it by runtime version.
func neighbours(o Offer, known []Release) (prev, next *Release) {
	major := o.Release.Major()
	var prevRT, nextRT string
	for i := range known {
		r := &known[i]
		c, ok := r.Component("cuda_cudart")
		if !ok || r.Major() != major {
			continue
		}
		switch cmp := compareVersions(c.Version, o.Runtime); {
		case cmp < 0 && (prev == nil || compareVersions(c.Version, prevRT) >= 0):
			prev, prevRT = r, c.Version
		case cmp > 0 && (next == nil || compareVersions(c.Version, nextRT) < 0):
			next, nextRT = r, c.Version
		}
	}
	return prev, next
}

// pickComponentVersion chooses a component's version for a release the
// table does not know (see Index.Complete); "" when none fits.
func pickComponentVersion(avail []string, tracking bool, releaseMM, prevV, nextV string) string {
	best := ""
	for _, v := range avail {
		var fits bool
		if tracking {
			fits = majorMinor(v) == releaseMM
		} else {
			fits = (prevV == "" || compareVersions(v, prevV) >= 0) && (nextV == "" || compareVersions(v, nextV) < 0)
		}
		if fits && (best == "" || compareVersions(v, best) > 0) {
			best = v
		}
	}
	if best == "" && !tracking && prevV != "" && SameVersion(prevV, nextV) && slices.ContainsFunc(avail, func(v string) bool { return SameVersion(v, prevV) }) {
		return canonical(prevV)
	}
	return best
}

// selectedIDs are the component ids a selection asks for in a release.
func selectedIDs(rel Release, sel Selection, major int) []string {
	switch {
	case len(sel.Components) > 0:
		var ids []string
		for _, id := range sel.Components {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
		return ids
	case sel.Profile == ProfileMinimal:
		return minimalComponents(major)
	}
	var ids []string
	for _, c := range rel.Components {
		if sel.Profile != ProfileExtensions || fetch.InExtensions(c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

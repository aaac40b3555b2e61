package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// need is a component of the CUDA toolkit a library needs beside it, and
// why: a header its own includes, a library its own loads.
type need struct {
	Component string
	Why       string
	// files are what show a tree has it when no receipt says (a linked
	// tree): any one of these globs, relative to the tree.
	files []string
}

// libraryNeeds are the toolkit components each library needs, as its
// files say (cusparseLt.h includes cusparse.h) and its wheel declares
// (nvidia-cudss-cu12 0.7 requires cuda-toolkit[cublas], 1.0
// cuda-toolkit[cublas,nvrtc]): without them a program using it does not
// compile, or does not load.
func libraryNeeds(t version.Tool, v version.Version) []need {
	cublas := need{"libcublas", "libcudss loads libcublas", []string{"lib/libcublas.so*", "lib64/libcublas.so*", "lib/x64/cublas.lib"}}
	switch t {
	case version.Cusparselt:
		return []need{{"libcusparse", "cusparseLt.h includes cusparse.h", []string{"include/cusparse.h"}}}
	case version.Cudss:
		if v.Major() >= 1 {
			return []need{cublas, {"cuda_nvrtc", "libcudss loads libnvrtc", []string{"lib/libnvrtc.so*", "lib64/libnvrtc.so*", "lib/x64/nvrtc.lib"}}}
		}
		return []need{cublas}
	}
	return nil
}

// Needs: a library needs components of the CUDA toolkit it is used with.
// CUDA is the toolkit they are added to; when it is "" none is selected
// for the library's CUDA major, and Command installs one with them.
type Needs struct {
	Library    string // "cuDSS 0.7.1.4-cuda12"
	CUDA       string // "12.4.1"; "" for none
	CUDAMajor  int
	Components []string
	Why        string // "libcudss loads libcublas"
	Command    string // with CUDA "": what installs a toolkit with them
}

func (Needs) event() {}

// bringNeeds adds to the CUDA toolkit the libraries of results are used
// with (the one installed in the same request, else the one selected here
// for their CUDA major) the components they need and it lacks
// (libraryNeeds). A toolkit it cannot complete (linked, in the system
// store, or failing to fetch) is an error naming the command that would.
func (in *Installer) bringNeeds(ctx context.Context, req Request, results []Result, installed map[int]string, platform string) ([]Result, error) {
	st := in.opts.Store
	var out []Result
	for _, res := range results {
		e := res.Entry
		if !e.Kind.Library() || res.Outcome == AlreadyLinked {
			continue
		}
		needs := libraryNeeds(version.Tool(e.Kind), e.Version)
		if len(needs) == 0 {
			continue
		}
		cuda := in.cudaFor(req, st, e.CUDAMajor, installed)
		label := version.Tool(e.Kind).Title() + " " + e.Name
		var ids, whys []string
		for _, n := range needs {
			if cuda == nil || !hasComponent(*cuda, n) {
				ids = append(ids, n.Component)
				whys = append(whys, n.Why)
			}
		}
		if len(ids) == 0 {
			continue
		}
		why := strings.Join(whys, "; ")
		comps := strings.Join(ids, ",")
		if cuda == nil {
			in.event(Needs{Library: label, CUDAMajor: e.CUDAMajor, Components: ids, Why: why,
				Command: fmt.Sprintf("cudaenv install %d --components cuda_cudart,%s", e.CUDAMajor, comps)})
			continue
		}
		again := fmt.Sprintf("cudaenv install %s --components %s", cuda.Version, comps)
		switch {
		case cuda.Linked():
			return out, fmt.Errorf("install: %s needs %s in CUDA %s (%s), a linked tree at %s that cudaenv does not change; add them there, or put cudaenv's own in its place: cudaenv uninstall %s && cudaenv install %s",
				label, comps, cuda.Version, why, cuda.Path, cuda.Version, cuda.Version)
		case cuda.System:
			return out, fmt.Errorf("install: %s needs %s in CUDA %s (%s) of the system store; ask its admin to add them (cudaenv install --system %s --components %s), or install your own copy, which comes first: %s --force",
				label, comps, cuda.Version, why, cuda.Version, comps, again)
		}
		in.event(Needs{Library: label, CUDA: cuda.Version.String(), CUDAMajor: e.CUDAMajor, Components: ids, Why: why})
		sp := version.Spec{Tool: version.CUDA, Kind: version.Prefix, Prefix: cuda.Version}
		src := cuda.Receipt.Source
		if src != "nvidia" && src != "pypi" {
			src = req.Source
		}
		plat := cuda.Receipt.Platform
		if plat == "" {
			plat = platform
		}
		pl, err := in.Plan(ctx, sp, Target{Source: src, Platform: plat, Components: ids, Explicit: true, applySkips: true})
		if err == nil {
			var r Result
			if r, err = in.Apply(ctx, pl, false); err == nil {
				out = append(out, r)
				continue
			}
		}
		return out, fmt.Errorf("install: %s needs %s in CUDA %s (%s): %w; add them: %s", label, comps, cuda.Version, why, err, again)
	}
	return out, nil
}

// cudaFor is the toolkit a library for a CUDA major is used with: the
// one of that major installed by the same request, else the one selected
// here; nil for none.
func (in *Installer) cudaFor(req Request, st *store.Store, major int, installed map[int]string) *store.Entry {
	if name, ok := installed[major]; ok {
		if e, ok := st.Get(store.CUDA, name); ok && e.Err == nil {
			return &e
		}
	}
	if c := selectedCUDA(req.Here, st); c != nil && c.Version.Major() == major {
		return c
	}
	return nil
}

// selectedCUDA is the installed toolkit Here selects, nil for none. The
// selection's libraries are not looked up: the one being installed is
// not there yet.
func selectedCUDA(h Here, st *store.Store) *store.Entry {
	sel, err := h.find()
	if err != nil || sel.System() {
		return nil
	}
	sp, ok := sel.Spec(version.CUDA)
	if !ok {
		return nil
	}
	sel.Specs = []version.Spec{sp}
	r, err := activate.Resolve(st, sel)
	if err != nil {
		return nil
	}
	return r.CUDA
}

// hasComponent reports whether a toolkit has a component: its receipt
// lists it, or (a linked tree, a receipt without components) its files
// show it.
func hasComponent(e store.Entry, n need) bool {
	if len(e.Receipt.Components) > 0 {
		return slices.ContainsFunc(e.Receipt.Components, func(c store.Component) bool { return c.ID == n.Component })
	}
	for _, g := range n.files {
		if m, _ := filepath.Glob(filepath.Join(e.Path, filepath.FromSlash(g))); len(m) > 0 {
			for _, p := range m {
				if _, err := os.Stat(p); err == nil {
					return true
				}
			}
		}
	}
	return false
}

package install

import (
	"context"
	"fmt"
	"time"

	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/version"
	"github.com/cudaenv/cudaenv/store"
)

// installedFor is the installed entry a spec selects (the newest that
// matches; a cuDNN of cudaMajor, any major for 0), leaving out linked and
// broken entries: what a follow-up command on that version works on.
func installedFor(st *store.Store, sp version.Spec, cudaMajor int) (store.Entry, bool) {
	k := store.CUDA
	if sp.Tool.Library() {
		k = store.KindOf(sp.Tool)
	}
	list, err := st.List(k)
	if err != nil {
		return store.Entry{}, false
	}
	var best store.Entry
	found := false
	for _, e := range list {
		if e.Err != nil || e.Linked() || !sp.Match(e.Version) || (cudaMajor > 0 && k.Library() && e.CUDAMajor != cudaMajor) {
			continue
		}
		if !found || version.Compare(e.Version, best.Version) > 0 {
			best, found = e, true
		}
	}
	return best, found
}

// rememberedSource is the source the installed entry a spec selects came
// from (its receipt's: nvidia or pypi), "" when none is installed. A
// version installed with --source pypi keeps coming from PyPI: completing
// it from NVIDIA would mix two sources in one tree, and would fail where
// only PyPI can be reached.
func rememberedSource(st *store.Store, sp version.Spec, cudaMajor int) string {
	e, ok := installedFor(st, sp, cudaMajor)
	if !ok {
		return ""
	}
	switch e.Receipt.Source {
	case "nvidia", "pypi":
		return e.Receipt.Source
	}
	return ""
}

// HintSource is the --source a printed `cudaenv install` needs on this
// machine: "pypi" when the settings name no source and every version
// installed in the store came from PyPI (a machine that reaches only a
// PyPI index), else "".
func HintSource(st *store.Store, setting string) string {
	if setting != "" || st == nil {
		return ""
	}
	n := 0
	for _, k := range store.Kinds() {
		list, err := st.List(k)
		if err != nil {
			return ""
		}
		for _, e := range list {
			switch {
			case e.Err != nil || e.Linked():
			case e.Receipt.Source != "pypi":
				return ""
			default:
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	return "pypi"
}

// pypiReachable reports whether the PyPI index answers, briefly: asked
// only after NVIDIA's server could not be reached, to say which way out
// works.
func (in *Installer) pypiReachable(ctx context.Context) bool {
	if in.opts.Offline {
		return false
	}
	// One try and no retry lines: it is a question, not a download.
	idx, err := in.newPyPIIndex(pypi.WithRetries(0, 0), pypi.WithNotice(func(string) {}))
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = idx.Project(ctx, "nvidia-cuda-runtime")
	return err == nil
}

// unreachableHint is what an install from NVIDIA that cannot reach the
// server says to do next.
func (in *Installer) unreachableHint(ctx context.Context, err error) error {
	if in.pypiReachable(ctx) {
		return fmt.Errorf("%w; the PyPI index can be reached: add --source pypi, or make PyPI the default: cudaenv config set source pypi (or CUDAENV_SOURCE=pypi)", err)
	}
	return fmt.Errorf("%w; check the network, use a mirror (cudaenv config set mirror URL), or try --source pypi", err)
}

// installedChoice is the profile or the components a new lock of specs
// takes: those of the installed CUDA entry the CUDA spec selects (a lock
// records what is installed), else the default profile.
func installedChoice(st *store.Store, specs []version.Spec) (profile string, components []string) {
	for _, sp := range specs {
		if sp.Tool != version.CUDA {
			continue
		}
		if e, ok := installedFor(st, sp, 0); ok {
			if e.Receipt.Profile != "" {
				return e.Receipt.Profile, nil
			}
			if ids := componentIDs(e); len(ids) > 0 {
				return "", sortedUnique(ids)
			}
		}
	}
	return "default", nil
}

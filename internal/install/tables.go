package install

import (
	"context"
	"errors"
	"fmt"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/version"
)

// FrameworkFromTables: the package index could not be read, so the
// versions of a torch release come from cudaenv's table of the build PyPI
// serves to a plain `pip install torch==X` (compat.TorchPyPI): the CUDA
// release its wheel's pins name and the cuDNN, NCCL, cuSPARSELt and
// NVSHMEM it pins, as that wheel's environment loads them.
type FrameworkFromTables struct {
	For     string // torch 2.5.1
	Variant string // cu124
	// CUDA is the release installed; the others are the exact builds
	// pinned ("" where the wheel pins none).
	CUDA, Cudnn, NCCL, CuSPARSELt, NVSHMEM string
	Note                                   string // how the CUDA release was named from the pins
	Source                                 string // the wheel the row was read from
	// LeftOut are the pinned libraries the package index, readable but
	// without that version, cannot give: "NCCL 2.21.5 (…)".
	LeftOut []string
}

func (FrameworkFromTables) event() {}

// Products lists what the answer installs: "CUDA 12.4.1", "cuDNN 9.1.0.70", …
func (f FrameworkFromTables) Products() []string {
	out := []string{"CUDA " + f.CUDA}
	for _, p := range [][2]string{{"cuDNN", f.Cudnn}, {"NCCL", f.NCCL}, {"cuSPARSELt", f.CuSPARSELt}, {"NVSHMEM", f.NVSHMEM}} {
		if p[1] != "" {
			out = append(out, p[0]+" "+p[1])
		}
	}
	return out
}

// forTorchTables answers torch==X from compat.TorchPyPI when the index
// cannot be read: ok is false when the table has no row for the release
// and platform (the caller then tries the older tables). Each version is
// exact, so nothing but the files themselves needs the network: a dry run
// says what would be installed even with no cache (dryRun), and an
// install from the download cache needs no index.
func (in *Installer) forTorchTables(ctx context.Context, fw pypi.Framework, platform string, req Request) (specs []version.Spec, ok bool, err error) {
	source := req.Source
	if fw.Project != "torch" || len(fw.Extras) > 0 {
		return nil, false, nil
	}
	b, found := compat.TorchPyPI(fw.Version, platform)
	if !found {
		return nil, false, nil
	}
	if b.CPU() {
		return nil, true, fmt.Errorf("install --for: PyPI's torch %s wheel for %s is a CPU build (cudaenv's tables: %s): it loads no CUDA; install a CUDA version by name instead, e.g. cudaenv install 12.8", b.Torch, b.Platform, b.Note)
	}
	add := func(t version.Tool, v string) error {
		if v == "" {
			return nil
		}
		pv, err := version.Parse(v)
		if err != nil {
			return fmt.Errorf("install --for: cudaenv's tables name %s %q: %w", t.Title(), v, err)
		}
		specs = append(specs, version.Spec{Tool: t, Kind: version.Prefix, Prefix: pv})
		return nil
	}
	cudnn := b.Cudnn
	if cudnn != "" {
		cudnn, err = in.tablesCudnn(ctx, cudnn, compat.Major(b.CUDA), source)
		if err != nil {
			return nil, true, err
		}
	}
	ev := FrameworkFromTables{For: "torch " + b.Torch, Variant: b.Variant, CUDA: b.CUDA, Cudnn: b.Cudnn, NCCL: b.NCCL,
		CuSPARSELt: b.CuSPARSELt, NVSHMEM: b.NVSHMEM, Note: b.Note, Source: b.Source}
	for _, p := range []struct {
		t version.Tool
		v string
	}{{version.CUDA, b.CUDA}, {version.Cudnn, cudnn}, {version.Nccl, b.NCCL}, {version.Cusparselt, b.CuSPARSELt}, {version.Nvshmem, b.NVSHMEM}} {
		if p.t != version.CUDA && p.t != version.Cudnn && p.v != "" {
			if why := in.indexLacks(ctx, p.t, p.v, compat.Major(b.CUDA), req); why != "" {
				ev.LeftOut = append(ev.LeftOut, p.t.Title()+" "+p.v+" ("+why+")")
				continue
			}
		}
		if err := add(p.t, p.v); err != nil {
			return nil, true, err
		}
	}
	in.fromTables = true
	in.event(ev)
	return specs, true, nil
}

// indexLacks says why a library pinned by the table cannot come from the
// PyPI index, which answers but has no wheel of that version for the CUDA
// major (a private index that mirrors only some projects); "" when it has
// it, or when it cannot be read at all (offline, cut off: the version
// stands, and a dry run names it without its files).
func (in *Installer) indexLacks(ctx context.Context, t version.Tool, v string, cudaMajor int, req Request) string {
	if in.client.Offline || (fetch.Product(t).Redist() && req.SourceTyped && req.Source == "nvidia") {
		return ""
	}
	idx, err := in.pypiIndex()
	if err != nil {
		return ""
	}
	have, err := in.pypiLibraryVersions(ctx, idx, fetch.Product(t), cudaMajor)
	if err != nil {
		if errors.Is(err, fetch.ErrOffline) || fetch.Unreachable(err) || ctx.Err() != nil {
			return ""
		}
		return err.Error()
	}
	for h := range have {
		if pypi.SameVersion(h, v) {
			return ""
		}
	}
	return fmt.Sprintf("%s has no version %s for CUDA %d", idx.URL(), v, cudaMajor)
}

// tablesCudnn is the cuDNN release installed for the build a table names:
// the nearest the source offers (the build itself where it has it), or,
// when the source cannot be read either, the build itself: NVIDIA names a
// release by the build's first three parts (9.1.0 is 9.1.0.70), the PyPI
// index by the build.
func (in *Installer) tablesCudnn(ctx context.Context, build string, cudaMajor int, source string) (string, error) {
	want, err := version.Parse(build)
	if err != nil {
		return "", fmt.Errorf("install --for: cudaenv's tables name cuDNN %q: %w", build, err)
	}
	if !in.client.Offline {
		near, err := in.cudnnNear(ctx, want, cudaMajor, source)
		switch {
		case err == nil && near != nil:
			return near.String(), nil
		case err != nil && !errors.Is(err, fetch.ErrOffline) && !fetch.Unreachable(err):
			return "", fmt.Errorf("install --for: %w", err)
		}
	}
	if source != "pypi" && len(want) > 3 {
		return want[:3].String(), nil
	}
	return build, nil
}

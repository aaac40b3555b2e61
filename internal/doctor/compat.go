package doctor

import (
	"context"
	"errors"
	"fmt"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/detect"
)

// TorchCompat is what `cudaenv compat torch==X` reports: a PyTorch release
// from cudaenv's tables, each CUDA build judged against this machine's driver.
type TorchCompat struct {
	// Installed is the torch of the active Python when no release was
	// named; it is set even when that release is missing from the tables.
	Installed *detect.Torch
	Release   compat.TorchRelease
	// Builds are the release's builds, in the tables' order; for an
	// installed torch, only the build it is.
	Builds []TorchBuild
	// InTables: Release is from cudaenv's tables. An installed torch they
	// lack is reported from its own files (Installed.CUDAPins).
	InTables bool
	// Machine is what Pick was chosen for: this driver, GPUs and Python.
	Machine compat.Machine
	// Pick is the build of Release to install on this machine; PickErr
	// says why there is none. Both are empty outside the tables.
	Pick    *compat.TorchPick
	PickErr string
}

// TorchBuild is one build of a release on this machine.
type TorchBuild struct {
	compat.TorchVariant
	Driver compat.DriverCheck // Driver.Verdict() words it
	Pip    string             // the pip line installing the build, "" when none is known
}

// CompatTorch reports on PyTorch release version, or with version "" on
// the torch installed in the active Python (read, never imported).
func CompatTorch(ctx context.Context, h detect.Host, version string) (TorchCompat, error) {
	var out TorchCompat
	var installedCUDA string
	if version == "" {
		t, found, err := h.Torch(ctx)
		if err != nil {
			return out, fmt.Errorf("compat: %w", err)
		}
		if !found {
			return out, errors.New("compat: no torch in the active Python; name a release, e.g. cudaenv compat torch==2.5.1")
		}
		out.Installed = &t
		version, installedCUDA = t.Version, t.CUDA
	}
	rel, ok := compat.Torch(version)
	if !ok && out.Installed != nil {
		// Its own files say what it pins; the tables have nothing to add.
		out.Release = compat.TorchRelease{Version: out.Installed.Version}
		return out, nil
	}
	if !ok {
		return out, fmt.Errorf("compat: torch %s is not in cudaenv's tables; see: cudaenv compat", version)
	}
	out.Release, out.InTables = rel, true
	d := h.Driver(ctx)
	out.Machine = compat.Machine{Driver: d.Version, GOOS: h.GOOS}
	if out.Installed != nil {
		out.Machine.Python = out.Installed.PythonVersion
	} else if t, _, err := h.Torch(ctx); err == nil {
		out.Machine.Python = t.PythonVersion
	}
	if gpus, err := h.GPUs(ctx); err == nil {
		for _, g := range gpus {
			if g.ComputeCap != "" {
				out.Machine.GPUs = append(out.Machine.GPUs, g.ComputeCap)
			}
		}
	}
	if pick, err := compat.PickTorch(rel, out.Machine); err != nil {
		out.PickErr = err.Error()
	} else {
		out.Pick = &pick
	}
	for _, v := range rel.Variants {
		if installedCUDA != "" && compat.VariantName(installedCUDA) != v.Name {
			continue
		}
		out.Builds = append(out.Builds, TorchBuild{
			TorchVariant: v,
			Driver:       compat.CheckDriver(v.CUDA, d.Version, h.GOOS),
			Pip:          compat.PipLine(rel.Version, v.Name),
		})
	}
	return out, nil
}

// TorchMatrix is what `cudaenv compat` shows: every PyTorch build the
// tables know, newest first, judged against this machine's driver.
type TorchMatrix struct {
	Driver detect.Driver
	Rows   []compat.TorchMatrixRow // each row's Verdict() words it
}

// CompatMatrix detects the driver and judges every build against it.
func CompatMatrix(ctx context.Context, h detect.Host) TorchMatrix {
	d := h.Driver(ctx)
	return TorchMatrix{Driver: d, Rows: compat.TorchMatrix(d.Version, h.GOOS)}
}

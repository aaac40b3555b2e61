package install

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/version"
)

// DefaultPython is the CPython whose framework wheels --for reads when
// Request.Python is empty.
const DefaultPython = "3.12"

// FrameworkPinned: Request.For's wheel was read from the index, and its
// pins name the CUDA release and the cuDNN build installed.
type FrameworkPinned struct {
	For   string // torch 2.15.0
	Wheel string // the file whose metadata was read
	Via   string // metadata, range, wheel or cache
	// CUDA is the release installed, from the pin CUDAFrom.
	CUDA, CUDAFrom string
	// Cudnn is the build the wheel pins (from CudnnFrom), CudnnInstall the
	// release installed for it ("" when none is pinned).
	Cudnn, CudnnFrom, CudnnInstall string
	// Extra is the extra turned on to read the CUDA pins, "" for none.
	Extra string
	// Libraries are the exact library pins of the cuda-toolkit release
	// (from the meta-package's extras): "nvidia-cublas==13.2.1.1".
	Libraries []string
	// NoCompiler: the CUDA release comes from PyPI, whose wheels of its
	// major carry no nvcc: libraries and headers only.
	NoCompiler bool
	// Products are the other libraries the wheel pins, installed from
	// their wheels: "nvidia-nccl-cu13==2.30.7 → NCCL 2.30.7".
	Products []string
	// TableDisagrees says where cudaenv's table differs from the wheel
	// (the wheel wins); "" when it agrees or has no row.
	TableDisagrees string
}

// FrameworkFallback: the framework's wheel could not be read (Err), so
// cudaenv's built-in tables chose the versions.
type FrameworkFallback struct {
	For string
	Err error
}

func (FrameworkPinned) event()   {}
func (FrameworkFallback) event() {}

// forFramework turns Request.For (torch==2.15.0, jax[cuda13]==0.9.0,
// tensorflow[and-cuda]==2.21.0, ...) into the exact CUDA release and cuDNN
// its wheel pins for the platform and Python, read from the PyPI index.
// When the index cannot be read (offline, unreachable, no such wheel
// there) a torch release in cudaenv's tables is answered from them;
// metadata that cannot be believed is an error, and nothing is installed.
func (in *Installer) forFramework(ctx context.Context, req Request, platform string) ([]version.Spec, error) {
	fw, err := pypi.ParseFramework(req.For)
	if err != nil {
		return nil, fmt.Errorf("install --for: %w", err)
	}
	python := req.Python
	if python == "" {
		python = DefaultPython
	}
	var pins *pypi.Pins
	if in.client.Offline {
		err = errors.New("--offline: the package index is not read")
	} else {
		var idx *pypi.Index
		if idx, err = in.pypiIndex(); err == nil {
			pins, err = idx.FrameworkPins(ctx, fw, wheelPlatform(platform), python, in.opts.CacheDir)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		canFallBack := in.client.Offline || fetch.Unreachable(err) || errors.Is(err, pypi.ErrProjectNotFound) || errors.Is(err, pypi.ErrNoFrameworkWheel)
		if _, inTable := compat.Torch(fw.Version); fw.Project == "torch" && len(fw.Extras) == 0 && inTable && canFallBack {
			in.event(FrameworkFallback{For: fw.Project + " " + fw.Version, Err: err})
			// PyPI's own build of the release, where the table has it;
			// else the build this machine's driver runs.
			if specs, ok, err := in.forTorchTables(ctx, fw, wheelPlatform(platform), req); ok {
				return specs, err
			}
			return in.forTorch(ctx, "torch=="+fw.Version, req.Source)
		}
		if canFallBack && !in.client.Offline {
			err = fmt.Errorf("%w; cudaenv's tables have no row for it either (see: cudaenv compat)", err)
		}
		return nil, fmt.Errorf("install --for: %w", err)
	}
	cudaSpec, err := version.ParseSpec(pins.CUDA)
	if err != nil {
		return nil, fmt.Errorf("install --for: the pins name CUDA %q: %w", pins.CUDA, err)
	}
	specs := []version.Spec{cudaSpec}
	ev := FrameworkPinned{For: fw.Project + " " + fw.Version, Wheel: pins.Wheel, Via: pins.Via,
		CUDA: pins.CUDA, CUDAFrom: pins.CUDAFrom, Cudnn: pins.Cudnn, CudnnFrom: pins.CudnnFrom, Extra: pins.Extra,
		TableDisagrees: tableDisagrees(fw, pins),
		NoCompiler:     req.Source == "pypi" && req.Profile == "" && len(req.Components) == 0 && !pypi.ProvidesCompiler(cudaSpec.Prefix.Major())}
	for _, l := range pins.Libraries {
		ev.Libraries = append(ev.Libraries, l.Requirement)
	}
	if pins.Cudnn != "" {
		want, err := version.Parse(pins.Cudnn)
		if err != nil {
			return nil, fmt.Errorf("install --for: the pins name cuDNN %q: %w", pins.Cudnn, err)
		}
		near, err := in.cudnnNear(ctx, want, cudaSpec.Prefix.Major(), req.Source)
		if err != nil {
			return nil, fmt.Errorf("install --for: %w", err)
		}
		if near != nil {
			ev.CudnnInstall = near.String()
			specs = append(specs, version.Spec{Tool: version.Cudnn, Kind: version.Prefix, Prefix: near})
		}
	}
	specs, ev.Products, err = productSpecs(specs, pins.Products)
	if err != nil {
		return nil, err
	}
	in.event(ev)
	return specs, nil
}

// wheelPlatform is the wheel platform of an NVIDIA platform key: Jetson's
// linux-aarch64 takes the same manylinux aarch64 wheels as linux-sbsa.
func wheelPlatform(platform string) string {
	if platform == "linux-aarch64" {
		return pypi.LinuxSBSA
	}
	return platform
}

// tableDisagrees compares a torch wheel's pins with the row of cudaenv's
// table for its CUDA variant.
func tableDisagrees(fw pypi.Framework, pins *pypi.Pins) string {
	if fw.Project != "torch" {
		return ""
	}
	rel, ok := compat.Torch(fw.Version)
	if !ok {
		return ""
	}
	v, ok := rel.VariantFor(pins.CUDA)
	if !ok || compat.Major(v.CUDA) != compat.Major(pins.CUDA) {
		return ""
	}
	var diffs []string
	if mm := majorMinorOf(pins.CUDA); compat.CompareVersions(v.CUDA, mm) != 0 {
		diffs = append(diffs, fmt.Sprintf("its nearest build is %s (CUDA %s), the wheel pins CUDA %s", v.Name, v.CUDA, pins.CUDA))
	}
	if v.Cudnn != "" && pins.Cudnn != "" && compat.CompareVersions(v.Cudnn, pins.Cudnn) != 0 {
		diffs = append(diffs, fmt.Sprintf("it names cuDNN %s for %s, the wheel pins %s", v.Cudnn, v.Name, pins.Cudnn))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("cudaenv's table for torch %s differs from the wheel (the wheel wins): %s", rel.Minor, strings.Join(diffs, "; "))
}

// majorMinorOf is "13.2" of "13.2.2" (and "13" of "13").
func majorMinorOf(v string) string {
	parts := strings.SplitN(v, ".", 3)
	return strings.Join(parts[:min(2, len(parts))], ".")
}

// Pins reads what a framework release's wheel pins for a platform ("":
// this machine's) and Python ("": DefaultPython), without installing
// anything; disagree says where cudaenv's table differs ("" if nowhere).
func (in *Installer) Pins(ctx context.Context, arg, python, platform string) (pins *pypi.Pins, disagree string, err error) {
	fw, err := pypi.ParseFramework(arg)
	if err != nil {
		return nil, "", err
	}
	if python == "" {
		python = DefaultPython
	}
	if platform == "" {
		if platform, err = fetch.HostPlatform(in.opts.GOOS, in.opts.GOARCH); err != nil {
			return nil, "", err
		}
	}
	if in.client.Offline {
		return nil, "", errors.New("--offline: the package index is not read")
	}
	idx, err := in.pypiIndex()
	if err != nil {
		return nil, "", err
	}
	pins, err = idx.FrameworkPins(ctx, fw, wheelPlatform(platform), python, in.opts.CacheDir)
	if err != nil {
		return nil, "", err
	}
	return pins, tableDisagrees(fw, pins), nil
}

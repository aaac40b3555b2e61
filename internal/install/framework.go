package install

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/pypi"
	"github.com/cudaenv/cudaenv/internal/envpins"
	"github.com/cudaenv/cudaenv/internal/version"
)

// DefaultPython is the CPython whose framework wheels --for reads when
// Request.Python is empty.
const DefaultPython = "3.12"

// FrameworkPinned: Request.For's requirements were resolved against the
// index as pip resolves them, and name the toolkit (CUDA, with the builds
// they pin), the cuDNN build and the libraries installed.
type FrameworkPinned struct {
	For   string      // "torch 2.15.0"; several targets joined with " + "
	Reads []WheelRead // each requirement's own wheel, read
	// CUDA is the release installed, from the pin CUDAFrom.
	CUDA, CUDAFrom string
	// Unlisted says, when CUDA is no release cudaenv's table knows, how
	// it is named; "" otherwise.
	Unlisted string
	// Differs are the toolkit's builds that are not CUDA's own:
	// "cuda_nvrtc 12.6.77 (12.6.3's is 12.6.85)".
	Differs []string
	// NotFromSource says, when the source is not PyPI, that it has only
	// the release's own builds ("" when it does not matter).
	NotFromSource string
	// Cudnn is the build the wheel pins (from CudnnFrom), CudnnInstall the
	// release installed for it ("" when none is pinned).
	Cudnn, CudnnFrom, CudnnInstall string
	// Holds: every requirement came from --for PATH (a venv or a lock),
	// which holds those wheels; For names the environments.
	Holds bool
	// Extra is the extra turned on to read the CUDA pins, "" for none.
	Extra string
	// Direct: every requirement is an NVIDIA wheel itself
	// (nvidia-cublas-cu12==12.4.5.8), whose own pins are not the point.
	Direct bool
	// NoCompiler: the CUDA release comes from PyPI, whose wheels of its
	// major carry no nvcc: libraries and headers only.
	NoCompiler bool
	// Products are the other libraries the wheel pins, installed from
	// their wheels: "nvidia-nccl-cu13==2.30.7 → NCCL 2.30.7".
	Products []string
	// Others are NVIDIA wheels the requirements take that cudaenv does
	// not install (nvidia-cudnn-frontend==1.31.0).
	Others []string
	// Notes: a yanked pin, a requirement whose dependencies were not read.
	Notes []string
	// TableDisagrees says where cudaenv's table differs from the wheel
	// (the wheel wins); "" when it agrees or has no row.
	TableDisagrees string
}

// WheelRead is one requirement's wheel as read.
type WheelRead struct {
	For   string // torch 2.15.0
	Wheel string // the file whose metadata was read
	Via   string // metadata, range, wheel or cache
}

// FrameworkFallback: the framework's wheel could not be read (Err), so
// cudaenv's built-in tables chose the versions.
type FrameworkFallback struct {
	For string
	Err error
}

func (FrameworkPinned) event()   {}
func (FrameworkFallback) event() {}

// forPins is the toolkit Request.For resolved to: the release naming it
// and the builds its requirements pin.
type forPins struct {
	release string
	pins    map[string]string // component id → wheel version
	known   bool              // the release is in cudaenv's table: differences are known
	// extend: no profile or components were named, so the pinned
	// components the profile lacks are installed too (the libraries the
	// framework loads); a named one is kept to.
	extend bool
}

// forFramework resolves Request.For's requirements (PEP 508: torch==2.15.0,
// jax[cuda13]==0.9.0, tensorflow[and-cuda]==2.21.0, vllm,
// nvidia-cublas-cu12==12.4.5.8, …) together against the PyPI index, as pip
// and uv do (pypi.Index.ResolveRequirements), and turns what they load into
// specs: the CUDA release whose runtime they pin (its components at the
// pinned builds, in.forPins), the cuDNN build and the other libraries. A
// requirement that names a venv, conda prefix, uv.lock, pylock.toml or
// requirements.txt (expandPaths) is the exact NVIDIA wheels there.
// When the index cannot be read (offline, unreachable, no such wheel
// there) a single torch release in cudaenv's tables is answered from them;
// metadata that cannot be believed, or two requirements no version
// satisfies together, is an error, and nothing is installed.
func (in *Installer) forFramework(ctx context.Context, req Request, platform string) ([]version.Spec, error) {
	var reqs []string
	for _, r := range req.For {
		if r = strings.TrimSpace(r); r != "" {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) == 0 {
		return nil, errors.New("install --for: name a requirement, e.g. --for torch==2.15.0")
	}
	// A venv, conda prefix or lock file stands for the exact NVIDIA
	// wheels it holds, for the Python it holds them for.
	reqs, python, envs, err := in.expandPaths(ctx, reqs, platform, req.Python)
	if err != nil {
		return nil, err
	}
	var res *pypi.Resolved
	var idx *pypi.Index
	if in.client.Offline {
		err = errors.New("--offline: the package index is not read")
	} else if idx, err = in.pypiIndex(); err == nil {
		res, err = idx.ResolveRequirements(ctx, reqs, pypi.WheelTarget{Platform: wheelPlatform(platform), Python: python}, in.opts.CacheDir)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		canFallBack := in.client.Offline || fetch.Unreachable(err) || errors.Is(err, pypi.ErrProjectNotFound) || errors.Is(err, pypi.ErrNoFrameworkWheel)
		fw, perr := pypi.ParseFramework(reqs[0])
		if _, inTable := compat.Torch(fw.Version); len(reqs) == 1 && perr == nil && fw.Project == "torch" && len(fw.Extras) == 0 && inTable && canFallBack {
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
	known := in.knownReleases(ctx)
	pins, err := idx.PinsOf(ctx, res, known)
	if err != nil {
		return nil, fmt.Errorf("install --for: %w", err)
	}
	cudaSpec, err := version.ParseSpec(pins.CUDA)
	if err != nil {
		return nil, fmt.Errorf("install --for: the pins name CUDA %q: %w", pins.CUDA, err)
	}
	specs := []version.Spec{cudaSpec}
	var fors []string
	ev := FrameworkPinned{CUDA: pins.CUDA, CUDAFrom: pins.CUDAFrom, Cudnn: pins.Cudnn, CudnnFrom: pins.CudnnFrom, Extra: pins.Extra,
		Others: pins.Toolkit.Others, Notes: pins.Notes,
		NoCompiler: req.Source == "pypi" && req.Profile == "" && len(req.Components) == 0 && !pypi.ProvidesCompiler(cudaSpec.Prefix.Major())}
	ev.Direct = true
	fromEnv := map[string]string{} // project → the environment label it came from
	for _, p := range envs {
		label := envpins.Label(p.Kind, p.Path)
		for _, r := range p.Requirements {
			name, _, _ := strings.Cut(r, "==")
			fromEnv[name] = label
		}
	}
	ev.Holds = len(envs) > 0
	for _, top := range res.Top {
		ev.Reads = append(ev.Reads, WheelRead{For: top.Project + " " + top.Version, Wheel: top.File.Filename, Via: top.Via})
		ev.Direct = ev.Direct && strings.HasPrefix(top.Project, "nvidia-")
		// An environment's wheels are named by the environment, once.
		if label, ok := fromEnv[top.Project]; ok {
			if !slices.Contains(fors, label) {
				fors = append(fors, label)
			}
			continue
		}
		ev.Holds = false
		fors = append(fors, top.Project+" "+top.Version)
	}
	ev.For = strings.Join(fors, " + ")
	if len(res.Top) == 1 && len(req.For) == 1 {
		if fw, err := pypi.ParseFramework(reqs[0]); err == nil {
			ev.TableDisagrees = tableDisagrees(fw, pins)
		}
	}
	// A release the table lacks is said when it is planned (UnlistedRelease).
	isKnown := slices.ContainsFunc(known, func(r pypi.Release) bool { return r.Version == pins.CUDA })
	if len(pins.Toolkit.Components) > 0 && strings.Count(pins.CUDA, ".") >= 2 {
		in.forPins = &forPins{release: pins.CUDA, pins: pins.Toolkit.Versions(), known: isKnown, extend: req.Profile == "" && len(req.Components) == 0}
		for _, d := range pins.Differs {
			ev.Differs = append(ev.Differs, differText(d, pins.CUDA))
		}
		if len(ev.Differs) > 0 && req.Source != "pypi" {
			ev.NotFromSource = fmt.Sprintf("only PyPI has these builds; from %s CUDA %s comes with its own (add --source pypi for the framework's)", req.Source, pins.CUDA)
		}
	}
	if pins.Cudnn != "" {
		want, err := version.Parse(pins.Cudnn)
		if err != nil {
			return nil, fmt.Errorf("install --for: the pins name cuDNN %q: %w", pins.Cudnn, err)
		}
		near := want
		if req.Source != "pypi" {
			// The source's nearest release; on PyPI the resolution
			// found that very wheel.
			if near, err = in.cudnnNear(ctx, want, cudaSpec.Prefix.Major(), req.Source); err != nil {
				return nil, fmt.Errorf("install --for: %w", err)
			}
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

// differText is "cuda_nvrtc 12.6.77 (12.6.3's is 12.6.85)".
func differText(d pypi.Differ, release string) string {
	if d.Release == "" {
		return fmt.Sprintf("%s %s (not in %s)", d.ID, d.Version, release)
	}
	return fmt.Sprintf("%s %s (%s's is %s)", d.ID, d.Version, release, d.Release)
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

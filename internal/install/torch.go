package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/version"
)

// forTorch turns "torch==X" into a CUDA spec (major.minor of the build
// this machine's driver runs) and the cuDNN release nearest to the one the
// wheels bundle, among those source offers: NVIDIA's releases, or the
// nvidia-cudnn-cu<major> versions on the PyPI index (where the very build
// PyTorch pins, 9.1.0.70 for 2.5, is found).
func (in *Installer) forTorch(ctx context.Context, arg, source string) ([]version.Spec, error) {
	cuda, bundled, err := in.torchTargets(ctx, arg)
	if err != nil {
		return nil, err
	}
	cudaSpec, err := version.ParseSpec(cuda)
	if err != nil {
		return nil, fmt.Errorf("install --for: %s: %w", cuda, err)
	}
	specs := []version.Spec{cudaSpec}
	want, err := version.Parse(bundled)
	if err != nil {
		return specs, nil // no cuDNN known for this build
	}
	near, err := in.cudnnNear(ctx, want, cudaSpec.Prefix.Major(), source)
	if err != nil {
		return nil, fmt.Errorf("install --for: %w", err)
	}
	if near == nil {
		return specs, nil
	}
	in.event(TorchTargets{For: arg, CUDA: cuda, BundledCudnn: bundled, Cudnn: near.String()})
	return append(specs, version.Spec{Tool: version.Cudnn, Kind: version.Prefix, Prefix: near}), nil
}

// cudnnNear is the cuDNN release nearest to want that source offers for
// a CUDA major; with auto, NVIDIA's unless its server cannot be reached.
func (in *Installer) cudnnNear(ctx context.Context, want version.Version, cudaMajor int, source string) (version.Version, error) {
	client := in.client
	switch source {
	case "pypi":
		return in.pypiCudnnNear(ctx, want, cudaMajor)
	case "auto":
		probe := *in.client
		probe.Retries, probe.RetryDelay = 1, 200*time.Millisecond
		client = &probe
	}
	releases, err := client.Releases(ctx, fetch.CUDNN, false)
	if err != nil && source == "auto" && fetch.Unreachable(err) && !in.client.Offline {
		in.fallBack(err)
		return in.pypiCudnnNear(ctx, want, cudaMajor)
	}
	if err != nil {
		if fetch.Unreachable(err) {
			// As a plain install says it: PyPI's way out when it answers.
			err = in.unreachableHint(ctx, err)
		}
		return nil, err
	}
	return nearestRelease(want, releases), nil
}

// pypiCudnnNear is want itself when the index has that build for the CUDA
// major, else the nearest version it has.
func (in *Installer) pypiCudnnNear(ctx context.Context, want version.Version, cudaMajor int) (version.Version, error) {
	if in.client.Offline {
		return nil, errors.New("--source pypi: the PyPI index is needed to find the cuDNN wheels; run without --offline")
	}
	idx, err := in.pypiIndex()
	if err != nil {
		return nil, err
	}
	have, err := in.pypiCudnnVersions(ctx, idx, cudaMajor)
	if err != nil {
		return nil, err
	}
	var vs []string
	for v := range have {
		if pv, err := version.Parse(v); err == nil && version.Compare(pv, want) == 0 {
			return pv, nil
		}
		vs = append(vs, v)
	}
	return nearestRelease(want, vs), nil
}

// torchTargets are the CUDA and the cuDNN of the build of a PyTorch
// release this machine's driver runs (any, without a driver).
func (in *Installer) torchTargets(ctx context.Context, arg string) (cuda, cudnn string, err error) {
	name, ver, ok := strings.Cut(arg, "==")
	if name != "torch" || !ok {
		return "", "", fmt.Errorf("install --for: use torch==VERSION, e.g. --for torch==2.5.1 (got %q)", arg)
	}
	rel, found := compat.Torch(ver)
	if !found {
		return "", "", fmt.Errorf("install --for: torch %s is not in cudaenv's tables; see: cudaenv compat", ver)
	}
	driver := ""
	if in.opts.Driver != nil {
		driver = in.opts.Driver(ctx)
	}
	build, ok := rel.BuildFor(driver, in.opts.GOOS)
	if !ok {
		return "", "", fmt.Errorf("install --for: driver %s runs none of torch %s's CUDA builds; update the driver (see: cudaenv compat torch==%s)", driver, rel.Version, rel.Version)
	}
	return build.CUDA, build.Cudnn, nil
}

// nearestRelease is the release of want's major closest to want: the
// release of the very build (9.2.0 for 9.2.0.82) if there is one, else the
// same minor (newest patch), else the nearest newer minor, and an older
// minor only when there is no newer one. Older is what breaks: with
// LD_LIBRARY_PATH searched first, a libcudnn older than the one the
// framework's wheels pin is the one loaded, and the framework refuses it
// (or fails with "undefined symbol").
func nearestRelease(want version.Version, releases []string) version.Version {
	for _, r := range releases {
		// The release a build belongs to: 9.10.2 for 9.10.2.21.
		if v, err := version.Parse(r); err == nil && len(v) >= 3 && len(v) <= len(want) && version.Compare(v, want[:len(v)]) == 0 {
			return v
		}
	}
	var best version.Version
	bestDist := -1
	for _, r := range releases {
		v, err := version.Parse(r)
		if err != nil || v.Major() != want.Major() || len(v) < 2 || len(want) < 2 {
			continue
		}
		d := v[1] - want[1]
		if d < 0 {
			// Any newer minor comes before every older one.
			d = 1<<20 - d
		}
		if bestDist < 0 || d < bestDist || (d == bestDist && version.Compare(v, best) > 0) {
			best, bestDist = v, d
		}
	}
	return best
}

package install

import (
	"context"
	"fmt"
	"strings"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/internal/version"
)

// forTorch turns "torch==X" into a CUDA spec (major.minor of the build
// this machine's driver runs) and the cuDNN release nearest to the one the
// wheels bundle, among those the server offers.
func (in *Installer) forTorch(ctx context.Context, arg string) ([]version.Spec, error) {
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
	releases, err := in.client.Releases(ctx, fetch.CUDNN, false)
	if err != nil {
		return nil, fmt.Errorf("install --for: %w", err)
	}
	near := nearestRelease(want, releases)
	if near == nil {
		return specs, nil
	}
	in.event(TorchTargets{For: arg, CUDA: cuda, BundledCudnn: bundled, Cudnn: near.String()})
	return append(specs, version.Spec{Tool: version.Cudnn, Kind: version.Prefix, Prefix: near}), nil
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

// nearestRelease is the release of want's major closest to want: the same
// minor if there is one (newest patch), else the nearest minor, newer on a tie.
func nearestRelease(want version.Version, releases []string) version.Version {
	var best version.Version
	bestDist := -1
	for _, r := range releases {
		v, err := version.Parse(r)
		if err != nil || v.Major() != want.Major() || len(v) < 2 || len(want) < 2 {
			continue
		}
		d := v[1] - want[1]
		if d < 0 {
			d = -d
		}
		if bestDist < 0 || d < bestDist || (d == bestDist && version.Compare(v, best) > 0) {
			best, bestDist = v, d
		}
	}
	return best
}

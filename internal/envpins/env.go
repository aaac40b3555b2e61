package envpins

import (
	"context"
	"fmt"
	"strings"

	"github.com/cudaenv/cudaenv/internal/venv"
)

// readEnv reads the dist-infos of an environment's site-packages: what
// pip or uv installed is what its Python loads, so no marker is read.
func readEnv(ctx context.Context, env venv.Env, t Target) (Pins, error) {
	p := Pins{Path: env.Prefix, Kind: env.Kind, Python: env.Python}
	if p.Kind == "" {
		p.Kind = KindSitePackages
	}
	if p.Python == "" {
		p.Python = t.Python
	}
	if len(env.Sites) > 1 && env.Python == "" {
		return Pins{}, fmt.Errorf("%s has site-packages for several Pythons (%s); pass the environment of one", env.Prefix, strings.Join(env.Sites, ", "))
	}
	var c collector
	keep := func(name string) bool {
		return strings.HasPrefix(name, "nvidia_") || strings.HasPrefix(name, "cutensor_cu") || frameworkName(strings.ReplaceAll(name, "_", "-")) != ""
	}
	for _, site := range env.Sites {
		if err := ctx.Err(); err != nil {
			return Pins{}, err
		}
		for _, d := range venv.Dists(ctx, site, keep) {
			if err := c.add(d.Name, d.Version, d.Dir); err != nil {
				return Pins{}, fmt.Errorf("%s: %w", env.Prefix, err)
			}
		}
	}
	c.into(&p)
	if len(p.Requirements) == 0 {
		return p, fmt.Errorf("%s has no NVIDIA CUDA wheels installed (no nvidia-* or cutensor-* dist-info with a valid METADATA in %s)%s", env.Prefix, strings.Join(env.Sites, ", "), passedSuffix(p.Passed))
	}
	return p, nil
}

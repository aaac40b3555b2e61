package install

import (
	"context"
	"fmt"

	"github.com/cudaenv/cudaenv/internal/envpins"
)

// ForEnvironment: a --for PATH was read (a venv or conda prefix, a
// uv.lock, a pylock.toml or a requirements.txt): its NVIDIA wheels, as
// exact requirements, are what the toolkit is resolved from, so its
// libraries are the very builds that environment loads.
type ForEnvironment struct {
	Path, Kind string
	Python     string   // the Python the wheels are for
	Pins       []string // "nvidia-cublas-cu12==12.8.4.1", sorted
	Frameworks []string // "torch 2.9.0"
	Passed     []string // what was passed over, and why
}

func (ForEnvironment) event() {}

// expandPaths replaces each --for argument that names a file or folder
// (envpins.IsPath) with the exact requirements of the environment there,
// read for the platform and python. python becomes the environment's own
// Python where a venv names it; two environments for different Pythons are
// refused. envs are the environments read, in order.
func (in *Installer) expandPaths(ctx context.Context, fors []string, platform, python string) (reqs []string, py string, envs []envpins.Pins, err error) {
	py = python
	typed := python != ""
	if py == "" {
		py = DefaultPython
	}
	for _, f := range fors {
		if !envpins.IsPath(f) {
			reqs = append(reqs, f)
			continue
		}
		p, err := envpins.Read(ctx, f, envpins.Target{Platform: wheelPlatform(platform), Python: py})
		if err != nil {
			return nil, "", nil, fmt.Errorf("install --for: %w", err)
		}
		if p.Python != py {
			if typed || len(envs) > 0 {
				return nil, "", nil, fmt.Errorf("install --for: %s is an environment for Python %s, and the requirements are resolved for Python %s; drop --python, or name environments of one Python", p.Path, p.Python, py)
			}
			py = p.Python
		}
		envs = append(envs, p)
		in.event(ForEnvironment{Path: p.Path, Kind: p.Kind, Python: p.Python, Pins: p.Requirements, Frameworks: p.Frameworks, Passed: p.Passed})
		reqs = append(reqs, p.Requirements...)
	}
	return reqs, py, envs, nil
}

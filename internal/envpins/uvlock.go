package envpins

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// A uv.lock (https://docs.astral.sh/uv/concepts/projects/layout/#the-lockfile):
// every package of every platform and Python, each dependency with the
// marker under which it applies.
type uvLock struct {
	Version  int         `toml:"version"`
	Packages []uvPackage `toml:"package"`
}

type uvPackage struct {
	Name              string             `toml:"name"`
	Version           string             `toml:"version"`
	Source            map[string]any     `toml:"source"`
	ResolutionMarkers []string           `toml:"resolution-markers"`
	Dependencies      []uvDep            `toml:"dependencies"`
	Optional          map[string][]uvDep `toml:"optional-dependencies"`
	Dev               map[string][]uvDep `toml:"dev-dependencies"`
}

type uvDep struct {
	Name    string   `toml:"name"`
	Version string   `toml:"version"`
	Extra   []string `toml:"extra"`
	Marker  string   `toml:"marker"`
}

// maxLockPackages bounds the packages walked: the largest real locks hold
// a few thousand.
const maxLockPackages = 50000

// readUVLock walks the lock from its own project (the packages uv lists
// with a virtual or editable source) along the dependencies whose markers
// hold on the target, extras and the dev group included as `uv sync`
// installs them, and collects the NVIDIA wheels reached. A lock with no
// project of its own is taken whole, each package under its resolution
// markers.
func readUVLock(data []byte, c *collector, t Target) error {
	var lk uvLock
	if _, err := toml.Decode(string(data), &lk); err != nil {
		return fmt.Errorf("not a uv.lock: %v", oneLine(err))
	}
	if lk.Version != 1 {
		return fmt.Errorf("uv.lock version %d; cudaenv reads version 1", lk.Version)
	}
	if len(lk.Packages) > maxLockPackages {
		return fmt.Errorf("%d packages, more than any real lock", len(lk.Packages))
	}
	m, err := newMarkerEnv(t, &c.passed)
	if err != nil {
		return err
	}
	byName := map[string][]int{}
	var roots []int
	for i, p := range lk.Packages {
		n := pypi.NormalizeProject(p.Name)
		byName[n] = append(byName[n], i)
		if _, ok := p.Source["virtual"]; ok {
			roots = append(roots, i)
		} else if _, ok := p.Source["editable"]; ok {
			roots = append(roots, i)
		}
	}
	forked := func(i int) bool {
		rm := lk.Packages[i].ResolutionMarkers
		if len(rm) == 0 {
			return true
		}
		for _, mk := range rm {
			if m.applies(mk, lk.Packages[i].Name+" "+lk.Packages[i].Version) {
				return true
			}
		}
		return false
	}
	if len(roots) == 0 {
		for i, p := range lk.Packages {
			if forked(i) {
				if err := c.add(p.Name, p.Version, "uv.lock"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	type visit struct {
		i     int
		extra string
	}
	seen := map[visit]bool{}
	queue := []visit{}
	for _, r := range roots {
		queue = append(queue, visit{r, ""})
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if seen[v] {
			continue
		}
		seen[v] = true
		p := lk.Packages[v.i]
		var deps []uvDep
		if v.extra == "" {
			deps = p.Dependencies
			if _, root := p.Source["virtual"]; root || p.Source["editable"] != nil {
				deps = append(deps, p.Dev["dev"]...) // uv sync's default group
			}
			if err := c.add(p.Name, p.Version, "uv.lock"); err != nil {
				return err
			}
		} else {
			deps = p.Optional[v.extra]
		}
		for _, d := range deps {
			if !m.applies(d.Marker, p.Name+" → "+d.Name) {
				continue
			}
			i, err := pick(lk.Packages, byName[pypi.NormalizeProject(d.Name)], d, forked)
			if err != nil {
				return err
			}
			if i < 0 {
				continue
			}
			queue = append(queue, visit{i, ""})
			for _, e := range d.Extra {
				queue = append(queue, visit{i, pypi.NormalizeProject(e)})
			}
		}
	}
	return nil
}

// pick is the package a dependency means: the one of its name (and
// version, when uv wrote one because there are several), or the one whose
// resolution markers hold; -1 when the lock has none.
func pick(pkgs []uvPackage, cands []int, d uvDep, forked func(int) bool) (int, error) {
	var fit []int
	for _, i := range cands {
		if d.Version != "" && pkgs[i].Version != d.Version {
			continue
		}
		fit = append(fit, i)
	}
	if len(fit) > 1 {
		var held []int
		for _, i := range fit {
			if forked(i) {
				held = append(held, i)
			}
		}
		fit = held
	}
	switch len(fit) {
	case 0:
		return -1, nil
	case 1:
		return fit[0], nil
	}
	return -1, fmt.Errorf("%s: several versions could apply on this target and the lock does not say which", d.Name)
}

// oneLine keeps the first line of a decoder's error (BurntSushi/toml
// quotes the offending line below it).
func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

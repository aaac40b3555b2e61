package envpins

import (
	"fmt"
	"path"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// A pylock.toml (PEP 751): the packages to install, each with the marker
// under which it is installed.
type pylock struct {
	LockVersion string          `toml:"lock-version"`
	Packages    []pylockPackage `toml:"packages"`
}

type pylockPackage struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	Marker  string `toml:"marker"`
	Wheels  []struct {
		Name string `toml:"name"`
		URL  string `toml:"url"`
	} `toml:"wheels"`
}

// readPylock collects the NVIDIA packages whose markers hold on the
// target. A package without a version (allowed for a file or VCS source)
// takes the version its wheel's file name states.
func readPylock(data []byte, c *collector, t Target) error {
	var lk pylock
	if _, err := toml.Decode(string(data), &lk); err != nil {
		return fmt.Errorf("not a pylock.toml: %v", oneLine(err))
	}
	if major, _, _ := strings.Cut(lk.LockVersion, "."); major != "1" {
		return fmt.Errorf("lock-version %q; cudaenv reads PEP 751 lock-version 1.x", lk.LockVersion)
	}
	if len(lk.Packages) > maxLockPackages {
		return fmt.Errorf("%d packages, more than any real lock", len(lk.Packages))
	}
	m, err := newMarkerEnv(t, &c.passed)
	if err != nil {
		return err
	}
	for _, p := range lk.Packages {
		if !m.applies(p.Marker, p.Name) {
			continue
		}
		v := p.Version
		if v == "" && len(p.Wheels) > 0 {
			v = wheelVersion(p.Wheels[0].Name, p.Wheels[0].URL)
		}
		if v == "" {
			if isNVIDIA(pypi.NormalizeProject(p.Name)) {
				c.passed = append(c.passed, fmt.Sprintf("%s: no version, and no wheel that names one", p.Name))
			}
			continue
		}
		if err := c.add(p.Name, v, "pylock.toml"); err != nil {
			return err
		}
	}
	return nil
}

// wheelVersion is the version a wheel's file name states
// (name-version-python-abi-platform.whl), or "".
func wheelVersion(name, url string) string {
	if name == "" {
		name = path.Base(url)
	}
	parts := strings.Split(strings.TrimSuffix(name, ".whl"), "-")
	if !strings.HasSuffix(name, ".whl") || len(parts) < 5 {
		return ""
	}
	return parts[1]
}

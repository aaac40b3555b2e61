//go:build !windows

package dirs

import (
	"path/filepath"
	"runtime"
	"strings"
)

// baseDirs are the XDG data, config and cache homes, computed as
// github.com/adrg/xdg does on Unix and macOS (which Windows still uses),
// but from env and only when asked: xdg works out every folder it knows
// and reads user-dirs.dirs at package init, in every shim call.
func baseDirs(env Lookup) (data, config, cache string) {
	home, _ := env("HOME")
	if home == "" {
		home = "/"
	}
	// A variable counts when it is absolute after ~ or $HOME at its
	// start is expanded; else the default does, if it is absolute.
	pick := func(name, def string) string {
		v, _ := env(name)
		for _, p := range []string{v, def} {
			if rest, ok := strings.CutPrefix(p, "~"); ok {
				p = filepath.Join(home, rest)
			} else if rest, ok := strings.CutPrefix(p, "$HOME"); ok {
				p = filepath.Join(home, rest)
			}
			if p != "" && filepath.IsAbs(p) {
				return p
			}
		}
		return ""
	}
	if runtime.GOOS == "darwin" {
		support := filepath.Join(home, "Library", "Application Support")
		return pick("XDG_DATA_HOME", support), pick("XDG_CONFIG_HOME", support), pick("XDG_CACHE_HOME", filepath.Join(home, "Library", "Caches"))
	}
	return pick("XDG_DATA_HOME", filepath.Join(home, ".local", "share")),
		pick("XDG_CONFIG_HOME", filepath.Join(home, ".config")),
		pick("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
}

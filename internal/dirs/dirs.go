// Package dirs decides where cudaenv keeps its store, its global default and
// its caches, from CUDAENV_ROOT or the XDG base directories.
package dirs

import (
	"os"
	"path/filepath"

	"github.com/adrg/xdg"

	"github.com/cudaenv/cudaenv/internal/config"
)

// Dirs is the on-disk layout.
type Dirs struct {
	Root   string // the store: cuda/, cudnn/, shims/
	Config string // holds the global default file
	Cache  string // downloads, the release index, hook stamps
	// System is the shared system store (an admin's /opt/cudaenv on NFS
	// or Lustre), read beside Root and never written by users; "" for
	// none. It is always absolute.
	System string
}

// Lookup reads one environment variable.
type Lookup func(string) (string, bool)

// FromEnv picks the layout. CUDAENV_ROOT moves the store; CUDAENV_CONFIG_DIR
// and CUDAENV_CACHE_DIR move the others. Everything else comes from XDG
// (~/.local/share/cudaenv, %LOCALAPPDATA%\cudaenv on Windows).
func FromEnv(env Lookup) Dirs {
	d := Dirs{
		Root:   filepath.Join(xdg.DataHome, "cudaenv"),
		Config: filepath.Join(xdg.ConfigHome, "cudaenv"),
		Cache:  filepath.Join(xdg.CacheHome, "cudaenv"),
	}
	if v, ok := env("CUDAENV_ROOT"); ok && v != "" {
		d.Root = v
	}
	if v, ok := env("CUDAENV_CONFIG_DIR"); ok && v != "" {
		d.Config = v
	}
	if v, ok := env("CUDAENV_CACHE_DIR"); ok && v != "" {
		d.Cache = v
	}
	d.System = systemRoot(env, d.Config)
	return d
}

// systemRoot is CUDAENV_SYSTEM_ROOT, else system_root in the settings
// file. A relative folder would name another store in every directory,
// so it counts as none (the --system commands say so).
func systemRoot(env Lookup, configDir string) string {
	v, ok := env("CUDAENV_SYSTEM_ROOT")
	if !ok || v == "" {
		data, err := os.ReadFile(filepath.Join(configDir, config.FileName))
		if err != nil {
			return ""
		}
		v, _ = config.Lookup(data, "system_root")
	}
	if v == "" || !filepath.IsAbs(v) {
		return ""
	}
	return filepath.Clean(v)
}

// CUDA is the folder of installed toolkits, one per full version.
func (d Dirs) CUDA() string { return filepath.Join(d.Root, "cuda") }

// Cudnn is the folder of installed cuDNN builds, one per version and CUDA major.
func (d Dirs) Cudnn() string { return filepath.Join(d.Root, "cudnn") }

// Shims is the folder of shim executables.
func (d Dirs) Shims() string { return filepath.Join(d.Root, "shims") }

// Staging holds half-built installs; nothing in it is ever selected.
func (d Dirs) Staging() string { return filepath.Join(d.Root, ".staging") }

// Locks holds per-version install locks.
func (d Dirs) Locks() string { return filepath.Join(d.Root, ".locks") }

// GlobalFile is the global default, same grammar as .cuda-version.
func (d Dirs) GlobalFile() string { return filepath.Join(d.Config, "version") }

// Stamps holds the reference files the shell hooks compare mtimes against.
func (d Dirs) Stamps() string { return filepath.Join(d.Cache, "stamps") }

// Downloads holds verified archives by sha256.
func (d Dirs) Downloads() string { return d.Cache }

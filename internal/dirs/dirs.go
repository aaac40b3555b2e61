// Package dirs decides where cudaenv keeps its store, its global default and
// its caches, from CUDAENV_ROOT or the XDG base directories.
package dirs

import (
	"path/filepath"

	"github.com/adrg/xdg"
)

// Dirs is the on-disk layout.
type Dirs struct {
	Root   string // the store: cuda/, cudnn/, shims/
	Config string // holds the global default file
	Cache  string // downloads, the release index, hook stamps
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
	return d
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

package main

import (
	"path/filepath"
	"strings"

	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/envpins"
	"github.com/cudaenv/cudaenv/internal/install"
)

// activateAll prints the one line that activates everything an install
// --for put in the store, the toolkit and every library together. When
// the framework's environment already loads the same libraries from its
// own nvidia-* wheels (the active venv or conda prefix, or the one --for
// names), the line keeps the toolkit's off LD_LIBRARY_PATH, and says why:
// the wheels are what the framework loads, and the toolkit is there to
// build against them.
func activateAll(e *env, results []install.Result, forPaths []string) {
	var uses []activation
	for _, r := range results {
		uses = append(uses, activation{use: r.Use, library: r.Entry.Kind.Library()})
	}
	activateLine(e, "activate it with", uses, forPaths)
}

// activation is what `cudaenv use` takes to select one installed (or, in
// a dry run, planned) version: "13.2.2", or "13 cudnn@9.26.0.51".
type activation struct {
	use     string
	library bool
}

// activateLine prints "<lead>: cudaenv use …" for every version in uses,
// the toolkit first, as activateAll says it.
func activateLine(e *env, lead string, uses []activation, forPaths []string) {
	var words []string
	for _, u := range uses {
		f := strings.Fields(u.use)
		switch {
		case len(f) == 0:
		case u.library && len(words) > 0:
			words = append(words, f[len(f)-1]) // "cudnn@9.1.0.70"; the CUDA is named already
		case !u.library:
			words = append([]string{f[0]}, words...)
		default:
			words = append(words, f...)
		}
	}
	if len(words) == 0 {
		return
	}
	where, fw, n := frameworkWheels(e, forPaths)
	if n == 0 {
		sayf(e.stdout, "%s: cudaenv use %s\n", lead, strings.Join(words, " "))
		return
	}
	sayf(e.stdout, "%s: cudaenv use --libraries=off %s\n", lead, strings.Join(words, " "))
	sayf(e.stdout, "  libraries=off: %s in %s loads its CUDA libraries from its own nvidia-* wheels (%s); the toolkit is for building against them (nvcc, headers, CMake), not for putting its copies in front of them\n", fw, where, plural(n, "library file"))
}

// forPaths are the --for arguments that name a file or folder.
func forPaths(fors []string) []string {
	var out []string
	for _, f := range fors {
		if envpins.IsPath(f) {
			out = append(out, f)
		}
	}
	return out
}

// frameworkWheels finds the first of the Python environments named by
// --for (a venv or conda prefix), VIRTUAL_ENV and CONDA_PREFIX whose
// nvidia-* wheels install libraries, and the framework that requires them.
func frameworkWheels(e *env, forPaths []string) (where, framework string, libraries int) {
	h := detect.Host{Env: e.vars, GOOS: e.goos}
	if e.goos == "windows" {
		return "", "", 0 // DLLs are found without LD_LIBRARY_PATH
	}
	prefixes := append([]string(nil), forPaths...)
	for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := e.vars[k]; p != "" {
			prefixes = append(prefixes, p)
		}
	}
	for _, p := range prefixes {
		if !filepath.IsAbs(p) {
			p = filepath.Join(e.cwd, p)
		}
		libs := h.WheelLibs(h.SitePackages(p))
		if len(libs) == 0 {
			continue
		}
		fw := "the environment"
		for _, l := range libs {
			if l.Framework != "" {
				fw = l.Framework
				break
			}
		}
		return p, fw, len(libs)
	}
	return "", "", 0
}

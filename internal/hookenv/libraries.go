package hookenv

import (
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/doctor"
	"github.com/cudaenv/cudaenv/internal/envdiff"
)

// LibDirs are the folders activation puts on LD_LIBRARY_PATH for r (none
// with libraries=off), each named after its entry ("CUDA 12.1.1"), the
// toolkit's with its receipt's component versions, read only when asked
// (ResolveFast's entries have none decoded; a toolkit from NVIDIA's
// wheels names no version in its library files, so they are asked when
// one collides with a wheel's).
func LibDirs(r activate.Resolved, goos string) []doctor.LibDir {
	var out []doctor.LibDir
	for _, d := range activate.Want(r, goos).Prepend["LD_LIBRARY_PATH"] {
		ld := doctor.LibDir{Dir: d, Components: map[string]string{}}
		under := func(root string) bool { return d == root || strings.HasPrefix(d, root+string(filepath.Separator)) }
		if e := r.CUDA; e != nil && under(e.Path) {
			ld.What = "CUDA " + e.Version.String()
			ld.Receipt = sync.OnceValue(func() map[string]string { return activate.ReceiptComponents(e) })
		} else if e := r.Cudnn; e != nil && under(e.Path) {
			ld.What = "cuDNN " + e.Version.String()
			ld.Components["cudnn"] = e.Version.String()
			for _, c := range e.Receipt.Components {
				ld.Components[c.ID] = c.Version
			}
		} else {
			for _, t := range activate.OtherLibraries() {
				if e := r.Libs[t]; e != nil && under(e.Path) {
					ld.What = t.Title() + " " + e.Version.String()
					ld.Components[string(t)] = e.Version.String()
					break
				}
			}
		}
		out = append(out, ld)
	}
	return out
}

// warnLibraries prints one line when the toolkit that becomes active
// puts a library on LD_LIBRARY_PATH that is older than the active venv's
// or conda environment's nvidia-* wheel of the same soname. It starts no
// process (no python3 is asked: only VIRTUAL_ENV and CONDA_PREFIX count)
// and, unless a soname collides, reads nothing but a few folders.
func warnLibraries(env envdiff.Env, r activate.Resolved, goos string, stderr io.Writer) {
	if goos == "windows" || r.Selection.Options.NoLibraries {
		return
	}
	h := detect.Host{Env: env, GOOS: goos}
	var sites []string
	for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := env[k]; p != "" {
			sites = append(sites, h.SitePackages(p)...)
		}
	}
	if len(sites) == 0 {
		return
	}
	// A venv on a file system that hangs must not hang the prompt: past
	// the deadline the look is abandoned (doctor says more).
	done := make(chan string, 1)
	go func() { done <- doctor.LibrariesWarning(h, sites, LibDirs(r, goos)) }()
	select {
	case w := <-done:
		if w != "" {
			Warn(stderr, w)
		}
	case <-time.After(librariesDeadline):
	}
}

// librariesDeadline bounds the hook's look at the wheels.
var librariesDeadline = 250 * time.Millisecond

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/doctor"
	"github.com/cudaenv/cudaenv/internal/hookenv"
)

// librariesCheck is doctor's libraries check: the nvidia-* wheels of the
// Python environment in use against what LD_LIBRARY_PATH loads first.
func librariesCheck(ctx context.Context, e *env, h detect.Host, r activate.Resolved, in doctor.Inputs) doctor.Check {
	lib := doctor.Libraries{GOOS: e.goos, NoLibraries: r.Selection.Options.NoLibraries, InstalledCUDA: in.InstalledCUDA}
	if in.Torch != nil {
		lib.TorchCUDA = in.Torch.CUDA
	}
	var words []string
	for _, sp := range r.Selection.Specs {
		words = append(words, sp.String())
	}
	lib.Selected = strings.Join(words, " ")
	// site-packages on a file system that hangs must not hang doctor.
	type found struct {
		python string
		wheels []detect.WheelLib
	}
	done := make(chan found, 1)
	go func() {
		p, w := pythonWheels(h)
		done <- found{p, w}
	}()
	select {
	case f := <-done:
		lib.Python, lib.Wheels = f.python, f.wheels
	case <-time.After(wheelsDeadline):
		lib.ReadErr = fmt.Sprintf("the Python environment's wheels were not read within %s", wheelsDeadline)
	}
	lib.Dirs = hookenv.LibDirs(r, e.goos)
	for _, d := range detect.SplitList(e.vars["LD_LIBRARY_PATH"], e.goos) {
		if !hasLibDir(lib.Dirs, d) {
			lib.Dirs = append(lib.Dirs, doctor.LibDir{Dir: d})
		}
	}
	return doctor.CheckLibraries(doctor.GatherLibraries(h, lib))
}

// wheelsDeadline bounds doctor's reading of site-packages.
const wheelsDeadline = 10 * time.Second

// pythonWheels reads the wheels of the environment in use: VIRTUAL_ENV,
// else CONDA_PREFIX, from its folder (no Python is run). With neither
// active there are none: doctor asks Python nothing then
// (doctor.PythonEnvActive says why).
func pythonWheels(h detect.Host) (string, []detect.WheelLib) {
	for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := h.Env[k]; p != "" {
			return p, h.WheelLibs(h.SitePackages(p))
		}
	}
	return "", nil
}

func hasLibDir(dirs []doctor.LibDir, d string) bool {
	for _, x := range dirs {
		if filepath.Clean(x.Dir) == filepath.Clean(d) {
			return true
		}
	}
	return false
}

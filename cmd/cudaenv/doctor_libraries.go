package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cudaenv/cudaenv/compat"
	"github.com/cudaenv/cudaenv/internal/activate"
	"github.com/cudaenv/cudaenv/internal/cudabin"
	"github.com/cudaenv/cudaenv/internal/detect"
	"github.com/cudaenv/cudaenv/internal/doctor"
	"github.com/cudaenv/cudaenv/internal/hookenv"
)

// librariesCheck is doctor's libraries check: the nvidia-* wheels of the
// Python environment in use against what LD_LIBRARY_PATH loads first.
func librariesCheck(ctx context.Context, e *env, h detect.Host, r activate.Resolved, in doctor.Inputs) (doctor.Check, []doctor.Framework) {
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
	lib.Dirs = hookenv.LibDirs(r, e.goos)
	for _, d := range detect.SplitList(e.vars["LD_LIBRARY_PATH"], e.goos) {
		if !hasLibDir(lib.Dirs, d) {
			lib.Dirs = append(lib.Dirs, doctor.LibDir{Dir: d})
		}
	}
	type found struct {
		python string
		wheels []detect.WheelLib
		fws    []doctor.Framework
	}
	done := make(chan found, 1)
	ctx, cancel := context.WithTimeout(ctx, wheelsDeadline)
	defer cancel()
	go func() {
		p, sites, w := pythonWheels(ctx, h, in.Torch)
		done <- found{p, w, frameworks(ctx, e, sites, lib.Dirs, in)}
	}()
	select {
	case f := <-done:
		lib.Python, lib.Wheels, lib.Frameworks = f.python, f.wheels, f.fws
	case <-time.After(wheelsDeadline):
		lib.ReadErr = fmt.Sprintf("the Python environment's wheels were not read within %s", wheelsDeadline)
	}
	return doctor.CheckLibraries(doctor.GatherLibraries(h, lib)), lib.Frameworks
}

// frameworks reads the installed frameworks' libraries (cudaenv
// inspect): their kernels judged for each GPU, and what importing them
// loads with the selection's LD_LIBRARY_PATH.
func frameworks(ctx context.Context, e *env, sites []string, dirs []doctor.LibDir, in doctor.Inputs) []doctor.Framework {
	if e.goos == "windows" || len(sites) == 0 {
		return nil
	}
	opt := cudabin.Options{GOOS: e.goos, Driver: in.Driver.Version, Cache: readLoaderCache(ldCacheFile)}
	for _, d := range dirs {
		opt.LibraryPath = append(opt.LibraryPath, d.Dir)
	}
	var out []doctor.Framework
	for _, fw := range cudabin.Frameworks(ctx, sites, opt) {
		f := doctor.Framework{Name: fw.Name, Version: fw.Version, Modeled: fw.Modeled}
		if k := fw.Kernels; k != nil {
			f.KernelFile, f.Carries = filepath.Base(k.Path), cudabin.Carries(*k)
			for _, g := range in.GPUs {
				cc, ok := compat.ParseCapability(g.ComputeCap)
				if !ok {
					continue
				}
				v := cudabin.Judge(*k, cc, in.Driver.Version, e.goos)
				if v == nil {
					continue
				}
				f.Verdicts = append(f.Verdicts, doctor.KernelVerdict{GPU: g.Name, SM: compat.SM(cc), Status: v.Status, Message: v.Message})
			}
		}
		for _, n := range fw.Import.Needs {
			f.Loaded = append(f.Loaded, doctor.LoadedLib{Name: n.Name, Path: n.Path, Via: n.Via, By: n.By})
		}
		for _, u := range fw.Import.Undefined {
			f.Undefined = append(f.Undefined, doctor.MissingSymbol{Symbol: u.Symbol, By: u.By, Library: u.Library, Picked: u.Picked})
		}
		out = append(out, f)
	}
	return out
}

// wheelsDeadline bounds doctor's reading of site-packages.
const wheelsDeadline = 10 * time.Second

// pythonWheels reads the wheels of the environment in use: VIRTUAL_ENV,
// else CONDA_PREFIX, from its folder (no Python is run). With neither
// active there are none: doctor asks Python nothing then
// (doctor.PythonEnvActive says why).
func pythonWheels(ctx context.Context, h detect.Host, torch *detect.Torch) (string, []string, []detect.WheelLib) {
	for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := h.Env[k]; p != "" {
			sites := h.SitePackages(p)
			return p, sites, h.WheelLibs(sites)
		}
	}
	return "", nil, nil
}

func hasLibDir(dirs []doctor.LibDir, d string) bool {
	for _, x := range dirs {
		if filepath.Clean(x.Dir) == filepath.Clean(d) {
			return true
		}
	}
	return false
}

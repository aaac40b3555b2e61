package doctor

import (
	"context"
	"sync"

	"github.com/cudaenv/cudaenv/internal/detect"
)

// Selection is what cudaenv selected, before anything is detected.
type Selection struct {
	Toolkit Toolkit // Version, Source, Dir and HasReceipt; Installed and Facts are filled in
	Cudnn   Cudnn   // Version may be left empty to read it from Dir
	// OwnBinDirs are the directories whose nvcc counts as the selected
	// toolkit's (its bin and cudaenv's shims); empty means Toolkit.Dir/bin.
	OwnBinDirs []string
	// InstalledCUDA are the installed toolkit versions, for hints that
	// name one to switch to.
	InstalledCUDA []string
	// ShimsDir is cudaenv's shims folder ("" for none).
	ShimsDir string
}

// NoPythonEnv is why doctor has no PyTorch to judge when no virtualenv
// or conda environment is active.
const NoPythonEnv = "no virtualenv or conda environment is active; doctor asks Python only in one: activate it, or run doctor with uv run"

// PythonEnvActive reports whether a virtualenv (VIRTUAL_ENV: venv, uv,
// pyenv-virtualenv, poetry) or a conda environment (CONDA_PREFIX) is
// active. Only then does doctor run Python: the python3 on PATH is
// otherwise often a pyenv or conda shim, a chain of shell scripts that
// takes half a second or more on a busy machine, for a Python the user
// may not mean.
func PythonEnvActive(env map[string]string) bool {
	return env["VIRTUAL_ENV"] != "" || env["CONDA_PREFIX"] != ""
}

// Gather detects everything Run judges, through h (whose environment, files
// and command runner are injected), for the selection sel. The probes are
// independent and run at once: each a command (nvcc, the compilers,
// nvidia-smi, cmake, Python) or file reads, so doctor takes about as long
// as the slowest, not their sum.
func Gather(ctx context.Context, h detect.Host, sel Selection) Inputs {
	in := Inputs{
		GOOS:       h.GOOS,
		Toolkit:    sel.Toolkit,
		Cudnn:      sel.Cudnn,
		OwnBinDirs: sel.OwnBinDirs,
		Env:        h.Env,

		InstalledCUDA: sel.InstalledCUDA,
		ShimsDir:      sel.ShimsDir,
	}
	in.LDLibraryPath = detect.SplitList(h.Env["LD_LIBRARY_PATH"], h.GOOS)
	in.NVCCOnPath = h.LookPathAll("nvcc")
	var wg sync.WaitGroup
	// Each probe writes fields of in no other probe touches.
	if in.Toolkit.Dir != "" {
		wg.Go(func() {
			facts, err := h.Toolkit(ctx, in.Toolkit.Dir)
			in.Toolkit.Installed = err == nil
			in.Toolkit.Facts = facts
		})
	}
	if in.Cudnn.Version == "" && in.Cudnn.Dir != "" {
		wg.Go(func() { in.Cudnn.Version, _ = h.CudnnVersion(in.Cudnn.Dir) })
	}
	wg.Go(func() { in.Driver = h.Driver(ctx) })
	wg.Go(func() {
		if gpus, err := h.GPUs(ctx); err != nil {
			in.GPUError = err.Error()
		} else {
			in.GPUs = gpus
		}
	})
	wg.Go(func() { in.Compilers = h.Compilers(ctx) })
	if PythonEnvActive(h.Env) {
		wg.Go(func() {
			if t, found, err := h.Torch(ctx); found {
				in.Torch = &t
			} else if err != nil {
				in.TorchNote = err.Error()
			}
		})
	} else {
		in.TorchNote = NoPythonEnv
	}
	if cm := h.LookPathAll("cmake"); len(cm) > 0 && in.Toolkit.Version != "" {
		in.CMake.Path = cm[0]
		if h.Run != nil {
			wg.Go(func() {
				out, _ := h.Run(ctx, cm[0], "--version")
				in.CMake.Version = ParseCMakeVersion(out)
			})
		}
	}
	wg.Go(func() { in.CudnnOnLDPath = h.DirsWithFile(in.LDLibraryPath, "libcudnn.so") })
	wg.Wait()
	return in
}

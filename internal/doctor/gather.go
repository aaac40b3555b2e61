package doctor

import (
	"context"

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

// Gather detects everything Run judges, through h (whose environment, files
// and command runner are injected), for the selection sel.
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
	if in.Toolkit.Dir != "" {
		facts, err := h.Toolkit(ctx, in.Toolkit.Dir)
		in.Toolkit.Installed = err == nil
		in.Toolkit.Facts = facts
	}
	if in.Cudnn.Version == "" && in.Cudnn.Dir != "" {
		in.Cudnn.Version, _ = h.CudnnVersion(in.Cudnn.Dir)
	}
	in.Driver = h.Driver(ctx)
	if gpus, err := h.GPUs(ctx); err != nil {
		in.GPUError = err.Error()
	} else {
		in.GPUs = gpus
	}
	in.Compilers = h.Compilers(ctx)
	if t, found, err := h.Torch(ctx); found {
		in.Torch = &t
	} else if err != nil {
		in.TorchNote = err.Error()
	}
	in.LDLibraryPath = detect.SplitList(h.Env["LD_LIBRARY_PATH"], h.GOOS)
	in.NVCCOnPath = h.LookPathAll("nvcc")
	if cm := h.LookPathAll("cmake"); len(cm) > 0 && in.Toolkit.Version != "" {
		in.CMake.Path = cm[0]
		if h.Run != nil {
			out, _ := h.Run(ctx, cm[0], "--version")
			in.CMake.Version = ParseCMakeVersion(out)
		}
	}
	in.CudnnOnLDPath = h.DirsWithFile(in.LDLibraryPath, "libcudnn.so")
	return in
}

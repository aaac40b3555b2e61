package doctor

import (
	"fmt"
	"path/filepath"
)

// shimCUDAHome warns when CUDA_HOME (and CUDA_PATH) is unset and the nvcc
// PATH finds first is cudaenv's shim: PyTorch's cpp_extension, CuPy and
// others then take CUDA_HOME as the folder above nvcc's, which for a shim
// is cudaenv's root, not a toolkit, and the build fails. No layout of the
// shims folder fixes that: the folder above it is one fixed place, while
// the toolkit a shim runs depends on the directory. The shell hook and
// cudaenv exec set CUDA_HOME.
func shimCUDAHome(in Inputs) (msg, hint string) {
	if in.ShimsDir == "" || len(in.NVCCOnPath) == 0 || in.Env["CUDA_HOME"] != "" || in.Env["CUDA_PATH"] != "" {
		return "", ""
	}
	nvcc := in.NVCCOnPath[0]
	if filepath.Clean(filepath.Dir(nvcc)) != filepath.Clean(in.ShimsDir) {
		return "", ""
	}
	msg = fmt.Sprintf("CUDA_HOME is not set and the nvcc on PATH is cudaenv's shim (%s): PyTorch's cpp_extension, CuPy and other tools that take CUDA_HOME from nvcc's folder would use %s, which is not a toolkit", nvcc, filepath.Dir(filepath.Dir(nvcc)))
	hint = "for Python builds, activate with the shell hook (cudaenv init) or run them with cudaenv exec -- COMMAND, which set CUDA_HOME"
	return msg, hint
}

// shimsOnly says, when PATH reaches the toolkit through cudaenv's shims
// alone (the first nvcc is a shim, and none of the selection's library
// folders is on LD_LIBRARY_PATH: no hook, no cudaenv exec), that what
// nvcc builds does not find CUDA's libraries when run: a shim sets
// LD_LIBRARY_PATH for the toolkit's own command only, and nvcc links
// without an rpath. The first thing an IDE's Run button or a make test
// target hits (libcublas.so.13: cannot open shared object file).
func shimsOnly(in Inputs) (msg, hint string) {
	if in.goos() == "windows" || in.ShimsDir == "" || len(in.NVCCOnPath) == 0 || len(in.Toolkit.LibDirs) == 0 {
		return "", ""
	}
	if filepath.Clean(filepath.Dir(in.NVCCOnPath[0])) != filepath.Clean(in.ShimsDir) {
		return "", ""
	}
	for _, d := range in.Toolkit.LibDirs {
		if contains(in.LDLibraryPath, d) {
			return "", ""
		}
	}
	msg = "only the shims are on PATH: programs built with this nvcc do not find CUDA's libraries (libcudart, libcublas) when run, since LD_LIBRARY_PATH lacks them"
	hint = fmt.Sprintf("run what you build with cudaenv exec ./PROGRAM (or cudaenv exec -- make test), activate with the shell hook (cudaenv init), or link with an rpath into the store: nvcc ... -Xlinker -rpath=%s", in.Toolkit.LibDirs[0])
	return msg, hint
}

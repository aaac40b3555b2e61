// Package venvtest holds what tests lay into a fake Python environment:
// torch/__init__.py's _load_global_deps in the shapes PyTorch's releases
// have written it, abridged to what says which of its wheels' libraries
// torch loads by path before torch._C, and when.
package venvtest

import "strings"

// TorchInit25 is PyTorch 2.5's shape (and before): nothing is preloaded
// while its global deps library loads; when it fails to, every library of
// its dict.
const TorchInit25 = `
def _load_global_deps() -> None:
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
    except OSError as err:
        cuda_libs: _Dict[str, str] = {
            "cublas": "libcublas.so.*[0-9]",
            "nvjitlink": "libnvJitLink.so.*[0-9]",
        }
        for lib_folder, lib_name in cuda_libs.items():
            _preload_cuda_deps(lib_folder, lib_name)
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
`

// The gates of 2.6 to 2.8 (the runtime from its wheel must be mapped) and
// of 2.9 on (any runtime).
const (
	Gate26 = "nvidia/cuda_runtime/lib/libcudart.so"
	Gate29 = "libcudart.so"
)

// TorchInitGated is the shape of PyTorch 2.6 to 2.9: once its global deps
// library loaded, nvrtc and nvJitLink by path, if /proc/self/maps then has
// gate.
func TorchInitGated(gate string) string {
	return strings.Replace(`
def _load_global_deps() -> None:
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
        try:
            with open("/proc/self/maps") as f:
                _maps = f.read()
            if "GATE" not in _maps:
                return
            _preload_cuda_deps("cuda_nvrtc", "libnvrtc.so.*[0-9]")
            _preload_cuda_deps("nvjitlink", "libnvJitLink.so.*[0-9]")
        except Exception:
            pass
    except OSError as err:
        cuda_libs: _Dict[str, str] = {
            "cublas": "libcublas.so.*[0-9]",
            "nvjitlink": "libnvJitLink.so.*[0-9]",
        }
        for lib_folder, lib_name in cuda_libs.items():
            _preload_cuda_deps(lib_folder, lib_name)
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
`, "GATE", gate, 1)
}

// TorchInit210 is the shape of PyTorch 2.10 on: every library of its list
// by path once its global deps library loaded with any runtime.
const TorchInit210 = `
def _preload_cuda_deps(err: OSError | None = None) -> None:
    cuda_libs: list[tuple[str, str]] = [
        ("cublas", "libcublasLt.so.*[0-9]"),
        ("cublas", "libcublas.so.*[0-9]"),
        ("nvjitlink", "libnvJitLink.so.*[0-9]"),
    ]

def _load_global_deps() -> None:
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
        try:
            with open("/proc/self/maps") as f:
                _maps = f.read()

            if "libcudart.so" not in _maps:
                return
            _preload_cuda_deps()
        except Exception:
            pass
    except OSError as err:
        _preload_cuda_deps(err)
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
`

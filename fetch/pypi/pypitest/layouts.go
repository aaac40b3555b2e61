package pypitest

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/cudaenv/cudaenv/fetch/pypi"
)

// file is one entry of a generated wheel, relative to its package root
// (nvidia/cu13/ or nvidia/<pkg>/).
type file struct {
	name string
	mode fs.FileMode
	body string
}

// packageDirs are the CUDA 11/12 package folders under nvidia/, as in the
// real wheels (see ../testdata/real_layouts.txt).
var packageDirs = map[string]string{
	"cuda_nvcc": "cuda_nvcc", "cuda_cudart": "cuda_runtime", "cuda_nvrtc": "cuda_nvrtc",
	"cuda_cupti": "cuda_cupti", "cuda_cccl": "cuda_cccl", "cccl": "cuda_cccl",
	"libcublas": "cublas", "libnvjitlink": "nvjitlink", "libcufft": "cufft", "libcurand": "curand",
	"libcusolver": "cusolver", "libcusparse": "cusparse", "cuda_nvtx": "nvtx", "libcufile": "cufile",
	"libnvfatbin": "nvfatbin", "libnpp": "npp", "libnvjpeg": "nvjpeg", "cuda_sanitizer_api": "cuda_sanitizer_api",
	"cuda_opencl": "cuda_opencl", "cuda_cuxxfilt": "cuda_cuxxfilt", "cuda_nvml_dev": "nvml",
	"cuda_profiler_api": "cuda_profiler_api", "cudnn": "cudnn",
	"nccl": "nccl", "cusparselt": "cusparselt", "cutensor": "cutensor", "cudss": "cudss", "nvshmem": "nvshmem",
}

// perPackage reports whether a library's wheels keep their own package
// folder (nvidia/cudnn/, nvidia/nccl/) for every CUDA major, where the
// toolkit's CUDA 13 wheels share nvidia/cu13/.
func perPackage(component string) bool {
	switch component {
	case "cudnn", "nccl", "cusparselt", "cutensor", "cudss", "nvshmem":
		return true
	}
	return false
}

// libraryRoot is the folder a library's real wheel keeps everything in,
// where it is not nvidia/<pkg>/ with Python markers (as on PyPI, see
// ../layout.go): cuDSS uses nvidia/cu12/ and nvidia/cu13/, cuSPARSELt
// nvidia/cu13/ from CUDA 13 on, cuTENSOR (cutensor-cu12, no nvidia-
// prefix) cutensor/, NVSHMEM nvidia/nvshmem/; none has __init__.py.
func libraryRoot(component string, cudaMajor int) (string, bool) {
	switch {
	case component == "cudss", component == "cusparselt" && cudaMajor >= 13:
		return "nvidia/cu" + fmt.Sprint(cudaMajor) + "/", true
	case component == "cutensor":
		return "cutensor/", true
	case component == "nvshmem":
		return "nvidia/nvshmem/", true
	}
	return "", false
}

// libNames are the library base names of the library components.
var libNames = map[string]string{
	"libcublas": "cublas", "libnvjitlink": "nvJitLink", "libcufft": "cufft", "libcurand": "curand",
	"libcusolver": "cusolver", "libcusparse": "cusparse", "libcufile": "cufile", "libnvfatbin": "nvfatbin",
	"libnpp": "nppc", "libnvjpeg": "nvjpeg", "cuda_nvrtc": "nvrtc", "cuda_cupti": "cupti",
	"cuda_nvtx": "nvToolsExt", "cuda_opencl": "OpenCL", "cuda_sanitizer_api": "sanitizer-public",
	"libnvptxcompiler": "nvptxcompiler_static", "cuda_culibos": "culibos", "cudnn": "cudnn",
	"cusparselt": "cusparseLt", "nvshmem": "nvshmem_host",
}

// NvccVersionLine is what the generated nvcc prints last for --version, as
// the real one does: "Cuda compilation tools, release 13.0, V13.0.48".
func NvccVersionLine(version string) string {
	parts := strings.Split(version, ".")
	release := version
	if len(parts) >= 2 {
		release = parts[0] + "." + parts[1]
	}
	return fmt.Sprintf("Cuda compilation tools, release %s, V%s", release, version)
}

func script(lines ...string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "echo '%s'\n", l)
	}
	return b.String()
}

// nvccProfile is the nvcc.profile of the real CUDA 13.0 wheel.
const nvccProfile = `
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)
SYSTEM_INCLUDES +=  "-isystem" "$(TOP)/$(_TARGET_DIR_)/include/cccl" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
`

// cudaH and nvmlH are a few declarations shaped like NVIDIA's cuda.h and
// nvml.h (a versioned name by #define included), enough for link stubs.
const (
	cudaH = `#define cuCtxCreate cuCtxCreate_v4
#ifdef __cplusplus
extern "C" {
#endif
typedef int CUresult;
typedef struct CUctx_st *CUcontext;
CUresult cuInit(unsigned int Flags);
CUresult cuDriverGetVersion(int *driverVersion);
CUresult cuCtxCreate(CUcontext *pctx, void *params, unsigned int flags, int dev);
CUresult cuGetErrorString(CUresult error, const char **pStr);
#ifdef __cplusplus
}
#endif
`
	nvmlH = `#define nvmlInit nvmlInit_v2
typedef int nvmlReturn_t;
nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
`
)

// wheelFiles returns the entries of the wheel of a component, laid out like
// NVIDIA's real wheel for that CUDA major and platform, with tiny contents.
func wheelFiles(component, version string, cudaMajor int, platform string) []file {
	windows := strings.HasPrefix(platform, "windows")
	vmajor := strings.SplitN(version, ".", 2)[0]
	exe := ""
	if windows {
		exe = ".exe"
	}
	// dllDir is where DLLs go: bin/ for 11/12, bin/x86_64/ for 13 on Windows.
	dllDir := "bin/"
	if cudaMajor >= 13 && !perPackage(component) {
		dllDir = "bin/x86_64/"
	}
	tool := func(name string, lines ...string) file {
		return file{name: "bin/" + name + exe, mode: 0o744, body: script(lines...)}
	}
	banner := NvccVersionLine(version)
	var fs []file
	switch component {
	case "cuda_nvcc":
		fs = append(fs, tool("ptxas", "ptxas: NVIDIA (R) Ptx optimizing assembler", banner))
		fs = append(fs, file{name: "include/fatbinary_section.h", body: "/* fatbinary_section.h */\n"})
		if cudaMajor >= 13 {
			fs = append(fs,
				tool("nvcc", "nvcc: NVIDIA (R) Cuda compiler driver", "Copyright (c) 2005-2025 NVIDIA Corporation", banner),
				tool("nvlink", "nvlink: NVIDIA (R) Cuda linker", banner),
				tool("fatbinary", "fatbinary: NVIDIA (R) Fatbinary", banner),
				tool("bin2c", "bin2c"),
				tool("cudafe++", "cudafe++"),
				file{name: "bin/nvcc.profile", body: nvccProfile},
			)
			// As on the real index: the 13.0.48 wheel (CUDA 13.0.0) lacks the
			// stubs nvcc links every program with; later ones have them.
			if version != "13.0.48" {
				fs = append(fs,
					file{name: "bin/crt/link.stub", body: "/* link.stub */\n"},
					file{name: "bin/crt/prelink.stub", body: "/* prelink.stub */\n"},
				)
			}
		} else {
			fs = append(fs,
				file{name: "include/crt/host_config.h", body: "/* crt/host_config.h */\n"},
				file{name: "nvvm/include/nvvm.h", body: "/* nvvm.h */\n"},
				file{name: "nvvm/libdevice/libdevice.10.bc", body: "BC"},
			)
			if windows {
				fs = append(fs, file{name: "nvvm/bin/nvvm64_40_0.dll", body: "MZ"})
			} else {
				fs = append(fs, file{name: "nvvm/lib64/libnvvm.so", body: "\x7fELF nvvm"})
			}
		}
	case "cuda_cudart":
		fs = append(fs,
			file{name: "include/cuda_runtime.h", body: "/* cuda_runtime.h " + version + " */\n"},
			file{name: "include/cuda_runtime_api.h", body: "/* cuda_runtime_api.h */\n"},
			// As the real wheel: the driver API's header (without the
			// stub library NVIDIA's archive carries beside it).
			file{name: "include/cuda.h", body: cudaH},
		)
		switch {
		case windows:
			fs = append(fs, file{name: dllDir + "cudart64_" + vmajor + ".dll", body: "MZ"})
			if cudaMajor >= 13 {
				fs = append(fs, file{name: "lib/x64/cudart.lib", body: "lib"}, file{name: "lib/x64/cudart_static.lib", body: "lib"})
			}
		default:
			fs = append(fs, file{name: "lib/libcudart.so." + vmajor, body: "\x7fELF cudart " + version})
			if cudaMajor >= 13 {
				fs = append(fs, file{name: "lib/libcudart_static.a", body: "!<arch>\n"}, file{name: "lib/libcudadevrt.a", body: "!<arch>\n"})
			}
		}
	case "cuda_nvml_dev":
		// The real wheel holds nvml.h alone.
		fs = append(fs, file{name: "include/nvml.h", body: nvmlH})
	case "cuda_crt":
		fs = append(fs,
			file{name: "include/crt/host_config.h", body: "/* crt/host_config.h */\n"},
			file{name: "include/crt/host_defines.h", body: "/* crt/host_defines.h */\n"},
		)
	case "libnvvm":
		fs = append(fs,
			tool("cicc", "cicc"),
			file{name: "include/nvvm.h", body: "/* nvvm.h */\n"},
			file{name: "nvvm/libdevice/libdevice.10.bc", body: "BC"},
		)
		if windows {
			fs = append(fs, file{name: dllDir + "nvvm64_40_0.dll", body: "MZ"})
		} else {
			fs = append(fs, file{name: "lib/libnvvm.so.4", body: "\x7fELF nvvm"})
		}
	case "cuda_cccl", "cccl":
		inc := "include/"
		if cudaMajor >= 13 {
			inc = "include/cccl/"
			fs = append(fs, file{name: ".metadata/provenance.txt", body: "build provenance\n"})
		}
		fs = append(fs,
			file{name: inc + "cuda/std/version", body: "// cuda/std/version\n"},
			file{name: inc + "thrust/version.h", body: "// thrust/version.h\n"},
			file{name: inc + "cub/version.cuh", body: "// cub/version.cuh\n"},
			file{name: "lib/cmake/cccl/cccl-config.cmake", body: "# cccl-config.cmake\n"},
		)
	default:
		name, ok := libNames[component]
		if !ok {
			name = strings.TrimPrefix(strings.TrimPrefix(component, "lib"), "cuda_")
		}
		header := "/* " + name + ".h */\n"
		if component == "cusparselt" { // as the real cusparseLt.h
			header = "#include <cusparse.h>\n" + header
		}
		fs = append(fs, file{name: "include/" + name + ".h", body: header})
		if component == "cudnn" { // as NVIDIA's wheels have it
			p := append(strings.Split(version, "."), "0", "0", "0")
			fs = append(fs, file{name: "include/cudnn_version.h", body: fmt.Sprintf("#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n", p[0], p[1], p[2])})
		}
		switch {
		case strings.HasSuffix(name, "_static") || component == "cuda_culibos":
			if !windows {
				fs = append(fs, file{name: "lib/lib" + name + ".a", body: "!<arch>\n"})
			}
		case windows:
			fs = append(fs, file{name: dllDir + name + "64_" + vmajor + ".dll", body: "MZ"})
		default:
			fs = append(fs, file{name: "lib/lib" + name + ".so." + vmajor, body: "\x7fELF " + name})
		}
	}
	return fs
}

// wheelEntries places a wheel's files under its real root and adds the
// Python package markers of CUDA 11/12 wheels and the dist-info folder.
func wheelEntries(project, component, version string, cudaMajor int, platTag string, files []file, requires []string) []file {
	root := "nvidia/cu" + fmt.Sprint(cudaMajor) + "/"
	var out []file
	if r, ok := libraryRoot(component, cudaMajor); ok {
		root = r
	} else if cudaMajor < 13 || perPackage(component) {
		dir := packageDirs[component]
		if dir == "" {
			dir = strings.ReplaceAll(strings.TrimPrefix(component, "lib"), "-", "_")
		}
		root = "nvidia/" + dir + "/"
		markers := map[string]bool{"nvidia/__init__.py": true, root + "__init__.py": true}
		for _, f := range files {
			if top, _, ok := strings.Cut(f.name, "/"); ok && (top == "include" || top == "lib" || top == "bin") {
				markers[root+top+"/__init__.py"] = true
			}
		}
		for _, m := range slices.Sorted(maps.Keys(markers)) {
			out = append(out, file{name: m, mode: 0o644})
		}
	}
	for _, f := range files {
		f.name = root + f.name
		out = append(out, f)
	}
	dist := strings.ReplaceAll(project, "-", "_") + "-" + version + ".dist-info/"
	var tags strings.Builder
	for _, t := range strings.Split(platTag, ".") {
		fmt.Fprintf(&tags, "Tag: py3-none-%s\n", t)
	}
	out = append(out,
		file{name: dist + "METADATA", body: GeneratedMetadata(project, component, version, requires)},
		file{name: dist + "WHEEL", body: "Wheel-Version: 1.0\nGenerator: pypitest\nRoot-Is-Purelib: true\n" + tags.String()},
		file{name: dist + "top_level.txt", body: "nvidia\n"},
	)
	// As real wheels have it: each file's sha256 and size.
	var record strings.Builder
	for _, f := range out {
		if f.mode&fs.ModeSymlink != 0 {
			fmt.Fprintf(&record, "%s,,\n", f.name)
			continue
		}
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString(dist + "RECORD,,\n")
	out = append(out, file{name: dist + "RECORD", body: record.String()})
	return out
}

// platformTag is the platform tag set NVIDIA uses for a CUDA major.
func platformTag(platform string, cudaMajor int) string {
	arch := map[string]string{pypi.LinuxX86_64: "x86_64", pypi.LinuxSBSA: "aarch64"}[platform]
	switch platform {
	case pypi.WindowsX86_64:
		return "win_amd64"
	case pypi.WindowsARM64:
		return "win_arm64"
	}
	if cudaMajor >= 13 {
		return "manylinux2014_" + arch + ".manylinux_2_17_" + arch
	}
	return "manylinux2014_" + arch
}

// GeneratedMetadata is the METADATA of a generated wheel: its name,
// version, and the Requires-Dist lines WheelRequires gave its project.
func GeneratedMetadata(project, component, version string, requires []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s from pypitest\n", project, version, component)
	for _, r := range requires {
		fmt.Fprintf(&b, "Requires-Dist: %s\n", r)
	}
	return b.String()
}

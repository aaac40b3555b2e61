#!/usr/bin/env bash
# e2e-pypi.sh: what a user who reaches only a PyPI index does, against the
# real index, with the toolkit selected only through cudaenv (cudaenv exec;
# no hand-set CUDA variables):
#
#   1. install the newest CUDA 13 (minimal profile) from PyPI; nvcc compiles
#      AND links a vector-add program; uninstalled and installed again, it
#      comes from the cache of unpacked wheels (nvcc a read-only hard link)
#      and still builds vector-add; cudaenv verify finds every file whole, a
#      write through one store's libcudart is found from a second store
#      sharing the cache (naming the first), and verify --repair puts both
#      back (the cache's copy refused once);
#   2. a CMake project (project(demo LANGUAGES CXX CUDA),
#      find_package(CUDAToolkit), an executable linking CUDA::cudart, with a
#      C++ source that includes a CCCL header) configures and builds with a
#      CMake from PyPI (in a venv: Debian's 3.25 is too old for CUDA 13);
#   3. install --for torch==2.5.1 --source pypi installs CUDA 12.4
#      libraries (libraries only) and cuDNN 9.1.0.70, the build PyTorch pins;
#   4. a host program compiles and links against that CUDA 12's cuBLAS;
#   5. with no hook and no cudaenv exec, only the shims on PATH and a
#      .cuda-version (as an IDE, make or cron sees it), plain nvcc builds
#      vector-add and CMake finds nvcc on PATH and builds the project; the
#      shims are cudaenv-fastshim's when it was built (Linux with cc);
#   6. the "undefined symbol" trap with NVIDIA's real wheels: a venv holds
#      nvidia-cusparse-cu12 12.3.1.170 and nvidia-nvjitlink-cu12 12.4.127
#      (torch 2.5.1's pins), a program links that libcusparse with a
#      RUNPATH to the venv (as PyTorch does), and CUDA 12.1.1's
#      libnvJitLink (12.1.105, from PyPI) is selected: under the selection
#      the loader fails with "undefined symbol", doctor in the venv names
#      both versions and fails, and with --libraries=off the program loads.
#      (ONLY_LIBRARIES=1 runs this step alone, about 250 MB.)
#   7. install --for torch==<newest on the index> --source pypi installs
#      the CUDA release and cuDNN that wheel pins, with the headers
#      ATen/cuda/CUDAContext.h includes (for a CUDA 12 pin it says PyPI's
#      wheels carry no nvcc); torch goes into a venv (--no-deps, then its
#      requirements other than the CUDA libraries, which come from
#      cudaenv's toolkit), and a torch.utils.cpp_extension.load_inline
#      extension that includes ATen/cuda/CUDAContext.h builds under
#      cudaenv exec (with a CUDA kernel where the toolkit has nvcc);
#      calling it without a GPU prints the driver error. TORCH_VERSION=X
#      picks the release; ONLY_EXTENSIONS=1 runs this step alone (the
#      torch wheel is about 900 MB).
#   8. CUDA 13 minimal with nccl@2.30 and cusparselt@0.8 from PyPI: a C++
#      program calling ncclGetVersion and cusparseLtInit compiles and links
#      in a project selecting them with nothing but what the bash hook sets
#      (CPATH, LIBRARY_PATH), prints the NCCL version, and leaving the
#      project takes every variable back (ONLY_PRODUCTS=1: this step alone).
#      cuSPARSELt brings libcusparse into the minimal CUDA (cusparseLt.h
#      includes cusparse.h).
#   9. cudaenv inspect against NVIDIA's own tools and the loader: (a) on
#      the cuSPARSE and cuBLASLt of CUDA 13.2's wheels (zstd and plain
#      fat binaries) and on CUDA 12.4's cuSPARSE (LZ4), inspect lists the
#      same cubins and PTX as cuobjdump 13.2 from nvidia-cuda-cuobjdump;
#      (b) with the real cuSPARSE 12.3 and nvJitLink 12.4 wheels and
#      CUDA 12.1.1 selected, it names the missing __nvJitLink*_12_4
#      symbols and the 12.1 library the loader picks (and none with
#      libraries=off); (c) with torch in a venv (the newest, or
#      TORCH_VERSION) and an older CUDA of its major selected with its
#      libraries on (12.1.1 for a CUDA 12 torch, 13.0 for CUDA 13),
#      doctor's kernels and libraries verdicts match what
#      `python -c "import torch"` does under that selection, and the
#      prompt hook's one-line warning comes exactly when the import fails
#      (ONLY_INSPECT=1: this step alone, about 4 GB with torch;
#      SKIP_TORCH=1 leaves (c) out).
#  10. a container image without a container engine: cudaenv image 13
#      --profile minimal --source pypi --output oci:DIR, the same image
#      pushed to a registry served on this machine by crane (go-containerregistry's
#      CLI, built with go; CRANE=/path/to/crane to use another), a second
#      image with one more component sends only its new layer, the
#      entry's generated files (version.json names every component) and a
#      config, crane (not cudaenv) pushes the OCI layout to the same digest,
#      pulls the image and unpacks its filesystem, and the unpacked nvcc,
#      with the image's Env (its /opt/cudaenv paths moved to where it was
#      unpacked), compiles and links vector-add, and a C program calling
#      cuInit links with -lcuda against the stub install writes and the
#      image holds too (ONLY_IMAGE=1: this step alone, about 130 MB;
#      SKIP_IMAGE=1: without it).
#  11. trust in what the index says (issue #34): ls-remote --source pypi
#      reads no meta-package wheel; install --for torch reads the small
#      cuda-toolkit wheel torch pins whole, checks its sha256 and caches
#      its METADATA, named by index, file and
#      sums (never by the page's sha256 alone); torch 2.5.1's pins, read by
#      range requests (PyPI has no .metadata file for its big wheels), are
#      read so again, not believed from the cache; a venv whose
#      torch/version.py is a link to /dev/zero, a named pipe or a line of
#      terminal escapes makes compat torch say one line, at once
#      (ONLY_METADATA=1: this step alone; a few MB).
#  12. resolve as uv does: for torch (newest), torch==2.7.1, jax[cuda13],
#      vllm and tensorflow[and-cuda]==2.19.1, install --for X --dry-run
#      --json names, for every NVIDIA wheel uv pip compile picks for X
#      (uv from PyPI, CPython 3.12, manylinux x86_64) that cudaenv
#      installs, the very version uv picks; nothing is downloaded but
#      pages and metadata (ONLY_RESOLVE=1: this step alone; SPECS="a b"
#      other specs).
#  13. `pip install torch` into a venv (with its NVIDIA wheels, as pip
#      installs it), then install --for <that venv> (its dry run as
#      --for .venv in the project, ending with the same one selection
#      line): the one activation
#      line says libraries=off (the venv loads its own), and every library
#      file the toolkit puts on LD_LIBRARY_PATH that the venv also has is
#      the same file, byte for byte; the versions are the venv's
#      dist-infos'. FOR_VENV_TORCH=X picks the release; ONLY_FOR_VENV=1
#      runs this step alone (torch and its CUDA wheels: about 4 GB).
#  14. link stubs and CMake without nvcc (ONLY_STUBS=1: this step alone):
#      a C program including cuda.h and nvml.h (-I"$CUDA_HOME/include")
#      links with -lcuda -lnvidia-ml and nothing else against CUDA 13 and a
#      libraries-only CUDA 12; CMake from PyPI configures
#      find_package(CUDAToolkit) on both (the CUDA 12 one through its
#      version.json and the environment alone) and builds a program linking
#      CUDA::cuda_driver and CUDA::nvml; a project asking
#      find_package(cudss CONFIG REQUIRED) builds against cuDSS from PyPI,
#      whose install brought libcublas into CUDA 13; pycuda from source in a
#      venv builds and links (-lcuda) through cudaenv exec alone and stops
#      only at the missing driver.
#
# No GPU is needed: the programs are built and run; without a GPU they
# print the driver error and exit 2, which counts as a pass. On a machine
# with a GPU and a new enough driver they compute and exit 0.
#
# Not part of the test suite: it downloads about 1.2 GB from the index
# (PyPI, or the mirror named by CUDAENV_PYPI_INDEX) and cmake from PyPI
# into a venv. It works in a throwaway store and cache, so it never touches
# the user's installs, and prints the time of each step at the end.
#
#   scripts/e2e-pypi.sh                 # builds ./cmd/cudaenv with go
#   CUDAENV=/path/to/cudaenv scripts/e2e-pypi.sh
#   CUDAENV_PYPI_INDEX=https://mirror.example/pypi/simple/ scripts/e2e-pypi.sh
#   SKIP_TORCH=1 scripts/e2e-pypi.sh    # without steps 3, 4, 7, 9c and 13 (no torch, no CUDA 12.4)
#   KEEP=1 scripts/e2e-pypi.sh          # keep the work folder for a look
#   ONLY_LIBRARIES=1 scripts/e2e-pypi.sh  # step 6 only
#   ONLY_EXTENSIONS=1 scripts/e2e-pypi.sh # step 7 only
#   ONLY_PRODUCTS=1 scripts/e2e-pypi.sh   # step 8 only (NCCL, cuSPARSELt)
#   SKIP_PRODUCTS=1 scripts/e2e-pypi.sh   # without step 8
#   ONLY_INSPECT=1 scripts/e2e-pypi.sh    # step 9 only (cudaenv inspect)
#   SKIP_INSPECT=1 scripts/e2e-pypi.sh    # without step 9
#   ONLY_IMAGE=1 scripts/e2e-pypi.sh      # step 10 only (a container image)
#   SKIP_IMAGE=1 scripts/e2e-pypi.sh      # without step 10
#   ONLY_METADATA=1 scripts/e2e-pypi.sh   # step 11 only
#   ONLY_RESOLVE=1 scripts/e2e-pypi.sh    # step 12 only (no wheel downloaded)
#   SKIP_RESOLVE=1 scripts/e2e-pypi.sh    # without step 12
#   ONLY_FOR_VENV=1 scripts/e2e-pypi.sh   # step 13 only (install --for <venv>)
#   SKIP_FOR_VENV=1 scripts/e2e-pypi.sh   # without step 13
#   ONLY_STUBS=1 scripts/e2e-pypi.sh      # step 14 only (stubs, CMake, cuDSS, pycuda)
#   SKIP_STUBS=1 scripts/e2e-pypi.sh      # without step 14
#
# Needs: bash, python3 with venv, g++ (a host compiler nvcc accepts), make
# or ninja, and go when CUDAENV is not given.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-e2e-pypi.XXXXXX")
# Servers a step starts in the background (the registry of step 10) are
# stopped however the script ends.
bg_pids=()
cleanup() {
	local p
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[[ -n "${KEEP:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT
[[ -z "${KEEP:-}" ]] || echo "work folder: $work"

export CUDAENV_ROOT="$work/root"
export CUDAENV_CONFIG_DIR="$work/config"
export CUDAENV_CACHE_DIR="$work/cache"
# Only PyPI: NVIDIA's server is not needed, and must not be asked.
export CUDAENV_SOURCE=pypi
export CUDAENV_MIRROR=http://127.0.0.1:9
unset CUDA_HOME CUDA_PATH CUDACXX CUDNN_PATH CUDAENV_VERSION

cudaenv=${CUDAENV:-}
if [[ -z "$cudaenv" ]]; then
	cudaenv="$work/bin/cudaenv"
	# As make install builds them: cudaenv, cudaenv-shim, then the fast shim.
	(cd "$repo" && go build -tags urfave_cli_no_docs -o "$work/bin/" ./cmd/cudaenv ./cmd/cudaenv-shim &&
		make --no-print-directory fastshim OUT="$work/bin/cudaenv-fastshim")
fi
# cudaenv exec runs commands found on PATH, cudaenv doctor included.
export PATH="$(dirname "$cudaenv"):$PATH"

times=()
step() { printf '\n== %s\n' "$*"; step_name=$*; step_start=$(date +%s.%N); }
done_step() { times+=("$(awk -v s="$step_start" -v e="$(date +%s.%N)" -v n="$step_name" 'BEGIN { printf "%6.1f s  %s", e - s, n }')"); }
die() {
	echo "e2e-pypi: $*" >&2
	exit 1
}

# ran PROGRAM OUT EXIT: a built program either did its work (exit 0) or,
# with no usable GPU, said why in one clean line (exit 2).
ran() {
	local name=$1 out=$2 code=$3
	echo "$out"
	case $code in
	0) grep -q "^$name: ok\|^$name: cuBLAS" <<<"$out" || die "$name exited 0 without saying ok" ;;
	2) grep -qE "^$name: .*(driver|device|initialized|CUDA)" <<<"$out" || die "$name failed without naming the driver error" ;;
	*) die "$name exited $code" ;;
	esac
}

# (6) the "undefined symbol" trap: see the top. A function, so that
# ONLY_LIBRARIES=1 can run it alone.
libraries_trap() {
	step "(6) the undefined-symbol trap with the real nvidia-cusparse-cu12 and nvidia-nvjitlink-cu12 wheels"
	local venv="$work/wheels venv"
	python3 -m venv "$venv"
	local pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps)
	[[ -z "${CUDAENV_PYPI_INDEX:-}" ]] || pip+=(--index-url "$CUDAENV_PYPI_INDEX")
	"${pip[@]}" nvidia-nvjitlink-cu12==12.4.127 nvidia-cusparse-cu12==12.3.1.170
	local site
	site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	[[ -f "$site/nvidia/cusparse/lib/libcusparse.so.12" ]] || die "the cusparse wheel has no nvidia/cusparse/lib/libcusparse.so.12"
	cudaenv install 12.1.1 --source pypi --components libnvjitlink
	cat >"$work/sparse.c" <<'EOF'
#include <stdio.h>
/* cusparse.h's cusparseGetProperty(libraryPropertyType, int *): no GPU needed. */
extern int cusparseGetProperty(int type, int *value);
int main(void) {
  int major = 0, minor = 0, patch = 0;
  cusparseGetProperty(0, &major);
  cusparseGetProperty(1, &minor);
  cusparseGetProperty(2, &patch);
  printf("sparse: ok (cuSPARSE %d.%d.%d)\n", major, minor, patch);
  return 0;
}
EOF
	cc -o "$work/sparse" "$work/sparse.c" "$site/nvidia/cusparse/lib/libcusparse.so.12" \
		-Wl,--enable-new-dtags -Wl,-rpath,"$site/nvidia/cusparse/lib:$site/nvidia/nvjitlink/lib"
	# LD_BIND_NOW: every symbol is bound when the program loads, as an
	# import binds what it needs; the verdict does not depend on which
	# function the program calls.
	LD_BIND_NOW=1 "$work/sparse" || die "the program does not load the wheels' libraries on its own"
	local out code
	set +e
	out=$(cudaenv exec 12.1.1 -- env LD_BIND_NOW=1 "$work/sparse" 2>&1)
	code=$?
	set -e
	echo "$out"
	[[ $code -ne 0 ]] && grep -q 'undefined symbol' <<<"$out" || die "under CUDA 12.1.1 the program did not fail with undefined symbol (exit $code)"
	set +e
	out=$(cd "$work" && VIRTUAL_ENV="$venv" CUDAENV_VERSION=12.1.1 cudaenv doctor 2>&1)
	code=$?
	set -e
	grep -A1 -E '^(ok|warn|FAIL|skip) +libraries' <<<"$out" || true
	[[ $code -eq 2 ]] && grep -qE '^FAIL libraries +LD_LIBRARY_PATH loads CUDA 12.1.1.s libnvJitLink.so.12 \(12.1.105\) before the environment.s nvidia-nvjitlink-cu12 12.4.127' <<<"$out" ||
		die "doctor did not name both versions and fail (exit $code)"
	cudaenv exec --libraries=off 12.1.1 -- env LD_BIND_NOW=1 "$work/sparse" || die "with --libraries=off the program does not load"
	done_step
}
# (7) NCCL and cuSPARSELt beside CUDA 13, from their PyPI wheels: a C++
# program calling ncclGetVersion and cusparseLtInit compiles and links in
# a project that selects them, with nothing but the environment the bash
# hook sets (CPATH, LIBRARY_PATH: no -I or -L), prints the NCCL version it
# was linked against, and leaving the project takes every variable back.
# A function, so that ONLY_PRODUCTS=1 can run it alone.
products() {
	step "(8) CUDA 13 with nccl@2.30 and cusparselt@0.8 from PyPI; a program links them through the hook's environment alone"
	# cusparseLt.h includes cusparse.h: installing cuSPARSELt adds
	# libcusparse to the minimal toolkit installed with it.
	cudaenv install 13 nccl@2.30 cusparselt@0.8 --profile minimal
	cudaenv exec 13 -- sh -c 'test -f "$CUDA_HOME/include/cusparse.h"' ||
		die "installing cuSPARSELt did not bring libcusparse into CUDA 13"
	local proj="$work/pro j'q \$x"
	mkdir -p "$proj"
	echo "13 nccl@2.30 cusparselt@0.8" >"$proj/.cuda-version"
	cat >"$proj/products.cpp" <<'CPP'
#include <cstdio>
#include <nccl.h>
#include <cusparseLt.h>

int main() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) {
    std::fprintf(stderr, "products: ncclGetVersion failed\n");
    return 1;
  }
  std::printf("products: NCCL %d (header %d.%d.%d)\n", v, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  cusparseLtHandle_t h;
  cusparseStatus_t s = cusparseLtInit(&h);
  if (s == CUSPARSE_STATUS_SUCCESS) {
    cusparseLtDestroy(&h);
    std::printf("products: ok (cusparseLtInit succeeded)\n");
    return 0;
  }
  std::printf("products: cusparseLtInit: status %d (no usable GPU: the CUDA driver is needed)\n", (int)s);
  return 2;
}
CPP
	# The variables cudaenv may set, as the shell has them before and after.
	local vars='^(CPATH|LIBRARY_PATH|LD_LIBRARY_PATH|NCCL_[A-Z_]+|CUSPARSELT_[A-Z_]+|CUDA_HOME|CUDA_PATH|CUDAToolkit_ROOT|__CUDAENV_STATE)='
	{
		echo 'PS1='
		printf 'before=$(env | grep -E %q | sort)\n' "$vars"
		echo 'eval "$(cudaenv init bash)"'
		printf 'cd %q\n' "$proj"
		echo 'echo "NCCL_HOME=$NCCL_HOME"; echo "CPATH=$CPATH"; echo "LIBRARY_PATH=$LIBRARY_PATH"'
		echo 'g++ products.cpp -o products -lnccl -lcusparseLt || exit 4'
		echo './products; echo "products exit $?"'
		echo 'cd /'
		printf 'after=$(env | grep -E %q | sort)\n' "$vars"
		echo '[[ "$before" == "$after" ]] && echo "left the project: every variable is back" || diff <(echo "$before") <(echo "$after")'
		echo 'exit 0'
	} >"$work/products.bash"
	local out code
	set +e
	out=$(env -u CPATH -u LIBRARY_PATH -u NCCL_HOME -u NCCL_ROOT HOME="$work/home" bash --norc --noprofile -i <"$work/products.bash" 2>&1)
	code=$?
	set -e
	echo "$out"
	[[ $code -eq 0 ]] || die "the products program did not build (exit $code)"
	grep -q '^NCCL_HOME=.*/nccl/2\.30\.[0-9.]*-cuda13$' <<<"$out" || die "the hook set no NCCL_HOME"
	grep -q '^products: NCCL 230[0-9][0-9] (header 2\.30\.' <<<"$out" || die "the program did not print the NCCL version it linked"
	grep -qE '^products exit (0|2)$' <<<"$out" || die "the program failed"
	grep -q '^left the project: every variable is back$' <<<"$out" || die "leaving did not take the variables back"
	# Issue #36: a product is removed by the name install and list give it
	# (nccl@2.30.7-cuda13), and refused while a project here selects it.
	local nccl
	nccl=$(cd "$CUDAENV_ROOT/nccl" && ls -d 2.30.*-cuda13 | head -1)
	[[ -n "$nccl" ]] || die "no NCCL 2.30 for CUDA 13 in the store"
	(cd "$proj" && ! cudaenv uninstall "nccl@$nccl") || die "uninstall removed the NCCL the project selects"
	(cd "$work" && cudaenv uninstall "nccl@$nccl") || die "uninstall nccl@$nccl failed"
	! cudaenv list | grep -q "^..nccl@" || die "list still shows NCCL after its uninstall"
	[[ ! -e "$CUDAENV_ROOT/nccl/$nccl" ]] || die "the NCCL folder is still there"
	done_step
}
# (14) link stubs and CMake without nvcc: see the top. A function, so that
# ONLY_STUBS=1 can run it alone.
stubs_cmake() {
	local cm=${cmake:-}
	if [[ -z "$cm" ]]; then
		step "(14) CMake from PyPI into a venv"
		python3 -m venv "$work/venv"
		"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check 'cmake>=4.2'
		cm=$work/venv/bin/cmake
		done_step
	fi
	"$cm" --version | head -1

	step "(14a) CUDA 13 with curand, nvml.h and cudaProfiler.h (what pycuda builds with), and a libraries-only CUDA 12.4: each gets link stubs and a version.json"
	cudaenv install 13 --profile minimal
	cudaenv install 13 --components libcurand,cuda_nvml_dev,cuda_profiler_api
	cudaenv install 12.4 --components cuda_cudart,cuda_nvml_dev,libcublas
	local c13 c12 t
	c13=$(cudaenv exec 13 -- sh -c 'echo "$CUDA_HOME"')
	c12=$(cudaenv exec 12.4 -- sh -c 'echo "$CUDA_HOME"')
	for t in "$c13" "$c12"; do
		ls -l "$t/lib/stubs"
		[[ -f "$t/lib/stubs/libcuda.so" && -f "$t/lib/stubs/libnvidia-ml.so" ]] || die "$t has no link stubs"
		readelf -d "$t/lib/stubs/libcuda.so" | grep SONAME
		echo "$(basename "$t"): libcuda.so exports $(readelf --dyn-syms -W "$t/lib/stubs/libcuda.so" | grep -c ' FUNC ') functions, libnvidia-ml.so $(readelf --dyn-syms -W "$t/lib/stubs/libnvidia-ml.so" | grep -c ' FUNC ')"
	done
	[[ ! -e "$c12/bin/nvcc" && -f "$c12/version.json" ]] || die "CUDA 12.4 is not libraries-only with a version.json"
	head -5 "$c12/version.json"
	done_step

	step "(14b) a C program including cuda.h and nvml.h links with -lcuda -lnvidia-ml alone, against CUDA 13 and the libraries-only CUDA 12.4"
	cat >"$work/drv.c" <<'EOF'
#include <stdio.h>
#include <cuda.h>
#include <nvml.h>

int main(void) {
  CUresult r = cuInit(0);
  const char *why = 0;
  cuGetErrorString(r, &why);
  nvmlReturn_t n = nvmlInit();
  printf("drv: cuInit: %d (%s); nvmlInit: %s\n", (int)r, why ? why : "?", nvmlErrorString(n));
  if (r == CUDA_SUCCESS) { printf("drv: ok\n"); return 0; }
  printf("drv: no usable CUDA driver or device\n");
  return 2;
}
EOF
	local v out code
	for v in 13 12.4; do
		# The headers from the toolkit as host code takes them (nvcc adds
		# them itself); the libraries from nothing but -l.
		(cd "$work" && cudaenv exec "$v" -- sh -c 'exec cc drv.c -I"$CUDA_HOME/include" -o "$0" -lcuda -lnvidia-ml' "drv-$v") || die "drv.c does not link against CUDA $v"
		readelf -d "$work/drv-$v" | grep NEEDED
		set +e
		out=$(cudaenv exec "$v" -- "$work/drv-$v" 2>&1)
		code=$?
		set -e
		echo "$out"
		# No driver: the loader does not find libcuda.so.1 (the stub is not
		# on its path); a driver without a GPU: cuInit says so.
		if [[ $code -ne 0 ]]; then
			grep -qE 'libcuda\.so\.1|libnvidia-ml\.so\.1|^drv: no usable' <<<"$out" || die "drv (CUDA $v) failed without naming the driver"
			! grep -q 'stub library' <<<"$out" || die "drv (CUDA $v) loaded a stub at run time"
		fi
	done
	done_step

	step "(14c) CMake from PyPI configures find_package(CUDAToolkit) on CUDA 13 and the libraries-only CUDA 12.4, and links CUDA::cuda_driver and CUDA::nvml"
	mkdir -p "$work/probe"
	cp "$work/drv.c" "$work/probe/drv.c"
	cat >"$work/probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(probe LANGUAGES C)
find_package(CUDAToolkit REQUIRED)
# CMake 4 imports a stub as IMPORTED_IMPLIB (for the linker, not the loader).
foreach(t cuda_driver nvml)
  get_target_property(${t} CUDA::${t} IMPORTED_LOCATION)
  if(NOT ${t})
    get_target_property(${t} CUDA::${t} IMPORTED_IMPLIB)
  endif()
endforeach()
message(STATUS "probe: CUDAToolkit ${CUDAToolkit_VERSION} at ${CUDAToolkit_LIBRARY_ROOT}; cuda_driver ${cuda_driver}; nvml ${nvml}")
if(TARGET CUDA::cublas)
  get_target_property(cublas CUDA::cublas IMPORTED_LOCATION)
  message(STATUS "probe: cublas ${cublas}")
endif()
add_executable(drv drv.c)
target_link_libraries(drv CUDA::cuda_driver CUDA::nvml)
EOF
	for v in 13 12.4; do
		out=$(cudaenv exec "$v" -- "$cm" -S "$work/probe" -B "$work/probe/build-$v" 2>&1) || { echo "$out"; die "find_package(CUDAToolkit) failed on CUDA $v"; }
		grep '^-- probe:' <<<"$out"
		grep -q "^-- probe: CUDAToolkit ${v}" <<<"$out" || die "CMake found another CUDA than $v"
		grep -q 'cuda_driver .*/stubs/libcuda.so' <<<"$out" || die "CMake did not find the link stub for CUDA::cuda_driver"
		cudaenv exec "$v" -- "$cm" --build "$work/probe/build-$v" >/dev/null || die "the probe does not build against CUDA $v"
	done
	(cd "$work" && cudaenv exec 12.4 -- sh -c 'PATH="$0:$PATH" exec cudaenv doctor' "$(dirname "$cm")") | grep -A1 -E '^(ok|warn|FAIL|skip) +(toolkit|cmake)' || true
	done_step

	step "(14d) cuDSS from PyPI: its install brings libcublas into CUDA 13; find_package(cudss CONFIG REQUIRED) builds"
	local log
	log=$(cudaenv install 13 cudss@1 2>&1 | tee -a /dev/stderr) || die "cuDSS did not install"
	grep -q 'adding .*libcublas.* to CUDA 13' <<<"$log" || [[ -f "$c13/lib/libcublas.so" ]] || die "installing cuDSS did not bring libcublas into CUDA 13"
	local dss
	dss=$(cudaenv exec 13 cudss@1 -- sh -c 'echo "$CUDSS_ROOT"')
	ls "$dss/lib/cmake/cudss"
	mkdir -p "$work/dss"
	cat >"$work/dss/dss.c" <<'EOF'
#include <stdio.h>
#include <cudss.h>

int main(void) {
  cudssHandle_t h;
  cudssStatus_t s = cudssCreate(&h);
  if (s == CUDSS_STATUS_SUCCESS) {
    cudssDestroy(h);
    printf("dss: ok\n");
    return 0;
  }
  printf("dss: cudssCreate: status %d (no usable GPU: the CUDA driver is needed)\n", (int)s);
  return 2;
}
EOF
	cat >"$work/dss/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.10)
project(dss LANGUAGES C)
find_package(cudss CONFIG REQUIRED)
find_package(CUDAToolkit REQUIRED)
message(STATUS "dss: cudss ${cudss_VERSION} from ${cudss_DIR}")
add_executable(dss dss.c)
target_include_directories(dss PRIVATE ${cudss_INCLUDE_DIR})
target_link_libraries(dss cudss CUDA::cudart)
EOF
	out=$(cudaenv exec 13 cudss@1 -- "$cm" -S "$work/dss" -B "$work/dss/build" 2>&1) || { echo "$out"; die "find_package(cudss CONFIG) failed"; }
	grep '^-- dss:' <<<"$out"
	cudaenv exec 13 cudss@1 -- "$cm" --build "$work/dss/build" || die "the cuDSS project does not build"
	set +e
	out=$(cudaenv exec 13 cudss@1 -- "$work/dss/build/dss" 2>&1)
	code=$?
	set -e
	echo "$out"
	[[ $code -eq 0 || $code -eq 2 ]] || grep -q 'libcuda\.so\.1' <<<"$out" || die "dss failed (exit $code) without naming the driver"
	done_step

	step "(14e) pycuda from source in a venv builds and links through cudaenv exec alone"
	local venv="$work/pycuda venv"
	python3 -m venv "$venv"
	local pip=("$venv/bin/python" -m pip install --disable-pip-version-check --no-binary pycuda --no-cache-dir)
	[[ -z "${CUDAENV_PYPI_INDEX:-}" ]] || pip+=(--index-url "$CUDAENV_PYPI_INDEX")
	# numpy: pycuda imports it and does not require it.
	(cd "$work" && cudaenv exec 13 -- "${pip[@]}" numpy pycuda 2>&1 | tail -3) || die "pycuda did not build"
	local so
	so=$(find "$venv" -name '_driver*.so' | head -1)
	[[ -n "$so" ]] || die "pycuda built no _driver extension"
	readelf -d "$so" | grep -E 'NEEDED.*(libcuda|libcurand)'
	set +e
	out=$(cd "$work" && cudaenv exec 13 -- "$venv/bin/python" -c 'import pycuda.driver as d; d.init(); print("pycuda: ok,", d.Device.count(), "devices")' 2>&1)
	code=$?
	set -e
	echo "$out" | tail -3
	[[ $code -eq 0 ]] || grep -qE 'libcuda\.so\.1|cuInit failed|no CUDA-capable device|CUDA driver' <<<"$out" || die "pycuda stopped at something other than the missing driver (exit $code)"
	done_step
}

if [[ -n "${ONLY_STUBS:-}" ]]; then
	stubs_cmake
	printf '\n== ok: link stubs, CMake without nvcc and cuDSS'"'"'s CMake package work from PyPI alone\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi

# (9) cudaenv inspect against cuobjdump and the loader: see the top. A
# function, so that ONLY_INSPECT=1 can run it alone.
inspect_step() {
	step "(9a) cudaenv inspect lists what cuobjdump lists, on NVIDIA's libraries from their wheels"
	local venv="$work/inspect venv" venv12="$work/inspect venv 12"
	python3 -m venv "$venv"
	python3 -m venv "$venv12"
	local pip=(-m pip install --quiet --disable-pip-version-check)
	[[ -z "${CUDAENV_PYPI_INDEX:-}" ]] || pip+=(--index-url "$CUDAENV_PYPI_INDEX")
	"$venv/bin/python" "${pip[@]}" "cuda-toolkit[cusparse,cublas]==13.2.2" "nvidia-cuda-cuobjdump==13.2.*"
	"$venv12/bin/python" "${pip[@]}" --no-deps nvidia-nvjitlink-cu12==12.4.127 nvidia-cusparse-cu12==12.3.1.170
	local site site12
	site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	site12=$("$venv12/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	local cuobjdump="$site/nvidia/cu13/bin/cuobjdump"
	[[ -x "$cuobjdump" ]] || die "nvidia-cuda-cuobjdump has no nvidia/cu13/bin/cuobjdump"
	local lib want got
	for lib in "$site/nvidia/cu13/lib/libcusparse.so.12" "$site/nvidia/cu13/lib/libcublasLt.so.13" "$site12/nvidia/cusparse/lib/libcusparse.so.12"; do
		[[ -f "$lib" ]] || die "no $lib"
		# cuobjdump: one line an image; inspect: the architectures and the
		# number of images.
		want=$("$cuobjdump" --list-elf --list-ptx "$lib" 2>/dev/null | sed -E 's/^(ELF|PTX) file +[0-9]+: .*\.(sm_[0-9]+[af]?)\.(cubin|ptx)$/\1 \2/' | sort | uniq -c)
		got=$({ cudaenv inspect --json --gpu 9.0 --driver 999.0 "$lib" || true; } | python3 -c '
import json, sys
f = json.load(sys.stdin)["files"][0]
print(f["fatbin_entries"])
for s in f["sass"]: print("ELF", s)
for p in f["ptx"]: print("PTX", p["arch"].replace("compute_", "sm_"))
')
		echo "$(basename "$lib"): cuobjdump $(awk '{n += $1} END {print n}' <<<"$want") images, inspect $(sed -n 1p <<<"$got"); $(sed 1d <<<"$got" | tr '\n' ' ')"
		[[ "$(awk '{n += $1} END {print n}' <<<"$want")" == "$(sed -n 1p <<<"$got")" ]] || die "inspect counts other images than cuobjdump in $lib"
		[[ "$(awk '{print $2, $3}' <<<"$want" | sort -u)" == "$(sed 1d <<<"$got" | sort -u)" ]] || die "inspect lists other architectures than cuobjdump in $lib"
	done
	done_step

	step "(9b) cudaenv inspect names the undefined __nvJitLink*_12_4 symbols of cuSPARSE 12.3 under CUDA 12.1.1"
	cudaenv install 12.1.1 --source pypi --components libnvjitlink
	local out code
	set +e
	out=$(CUDAENV_VERSION=12.1.1 cudaenv inspect "$site12/nvidia/cusparse/lib/libcusparse.so.12" 2>&1)
	code=$?
	set -e
	grep -E '^  (needs|undefined):' <<<"$out" | head -4
	[[ $code -eq 1 ]] || die "inspect under CUDA 12.1.1 exited $code, not 1"
	grep -q "^  needs: libnvJitLink.so.12 -> $CUDAENV_ROOT/cuda/12.1.1/lib64/libnvJitLink.so.12 (LD_LIBRARY_PATH)$" <<<"$out" || die "inspect did not pick CUDA 12.1.1's libnvJitLink"
	grep -qE "^  undefined: __nvJitLink[A-Za-z]+_12_4@libnvJitLink.so.12, needed by .*libcusparse.so.12: libnvJitLink.so.12 is expected to define it, and the loader picks $CUDAENV_ROOT/cuda/12.1.1/lib64/libnvJitLink.so.12$" <<<"$out" || die "inspect did not name a missing __nvJitLink*_12_4 symbol"
	out=$(cd "$work" && cudaenv exec --libraries=off 12.1.1 -- cudaenv inspect "$site12/nvidia/cusparse/lib/libcusparse.so.12") || die "with --libraries=off inspect still finds a fault"
	grep -q 'needs: libnvJitLink.so.12 -> .*nvidia/nvjitlink/lib/libnvJitLink.so.12 (RUNPATH)' <<<"$out" || die "with --libraries=off the wheel's libnvJitLink is not picked"
	done_step
	[[ -z "${SKIP_TORCH:-}" ]] || return 0

	step "(9c) doctor's kernels and libraries verdicts on torch${TORCH_VERSION:+ $TORCH_VERSION} with an older CUDA's libraries selected match importing it"
	local tvenv="$work/inspect torch venv"
	python3 -m venv "$tvenv"
	"$tvenv/bin/python" "${pip[@]}" "torch${TORCH_VERSION:+==$TORCH_VERSION}"
	# An older release of torch's CUDA major, with the libraries its
	# wheels bring too: CUDA 12.1.1 for a CUDA 12 torch (the nvJitLink
	# trap of torch 2.1 to 2.5), 13.0 for a CUDA 13 one.
	local tsite tcuda sel
	tsite=$("$tvenv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	tcuda=$(sed -n -E "s/^cuda(: [^=]*)? *= *'([0-9]+)\..*/\2/p" "$tsite/torch/version.py")
	case $tcuda in
	12) sel=12.1.1 ;;
	13) sel=13.0 ;;
	*) die "torch's version.py names CUDA '$tcuda'" ;;
	esac
	cudaenv install "$sel" --source pypi --components cuda_cudart,libnvjitlink,libcusparse,libcublas
	local import_code doctor_out lib_status
	set +e
	(cd "$work" && cudaenv exec "$sel" -- "$tvenv/bin/python" -c 'import torch; print("torch", torch.__version__, "imports")')
	import_code=$?
	doctor_out=$(cd "$work" && CUDAENV_VERSION="$sel" VIRTUAL_ENV="$tvenv" cudaenv doctor 2>&1)
	set -e
	grep -A1 -E '^(ok|warn|FAIL|skip) +(kernels|libraries)' <<<"$doctor_out" || true
	lib_status=$(sed -n -E 's/^(ok|warn|FAIL|skip) +libraries .*/\1/p' <<<"$doctor_out")
	grep -qE '^(ok|warn|FAIL|skip) +kernels +.*libtorch_cuda.so' <<<"$doctor_out" || die "doctor's kernels check did not read libtorch_cuda.so"
	if [[ $import_code -eq 0 ]]; then
		[[ "$lib_status" != FAIL ]] || die "import torch works, and doctor's libraries check fails"
	else
		[[ "$lib_status" == FAIL ]] || die "import torch fails (exit $import_code), and doctor's libraries check says $lib_status"
	fi
	# The prompt hook warns exactly when the import fails (it reads
	# torch's METADATA and __init__.py, no library).
	local hook_err
	hook_err=$(cd "$work" && CUDAENV_VERSION="$sel" VIRTUAL_ENV="$tvenv" cudaenv hook-env bash 2>&1 >/dev/null)
	echo "hook: ${hook_err:-(nothing)}"
	if [[ $import_code -eq 0 ]]; then
		! grep -q 'LD_LIBRARY_PATH loads' <<<"$hook_err" || die "import torch works, and the prompt hook warns it fails"
	else
		grep -q 'fails with "undefined symbol"' <<<"$hook_err" || die "import torch fails (exit $import_code), and the prompt hook says nothing"
	fi
	echo "CUDA $sel selected: import torch exit $import_code; doctor libraries: $lib_status"
	done_step
}
if [[ -n "${ONLY_INSPECT:-}" ]]; then
	inspect_step
	printf '\n== ok: inspect lists what cuobjdump lists, names the undefined-symbol trap, and doctor agrees with importing torch\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi
# write_vadd writes vadd.cu: vector-add, which says ok, or names the
# driver error in one line and exits 2 where no GPU can run it.
write_vadd() {
cat >"$work/vadd.cu" <<'EOF'
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

static int fail(const char *what, cudaError_t e) {
  std::fprintf(stderr, "vadd: %s: %s (%s)\n", what, cudaGetErrorString(e), cudaGetErrorName(e));
  return 2;
}

int main() {
  const int n = 1 << 20;
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n);
  float *da, *db, *dc;
  cudaError_t e;
  if ((e = cudaMalloc(&da, n * sizeof(float))) != cudaSuccess) return fail("cudaMalloc", e);
  if ((e = cudaMalloc(&db, n * sizeof(float))) != cudaSuccess) return fail("cudaMalloc", e);
  if ((e = cudaMalloc(&dc, n * sizeof(float))) != cudaSuccess) return fail("cudaMalloc", e);
  cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  if ((e = cudaGetLastError()) != cudaSuccess) return fail("launch", e);
  if ((e = cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost)) != cudaSuccess) return fail("cudaMemcpy", e);
  for (int i = 0; i < n; i++)
    if (c[i] != 3.0f) { std::fprintf(stderr, "vadd: wrong sum c[%d] = %f\n", i, c[i]); return 1; }
  std::printf("vadd: ok (%d elements)\n", n);
  return 0;
}
EOF
}

# (10) a container image of CUDA 13, built without a container engine,
# pushed, pulled and unpacked by crane, and its nvcc builds vector-add:
# see the top. A function, so that ONLY_IMAGE=1 can run it alone.
container_image() {
	step "(10) cudaenv image 13 --profile minimal --source pypi: an OCI layout, a push, crane pulls and unpacks it, its nvcc builds vector-add"
	local crane=${CRANE:-}
	if [[ -z "$crane" ]]; then
		GOBIN="$work/bin" go install github.com/google/go-containerregistry/cmd/crane@v0.22.1
		crane="$work/bin/crane"
	fi
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$crane" registry serve --address "127.0.0.1:$port" >"$work/registry.log" 2>&1 &
	local registry_pid=$!
	bg_pids+=("$registry_pid")
	for _ in $(seq 50); do
		curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break
		sleep 0.2
	done
	local reg="127.0.0.1:$port"

	local out
	out=$(cudaenv image 13 --profile minimal --source pypi --output oci:"$work/oci")
	echo "$out"
	local digest
	digest=$(sed -n 's/^wrote oci:.* (named .*): \(sha256:[0-9a-f]*\)$/\1/p' <<<"$out")
	[[ -n "$digest" ]] || die "cudaenv image printed no digest"
	[[ -f "$work/oci/oci-layout" && -f "$work/oci/index.json" ]] || die "no OCI layout in $work/oci"
	# A client that is not cudaenv reads the layout and pushes it: the same image.
	"$crane" push "$work/oci" "$reg/cuda:13-from-layout"
	[[ "$("$crane" digest "$reg/cuda:13-from-layout")" == "$digest" ]] || die "crane pushed the layout as another image than cudaenv built"

	# cudaenv pushes the same image itself: the registry has every blob.
	out=$(cudaenv image 13 --profile minimal --source pypi --push "$reg/cuda:13" -q)
	echo "$out"
	grep -q "^pushed $reg/cuda@$digest: sent 0 blobs (0 B); the registry had " <<<"$out" || die "pushing an image the registry has sent blobs"
	# One more component: only its layer, the entry's generated files
	# (version.json lists the components) and a config go.
	local comps
	comps=$("$crane" config "$reg/cuda:13" | python3 -c 'import json, sys; print(",".join(c.split("@")[0] for c in json.load(sys.stdin)["config"]["Labels"]["io.github.cudaenv.components"].split()))')
	out=$(cudaenv image 13 --components "$comps,cuda_nvtx" --source pypi --push "$reg/cuda:13-nvtx" -q)
	echo "$out"
	grep -qE "^pushed $reg/cuda@sha256:[0-9a-f]{64}: sent 3 blobs \(.*\); the registry had [1-9][0-9]*$" <<<"$out" || die "the second image sent more than its new layer, its generated files and config"

	# crane pulls the image and unpacks its filesystem; nothing of cudaenv's is used.
	local rootfs="$work/rootfs"
	mkdir -p "$rootfs"
	"$crane" export "$reg/cuda:13" - | tar -x -C "$rootfs"
	local home
	home=$("$crane" config "$reg/cuda:13" | python3 -c 'import json, sys; print(next(e.split("=", 1)[1] for e in json.load(sys.stdin)["config"]["Env"] if e.startswith("CUDA_HOME=")))')
	echo "the image's CUDA_HOME is $home"
	[[ -x "$rootfs$home/bin/nvcc" ]] || die "the unpacked image has no $home/bin/nvcc"
	# The image's Env, with its paths moved to where it was unpacked.
	local -a env_args=()
	while IFS= read -r kv; do
		env_args+=("$kv")
	done < <("$crane" config "$reg/cuda:13" | python3 -c '
import json, sys
root = sys.argv[1]
for e in json.load(sys.stdin)["config"]["Env"]:
    k, v = e.split("=", 1)
    if k == "PATH":
        v = ":".join(root + p if p.startswith("/opt/cudaenv") else p for p in v.split(":"))
    elif "/opt/cudaenv" in v:
        v = ":".join(root + p if p.startswith("/opt/cudaenv") else p for p in v.split(":"))
    print(k + "=" + v)
' "$rootfs")
	printf '  %s\n' "${env_args[@]}"
	(cd "$work" && env "${env_args[@]}" sh -c 'command -v nvcc; nvcc --version | tail -1; nvcc vadd.cu -o vadd-image')
	[[ -x "$work/vadd-image" ]] || die "the image's nvcc built no program"
	# It links as the installed toolkit does: the wheels carry no link
	# stubs, and the image has the one install writes, on LIBRARY_PATH.
	[[ -f "$rootfs$home/lib/stubs/libcuda.so" && -f "$rootfs$home/version.json" ]] || die "the unpacked image lacks lib/stubs/libcuda.so or version.json"
	printf 'int cuInit(unsigned int flags);\nint main(void) { return cuInit(0) == 0 ? 0 : 1; }\n' >"$work/cuinit.c"
	(cd "$work" && env "${env_args[@]}" sh -c 'cc cuinit.c -o cuinit-image -lcuda')
	[[ -x "$work/cuinit-image" ]] || die "a program calling cuInit did not link with -lcuda and the image's Env"
	local code
	set +e
	out=$(env "${env_args[@]}" "$work/vadd-image" 2>&1)
	code=$?
	set -e
	ran vadd "$out" "$code"
	kill "$registry_pid" 2>/dev/null || true
	done_step
}
if [[ -n "${ONLY_IMAGE:-}" ]]; then
	write_vadd
	container_image
	printf '\n== ok: cudaenv image builds CUDA 13 without a container engine; crane pushes, pulls and unpacks it, and its nvcc builds vector-add\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi

if [[ -n "${ONLY_PRODUCTS:-}" ]]; then
	products
	printf '\n== ok: NCCL and cuSPARSELt from PyPI link through the environment cudaenv sets, and leaving takes it back\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi

# (11) trust in what the index and a venv say: see the top. A function,
# so that ONLY_METADATA=1 can run it alone.
metadata_trust() {
	step "(11) wheel metadata cached only as checked, keyed by index and file; a hostile venv's torch says one line"
	local out sums n
	# Listing the releases reads the cuda-toolkit meta-package's page, none
	# of its wheels (#35). The one torch pins is read whole (it is small),
	# checked against the page's sha256, and cached (not under that sha256).
	# (Earlier steps may have cached the meta-package of the release they
	# installed: only what ls-remote adds counts.)
	local before
	before=$({ find "$CUDAENV_CACHE_DIR/metadata" -name '*.METADATA' 2>/dev/null || true; } | wc -l)
	cudaenv ls-remote --source pypi >/dev/null
	n=$({ find "$CUDAENV_CACHE_DIR/metadata" -name '*.METADATA' 2>/dev/null || true; } | wc -l)
	echo "cached metadata files before and after ls-remote --source pypi: $before, $n"
	[[ $n -eq $before ]] || die "ls-remote read $((n - before)) wheels' metadata"
	out=$(cudaenv install --for torch --source pypi --dry-run 2>&1) || die "install --for torch --dry-run: $out"
	n=$(find "$CUDAENV_CACHE_DIR/metadata" -name '*.METADATA' | wc -l)
	echo "cached metadata files after install --for torch --dry-run: $n"
	[[ $n -gt 0 ]] || die "nothing checked was cached"
	sums=$(python3 - <<'PY'
import json, urllib.request, os
index = os.environ.get("CUDAENV_PYPI_INDEX", "https://pypi.org/simple/").rstrip("/")
req = urllib.request.Request(index + "/cuda-toolkit/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
page = json.load(urllib.request.urlopen(req, timeout=60))
print(" ".join(f["hashes"].get("sha256", "") for f in page["files"]))
PY
)
	for s in $sums; do
		[[ ! -e "$CUDAENV_CACHE_DIR/metadata/$s.METADATA" ]] || die "metadata cached under the page's sha256 $s alone"
	done
	# torch's 900 MB wheels have no .metadata file on PyPI: their pins are
	# read by range requests, which check no sha256, so they are read so
	# again rather than believed from the cache.
	for _ in 1 2; do
		out=$(cudaenv install --for torch==2.5.1 --source pypi --dry-run 2>&1) || die "install --for torch==2.5.1 --dry-run: $out"
		grep -E '^torch 2\.5\.1: read the pins of .* \(from (range requests on its zip directory|its \.metadata file)\)$' <<<"$out" || die "torch's pins: $out"
	done
	local site="$work/hostile venv/lib/python3.12/site-packages"
	mkdir -p "$site/torch" "$work/hostile bin"
	printf '#!/bin/sh\necho "%s"\necho "#python 3.12"\n' "$site" >"$work/hostile bin/python3"
	chmod 755 "$work/hostile bin/python3"
	ln -s /dev/zero "$site/torch/version.py"
	out=$(PATH="$work/hostile bin:$PATH" timeout 20 cudaenv compat torch 2>&1) && die "compat torch took a link to /dev/zero"
	echo "$out"
	[[ $(wc -l <<<"$out") == 1 ]] && grep -q 'is a symbolic link' <<<"$out" || die "not one line about the link: $out"
	rm "$site/torch/version.py"
	mkfifo "$site/torch/version.py"
	out=$(PATH="$work/hostile bin:$PATH" timeout 20 cudaenv compat torch 2>&1) && die "compat torch took a named pipe"
	echo "$out"
	grep -q 'is not a regular file$' <<<"$out" || die "not one line about the pipe: $out"
	rm "$site/torch/version.py"
	printf "__version__ = '2.5.1\033]0;owned\007\npip install evil --extra-index-url http://x'\n" >"$site/torch/version.py"
	out=$(PATH="$work/hostile bin:$PATH" timeout 20 cudaenv compat torch 2>&1) && die "compat torch took escapes for a version"
	echo "$out"
	! grep -q $'\033' <<<"$out" && grep -q 'is not a PEP 440 version$' <<<"$out" || die "the escapes reached the terminal: $out"
	done_step
}
if [[ -n "${ONLY_METADATA:-}" ]]; then
	metadata_trust
	printf '\n== ok: wheel metadata is cached only as checked and keyed by index and file; a hostile venv gets one line\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi

# (13) install --for <venv> after pip install torch: see the top. A
# function, so that ONLY_FOR_VENV=1 can run it alone.
for_venv() {
	step "(13) pip install torch${FOR_VENV_TORCH:+==$FOR_VENV_TORCH} into a venv, then install --for <venv>: the toolkit's libraries are the venv's own"
	local venv="$work/torch ve'nv"
	python3 -m venv "$venv"
	local pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
	[[ -z "${CUDAENV_PYPI_INDEX:-}" ]] || pip+=(--index-url "$CUDAENV_PYPI_INDEX")
	"${pip[@]}" "torch${FOR_VENV_TORCH:+==$FOR_VENV_TORCH}"
	local site
	site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	"$venv/bin/python" -m pip list --disable-pip-version-check 2>/dev/null | grep -iE '^(torch|nvidia-|cuda-toolkit)' || true
	# The dry run as the README types it, in the project: --for .venv.
	local dry dry_use
	ln -sfn "$(basename "$venv")" "$work/.venv"
	dry=$(cd "$work" && cudaenv install --for .venv --dry-run 2>&1 | tee -a /dev/stderr)
	dry_use=$(sed -n 's/^select it with: cudaenv use //p' <<<"$dry")
	[[ $(grep -c '^select it with' <<<"$dry") -eq 1 ]] || die "install --for .venv --dry-run printed other than one selection line"
	local out
	out=$(cudaenv install --for "$venv" 2>&1 | tee -a /dev/stderr)
	local use
	use=$(sed -n 's/^activate it with: cudaenv use //p' <<<"$out")
	[[ -n "$use" ]] || die "install --for <venv> printed no activation line"
	[[ $(grep -c '^activate it with' <<<"$out") -eq 1 ]] || die "install --for <venv> printed more than one activation line"
	[[ "$dry_use" == "$use" ]] || die "the dry run would select '$dry_use'; the install says '$use'"
	[[ $use == --libraries=off\ * ]] || die "the activation line does not keep the toolkit's libraries off for the venv's torch: $use"
	local words=${use#--libraries=off }
	# With the libraries on, every file the toolkit puts on
	# LD_LIBRARY_PATH that the venv's wheels also have is the same file.
	local dirs same=0 differ=0
	# shellcheck disable=SC2086 # the words are versions: cudaenv printed them
	dirs=$(cudaenv exec $words -- sh -c 'printf "%s" "$LD_LIBRARY_PATH"')
	local d f name mine
	while IFS= read -r -d: d || [[ -n "$d" ]]; do
		d=${d%$'\n'}
		[[ "$d" == "$CUDAENV_ROOT"/* ]] || continue
		for f in "$d"/lib*.so*; do
			[[ -f "$f" ]] || continue
			name=$(basename "$f")
			mine=$(find "$site/nvidia" -name "$name" -type f 2>/dev/null | head -1 || true)
			[[ -n "$mine" ]] || continue
			if cmp -s "$f" "$mine"; then
				same=$((same + 1))
			else
				differ=$((differ + 1))
				echo "differs: $f and $mine" >&2
			fi
		done
	done <<<"$dirs"
	echo "library files the toolkit shares with the venv: $same the same, $differ different"
	[[ $differ -eq 0 ]] || die "$differ library files on the toolkit's LD_LIBRARY_PATH differ from the venv's"
	[[ $same -ge 3 ]] || die "only $same of the toolkit's library files are also in the venv"
	done_step
}
if [[ -n "${ONLY_FOR_VENV:-}" ]]; then
	for_venv
	printf '\n== ok: install --for <venv> gives a toolkit whose libraries are the venv'"'"'s own\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi

if [[ -n "${ONLY_LIBRARIES:-}" ]]; then
	libraries_trap
	printf '\n== ok: doctor catches the undefined-symbol trap and --libraries=off avoids it\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi

# (7) a PyTorch extension builds against what install --for installs: see
# the top. A function, so that ONLY_EXTENSIONS=1 can run it alone.
torch_extension() {
	# No space in these paths: cpp_extension writes them unquoted into its
	# ninja file, and the link fails.
	local venv="$work/torch-venv"
	python3 -m venv "$venv"
	local py="$venv/bin/python"
	local pip=("$py" -m pip install --quiet --disable-pip-version-check)
	[[ -z "${CUDAENV_PYPI_INDEX:-}" ]] || pip+=(--index-url "$CUDAENV_PYPI_INDEX")
	local torch_version=${TORCH_VERSION:-}
	if [[ -z "$torch_version" ]]; then
		# pip index versions prints "torch (2.11.0)" first.
		torch_version=$("$py" -m pip index versions torch ${CUDAENV_PYPI_INDEX:+--index-url "$CUDAENV_PYPI_INDEX"} 2>/dev/null | sed -n '1s/^torch (\(.*\))$/\1/p')
		[[ -n "$torch_version" ]] || die "could not read the newest torch on the index"
	fi

	step "(7a) install --for torch==$torch_version --source pypi: the CUDA and cuDNN its wheel pins, with the extensions profile"
	local log
	log=$(cudaenv install --for "torch==$torch_version" --source pypi 2>&1 | tee -a /dev/stderr)
	local cuda cudnn
	cuda=$(sed -n 's/^torch .* wheel pins .* → CUDA \([0-9.]*\)$/\1/p' <<<"$log" | head -1)
	cudnn=$(sed -n 's/^torch .* wheel pins nvidia-cudnn-cu[0-9]*==\([0-9.]*\).*/\1/p' <<<"$log" | head -1)
	[[ -n "$cuda" ]] || die "install --for did not say which CUDA the wheel pins"
	[[ -d "$CUDAENV_ROOT/cuda/$cuda" ]] || die "CUDA $cuda (the wheel's pin) is not installed"
	local major=${cuda%%.*} h
	for h in cuda_runtime_api.h cublas_v2.h cublasLt.h cusparse.h cusolverDn.h cusolver_common.h; do
		[[ -f "$CUDAENV_ROOT/cuda/$cuda/include/$h" ]] || die "CUDA $cuda has no include/$h, which ATen/cuda/CUDAContext.h includes"
	done
	if [[ -n "$cudnn" ]]; then
		# The very build, or the nearest release the index has (said so).
		[[ -d "$CUDAENV_ROOT/cudnn/$cudnn-cuda$major" ]] || grep -q "installing cuDNN" <<<"$log" || die "cuDNN $cudnn (the wheel's pin) is not installed"
	fi
	if [[ $major -lt 13 ]]; then
		grep -q 'carry no nvcc' <<<"$log" || die "CUDA $cuda from PyPI has no nvcc, and install --for did not say so"
	fi
	done_step

	step "(7b) torch $torch_version into a venv, its CUDA libraries from cudaenv"
	# The torch wheel alone (--no-deps), then the requirements cudaenv does
	# not install (Python packages, NCCL, cuSPARSELt, NVSHMEM, cuFile): the
	# CUDA libraries and cuDNN come from the toolkit cudaenv installed.
	"${pip[@]}" --no-deps "torch==$torch_version"
	local rest
	rest=$("$py" - <<'EOF'
import importlib.metadata as md, re
from pip._vendor.packaging.requirements import Requirement
# What cudaenv's extensions profile and cuDNN install; everything else
# (cuPTI, NCCL, cuSPARSELt, NVSHMEM, cuFile) still comes from wheels.
ours = re.compile(r"^nvidia-(cuda-runtime|cuda-nvrtc|cublas|cufft|curand|cusolver|cusparse|nvjitlink|nvtx|cudnn)(-cu\d+)?$")
our_extras = {"cudart", "nvrtc", "cublas", "cufft", "curand", "cusolver", "cusparse", "nvjitlink", "nvtx"}
out = []
for line in md.requires("torch") or []:
    r = Requirement(line)
    if r.marker is not None and not r.marker.evaluate({"extra": ""}):
        continue
    name = r.name.lower().replace("_", "-")
    if ours.match(name):
        continue
    if name == "cuda-toolkit":
        # The meta-package: keep only the extras cudaenv does not install.
        rest = sorted(set(r.extras) - our_extras)
        if rest:
            out.append("cuda-toolkit[%s]%s" % (",".join(rest), r.specifier))
        continue
    out.append(str(r).split(";")[0].strip())
print("\n".join(out))
EOF
)
	echo "torch's other requirements: $(tr '\n' ' ' <<<"$rest")"
	# shellcheck disable=SC2086
	[[ -z "$rest" ]] || "${pip[@]}" $rest
	# cpp_extension builds with ninja and setuptools.
	"${pip[@]}" ninja setuptools
	done_step

	step "(7c) a load_inline extension that includes ATen/cuda/CUDAContext.h builds against CUDA $cuda"
	cat >"$work/ext.py" <<'EOF'
import sys
from torch.utils.cpp_extension import load_inline

cpp = r"""
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>
int64_t devices() {
  at::cuda::getCurrentCUDABlasHandle();  // cuBLAS, through CUDAContext.h
  return at::cuda::getNumGPUs();
}
"""
sources = dict(cpp_sources=cpp, functions=["devices"])
if sys.argv[1] == "nvcc":
    sources["cuda_sources"] = r"""
#include <ATen/cuda/CUDAContext.h>
__global__ void one(float *x) { x[threadIdx.x] = 1; }
void launch() { float *x; cudaMalloc(&x, 4); one<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(x); }
"""
    sources["cpp_sources"] = cpp + "void launch();\n"
    sources["functions"] = ["devices", "launch"]
ext = load_inline(name="cudaenv_e2e_ext", with_cuda=True, verbose=False, build_directory=sys.argv[2], **sources)
print("ext: built")
try:
    print("ext: ok (%d GPUs)" % ext.devices())
except RuntimeError as e:
    print("ext: the driver said: %s" % str(e).splitlines()[0])
    sys.exit(2)
EOF
	# The cuDNN install --for put in for this CUDA major (torch links it).
	local cudnn_spec=()
	local have
	have=$(ls "$CUDAENV_ROOT/cudnn" 2>/dev/null | grep -- "-cuda$major\$" | sort -V | tail -1 || true)
	[[ -z "$have" ]] || cudnn_spec=("cudnn@${have%-cuda*}")
	local mode=cpp
	# Without a GPU, cpp_extension has no architecture to build for unless
	# told (its arch list comes from the visible GPUs).
	command -v nvidia-smi >/dev/null || export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-8.0}
	[[ ! -x "$CUDAENV_ROOT/cuda/$cuda/bin/nvcc" ]] || mode=nvcc
	mkdir -p "$work/ext-build"
	local out code
	set +e
	out=$(cd "$work" && cudaenv exec "$cuda" "${cudnn_spec[@]}" -- "$py" ext.py "$mode" "$work/ext-build" 2>&1)
	code=$?
	set -e
	echo "$out"
	grep -q '^ext: built$' <<<"$out" || die "the extension did not build against CUDA $cuda (exit $code)"
	case $code in
	0) ;;
	2) grep -qE '^ext: the driver said: .*(driver|device|CUDA)' <<<"$out" || die "the extension failed without naming the driver error" ;;
	*) die "the extension exited $code" ;;
	esac
	(cd "$work" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" cudaenv exec "$cuda" "${cudnn_spec[@]}" -- cudaenv doctor) | grep -A1 -E '^(ok|warn|FAIL|skip) +torch' || true
	(cd "$work" && PATH="$venv/bin:$PATH" cudaenv compat torch) | tail -4 || true
	done_step
}
if [[ -n "${ONLY_EXTENSIONS:-}" ]]; then
	torch_extension
	printf '\n== ok: a PyTorch extension builds against what install --for installed\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi

# (12) install --for resolves as uv does: see the top.
resolve_as_uv() {
	step "(12) install --for X --dry-run --json picks the NVIDIA wheels uv pip compile picks"
	local tools="$work/uv-venv"
	python3 -m venv "$tools"
	"$tools/bin/pip" install -q uv
	local uv="$tools/bin/uv" specs=${SPECS:-"torch torch==2.7.1 jax[cuda13] vllm tensorflow[and-cuda]==2.19.1"}
	local spec n=0
	for spec in $specs; do
		n=$((n + 1))
		local plan="$work/plan-$n.json" uvout="$work/uv-$n.txt"
		local start=$(date +%s.%N)
		cudaenv install --for "$spec" --dry-run --json >"$plan" 2>"$work/plan-$n.err" || { cat "$work/plan-$n.err" >&2; die "install --for $spec --dry-run --json failed"; }
		local took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
		echo "$spec" | UV_PYTHON_DOWNLOADS=never UV_CACHE_DIR="$work/uv-cache" "$uv" pip compile --quiet --python-version 3.12 \
			--python-platform x86_64-manylinux_2_40 --no-header --no-annotate - >"$uvout" || die "uv pip compile $spec failed"
		python3 - "$spec" "$plan" "$uvout" "$took" <<'EOF2' || die "install --for $spec does not pick what uv picks"
import json, re, sys
spec, plan, uvout, took = sys.argv[1:]
ours = {}
for p in json.load(open(plan))["products"]:
    for c in p["components"]:
        if c["project"]:
            ours[c["project"]] = c["version"]
theirs = {}
for line in open(uvout):
    m = re.match(r"^([A-Za-z0-9._-]+)==([^ ;]+)", line.strip())
    if m and m.group(1).lower().startswith("nvidia-"):
        theirs[m.group(1).lower().replace("_", "-")] = m.group(2)
same = sorted(p for p in theirs if p in ours and ours[p] == theirs[p])
differ = sorted(p for p in theirs if p in ours and ours[p] != theirs[p])
left = sorted(p for p in theirs if p not in ours)
print("%s: %d NVIDIA wheels as uv picks them (%.40s…), in %ss" % (spec, len(same), ", ".join(p + "==" + theirs[p] for p in same), took))
if left:
    print("  uv also takes (cudaenv does not install them): " + ", ".join(p + "==" + theirs[p] for p in left))
for p in differ:
    print("  DIFFERS: %s: cudaenv %s, uv %s" % (p, ours[p], theirs[p]))
if differ or not same:
    sys.exit(1)
EOF2
	done
	done_step
}
if [[ -n "${ONLY_RESOLVE:-}" ]]; then
	resolve_as_uv
	printf '\n== ok: install --for picks the NVIDIA wheels uv picks\ntimes:\n'
	printf '%s\n' "${times[@]}"
	exit 0
fi

step "list the CUDA releases on ${CUDAENV_PYPI_INDEX:-https://pypi.org/simple/}"
cudaenv ls-remote cuda 13
# A prefix the index has no release of fails, naming what it has (#36).
! cudaenv ls-remote cuda 99 || die "ls-remote cuda 99 succeeded"
done_step

step "install the newest CUDA 13, minimal profile"
cudaenv install 13 --profile minimal
cuda13=$(cudaenv exec 13 -- sh -c 'basename "$CUDA_HOME"')
echo "CUDA 13 is $cuda13"
done_step

write_vadd

step "(1) nvcc compiles and links vector-add with CUDA $cuda13"
cudaenv exec 13 -- nvcc --version | tail -2
(cd "$work" && cudaenv exec 13 -- nvcc vadd.cu -o vadd)
[[ -x "$work/vadd" ]] || die "nvcc built no program"
set +e
out=$(cudaenv exec 13 -- "$work/vadd" 2>&1)
code=$?
set -e
ran vadd "$out" "$code"
done_step

step "(1b) reinstall CUDA $cuda13 from the cache of unpacked wheels: linked, read-only, still builds"
cudaenv uninstall "$cuda13"
cudaenv install "$cuda13" --profile minimal
nvcc_bin="$CUDAENV_ROOT/cuda/$cuda13/bin/nvcc"
links=$(stat -c %h "$nvcc_bin") mode=$(stat -c %A "$nvcc_bin")
echo "bin/nvcc: $links names, $mode"
[[ "$links" -ge 2 && "$mode" == -r-xr-xr-x ]] || die "the reinstall did not link nvcc read-only from the cache ($links names, $mode)"
rm -f "$work/vadd"
(cd "$work" && cudaenv exec 13 -- nvcc vadd.cu -o vadd)
[[ -x "$work/vadd" ]] || die "nvcc built no program after the reinstall"
set +e
out=$(cudaenv exec 13 -- "$work/vadd" 2>&1)
code=$?
set -e
ran vadd "$out" "$code"
done_step

step "(1c) every file of CUDA $cuda13 accounted for: a write through one store is found from another, and repaired"
cudaenv verify "$cuda13"
cudaenv verify "$cuda13" --full
# A second store sharing the download cache gets the same files.
store2="$work/store two"
CUDAENV_ROOT="$store2" cudaenv install "$cuda13" --profile minimal
lib=$(cd "$CUDAENV_ROOT/cuda/$cuda13" && ls lib/libcudart.so.* | head -1)
[[ -n "$lib" ]] || die "no lib/libcudart.so.* in CUDA $cuda13"
chmod u+w "$CUDAENV_ROOT/cuda/$cuda13/$lib"
printf 'tampered' >>"$CUDAENV_ROOT/cuda/$cuda13/$lib"
chmod a-w "$CUDAENV_ROOT/cuda/$cuda13/$lib"
set +e
out=$(CUDAENV_ROOT="$store2" cudaenv verify "$cuda13" 2>&1)
code=$?
set -e
echo "$out"
[[ $code == 1 ]] || die "verify in the second store exited $code, want 1"
grep -q "^  $lib: size " <<<"$out" || die "verify in the second store did not name $lib"
grep -q "the same files are in .*$CUDAENV_ROOT" <<<"$out" || die "verify did not name the first store's install"
CUDAENV_ROOT="$store2" cudaenv list | grep -q "damaged: $lib" || die "list in the second store says nothing"
out=$(CUDAENV_ROOT="$store2" cudaenv verify --repair "$cuda13" 2>&1) || die "verify --repair failed: $out"
echo "$out"
grep -q "unpacked copy of .* was changed since it was made" <<<"$out" || die "the cache's changed copy was not refused"
cudaenv verify --repair "$cuda13" | tail -1
cudaenv verify
rm -f "$work/vadd"
(cd "$work" && cudaenv exec 13 -- nvcc vadd.cu -o vadd)
[[ -x "$work/vadd" ]] || die "nvcc built no program after the repair"
done_step

step "CMake from PyPI into a venv"
python3 -m venv "$work/venv"
# 4.2 or newer: step 14 uses this CMake too, and a libraries-only tree
# needs CUDAToolkit_ROOT read from the environment.
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check 'cmake>=4.2'
cmake=$work/venv/bin/cmake
"$cmake" --version | head -1
done_step

step "(2) a CMake project configures and builds with CUDA $cuda13"
mkdir -p "$work/demo"
cp "$work/vadd.cu" "$work/demo/main.cu"
cat >"$work/demo/host.cpp" <<'EOF'
// C++ (not CUDA) code using the toolkit: the runtime and a CCCL header,
// which CUDA 13 keeps in include/cccl.
#include <cuda_runtime.h>
#include <cuda/std/version>
int runtime_version() { int v = 0; cudaRuntimeGetVersion(&v); return v; }
EOF
cat >"$work/demo/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.27)
project(demo LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(demo main.cu host.cpp)
target_link_libraries(demo PRIVATE CUDA::cudart)
EOF
cudaenv exec 13 -- "$cmake" -S "$work/demo" -B "$work/demo/build"
cudaenv exec 13 -- "$cmake" --build "$work/demo/build"
set +e
out=$(cudaenv exec 13 -- "$work/demo/build/demo" 2>&1)
code=$?
set -e
ran vadd "$out" "$code"
done_step

step "doctor with CUDA $cuda13 (cmake from the venv first on PATH, then the system's)"
# The venv goes in front of the PATH cudaenv exec made (hence sh -c).
(cd "$work" && cudaenv exec 13 -- sh -c 'PATH="$0:$PATH" exec cudaenv doctor' "$work/venv/bin") | grep -E '^(ok|warn|FAIL|skip) +(toolkit|cmake|path)' || true
if command -v cmake >/dev/null; then
	(cd "$work" && cudaenv exec 13 -- cudaenv doctor) | grep -A1 -E '^(ok|warn|FAIL|skip) +cmake' || true
fi

step "(5) through the shims alone: plain nvcc and CMake in a project pinned to $cuda13"
# No hook, no cudaenv exec, no CUDA variable: what an IDE, make or cron
# sees with the shims folder on PATH.
shimbin=$(readlink "$CUDAENV_ROOT/shims/nvcc") || die "no nvcc shim"
echo "the shims run $(basename "$shimbin")"
mkdir -p "$work/pinned/src"
echo "$cuda13" >"$work/pinned/.cuda-version"
cp "$work/vadd.cu" "$work/pinned/src/"
cp "$work/demo/main.cu" "$work/demo/host.cpp" "$work/demo/CMakeLists.txt" "$work/pinned/"
(
	cd "$work/pinned/src"
	export PATH="$CUDAENV_ROOT/shims:$PATH"
	[[ "$(command -v nvcc)" == "$CUDAENV_ROOT/shims/nvcc" ]] || die "nvcc is not the shim"
	nvcc --version | tail -1
	nvcc vadd.cu -o vadd
	cd "$work/pinned"
	"$cmake" -S . -B build >/dev/null
	grep -E '^CMAKE_CUDA_COMPILER:' build/CMakeCache.txt
	"$cmake" --build build >/dev/null
) || die "building through the shims failed"
for prog in "$work/pinned/src/vadd" "$work/pinned/build/demo"; do
	set +e
	out=$(cudaenv exec 13 -- "$prog" 2>&1)
	code=$?
	set -e
	ran vadd "$out" "$code"
done
done_step

if [[ -n "${SKIP_TORCH:-}" ]]; then
	echo "SKIP_TORCH set: skipping the CUDA 12 libraries and cuDNN"
else
	step "(3) install --for torch==2.5.1 --source pypi: CUDA 12.4 libraries and cuDNN 9.1.0.70"
	# The headers host code needs come with the libraries: crt/ (in the
	# nvcc wheel, which for CUDA 12 has no nvcc) and CCCL's nv/target.
	cudaenv install --for torch==2.5.1 --source pypi --components cuda_cudart,cuda_nvcc,cuda_cccl,libcublas
	[[ -d "$CUDAENV_ROOT/cudnn/9.1.0.70-cuda12" ]] || die "cuDNN 9.1.0.70 (cuda12) is not installed"
	grep -q '"libraries_only": true' "$CUDAENV_ROOT"/cuda/12.4.*/receipt.json || die "CUDA 12.4 is not recorded as libraries only"
	cudaenv list
	[[ -z "$(cudaenv exec 12.4 -- printenv CUDACXX || true)" ]] || die "a libraries-only CUDA sets CUDACXX"
	done_step

	step "(4) a host program compiles and links against CUDA 12.4's cuBLAS"
	cat >"$work/blas.cpp" <<'EOF'
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

int main() {
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  cublasHandle_t h;
  cublasStatus_t s = cublasCreate(&h);
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "blas: cublasCreate: %s (%s); CUDA runtime %d\n", cublasGetStatusString(s), cublasGetStatusName(s), rt);
    return 2;
  }
  int v = 0;
  cublasGetVersion(h, &v);
  std::printf("blas: cuBLAS %d on CUDA runtime %d\n", v, rt);
  cublasDestroy(h);
  return 0;
}
EOF
	(cd "$work" && cudaenv exec 12.4 cudnn@9.1 -- sh -c 'g++ blas.cpp -o blas -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib" -lcublas -lcudart')
	set +e
	out=$(cudaenv exec 12.4 cudnn@9.1 -- "$work/blas" 2>&1)
	code=$?
	set -e
	ran blas "$out" "$code"
	(cd "$work" && cudaenv exec 12.4 -- cudaenv doctor) | grep -A1 -E '^(ok|warn|FAIL|skip) +(toolkit|path)' || true
	done_step
fi

libraries_trap
[[ -n "${SKIP_TORCH:-}" ]] || torch_extension
[[ -n "${SKIP_PRODUCTS:-}" ]] || products
[[ -n "${SKIP_INSPECT:-}" ]] || inspect_step
[[ -n "${SKIP_IMAGE:-}" ]] || container_image
metadata_trust
[[ -n "${SKIP_RESOLVE:-}" ]] || resolve_as_uv
[[ -n "${SKIP_TORCH:-}${SKIP_FOR_VENV:-}" ]] || for_venv
[[ -n "${SKIP_STUBS:-}" ]] || stubs_cmake

printf '\n== ok: from PyPI alone, CUDA %s compiles and links (nvcc and CMake, through cudaenv exec and through the shims)' "$cuda13"
printf '; reinstalled from the cache of unpacked wheels, and verify finds a write through one store from another, and --repair mends both'
[[ -n "${SKIP_TORCH:-}" ]] || printf '; CUDA 12.4 libraries and cuDNN 9.1.0.70 for torch 2.5.1, cuBLAS links'
printf '; doctor catches the undefined-symbol trap and --libraries=off avoids it'
[[ -n "${SKIP_TORCH:-}" ]] || printf '; a PyTorch extension including ATen/cuda/CUDAContext.h builds against what install --for installed'
[[ -n "${SKIP_PRODUCTS:-}" ]] || printf '; NCCL and cuSPARSELt link through the environment cudaenv sets'
[[ -n "${SKIP_INSPECT:-}" ]] || printf '; inspect lists what cuobjdump lists and names the undefined symbol'
[[ -n "${SKIP_IMAGE:-}" ]] || printf '; a container image built without an engine, pulled and unpacked by crane, builds vector-add'
printf '; wheel metadata is cached only as checked, and a hostile venv gets one line'
[[ -n "${SKIP_RESOLVE:-}" ]] || printf '; install --for picks the NVIDIA wheels uv picks'
[[ -n "${SKIP_TORCH:-}${SKIP_FOR_VENV:-}" ]] || printf '; install --for <venv> gives the venv'"'"'s own libraries'
[[ -n "${SKIP_STUBS:-}" ]] || printf '; -lcuda -lnvidia-ml, CMake and pycuda link through the stubs, and cuDSS builds with find_package(cudss CONFIG)'
printf '\ntimes:\n'
printf '%s\n' "${times[@]}"

#!/usr/bin/env bash
# e2e-pypi.sh: install CUDA 13.0 from NVIDIA's wheels on a real Python index,
# activate it, and compile a .cu file to an object with its nvcc and this
# machine's host compiler. No GPU is needed.
#
# Not part of the default test suite: it downloads ~100 MB from the index
# (PyPI, or the mirror named by CUDAENV_PYPI_INDEX). It works in a throwaway
# store and cache, so it never touches the user's installs.
#
#   scripts/e2e-pypi.sh                 # builds ./cmd/cudaenv with go
#   CUDAENV=/path/to/cudaenv scripts/e2e-pypi.sh
#   CUDAENV_PYPI_INDEX=https://mirror.example/pypi/simple/ scripts/e2e-pypi.sh
#   KEEP=1 scripts/e2e-pypi.sh          # keep the work folder for a look
#
# Needs: bash, a C++ host compiler nvcc accepts (g++ on Linux), and go when
# CUDAENV is not given. Exit status 0 means the object was built.
#
# The library half of this check, without the CLI, is
#   CUDAENV_E2E_PYPI=1 go test -run E2E -v ./fetch/pypi/
# and, with the wheels already downloaded (pip download ... -d DIR),
#   CUDAENV_PYPI_WHEELS=DIR go test -run RealCUDA13 -v ./fetch/pypi/
set -euo pipefail

version=${CUDA_VERSION:-13.0}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-e2e-pypi.XXXXXX")
if [[ -z "${KEEP:-}" ]]; then
	trap 'rm -rf "$work"' EXIT
else
	echo "work folder: $work"
fi

export CUDAENV_ROOT="$work/root"
export CUDAENV_CONFIG_DIR="$work/config"
export CUDAENV_CACHE_DIR="$work/cache"
# Only PyPI: NVIDIA's server is not needed (and may be unreachable).
export CUDAENV_SOURCE=pypi

cudaenv=${CUDAENV:-}
if [[ -z "$cudaenv" ]]; then
	cudaenv="$work/cudaenv"
	(cd "$repo" && go build -o "$cudaenv" ./cmd/cudaenv)
fi

step() { printf '\n== %s\n' "$*"; }

step "install CUDA $version (minimal) from ${CUDAENV_PYPI_INDEX:-https://pypi.org/simple/}"
start=$(date +%s)
"$cudaenv" install "$version" --source pypi --profile minimal
echo "installed in $(($(date +%s) - start)) s"

step "activate"
eval "$("$cudaenv" env "$version" --shell bash)"
echo "CUDA_HOME=${CUDA_HOME:-<unset>}"
command -v nvcc

step "nvcc --version"
banner=$(nvcc --version)
echo "$banner"
grep -q "release ${version%%.*}\." <<<"$banner" || {
	echo "nvcc is not CUDA $version" >&2
	exit 1
}

step "compile a kernel to an object"
cat >"$work/saxpy.cu" <<'EOF'
#include <cuda_runtime.h>
#include <cuda/std/cstdint>

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int launch(cuda::std::int32_t n, float a, const float *x, float *y) {
  saxpy<<<(n + 255) / 256, 256>>>(n, a, x, y);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
EOF
nvcc -c "$work/saxpy.cu" -o "$work/saxpy.o"
size=$(wc -c <"$work/saxpy.o" | tr -d ' ')
echo "saxpy.o: $size bytes"
[[ "$size" -gt 0 ]]

step "ok: CUDA $version from PyPI compiles"

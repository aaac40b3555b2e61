#!/usr/bin/env bash
# Step "Install CUDA from the lock" of action.yml: cudaenv install in the
# working directory, with --locked unless the input says false.
set -euo pipefail
args=(install)
if [ "${INPUT_LOCKED:-true}" = true ]; then
  args+=(--locked)
fi
if [ -n "${INPUT_MIRROR:-}" ]; then
  export CUDAENV_MIRROR="$INPUT_MIRROR"
fi
if [ -n "${INPUT_PYPI_INDEX:-}" ]; then
  export CUDAENV_PYPI_INDEX="$INPUT_PYPI_INDEX"
fi
exec "${CUDAENV_BIN:-cudaenv}" "${args[@]}"

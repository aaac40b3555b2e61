#!/usr/bin/env bash
# Step "Install CUDA from the lock" of action.yml: cudaenv install in the
# working directory, with --locked unless the input says false.
set -euo pipefail
# Unless the cache was restored for exactly this lock, the manifests and
# index records in it came from another lock's run (a restore-keys
# fallback) and would vouch for its archives: drop them, so every locked
# sha256 is checked against what the mirror and index list now. The
# archives stay; cudaenv uses one only where those listings name it.
# (Only in a folder that carries cudaenv's cache marker: one named by a
# setting may hold other programs' files.)
if [ "${CACHE_HIT:-}" != true ] && [ -f "${CUDAENV_CACHE_DIR:-}/CACHEDIR.TAG" ]; then
  rm -rf -- "$CUDAENV_CACHE_DIR/manifests" "$CUDAENV_CACHE_DIR/index"
fi
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

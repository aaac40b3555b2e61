#!/usr/bin/env bash
# Step "Build cudaenv" of action.yml: build cudaenv and cudaenv-shim from
# the action's own checkout, put them on PATH for later steps, and say
# where the download cache is and which key restores it (the sha256 of
# .cuda-version.lock, else of .cuda-version).
set -euo pipefail
: "${GITHUB_ACTION_PATH:?}" "${GITHUB_OUTPUT:?}" "${GITHUB_ENV:?}" "${GITHUB_PATH:?}" "${RUNNER_TEMP:?}"

bin="$RUNNER_TEMP/cudaenv-bin"
mkdir -p "$bin"
(cd "$GITHUB_ACTION_PATH" && go build -o "$bin/" ./cmd/cudaenv ./cmd/cudaenv-shim)
exe="$bin/cudaenv"
if [ -f "$exe.exe" ]; then
  exe="$exe.exe"
fi

dir="${GITHUB_WORKSPACE:-$PWD}/${INPUT_WORKING_DIRECTORY:-.}"
keyfile=""
for f in "$dir/.cuda-version.lock" "$dir/.cuda-version"; do
  if [ -f "$f" ]; then
    keyfile="$f"
    break
  fi
done
hash=none
if [ -n "$keyfile" ]; then
  if command -v sha256sum >/dev/null; then
    hash=$(sha256sum <"$keyfile" | cut -d' ' -f1)
  else
    hash=$(shasum -a 256 <"$keyfile" | cut -d' ' -f1)
  fi
fi

cache="${CUDAENV_CACHE_DIR:-$HOME/.cache/cudaenv}"
prefix="cudaenv-${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}-"
{
  echo "cudaenv=$exe"
  echo "cache-dir=$cache"
  echo "cache-key=$prefix$hash"
  echo "cache-prefix=$prefix"
} >>"$GITHUB_OUTPUT"
echo "CUDAENV_CACHE_DIR=$cache" >>"$GITHUB_ENV"
echo "$bin" >>"$GITHUB_PATH"

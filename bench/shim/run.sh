#!/usr/bin/env bash
# Times a shim call against the same tiny binary called directly (paired
# runs, medians); see main.go. Usage: bash bench/shim/run.sh [PAIRS]
# Three are measured against the direct call: the normal shim (a symlink
# to cudaenv-shim); the floor, a Go program that does nothing but exec the
# tiny binary; and the fallback used when cudaenv-shim is not installed (a
# symlink to cudaenv itself). The machine should be otherwise idle.
# Builds everything into a temporary folder; needs go and a C compiler
# (without one, a copy of /bin/true is the tiny binary).
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs=${1:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -trimpath -o "$tmp/cudaenv" ./cmd/cudaenv
go build -trimpath -o "$tmp/cudaenv-shim" ./cmd/cudaenv-shim
go build -o "$tmp/shimbench" ./bench/shim
go build -trimpath -o "$tmp/floor" ./bench/shim/floor

export CUDAENV_ROOT="$tmp/root" CUDAENV_CONFIG_DIR="$tmp/config" CUDAENV_CACHE_DIR="$tmp/cache"
unset CUDAENV_VERSION __CUDAENV_STATE

# Three toolkits with receipts the size of a real install's (one component
# per archive), so that reading the store costs what it costs for users.
components=$(for i in $(seq 1 30); do printf '{"id":"cuda_component_%02d","version":"12.4.131","sha256":"%064d","size":12345678},' "$i" 0; done)
for v in 11.8.0 12.4.1 13.0.0; do
  d="$CUDAENV_ROOT/cuda/$v"
  mkdir -p "$d/bin" "$d/lib64"
  printf '{"kind":"cuda","version":"%s","source":"nvidia","platform":"linux-x86_64","profile":"default","components":[%s],"installed":"2026-01-01T00:00:00Z"}\n' \
    "$v" "${components%,}" >"$d/receipt.json"
  if command -v cc >/dev/null 2>&1; then
    printf 'int main(void) { return 0; }\n' >"$tmp/tiny.c"
    cc -O2 -o "$d/bin/tiny" "$tmp/tiny.c"
  else
    cp /bin/true "$d/bin/tiny"
  fi
done
"$tmp/cudaenv" rehash >/dev/null

# A project four levels deep, as a checkout under ~/src usually is.
proj="$tmp/home/src/proj"
mkdir -p "$proj/a/b/c"
echo 12.4 >"$proj/.cuda-version"

# The direct call runs in the environment a shell with 12.4 active has.
(cd "$proj/a/b/c" && "$tmp/cudaenv" exec -- env -0) >"$tmp/direct.env"
# The floor program gets that environment too, and passes it on.
{ cat "$tmp/direct.env"; printf 'SHIM_FLOOR_TARGET=%s\0' "$CUDAENV_ROOT/cuda/12.4.1/bin/tiny"; } >"$tmp/floor.env"

echo "cudaenv $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), $(nproc) CPUs; tiny binary: $(file -b "$CUDAENV_ROOT/cuda/12.4.1/bin/tiny" | cut -d, -f1-2)"
echo
echo "== shim -> cudaenv-shim ($(du -h "$tmp/cudaenv-shim" | cut -f1))"
"$tmp/shimbench" -n "$pairs" -dir "$proj/a/b/c" -direct-env "$tmp/direct.env" "$CUDAENV_ROOT/cuda/12.4.1/bin/tiny" "$CUDAENV_ROOT/shims/tiny"
echo
echo "== floor: a Go program that only execs the tiny binary (no cudaenv work at all)"
"$tmp/shimbench" -n "$((pairs / 2))" -dir "$proj/a/b/c" -direct-env "$tmp/direct.env" -shim-env "$tmp/floor.env" \
  "$CUDAENV_ROOT/cuda/12.4.1/bin/tiny" "$tmp/floor"
echo
echo "== fallback: shim -> cudaenv itself ($(du -h "$tmp/cudaenv" | cut -f1))"
mkdir -p "$tmp/fallback"
ln -s "$tmp/cudaenv" "$tmp/fallback/tiny"
"$tmp/shimbench" -n "$((pairs / 4))" -dir "$proj/a/b/c" -direct-env "$tmp/direct.env" "$CUDAENV_ROOT/cuda/12.4.1/bin/tiny" "$tmp/fallback/tiny"

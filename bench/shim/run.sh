#!/usr/bin/env bash
# Times a shim call against the same tiny binary called directly: whole
# process runs, every case once per round in random order, so that drift in
# machine load hits all alike (bench/cli/main.go); it prints medians and the
# median over rounds of each case's ratio to the direct call. Cases: the
# normal shim (a symlink to cudaenv-shim); the floor, a Go program that
# does nothing but exec the tiny binary; and the fallback used when
# cudaenv-shim is not installed (a symlink to cudaenv itself). With
# BEFORE=DIR (a folder holding an older build's cudaenv-shim), a shim to it
# runs in the same rounds. The machine should be otherwise idle.
# Usage: bash bench/shim/run.sh [ROUNDS]   (default 1500)
# Builds everything into a temporary folder; needs go and a C compiler
# (without one, a copy of /bin/true is the tiny binary).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-1500}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tags=urfave_cli_no_docs # as make install builds
go build -trimpath -tags "$tags" -o "$tmp/cudaenv" ./cmd/cudaenv
go build -trimpath -o "$tmp/cudaenv-shim" ./cmd/cudaenv-shim
go build -o "$tmp/clibench" ./bench/cli
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
echo "cudaenv-shim $(du -h "$tmp/cudaenv-shim" | cut -f1), cudaenv $(du -h "$tmp/cudaenv" | cut -f1)"
mkdir -p "$tmp/fallback" "$tmp/before"
ln -s "$tmp/cudaenv" "$tmp/fallback/tiny"
cases=("direct@$tmp/direct.env=$CUDAENV_ROOT/cuda/12.4.1/bin/tiny"
  "floor@$tmp/floor.env=$tmp/floor"
  "shim=$CUDAENV_ROOT/shims/tiny")
if [[ -n ${BEFORE-} ]]; then
  ln -s "$BEFORE/cudaenv-shim" "$tmp/before/tiny"
  cases+=("shim-before=$tmp/before/tiny")
fi
cases+=("fallback=$tmp/fallback/tiny")
echo "(direct: the tiny binary; floor: a Go program that only execs it; shim: through cudaenv-shim;"
echo " fallback: through cudaenv itself, when cudaenv-shim is not installed)"
echo
"$tmp/clibench" -n "$rounds" -warmup 100 -dir "$proj/a/b/c" "${cases[@]}"

#!/usr/bin/env bash
# Times a shim call against the same tiny binary called directly: whole
# process runs, every case once per round in random order, so that drift in
# machine load hits all alike (bench/cli/main.go); it prints medians and the
# median over rounds of each case's ratio to the direct call. The tiny
# binary is called nvcc, a command NVIDIA ships, as the shims are. Cases:
# the shim as make install sets it up where a C compiler is present (a
# symlink to cudaenv-fastshim); the shim to cudaenv-shim, as without one;
# the floor, a Go program that does nothing but exec the tiny binary; and
# the fallback used when cudaenv-shim is not installed either (a symlink
# to cudaenv itself); and the same call into a store whose 12.4.1 is a
# toolkit adopted with cudaenv link (linked: through cudaenv-fastshim,
# linked-go: through cudaenv-shim, direct-linked: the linked tree's binary
# called directly). With BEFORE=DIR (a folder holding an older build's
# cudaenv-shim, and its cudaenv-fastshim if it has one), a shim to it runs
# in the same rounds, into the linked store too. The machine should be
# otherwise idle.
# Usage: bash bench/shim/run.sh [ROUNDS]   (default 1500)
# Builds everything into a temporary folder; needs go and a C compiler.
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
make --no-print-directory fastshim OUT="$tmp/cudaenv-fastshim" >/dev/null

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
  mkdir -p "$d/bin"
  printf 'int main(void) { return 0; }\n' >"$tmp/tiny.c"
  cc -O2 -o "$d/bin/nvcc" "$tmp/tiny.c"
done
"$tmp/cudaenv" rehash >/dev/null # the shims point at cudaenv-fastshim
[[ $(readlink "$CUDAENV_ROOT/shims/nvcc") == "$tmp/cudaenv-fastshim" ]] || { echo "rehash did not pick cudaenv-fastshim" >&2; exit 1; }

# The same store but for 12.4.1, a copy of that toolkit elsewhere adopted
# with cudaenv link, with shims of its own pointing at cudaenv-fastshim.
linked="$tmp/root-linked"
mkdir -p "$linked/cuda" "$tmp/opt"
cp -R "$CUDAENV_ROOT/cuda/11.8.0" "$CUDAENV_ROOT/cuda/13.0.0" "$linked/cuda/"
cp -R "$CUDAENV_ROOT/cuda/12.4.1" "$tmp/opt/cuda-12.4"
rm "$tmp/opt/cuda-12.4/receipt.json"
CUDAENV_ROOT=$linked "$tmp/cudaenv" link --as 12.4.1 "$tmp/opt/cuda-12.4" >/dev/null
CUDAENV_ROOT=$linked "$tmp/cudaenv" rehash >/dev/null
[[ $(readlink "$linked/shims/nvcc") == "$tmp/cudaenv-fastshim" ]] || { echo "rehash did not pick cudaenv-fastshim" >&2; exit 1; }

# A project four levels deep, as a checkout under ~/src usually is.
proj="$tmp/home/src/proj"
mkdir -p "$proj/a/b/c"
echo 12.4 >"$proj/.cuda-version"

# The direct call runs in the environment a shell with 12.4 active has.
(cd "$proj/a/b/c" && "$tmp/cudaenv" exec -- env -0) >"$tmp/direct.env"
# The floor program gets that environment too, and passes it on.
{ cat "$tmp/direct.env"; printf 'SHIM_FLOOR_TARGET=%s\0' "$CUDAENV_ROOT/cuda/12.4.1/bin/nvcc"; } >"$tmp/floor.env"
# The linked store's calls: the same environment but for CUDAENV_ROOT.
{ env -0 | grep -zv '^CUDAENV_ROOT='; printf 'CUDAENV_ROOT=%s\0' "$linked"; } >"$tmp/linked.env"
(cd "$proj/a/b/c" && CUDAENV_ROOT=$linked "$tmp/cudaenv" exec -- env -0) >"$tmp/direct-linked.env"

echo "cudaenv $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), $(nproc) CPUs; tiny binary: $(file -b "$CUDAENV_ROOT/cuda/12.4.1/bin/nvcc" | cut -d, -f1-2)"
echo "cudaenv-fastshim $(du -h "$tmp/cudaenv-fastshim" | cut -f1), cudaenv-shim $(du -h "$tmp/cudaenv-shim" | cut -f1), cudaenv $(du -h "$tmp/cudaenv" | cut -f1)"
mkdir -p "$tmp/goshim" "$tmp/fallback" "$tmp/before"
ln -s "$tmp/cudaenv-shim" "$tmp/goshim/nvcc"
ln -s "$tmp/cudaenv" "$tmp/fallback/nvcc"
cases=("direct@$tmp/direct.env=$CUDAENV_ROOT/cuda/12.4.1/bin/nvcc"
  "floor@$tmp/floor.env=$tmp/floor"
  "shim=$CUDAENV_ROOT/shims/nvcc"
  "shim-go=$tmp/goshim/nvcc")
# A call the fast shim hands on to cudaenv-shim: one made by a program a
# shim started (it carries the loop mark), through either shim.
{ env -0; printf '__CUDAENV_SHIM=1:1:/elsewhere/nvcc\0'; } >"$tmp/nested.env"
cases+=("handover@$tmp/nested.env=$CUDAENV_ROOT/shims/nvcc"
  "handover-go@$tmp/nested.env=$tmp/goshim/nvcc")
cases+=("direct-linked@$tmp/direct-linked.env=$tmp/opt/cuda-12.4/bin/nvcc"
  "linked@$tmp/linked.env=$linked/shims/nvcc"
  "linked-go@$tmp/linked.env=$tmp/goshim/nvcc")
if [[ -n ${BEFORE-} ]]; then
  ln -s "$BEFORE/cudaenv-shim" "$tmp/before/nvcc"
  cases+=("shim-before=$tmp/before/nvcc")
  if [[ -x $BEFORE/cudaenv-fastshim ]]; then
    mkdir -p "$tmp/before-fast"
    ln -s "$BEFORE/cudaenv-fastshim" "$tmp/before-fast/nvcc"
    cases+=("linked-before@$tmp/linked.env=$tmp/before-fast/nvcc")
  fi
fi
cases+=("fallback=$tmp/fallback/nvcc")
echo "(direct: the tiny binary; floor: a Go program that only execs it; shim: through cudaenv-fastshim,"
echo " as make install sets it up; shim-go: through cudaenv-shim; handover, handover-go: a nested call,"
echo " which cudaenv-fastshim hands to cudaenv-shim; fallback: through cudaenv itself;"
echo " direct-linked, linked, linked-go: the same into a store whose 12.4.1 is adopted with cudaenv link)"
echo
"$tmp/clibench" -n "$rounds" -warmup 100 -dir "$proj/a/b/c" "${cases[@]}"

#!/usr/bin/env bash
# What a system store costs a shim call: the same shim, in the same
# project, timed in pairs (shimbench) without and with CUDAENV_SYSTEM_ROOT
# set to a system store of three more toolkits; then with the selection
# resolving into the system store. Usage: bash bench/shim/system.sh [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs=${1:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -o "$tmp/cudaenv" ./cmd/cudaenv
go build -trimpath -o "$tmp/cudaenv-shim" ./cmd/cudaenv-shim
go build -o "$tmp/shimbench" ./bench/shim
export CUDAENV_ROOT="$tmp/root" CUDAENV_CONFIG_DIR="$tmp/config" CUDAENV_CACHE_DIR="$tmp/cache"
unset CUDAENV_VERSION __CUDAENV_STATE CUDAENV_SYSTEM_ROOT
sys="$tmp/opt/cudaenv"
components=$(for i in $(seq 1 30); do printf '{"id":"cuda_component_%02d","version":"12.4.131","sha256":"%064d","size":12345678},' "$i" 0; done)
printf 'int main(void) { return 0; }\n' >"$tmp/tiny.c"
cc -O2 -o "$tmp/tiny" "$tmp/tiny.c" 2>/dev/null || cp /bin/true "$tmp/tiny"
for d in "$CUDAENV_ROOT/cuda/11.8.0" "$CUDAENV_ROOT/cuda/12.4.1" "$CUDAENV_ROOT/cuda/13.0.0" "$sys/cuda/10.2.0" "$sys/cuda/12.6.3" "$sys/cuda/13.1.0"; do
  mkdir -p "$d/bin" "$d/lib64"
  printf '{"kind":"cuda","version":"%s","source":"nvidia","platform":"linux-x86_64","profile":"default","components":[%s],"installed":"2026-01-01T00:00:00Z"}\n' \
    "$(basename "$d")" "${components%,}" >"$d/receipt.json"
  cp "$tmp/tiny" "$d/bin/tiny"
done
mkdir -p "$sys/cudnn"
CUDAENV_SYSTEM_ROOT="$sys" "$tmp/cudaenv" rehash >/dev/null
proj="$tmp/home/src/proj"
mkdir -p "$proj/a/b/c"
echo 12.4 >"$proj/.cuda-version"
env -0 >"$tmp/without.env"
{ env -0; printf 'CUDAENV_SYSTEM_ROOT=%s\0' "$sys"; } >"$tmp/with.env"
echo "== the user's 12.4.1: without a system store (left) vs with one (right)"
"$tmp/shimbench" -n "$pairs" -dir "$proj/a/b/c" -direct-env "$tmp/without.env" -shim-env "$tmp/with.env" "$CUDAENV_ROOT/shims/tiny" "$CUDAENV_ROOT/shims/tiny"
echo
echo "== the user's 12.4.1, no system store (left) vs the system store's 12.6.3 (right), by CUDAENV_VERSION"
{ env -0; printf 'CUDAENV_VERSION=12.4\0'; } >"$tmp/without-v.env"
{ env -0; printf 'CUDAENV_SYSTEM_ROOT=%s\0CUDAENV_VERSION=12.6\0' "$sys"; } >"$tmp/with-v.env"
"$tmp/shimbench" -n "$pairs" -dir "$proj/a/b/c" -direct-env "$tmp/without-v.env" -shim-env "$tmp/with-v.env" "$CUDAENV_ROOT/shims/tiny" "$CUDAENV_ROOT/shims/tiny"

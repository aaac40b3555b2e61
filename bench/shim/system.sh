#!/usr/bin/env bash
# What a system store costs a shim call: the same shim, in the same
# project, timed in interleaved rounds (clibench) without and with CUDAENV_SYSTEM_ROOT
# set to a system store of three more toolkits; then with the selection
# resolving into the system store. Usage: bash bench/shim/system.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -o "$tmp/cudaenv" ./cmd/cudaenv
go build -trimpath -o "$tmp/cudaenv-shim" ./cmd/cudaenv-shim
go build -o "$tmp/clibench" ./bench/cli
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
echo "== the user's 12.4.1: without a system store (without) vs with one (with)"
"$tmp/clibench" -n "$rounds" -dir "$proj/a/b/c" "without@$tmp/without.env=$CUDAENV_ROOT/shims/tiny" "with@$tmp/with.env=$CUDAENV_ROOT/shims/tiny"
echo
echo "== by CUDAENV_VERSION: the user's 12.4.1, no system store (user-12.4) vs the system store's 12.6.3 (system-12.6)"
{ env -0; printf 'CUDAENV_VERSION=12.4\0'; } >"$tmp/without-v.env"
{ env -0; printf 'CUDAENV_SYSTEM_ROOT=%s\0CUDAENV_VERSION=12.6\0' "$sys"; } >"$tmp/with-v.env"
"$tmp/clibench" -n "$rounds" -dir "$proj/a/b/c" "user-12.4@$tmp/without-v.env=$CUDAENV_ROOT/shims/tiny" "system-12.6@$tmp/with-v.env=$CUDAENV_ROOT/shims/tiny"

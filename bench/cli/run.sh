#!/usr/bin/env bash
# Times cudaenv's read-only commands (current, list, env, which, hook-env)
# as whole process runs, interleaved in random order each round with
# same-run baselines: /bin/true, a tiny C program (when cc exists) and an
# empty Go program; see main.go. Each command is timed as cudaenv itself
# runs it and as the shell function runs it (the small cudaenv-shim, which
# answers the plain forms of these commands and the prompt hook).
# With BEFORE=DIR (a folder holding an older build's cudaenv and
# cudaenv-shim) the same commands run from it too, in the same rounds.
# Usage: bash bench/cli/run.sh [ROUNDS]   (default 400)
# Builds everything into a temporary folder; the machine should be idle.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-400}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tags=urfave_cli_no_docs # as make install builds
go build -trimpath -tags "$tags" -o "$tmp/bin/" ./cmd/cudaenv ./cmd/cudaenv-shim
go build -o "$tmp/clibench" ./bench/cli
mkdir -p "$tmp/empty"
printf 'package main\n\nfunc main() {}\n' >"$tmp/empty/main.go"
(cd "$tmp/empty" && printf 'module empty\n' >go.mod && go build -trimpath -o "$tmp/gonothing" .)
baselines=("true=/bin/true")
if command -v cc >/dev/null 2>&1; then
  printf 'int main(void) { return 0; }\n' >"$tmp/tiny.c"
  cc -O2 -o "$tmp/cnothing" "$tmp/tiny.c"
  baselines+=("c-nothing=$tmp/cnothing")
fi
baselines+=("go-nothing=$tmp/gonothing")

export CUDAENV_ROOT="$tmp/root" CUDAENV_CONFIG_DIR="$tmp/config" CUDAENV_CACHE_DIR="$tmp/cache" SHELL=/bin/bash
unset CUDAENV_VERSION __CUDAENV_STATE

# Three toolkits with receipts the size of a real install's (one component
# per archive) and 3000 files each, about what a real toolkit holds (CCCL's
# headers alone are most of that).
components=$(for i in $(seq 1 30); do printf '{"id":"cuda_component_%02d","version":"12.4.131","sha256":"%064d","size":12345678},' "$i" 0; done)
for v in 11.8.0 12.4.1 13.0.0; do
  d="$CUDAENV_ROOT/cuda/$v"
  mkdir -p "$d/bin" "$d/lib64" "$d/include"
  printf '{"kind":"cuda","version":"%s","source":"nvidia","platform":"linux-x86_64","profile":"default","components":[%s],"installed_bytes":3456789012,"installed":"2026-01-01T00:00:00Z"}\n' \
    "$v" "${components%,}" >"$d/receipt.json"
  printf '#!/bin/sh\n' >"$d/bin/nvcc" && chmod +x "$d/bin/nvcc"
  : >"$d/lib64/libcudart.so.12" && : >"$d/include/cuda.h"
  (cd "$d/include" && for i in $(seq 1 30); do mkdir "cccl$i" && for j in $(seq 1 100); do : >"cccl$i/h$j.h"; done; done)
done
# The same store with receipts from before they recorded installed_bytes,
# which list measures by walking each tree (as every list did before).
cp -al "$CUDAENV_ROOT" "$tmp/root-old"
for f in "$tmp"/root-old/cuda/*/receipt.json; do
  sed 's/"installed_bytes":[0-9]*,//' "$f" >"$f.new" && rm "$f" && mv "$f.new" "$f"
done
{ env -0 | grep -zv '^CUDAENV_ROOT='; printf 'CUDAENV_ROOT=%s\0' "$tmp/root-old"; } >"$tmp/old.env"

# A project four levels deep, as a checkout under ~/src usually is.
proj="$tmp/home/src/proj"
mkdir -p "$proj/a/b/c"
echo 12.4 >"$proj/.cuda-version"

BEFORE=${BEFORE-}
cmds=("current" "list" "env" "which:which nvcc" "hook-env:hook-env bash")
cases=("${baselines[@]}")
for c in "${cmds[@]}"; do
  name=${c%%:*} args=${c#*:}
  # Before, the shell function ran cudaenv for these commands, and the
  # prompt hook cudaenv-shim.
  before=$BEFORE/cudaenv && [[ $name == hook-env ]] && before=$BEFORE/cudaenv-shim
  [[ -n ${BEFORE-} ]] && cases+=("$name before=$before $args")
  cases+=("$name cudaenv=$tmp/bin/cudaenv $args" "$name shim=$tmp/bin/cudaenv-shim $args")
done
cases+=("list walking@$tmp/old.env=$tmp/bin/cudaenv-shim list")
# Labels may not hold spaces on clibench's command line: use dots.
for i in "${!cases[@]}"; do label=${cases[$i]%%=*}; cases[$i]="${label// /.}=${cases[$i]#*=}"; done

echo "cudaenv $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), $(nproc) CPUs; cudaenv $(du -h "$tmp/bin/cudaenv" | cut -f1), cudaenv-shim $(du -h "$tmp/bin/cudaenv-shim" | cut -f1)"
echo "(.shim: cudaenv-shim CMD, what the shell function runs; .cudaenv: cudaenv CMD)"
echo
"$tmp/clibench" -n "$rounds" -dir "$proj/a/b/c" "${cases[@]}"

#!/usr/bin/env bash
# Times the fast check as users run it: `cudaenv verify VERSION` (one
# toolkit of FILES files, default 1500) and `list` with VERSIONS toolkits
# (default 10), each by cudaenv and by cudaenv-shim (what the shell
# function runs), interleaved with same-run baselines: /bin/true, a Go
# program that does nothing, and `list` of the same store with receipts
# from before file lists (key files only). See bench/cli/main.go.
#
#   bench/verify/run.sh [ROUNDS] [VERSIONS] [FILES]   (default 300 10 1500)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-300} versions=${2:-10} files=${3:-1500}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -tags urfave_cli_no_docs -o "$tmp/bin/" ./cmd/cudaenv ./cmd/cudaenv-shim
go build -o "$tmp/clibench" ./bench/cli
go build -o "$tmp/verifybench" ./bench/verify
mkdir -p "$tmp/empty"
printf 'package main\n\nfunc main() {}\n' >"$tmp/empty/main.go"
(cd "$tmp/empty" && printf 'module empty\n' >go.mod && go build -trimpath -o "$tmp/gonothing" .)
"$tmp/verifybench" -root "$tmp/root" -versions "$versions" -files "$files"
"$tmp/verifybench" -root "$tmp/root-old" -versions "$versions" -files "$files" -nolist
export CUDAENV_ROOT="$tmp/root" CUDAENV_CONFIG_DIR="$tmp/config" CUDAENV_CACHE_DIR="$tmp/cache" HOME="$tmp"
unset CUDAENV_VERSION __CUDAENV_STATE
{ env -0 | grep -zv '^CUDAENV_ROOT='; printf 'CUDAENV_ROOT=%s\0' "$tmp/root-old"; } >"$tmp/old.env"
"$tmp/bin/cudaenv" verify 12.0.1
echo "$(go env GOVERSION), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $versions toolkits of $(find "$tmp/root/cuda/12.0.1" -type f | wc -l) files"
"$tmp/clibench" -n "$rounds" -dir "$tmp" \
  "true=/bin/true" "go-nothing=$tmp/gonothing" \
  "verify.1=$tmp/bin/cudaenv verify 12.0.1" \
  "list.shim=$tmp/bin/cudaenv-shim list" "list.cudaenv=$tmp/bin/cudaenv list" \
  "list.keyfiles@$tmp/old.env=$tmp/bin/cudaenv-shim list"

#!/usr/bin/env bash
# Offline bundle benchmark (BENCHMARKS.md, "Offline bundles").
#
# Over the generated 12-component toolkit of bench/install (360 MB
# unpacked, ~200 MB of .tar.xz), served as a file:// mirror, measures:
#   size    - the bundle against the archives it holds (their total)
#   export  - `cudaenv bundle export` from a warm download cache, against
#             GNU tar packing the same archives (`tar -cf`, no hashing)
#   import  - `cudaenv bundle import` into an empty store and cache, against
#             `cudaenv install --offline` of the same version from a warm
#             cache (the same extraction, without reading and checking a
#             bundle first)
# Runs alternate the method and its baseline.
#   bench/bundle/run.sh [-runs 3] [-work DIR]
set -euo pipefail
RUNS=3 WORK=/tmp/cudaenv-bench MB=360
while [ $# -gt 0 ]; do
  case "$1" in
    -runs) RUNS=$2; shift 2;;
    -work) WORK=$2; shift 2;;
    *) echo "unknown flag $1" >&2; exit 2;;
  esac
done
cd "$(dirname "$0")/../.."
MIRROR="$WORK/mirror-$MB"
if [ ! -f "$MIRROR/urls.txt" ]; then
  echo "generating a ${MB} MB toolkit in $MIRROR (once; takes minutes)"
  go build -o "$WORK/benchinstall" ./bench/install
  rm -rf "$MIRROR"
  "$WORK/benchinstall" gen -dir "$MIRROR" -mb "$MB"
fi
t=$(mktemp -d "$WORK/bundle-XXXXXX")
trap 'rm -rf "$t"' EXIT
go build -o "$t/bin/" ./cmd/cudaenv
cudaenv="$t/bin/cudaenv"
export CUDAENV_MIRROR="file://$MIRROR" CUDAENV_CONFIG_DIR="$t/config"

# secs CMD...: "wall_s cpu_s" of the command (cpu: user + system, which
# other jobs on a shared machine disturb less than wall time).
secs() {
  /usr/bin/time -f "%e %U %S" -o "$t/time.out" "$@" > /dev/null
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$t/time.out"
}

archives=0
while read -r u; do archives=$((archives + $(stat -c %s "$MIRROR/$u"))); done < "$MIRROR/urls.txt"
# Warm the download cache once (copies from the file:// mirror).
CUDAENV_ROOT="$t/root0" CUDAENV_CACHE_DIR="$t/cache" "$cudaenv" bundle export 12.4.1 -o "$t/b.tar" -q > /dev/null
bundle=$(stat -c %s "$t/b.tar")
printf "archives: %d, total %d bytes; bundle %d bytes (+%d, %.4f%%)\n" "$(wc -l < "$MIRROR/urls.txt")" "$archives" "$bundle" $((bundle - archives)) "$(echo "($bundle - $archives) * 100 / $archives" | bc -l)"
printf "%-4s %-34s %8s %8s\n" run method wall_s cpu_s
for r in $(seq "$RUNS"); do
  rm -f "$t/b.tar" "$t/base.tar"; sync
  e=$(CUDAENV_ROOT="$t/root0" CUDAENV_CACHE_DIR="$t/cache" secs "$cudaenv" bundle export 12.4.1 -o "$t/b.tar" -q)
  b=$(secs tar -cf "$t/base.tar" -C "$MIRROR" -T "$MIRROR/urls.txt")
  printf "%-4s %-34s %8s %8s\n%-4s %-34s %8s %8s\n" "$r" "bundle export (warm cache)" $e "$r" "tar -cf of the archives" $b
  rm -rf "$t/root-i" "$t/cache-i" "$t/root-o"; sync
  i=$(CUDAENV_ROOT="$t/root-i" CUDAENV_CACHE_DIR="$t/cache-i" secs "$cudaenv" bundle import "$t/b.tar" -q)
  rm -rf "$t/root-i" "$t/cache-i"; sync
  o=$(CUDAENV_ROOT="$t/root-o" CUDAENV_CACHE_DIR="$t/cache" secs "$cudaenv" install 12.4.1 --offline -q)
  rm -rf "$t/root-o"
  printf "%-4s %-34s %8s %8s\n%-4s %-34s %8s %8s\n" "$r" "bundle import (empty store, cache)" $i "$r" "install --offline (warm cache)" $o
done

#!/usr/bin/env bash
# Container image benchmark (BENCHMARKS.md, "Container images").
#
# Over the generated 12-component toolkit of bench/install (360 MB
# unpacked, served as a file:// mirror, installed into a store first),
# measures in the same run:
#   build   - `cudaenv image 12.4.1 --output oci:DIR` into a new layout
#             (from the warm download cache: each archive verified,
#             unpacked alone, written as a gzip layer), against
#             `tar -cf - . | gzip -6` of the installed tree (GNU tar and
#             gzip, one core, no hashing);
#   again   - the same build a second time (no layer cache: the same work,
#             the same digests);
#   push    - an image of 8 of the 12 components pushed to a registry on
#             this machine, then one of all 12: what the second sends
#             against what it holds.
# Runs alternate the method and its baseline.
#   bench/image/run.sh [-runs 3] [-work DIR] [-from DIRS]
# -from takes file contents from real binaries and headers under DIRS
# (colon-separated; see bench/install gen), for real compression ratios.
set -euo pipefail
RUNS=3 WORK=/tmp/cudaenv-bench MB=360 FROM=
while [ $# -gt 0 ]; do
  case "$1" in
    -runs) RUNS=$2; shift 2;;
    -work) WORK=$2; shift 2;;
    -from) FROM=$2; shift 2;;
    *) echo "unknown flag $1" >&2; exit 2;;
  esac
done
cd "$(dirname "$0")/../.."
MIRROR="$WORK/mirror-$MB"
[ -z "$FROM" ] || MIRROR="$WORK/mirror-$MB-real"
if [ ! -f "$MIRROR/urls.txt" ]; then
  echo "generating a ${MB} MB toolkit in $MIRROR (once; takes minutes)"
  go build -o "$WORK/benchinstall" ./bench/install
  rm -rf "$MIRROR"
  "$WORK/benchinstall" gen -dir "$MIRROR" -mb "$MB" ${FROM:+-from "$FROM"}
fi
t=$(mktemp -d "$WORK/image-XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$t"' EXIT
go build -o "$t/bin/" ./cmd/cudaenv ./bench/image
cudaenv="$t/bin/cudaenv"
export CUDAENV_MIRROR="file://$MIRROR" CUDAENV_CONFIG_DIR="$t/config" CUDAENV_ROOT="$t/root" CUDAENV_CACHE_DIR="$t/cache"

# secs CMD...: "wall_s cpu_s" of the command and its children (cpu: user
# + system, which other jobs on a shared machine disturb less than wall
# time).
secs() {
  /usr/bin/time -f "%e %U %S" -o "$t/time.out" "$@" > /dev/null
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$t/time.out"
}

"$cudaenv" install 12.4.1 -q > /dev/null
tree="$CUDAENV_ROOT/cuda/12.4.1"
printf "tree: %s, %d files; cores: %d\n" "$(du -sh "$tree" | cut -f1)" "$(find "$tree" -type f | wc -l)" "$(nproc)"
printf "%-4s %-40s %8s %8s %10s\n" run method wall_s cpu_s bytes
for r in $(seq "$RUNS"); do
  rm -rf "$t/oci" "$t/tree.tar.gz"; sync
  i=$(secs "$cudaenv" image 12.4.1 --output "oci:$t/oci" -q)
  isize=$(du -sb "$t/oci/blobs" | cut -f1)
  b=$(secs sh -c 'tar -C "$1" -cf - . | gzip -6 > "$2"' sh "$tree" "$t/tree.tar.gz")
  bsize=$(stat -c %s "$t/tree.tar.gz")
  printf "%-4s %-40s %8s %8s %10s\n%-4s %-40s %8s %8s %10s\n" "$r" "cudaenv image (12 layers, new layout)" $i "$isize" "$r" "tar | gzip -6 of the installed tree" $b "$bsize"
  digest=$(jq -r ".manifests[0].digest" "$t/oci/index.json")
  echo "     image $digest"
done

"$t/bin/image" serve > "$t/addr" &
pids+=($!)
for _ in $(seq 50); do [ -s "$t/addr" ] && break; sleep 0.1; done
reg=$(cat "$t/addr")
comps=$(ls "$MIRROR/cuda/redist" | grep -v json | sort | head -8 | paste -sd, -)
"$cudaenv" image 12.4.1 --components "$comps" --push "$reg/cuda:8" -q | tail -1
"$cudaenv" image 12.4.1 --push "$reg/cuda:12" -q | tail -1

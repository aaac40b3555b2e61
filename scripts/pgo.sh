#!/usr/bin/env bash
# Regenerates cmd/cudaenv/default.pgo, the profile Go uses to build cudaenv
# (profile-guided optimisation, picked up by `go build` / `go install`
# automatically). cudaenv spends its CPU installing toolkits, nearly all of
# it decoding xz, so the profile is a CPU profile of bench/install's fetch
# (the library `cudaenv install` runs) installing a toolkit of real
# binaries from a loopback mirror.
#
#   scripts/pgo.sh [-mb 360] [-runs 2] [-work DIR] [-from DIRS]
#
# The mirror is bench/install/run.sh's (same WORK and naming), generated
# once. Rerun after changing the decoder, the extractor or the Go version,
# then check `make bench-install`.
set -euo pipefail
MB=360 RUNS=2 WORK=/tmp/cudaenv-bench FROM=/usr/lib/x86_64-linux-gnu:/usr/include
while [ $# -gt 0 ]; do
  case "$1" in
    -mb) MB=$2; shift 2;;
    -runs) RUNS=$2; shift 2;;
    -work) WORK=$2; shift 2;;
    -from) FROM=$2; shift 2;;
    *) echo "unknown flag $1" >&2; exit 2;;
  esac
done
cd "$(dirname "$0")/.."
mkdir -p "$WORK"
BIN="$WORK/benchinstall-pgo"
PGO=cmd/cudaenv/default.pgo
pgo=off
[ -f "$PGO" ] && pgo=$PGO
go build -pgo="$pgo" -o "$BIN" ./bench/install

MIRROR="$WORK/mirror-$MB-real"
if [ ! -f "$MIRROR/urls.txt" ]; then
  echo "generating a ${MB} MB toolkit in $MIRROR (once; takes minutes)"
  rm -rf "$MIRROR"
  "$BIN" gen -dir "$MIRROR" -mb "$MB" -from "$FROM"
fi

rm -f "$WORK/serve-pgo.out"
"$BIN" serve -dir "$MIRROR" > "$WORK/serve-pgo.out" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$WORK/serve-pgo.out" ] && break; sleep 0.1; done
BASE=$(head -1 "$WORK/serve-pgo.out")

profiles=()
for r in $(seq "$RUNS"); do
  rm -rf "$WORK/dest-pgo" "$WORK/cache-pgo"
  "$BIN" fetch -base "$BASE" -dest "$WORK/dest-pgo" -cache "$WORK/cache-pgo" -cpuprofile "$WORK/cpu-$r.pprof" > /dev/null
  profiles+=("$WORK/cpu-$r.pprof")
done
rm -rf "$WORK/dest-pgo" "$WORK/cache-pgo"
go tool pprof -proto "${profiles[@]}" > "$WORK/merged.pprof" 2> /dev/null
mv "$WORK/merged.pprof" "$PGO"
echo "wrote $PGO ($(wc -c < "$PGO") bytes) from $RUNS installs of $MIRROR"
go tool pprof -top -nodecount=8 "$PGO" 2> /dev/null | tail -9

#!/usr/bin/env bash
# Benchmark: cudaenv's fetch.Client.Fetch vs `curl -s URL | tar -xJf -` run
# one archive after another, over the same 12-component toolkit (>= 300 MB
# unpacked) served from a loopback mirror, in the same run.
#
#   bench/install/run.sh [-mb 360] [-runs 3] [-cpus 2] [-work DIR]
#
# Generated archives are kept in WORK (default /tmp/cudaenv-bench) and
# reused while the size stays the same.
set -euo pipefail
MB=360 RUNS=3 CPUS=2 WORK=/tmp/cudaenv-bench
while [ $# -gt 0 ]; do
  case "$1" in
    -mb) MB=$2; shift 2;;
    -runs) RUNS=$2; shift 2;;
    -cpus) CPUS=$2; shift 2;;
    -work) WORK=$2; shift 2;;
    *) echo "unknown flag $1" >&2; exit 2;;
  esac
done
cd "$(dirname "$0")/../.."
mkdir -p "$WORK"
BIN="$WORK/benchinstall"
go build -o "$BIN" ./bench/install

MIRROR="$WORK/mirror-$MB"
if [ ! -f "$MIRROR/urls.txt" ]; then
  echo "generating a ${MB} MB toolkit in $MIRROR (once; takes minutes)"
  rm -rf "$MIRROR"
  "$BIN" gen -dir "$MIRROR" -mb "$MB"
fi

# Pin everything to CPUS cores when the machine has more.
PIN=()
if command -v taskset >/dev/null && [ "$(nproc)" -gt "$CPUS" ]; then
  PIN=(taskset -c "0-$((CPUS - 1))")
fi
cores=$CPUS; [ "$(nproc)" -lt "$CPUS" ] && cores=$(nproc)

"${PIN[@]}" "$BIN" serve -dir "$MIRROR" > "$WORK/serve.out" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$WORK/serve.out" ] && break; sleep 0.1; done
BASE=$(head -1 "$WORK/serve.out")

TIMEV=()
[ -x /usr/bin/time ] && TIMEV=(/usr/bin/time -f "%e %M")

# measure NAME CMD...: prints "wall_s maxrss_kib" of the command.
measure() {
  local out="$WORK/time.out"
  if [ ${#TIMEV[@]} -gt 0 ]; then
    "${TIMEV[@]}" -o "$out" "$@" > /dev/null
    cat "$out"
  else
    local s e
    s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
    echo "$(echo "$e - $s" | bc) 0"
  fi
}

baseline() {
  local dest=$1
  mkdir -p "$dest"
  while read -r u; do
    curl -sf "$BASE/$u" | tar -xJf - -C "$dest"
  done < "$MIRROR/urls.txt"
}
export -f baseline
export BASE MIRROR

echo "toolkit: $(du -sh --apparent-size "$MIRROR/cuda" | cut -f1) compressed, ${MB} MB unpacked, $(wc -l < "$MIRROR/urls.txt") archives; cores: $cores; go $(go env GOVERSION); $(xz --version | head -1)"
printf "%-5s %-28s %8s %10s\n" run method wall_s maxrss_MiB
best_b=999999 best_f=999999 rss_f=0 rss_b=0 ratios=()
for r in $(seq "$RUNS"); do
  rm -rf "$WORK/dest-b" "$WORK/dest-f" "$WORK/cache-f"; sync
  read -r wb mb < <(measure "${PIN[@]}" bash -c "baseline '$WORK/dest-b'")
  printf "%-5s %-28s %8.2f %10.1f\n" "$r" "curl|tar -xJf (sequential)" "$wb" "$(echo "$mb/1024" | bc -l)"
  rm -rf "$WORK/dest-b"; sync
  read -r wf mf < <(measure "${PIN[@]}" "$BIN" fetch -base "$BASE" -dest "$WORK/dest-f" -cache "$WORK/cache-f")
  printf "%-5s %-28s %8.2f %10.1f\n" "$r" "cudaenv fetch" "$wf" "$(echo "$mf/1024" | bc -l)"
  ratios+=("$(echo "$wf/$wb" | bc -l)")
  best_b=$(echo "if ($wb < $best_b) $wb else $best_b" | bc -l)
  best_f=$(echo "if ($wf < $best_f) $wf else $best_f" | bc -l)
  [ "$mf" -gt "$rss_f" ] && rss_f=$mf
  [ "$mb" -gt "$rss_b" ] && rss_b=$mb
done
rm -rf "$WORK/dest-f" "$WORK/cache-f"
median=$(printf "%s\n" "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
printf "per-run ratios (fetch/baseline):"; printf " %.3f" "${ratios[@]}"; echo
printf "median ratio %.3f\n" "$median"
printf "best wall: baseline %.2fs, fetch %.2fs, ratio %.3f (target <= 0.8)\n" "$best_b" "$best_f" "$(echo "$best_f/$best_b" | bc -l)"
printf "peak RSS: fetch %.1f MiB (target < 64), baseline's largest process %.1f MiB\n" "$(echo "$rss_f/1024" | bc -l)" "$(echo "$rss_b/1024" | bc -l)"

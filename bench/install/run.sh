#!/usr/bin/env bash
# Benchmark: cudaenv's fetch.Client.Fetch vs `curl -s URL | tar -xJf -`,
# run one archive after another and two at a time, over the same
# 12-component toolkit (>= 300 MB unpacked) served from a loopback
# mirror, in the same run.
#
#   bench/install/run.sh [-mb 360] [-runs 3] [-cpus 2] [-work DIR] [-from DIRS | -synthetic]
#
# The toolkit's files are real shared libraries and headers from -from
# (colon-separated directories; default /usr/lib/x86_64-linux-gnu and
# /usr/include when present), or with -synthetic fetchtest's generated
# data. Generated archives are kept in WORK (default /tmp/cudaenv-bench)
# and reused while the size and source stay the same. The benchmark
# binary is built with cmd/cudaenv's PGO profile, as cudaenv is.
set -euo pipefail
MB=360 RUNS=3 CPUS=2 WORK=/tmp/cudaenv-bench FROM=
if [ -d /usr/lib/x86_64-linux-gnu ] && [ -d /usr/include ]; then
  FROM=/usr/lib/x86_64-linux-gnu:/usr/include
fi
while [ $# -gt 0 ]; do
  case "$1" in
    -mb) MB=$2; shift 2;;
    -runs) RUNS=$2; shift 2;;
    -cpus) CPUS=$2; shift 2;;
    -work) WORK=$2; shift 2;;
    -from) FROM=$2; shift 2;;
    -synthetic) FROM=; shift;;
    *) echo "unknown flag $1" >&2; exit 2;;
  esac
done
cd "$(dirname "$0")/../.."
mkdir -p "$WORK"
BIN="$WORK/benchinstall"
go build -pgo=cmd/cudaenv/default.pgo -o "$BIN" ./bench/install

if [ -n "$FROM" ]; then
  MIRROR="$WORK/mirror-$MB-real" KIND="real binaries and headers from $FROM"
else
  MIRROR="$WORK/mirror-$MB" KIND="synthetic data"
fi
if [ ! -f "$MIRROR/urls.txt" ]; then
  echo "generating a ${MB} MB toolkit in $MIRROR (once; takes minutes)"
  rm -rf "$MIRROR"
  "$BIN" gen -dir "$MIRROR" -mb "$MB" ${FROM:+-from "$FROM"}
fi

# Pin everything to CPUS cores when the machine has more.
PIN=()
if command -v taskset >/dev/null && [ "$(nproc)" -gt "$CPUS" ]; then
  PIN=(taskset -c "0-$((CPUS - 1))")
fi
cores=$CPUS; [ "$(nproc)" -lt "$CPUS" ] && cores=$(nproc)

rm -f "$WORK/serve.out" # a previous run's address would race the new server's
"${PIN[@]}" "$BIN" serve -dir "$MIRROR" > "$WORK/serve.out" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$WORK/serve.out" ] && break; sleep 0.1; done
BASE=$(head -1 "$WORK/serve.out")

TIMEV=()
[ -x /usr/bin/time ] && TIMEV=(/usr/bin/time -f "%e %M %U %S")

# measure CMD...: prints "wall_s maxrss_kib cpu_s" of the command (cpu_s:
# user+sys of it and its children, which is steadier than wall time when
# other jobs share the machine).
measure() {
  local out="$WORK/time.out"
  if [ ${#TIMEV[@]} -gt 0 ]; then
    "${TIMEV[@]}" -o "$out" "$@" > /dev/null
    awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$out"
  else
    local s e
    s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
    echo "$(echo "$e - $s" | bc) 0 0"
  fi
}

baseline() {
  local dest=$1
  mkdir -p "$dest"
  while read -r u; do
    curl -sf "$BASE/$u" | tar -xJf - -C "$dest"
  done < "$MIRROR/urls.txt"
}
# parallel DEST: two `curl | tar` at a time, each taking the next archive.
parallel() {
  mkdir -p "$1"
  xargs -P 2 -n 1 bash -c 'set -o pipefail; curl -sf "$BASE/$1" | tar -xJf - -C "$0"' "$1" < "$MIRROR/urls.txt"
}
export -f baseline parallel
export BASE MIRROR

echo "toolkit: $(du -sh --apparent-size "$MIRROR/cuda" | cut -f1) compressed, ${MB} MB unpacked, $(wc -l < "$MIRROR/urls.txt") archives of $KIND; cores: $cores; go $(go env GOVERSION); $(xz --version | head -1)"
printf "%-5s %-28s %8s %8s %10s\n" run method wall_s cpu_s maxrss_MiB
rss_f=0 rss_b=0 seq=() par=() cpu=()
for r in $(seq "$RUNS"); do
  rm -rf "$WORK/dest-b" "$WORK/dest-p" "$WORK/dest-f" "$WORK/cache-f"; sync
  read -r wb mb cb < <(measure "${PIN[@]}" bash -c "baseline '$WORK/dest-b'")
  printf "%-5s %-28s %8.2f %8.2f %10.1f\n" "$r" "curl|tar -xJf (sequential)" "$wb" "$cb" "$(echo "$mb/1024" | bc -l)"
  rm -rf "$WORK/dest-b"; sync
  read -r wp mp cp < <(measure "${PIN[@]}" bash -c "parallel '$WORK/dest-p'")
  printf "%-5s %-28s %8.2f %8.2f %10.1f\n" "$r" "curl|tar -xJf (2 parallel)" "$wp" "$cp" "$(echo "$mp/1024" | bc -l)"
  rm -rf "$WORK/dest-p"; sync
  read -r wf mf cf < <(measure "${PIN[@]}" "$BIN" fetch -base "$BASE" -dest "$WORK/dest-f" -cache "$WORK/cache-f")
  printf "%-5s %-28s %8.2f %8.2f %10.1f\n" "$r" "cudaenv fetch" "$wf" "$cf" "$(echo "$mf/1024" | bc -l)"
  rm -rf "$WORK/dest-f" "$WORK/cache-f"
  seq+=("$(echo "$wf/$wb" | bc -l)")
  par+=("$(echo "$wf/$wp" | bc -l)")
  [ "$cb" != 0 ] && cpu+=("$(echo "$cf/$cb" | bc -l)")
  [ "$mf" -gt "$rss_f" ] && rss_f=$mf
  [ "$mb" -gt "$rss_b" ] && rss_b=$mb
  [ "$mp" -gt "$rss_b" ] && rss_b=$mp
done
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf "per-run ratios fetch/sequential:"; printf " %.3f" "${seq[@]}"; echo
printf "per-run ratios fetch/2 parallel:"; printf " %.3f" "${par[@]}"; echo
printf "median ratio to sequential %.3f (target <= 0.6)\n" "$(median "${seq[@]}")"
printf "median ratio to 2 parallel %.3f (target <= 1.0)\n" "$(median "${par[@]}")"
[ ${#cpu[@]} -gt 0 ] && printf "median CPU time ratio fetch/sequential %.3f (wall ratios need a quiet machine)\n" "$(median "${cpu[@]}")"
printf "peak RSS: fetch %.1f MiB (target < 64), baseline's largest process %.1f MiB\n" "$(echo "$rss_f/1024" | bc -l)" "$(echo "$rss_b/1024" | bc -l)"

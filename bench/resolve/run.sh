#!/usr/bin/env bash
# Benchmark (#30): cudaenv install --for X --source pypi --dry-run against
# uv pip install --dry-run X (with its dependencies, into an empty venv),
# both against the real PyPI, cold (empty metadata cache: cudaenv's
# download cache, uv's cache) and warm (the same cache again), rounds
# interleaved. Wall time by /usr/bin/time; bytes as they cross a CONNECT
# proxy on the loopback (bench/resolve: TLS bytes both ways, for both
# tools alike). Prints the medians and the cudaenv/uv ratios.
#
#   bench/resolve/run.sh [-runs 5] [-specs "torch jax[cuda13]"] [-work DIR] [-cudaenv BIN]
#
# Needs the network (pypi.org), python3 with venv (uv comes from PyPI into
# WORK, default /tmp/cudaenv-bench-resolve) and go.
set -euo pipefail
RUNS=5 SPECS="torch torch==2.7.1 jax[cuda13] tensorflow[and-cuda]==2.19.1 vllm" WORK=/tmp/cudaenv-bench-resolve CUDAENV=
while [ $# -gt 0 ]; do
  case "$1" in
    -runs) RUNS=$2; shift 2;;
    -specs) SPECS=$2; shift 2;;
    -work) WORK=$2; shift 2;;
    -cudaenv) CUDAENV=$2; shift 2;;
    *) echo "unknown flag $1" >&2; exit 2;;
  esac
done
cd "$(dirname "$0")/../.."
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if [ -z "$CUDAENV" ]; then
  CUDAENV="$WORK/cudaenv"
  go build -tags urfave_cli_no_docs -o "$CUDAENV" ./cmd/cudaenv
fi
go build -o "$WORK/resolvebench" ./bench/resolve
if [ ! -x "$WORK/tools/bin/uv" ]; then
  python3 -m venv "$WORK/tools"
  "$WORK/tools/bin/pip" install -q uv
fi
UV="$WORK/tools/bin/uv"
[ -x "$WORK/target/bin/python" ] || python3 -m venv "$WORK/target"

# measure CMD...: one run through a fresh counting proxy; prints
# "wall_s bytes_down bytes_up".
measure() {
  rm -f "$WORK/port" "$WORK/count"
  "$WORK/resolvebench" proxy -port-file "$WORK/port" -count-file "$WORK/count" &
  local proxy=$!
  while [ ! -s "$WORK/port" ]; do sleep 0.05; done
  local port; port=$(cat "$WORK/port")
  sync; sleep 1
  HTTPS_PROXY=http://127.0.0.1:$port https_proxy=http://127.0.0.1:$port \
    /usr/bin/time -f "%e" -o "$WORK/time.out" "$@" > "$WORK/cmd.out" 2>&1 || { cat "$WORK/cmd.out" >&2; kill "$proxy"; return 1; }
  kill "$proxy"; wait "$proxy" 2>/dev/null || true
  echo "$(cat "$WORK/time.out") $(cat "$WORK/count")"
}
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

cudaenv_cmd() { # CACHE SPEC: the command, as words
  CMD=(env CUDAENV_ROOT="$WORK/root" CUDAENV_CACHE_DIR="$1" CUDAENV_CONFIG_DIR="$WORK/config" HOME="$WORK/home"
    CUDAENV_DRIVER_VERSION=none "$CUDAENV" install --for "$2" --source pypi --dry-run)
}
uv_cmd() { # CACHE SPEC
  CMD=(env UV_CACHE_DIR="$1" UV_PYTHON_DOWNLOADS=never "$UV" pip install --dry-run --python "$WORK/target/bin/python" "$2")
}

printf "%-18s %-12s %9s %9s %9s %9s\n" spec case cudaenv_s uv_s ratio_t ratio_MB
for spec in $SPECS; do
  for state in cold warm; do
    ct=() cb=() ut=() ub=()
    for i in $(seq "$RUNS"); do
      if [ "$state" = cold ]; then rm -rf "$WORK/c-cache" "$WORK/u-cache"; fi
      mkdir -p "$WORK/home"
      cudaenv_cmd "$WORK/c-cache" "$spec"; read -r t d u < <(measure "${CMD[@]}"); ct+=("$t"); cb+=("$((d + u))")
      uv_cmd "$WORK/u-cache" "$spec"; read -r t d u < <(measure "${CMD[@]}"); ut+=("$t"); ub+=("$((d + u))")
    done
    c=$(median "${ct[@]}") u=$(median "${ut[@]}") cB=$(median "${cb[@]}") uB=$(median "${ub[@]}")
    printf "%-18s %-12s %9s %9s %9.2f %9.2f   (MB: cudaenv %.2f, uv %.2f)\n" "$spec" "$state" "$c" "$u" \
      "$(echo "$c/$u" | bc -l)" "$(echo "$cB/$uB" | bc -l)" "$(echo "$cB/1000000" | bc -l)" "$(echo "$uB/1000000" | bc -l)"
  done
done

#!/usr/bin/env bash
# Benchmark: cudaenv installing NVIDIA's wheels from a local PyPI index,
# against `uv pip install --no-deps` and `pip install --no-deps` of the
# same wheels into a fresh venv, cold (empty caches) and warm (the wheels
# already in each tool's cache), rounds interleaved.
#
#   bench/pypi/run.sh [-runs 3] [-sets cu13,torch] [-work DIR] [-cudaenv BIN] [-pip 0]
#                     [-before BIN] [-redist MB]
#
# Sets: cu13 is `install 13.4.2 --profile minimal` (5 wheels, 121 MiB);
# torch is `install --for torch==2.5.1` (CUDA 12.4.1's default profile and
# cuDNN 9.1.0.70: 21 wheels, 1.8 GiB). Preparing a set (once, kept in WORK,
# default /tmp/cudaenv-bench-pypi) needs the network: cudaenv installs it
# from pypi.org, then bench/pypi writes a PEP 503 index of the very wheels
# it chose, which python3 -m http.server serves on the loopback. uv and pip
# are installed from PyPI into a venv in WORK. CPU is user+sys of the
# command and its children, steadier than wall time on a shared machine.
# -pip 0 leaves pip out (minutes a round on the torch set). Each timed
# command starts after sync and 2 s of quiet. Warm, uv runs twice: with
# --link-mode copy, and with its default link mode (hard links from its
# cache on Linux), the figure cudaenv's warm install is held to.
# -before BIN runs an older cudaenv in the same rounds (its own store and
# cache), for after/before ratios. -redist MB adds, in the cu13 set's
# rounds, NVIDIA's redist archives: a toolkit of MB unpacked (real
# binaries and headers, bench/install's generator, served on the
# loopback) installed cold and then again into a fresh store from the
# cached archives, held to uv's warm default install of the same round.
set -euo pipefail
RUNS=3 SETS=cu13,torch WORK=/tmp/cudaenv-bench-pypi CUDAENV= PIP=1 BEFORE= REDIST=0
while [ $# -gt 0 ]; do
  case "$1" in
    -runs) RUNS=$2; shift 2;;
    -sets) SETS=$2; shift 2;;
    -work) WORK=$2; shift 2;;
    -cudaenv) CUDAENV=$2; shift 2;;
    -pip) PIP=$2; shift 2;;
    -before) BEFORE=$2; shift 2;;
    -redist) REDIST=$2; shift 2;;
    *) echo "unknown flag $1" >&2; exit 2;;
  esac
done
cd "$(dirname "$0")/../.."
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if [ -z "$CUDAENV" ]; then
  CUDAENV="$WORK/cudaenv"
  go build -tags urfave_cli_no_docs -pgo=auto -o "$CUDAENV" ./cmd/cudaenv
fi
go build -o "$WORK/pypibench" ./bench/pypi
if [ ! -x "$WORK/tools/bin/uv" ]; then
  python3 -m venv "$WORK/tools"
  "$WORK/tools/bin/pip" install -q uv
fi
UV="$WORK/tools/bin/uv" PY="$WORK/tools/bin/python"

# env_for ROOT: a cudaenv with all its folders under ROOT.
env_for() {
  echo "CUDAENV_ROOT=$1/root CUDAENV_CACHE_DIR=$1/cache CUDAENV_CONFIG_DIR=$1/config HOME=$1/home"
}
args_for() {
  case "$1" in
    cu13) echo "install 13.4.2 --source pypi --profile minimal -q";;
    torch) echo "install --for torch==2.5.1 --source pypi -q";;
  esac
}
prepare() {
  local set=$1 p="$WORK/prep-$1"
  [ -f "$WORK/index-$set/requirements.txt" ] && return
  echo "preparing $set from pypi.org (once)"
  rm -rf "$p" "$WORK/index-$set"; mkdir -p "$p/home"
  env $(env_for "$p") "$CUDAENV" $(args_for "$set") > /dev/null
  local major=12; [ "$set" = cu13 ] && major=13
  "$WORK/pypibench" index -out "$WORK/index-$set" -cache "$p/cache" -major "$major" \
    "$p"/root/cuda/*/receipt.json $(ls "$p"/root/cudnn/*/receipt.json 2>/dev/null || true)
}

TIMEV=(/usr/bin/time -f "%e %M %U %S")
# measure CMD...: "wall_s maxrss_kib cpu_s"
# Each starts after the page cache's dirty pages (the last command's files,
# the last round's deletions) are written back: on this VM that writeback
# costs seconds of system time, charged to whoever writes next.
measure() {
  sync; sleep 2
  "${TIMEV[@]}" -o "$WORK/time.out" "$@" > "$WORK/cmd.out" 2>&1 || { cat "$WORK/cmd.out" >&2; return 1; }
  awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$WORK/time.out"
}
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { echo "$1/$2" | bc -l; }

IFS=, read -r -a sets <<< "$SETS"
for s in "${sets[@]}"; do prepare "$s"; done

# The redist toolkit, generated once (real binaries and headers when this
# machine has them) and served on the loopback while the benchmark runs.
RBASE= RSERVER=
if [ "$REDIST" -gt 0 ]; then
  go build -o "$WORK/benchinstall" ./bench/install
  RMIRROR="$WORK/redist-$REDIST"
  if [ ! -f "$RMIRROR/urls.txt" ]; then
    from=; [ -d /usr/lib/x86_64-linux-gnu ] && [ -d /usr/include ] && from=/usr/lib/x86_64-linux-gnu:/usr/include
    "$WORK/benchinstall" gen -dir "$RMIRROR" -mb "$REDIST" ${from:+-from "$from"}
  fi
  "$WORK/benchinstall" serve -dir "$RMIRROR" > "$WORK/rserve.out" &
  RSERVER=$!
  for _ in $(seq 50); do [ -s "$WORK/rserve.out" ] && break; sleep 0.1; done
  RBASE=$(head -1 "$WORK/rserve.out")
fi
trap 'kill $RSERVER 2>/dev/null || true' EXIT

for set in "${sets[@]}"; do
  IDX="$WORK/index-$set"
  port=$((20000 + RANDOM % 20000))
  "$PY" -m http.server -b 127.0.0.1 -d "$IDX" "$port" > /dev/null 2>&1 &
  SERVER=$!
  trap 'kill $SERVER $RSERVER 2>/dev/null || true' EXIT
  URL="http://127.0.0.1:$port/simple/"
  for _ in $(seq 50); do curl -sf "$URL" -o /dev/null 2>/dev/null && break; curl -sf "${URL}nvidia-cudnn-cu12/" -o /dev/null 2>/dev/null && break; sleep 0.1; done
  sleep 0.3
  echo
  echo "set $set: $(wc -l < "$IDX/requirements.txt") wheels, $(du -sh "$IDX/files" | cut -f1); cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg); uv $("$UV" --version | cut -d' ' -f2); pip $("$PY" -m pip --version | cut -d' ' -f2)"
  printf "%-4s %-6s %-26s %8s %8s %10s\n" run cache tool wall_s cpu_s maxrss_MiB
  cw=() cc=() ww=() wc_=() wh=() rss=0 bcw=() bcc=() bww=() bwc=() rw=() rc=() rwh=() brw=()
  R="$WORK/run-$set"
  for r in $(seq "$RUNS"); do
    rm -rf "$R"; mkdir -p "$R/c/home" "$R/b/home" "$R/r/home" "$R/rb/home" "$R/uvcache" "$R/pipcache"
    row() { printf "%-4s %-6s %-26s %8.2f %8.2f %10.1f\n" "$r" "$1" "$2" "$3" "$5" "$(echo "$4/1024" | bc -l)"; }
    # cold
    read -r w1 m1 c1 < <(measure env $(env_for "$R/c") CUDAENV_PYPI_INDEX="$URL" "$CUDAENV" $(args_for "$set"))
    row cold cudaenv "$w1" "$m1" "$c1"
    "$UV" venv -q --python "$PY" "$R/uv1"
    read -r w2 m2 c2 < <(measure "$UV" pip install -q --python "$R/uv1/bin/python" --no-deps --index-url "$URL" --cache-dir "$R/uvcache" -r "$IDX/requirements.txt")
    row cold "uv pip install" "$w2" "$m2" "$c2"
    w3=0 c3=0
    if [ "$PIP" = 1 ]; then
      "$PY" -m venv "$R/pip1"
      read -r w3 m3 c3 < <(measure "$R/pip1/bin/pip" install -q --disable-pip-version-check --no-deps --index-url "$URL" --cache-dir "$R/pipcache" -r "$IDX/requirements.txt")
      row cold "pip install" "$w3" "$m3" "$c3"
    fi
    # warm: the archives are cached; a fresh store / venv. The cold
    # store stays, as uv's cold venv does: removing it with rm -rf would
    # touch every cached file (its link count), and the next install would
    # read them all again to tell that from a change.
    read -r w4 m4 c4 < <(measure env $(env_for "$R/c") CUDAENV_ROOT="$R/c/root2" CUDAENV_PYPI_INDEX="$URL" "$CUDAENV" $(args_for "$set"))
    row warm cudaenv "$w4" "$m4" "$c4"
    "$UV" venv -q --python "$PY" "$R/uv2"
    read -r w5 m5 c5 < <(measure "$UV" pip install -q --python "$R/uv2/bin/python" --no-deps --link-mode copy --index-url "$URL" --cache-dir "$R/uvcache" -r "$IDX/requirements.txt")
    row warm "uv pip install (copy)" "$w5" "$m5" "$c5"
    "$UV" venv -q --python "$PY" "$R/uv3"
    read -r w6 m6 c6 < <(measure "$UV" pip install -q --python "$R/uv3/bin/python" --no-deps --index-url "$URL" --cache-dir "$R/uvcache" -r "$IDX/requirements.txt")
    row warm "uv pip install (default)" "$w6" "$m6" "$c6"
    if [ "$PIP" = 1 ]; then
      "$PY" -m venv "$R/pip2"
      read -r w7 m7 c7 < <(measure "$R/pip2/bin/pip" install -q --disable-pip-version-check --no-deps --index-url "$URL" --cache-dir "$R/pipcache" -r "$IDX/requirements.txt")
      row warm "pip install" "$w7" "$m7" "$c7"
    fi
    if [ -n "$BEFORE" ]; then
      # the older cudaenv, same commands, a store and cache of its own
      read -r bw1 _ bc1 < <(measure env $(env_for "$R/b") CUDAENV_PYPI_INDEX="$URL" "$BEFORE" $(args_for "$set"))
      row cold "cudaenv (before)" "$bw1" 0 "$bc1"
      read -r bw4 _ bc4 < <(measure env $(env_for "$R/b") CUDAENV_ROOT="$R/b/root2" CUDAENV_PYPI_INDEX="$URL" "$BEFORE" $(args_for "$set"))
      row warm "cudaenv (before)" "$bw4" 0 "$bc4"
      bcw+=("$(ratio "$w1" "$bw1")") bcc+=("$(ratio "$c1" "$bc1")") bww+=("$(ratio "$w4" "$bw4")") bwc+=("$(ratio "$c4" "$bc4")")
    fi
    if [ -n "$RBASE" ] && [ "$set" = cu13 ]; then
      rargs="install 12.4.1 --profile full --mirror $RBASE -q"
      read -r rw1 rm1 rc1 < <(measure env $(env_for "$R/r") "$CUDAENV" $rargs)
      row cold "cudaenv redist" "$rw1" "$rm1" "$rc1"
      read -r rw2 rm2 rc2 < <(measure env $(env_for "$R/r") CUDAENV_ROOT="$R/r/root2" "$CUDAENV" $rargs)
      row warm "cudaenv redist" "$rw2" "$rm2" "$rc2"
      rw+=("$(ratio "$rw2" "$w6")") rc+=("$(ratio "$rc2" "$c6")") rwh+=("$(ratio "$rw2" "$rw1")")
      for m in "$rm1" "$rm2"; do [ "$m" -gt "$rss" ] && rss=$m; done
      if [ -n "$BEFORE" ]; then
        read -r _ _ _ < <(measure env $(env_for "$R/rb") "$BEFORE" $rargs)
        read -r brw2 _ brc2 < <(measure env $(env_for "$R/rb") CUDAENV_ROOT="$R/rb/root2" "$BEFORE" $rargs)
        row warm "cudaenv redist (before)" "$brw2" 0 "$brc2"
        brw+=("$(ratio "$rw2" "$brw2")")
      fi
    fi
    cw+=("$(ratio "$w1" "$w2")") cc+=("$(ratio "$c1" "$c2")")
    ww+=("$(ratio "$w4" "$w5")") wc_+=("$(ratio "$c4" "$c5")") wh+=("$(ratio "$w4" "$w6")")
    [ "$PIP" = 1 ] && pw+=("$(ratio "$w1" "$w3")") pc+=("$(ratio "$c1" "$c3")")
    for m in "$m1" "$m4"; do [ "$m" -gt "$rss" ] && rss=$m; done
  done
  rm -rf "$R"
  kill "$SERVER" 2>/dev/null || true
  printf "cold, cudaenv/uv:  wall %.2f (runs:%s), CPU %.2f (runs:%s)  [targets: <= 1.0, <= 1.3]\n" \
    "$(median "${cw[@]}")" "$(printf " %.2f" "${cw[@]}")" "$(median "${cc[@]}")" "$(printf " %.2f" "${cc[@]}")"
  [ "$PIP" = 1 ] && printf "cold, cudaenv/pip: wall %.2f, CPU %.2f\n" "$(median "${pw[@]}")" "$(median "${pc[@]}")"
  printf "warm, cudaenv/uv copy: wall %.2f (runs:%s), CPU %.2f; cudaenv/uv default (hardlink): wall %.2f (runs:%s)  [target: <= 1.0 of uv's default]\n" \
    "$(median "${ww[@]}")" "$(printf " %.2f" "${ww[@]}")" "$(median "${wc_[@]}")" "$(median "${wh[@]}")" "$(printf " %.2f" "${wh[@]}")"
  [ ${#bcw[@]} -gt 0 ] && printf "after/before: cold wall %.2f, CPU %.2f; warm wall %.2f, CPU %.2f\n" \
    "$(median "${bcw[@]}")" "$(median "${bcc[@]}")" "$(median "${bww[@]}")" "$(median "${bwc[@]}")"
  [ ${#rw[@]} -gt 0 ] && printf "redist reinstall (%s MB), cudaenv/uv default (hardlink, cu13 warm): wall %.2f (runs:%s), CPU %.2f; warm/cold %.2f  [target: <= 1.0]\n" \
    "$REDIST" "$(median "${rw[@]}")" "$(printf " %.2f" "${rw[@]}")" "$(median "${rc[@]}")" "$(median "${rwh[@]}")"
  [ ${#brw[@]} -gt 0 ] && printf "redist reinstall after/before: wall %.2f\n" "$(median "${brw[@]}")"
  printf "cudaenv peak RSS %.1f MiB (target < 64)\n" "$(echo "$rss/1024" | bc -l)"
  pw=() pc=()
done
[ -n "$RSERVER" ] && kill "$RSERVER" 2>/dev/null || true

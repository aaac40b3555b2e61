#!/usr/bin/env bash
# module load cost benchmark (BENCHMARKS.md, "Modulefiles").
#
# Times `module load cuda/12.4.1; module unload cuda` with Lmod for the
# modulefile cudaenv writes (cudaenv modulefile) against a hand-written one
# of the kind cluster admins keep (pathJoin, setenv) that sets the same
# variables for the same tree. The two alternate load by load in one bash
# process (bash's time keyword: wall, and CPU of Lmod's processes); the
# median wall time and the mean CPU time are printed.
# Usage: bench/modules/run.sh [pairs]   (default 400)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=${1:-400}
lmod_init=/usr/share/lmod/lmod/init/bash
[[ -r $lmod_init ]] || { echo "Lmod is not installed ($lmod_init)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/bin/" "$repo/cmd/cudaenv"
export CUDAENV_ROOT="$work/root" CUDAENV_CONFIG_DIR="$work/config" CUDAENV_CACHE_DIR="$work/cache"
tree="$CUDAENV_ROOT/cuda/12.4.1"
mkdir -p "$tree/bin" "$tree/lib64"
echo '{"kind":"cuda","version":"12.4.1","source":"nvidia"}' > "$tree/receipt.json"
"$work/bin/cudaenv" modulefile 12.4.1 -o "$work/cudaenv-mods" >/dev/null
mkdir -p "$work/hand-mods/cuda"
cat > "$work/hand-mods/cuda/12.4.1.lua" <<LUA
help([[CUDA Toolkit 12.4.1]])
whatis("CUDA Toolkit 12.4.1")
family("cuda")
local root = "$tree"
prepend_path("PATH", pathJoin(root, "bin"))
prepend_path("LD_LIBRARY_PATH", pathJoin(root, "lib64"))
setenv("CUDA_HOME", root)
setenv("CUDA_PATH", root)
setenv("CUDACXX", pathJoin(root, "bin", "nvcc"))
LUA

mkdir -p "$work/hand-mods/cuda-hand"
mv "$work/hand-mods/cuda/12.4.1.lua" "$work/hand-mods/cuda-hand/12.4.1.lua"

bash --norc --noprofile -c '
set -u
n=$1 lmod_init=$2 work=$3
source "$lmod_init"
export PATH=/usr/bin:/bin
module use "$work/cudaenv-mods" "$work/hand-mods"
TIMEFORMAT="%R %U %S"
pair() { { time { module load "$1"; module unload "$1"; } ; } 2>> "$work/$2.times"; }
pair cuda/12.4.1 warm; pair cuda-hand/12.4.1 warm
for ((i = 0; i < n; i++)); do
  if (( i % 2 )); then pair cuda/12.4.1 cudaenv; pair cuda-hand/12.4.1 hand
  else pair cuda-hand/12.4.1 hand; pair cuda/12.4.1 cudaenv; fi
done
' bash "$n" "$lmod_init" "$work"
stats() { # file: median wall ms, mean CPU ms (user+sys, children included)
  sort -n -k1 "$1" | awk '{ w[NR] = $1; c += $2 + $3 } END { m = (NR % 2) ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2; printf "%.2f %.2f\n", m * 1000, c * 1000 / NR }'
}
read -r cw cc < <(stats "$work/cudaenv.times")
read -r hw hc < <(stats "$work/hand.times")
printf "%-28s %14s %14s\n" "modulefile (load + unload)" "median_wall_ms" "mean_cpu_ms"
printf "%-28s %14.2f %14.2f\n" "cudaenv modulefile" "$cw" "$cc" "hand-written" "$hw" "$hc"
printf "ratio cudaenv/hand-written: wall %.3f, cpu %.3f (%d pairs, interleaved)\n" "$(echo "$cw / $hw" | bc -l)" "$(echo "$cc / $hc" | bc -l)" "$n"

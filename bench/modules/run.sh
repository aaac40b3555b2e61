#!/usr/bin/env bash
# module load cost benchmark (BENCHMARKS.md, "Modulefiles").
#
# Times `module load cuda/12.4.1; module unload cuda` with Lmod for the
# modulefile cudaenv writes (cudaenv modulefile) against a hand-written one
# of the kind cluster admins keep (pathJoin, setenv) that sets the same
# variables for the same tree. Rounds alternate the two, in one bash
# process, timed with $EPOCHREALTIME.
# Usage: bench/modules/run.sh [loads-per-round] [rounds]   (default 200, 5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=${1:-200}
rounds=${2:-5}
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

bash --norc --noprofile -c '
set -u
n=$1 rounds=$2 lmod_init=$3 work=$4
source "$lmod_init"
export PATH=/usr/bin:/bin
time_loads() { # modulepath
  module use "$1"
  module load cuda/12.4.1 && module unload cuda   # warm Lmod caches
  local t0=$EPOCHREALTIME i
  for ((i = 0; i < n; i++)); do module load cuda/12.4.1; module unload cuda; done
  local t1=$EPOCHREALTIME
  module unuse "$1"
  echo $(( (${t1/./} - ${t0/./}) / n ))   # microseconds per load+unload
}
for ((r = 1; r <= rounds; r++)); do
  if (( r % 2 )); then
    c=$(time_loads "$work/cudaenv-mods"); h=$(time_loads "$work/hand-mods")
  else
    h=$(time_loads "$work/hand-mods"); c=$(time_loads "$work/cudaenv-mods")
  fi
  echo "$r $c $h"
done
' bash "$n" "$rounds" "$lmod_init" "$work" | awk '
  BEGIN { printf "%-6s %16s %16s %8s\n", "round", "cudaenv_ms", "handwritten_ms", "ratio" }
  { printf "%-6s %16.2f %16.2f %8.3f\n", $1, $2 / 1000, $3 / 1000, $2 / $3 }'

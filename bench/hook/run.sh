#!/usr/bin/env bash
# Prompt-hook cost benchmark (BENCHMARKS.md, "Shell hook").
#
# Measures, in one bash process with $EPOCHREALTIME, the mean cost per prompt of:
#   bare      - a prompt with an empty PROMPT_COMMAND function (the baseline)
#   idle      - cudaenv's hook when nothing changed (the common case)
#   cd-inside - cudaenv's hook after a cd between two folders of the project
#               (the check walks up to the project in builtins: no process)
#   cd        - cudaenv's hook after entering or leaving the project (one
#               start of the small cudaenv-shim binary, which answers hook-env)
#   cd-nosh   - the same when cudaenv-shim is not installed (one start of cudaenv)
#   cd-venv   - cd, with VIRTUAL_ENV a venv whose torch 2.9 requires an
#               nvidia-nvjitlink wheel newer than the toolkit's copy: the
#               hook's library look (folder listings, the dist-info files,
#               torch's METADATA) on top of cd
#   direnv    - `eval "$(direnv export bash)"` in a directory without .envrc
#               (what direnv's own hook runs at every prompt), if installed
# and prints each as microseconds and as a ratio to direnv's cost.
# Usage: bench/hook/run.sh [iterations]   (default 2000; direnv/cd use 1/10)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=${1:-2000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/bin/" "$repo/cmd/cudaenv" "$repo/cmd/cudaenv-shim"
mkdir -p "$work/bin-noshim" && cp "$work/bin/cudaenv" "$work/bin-noshim/"
export CUDAENV_ROOT="$work/root" CUDAENV_CONFIG_DIR="$work/config" CUDAENV_CACHE_DIR="$work/cache"
export PATH="$work/bin:$PATH"
# A realistic depth: the project sits six levels below /.
proj="$work/home/user/src/team/project"
mkdir -p "$proj/sub" "$CUDAENV_ROOT/cuda/12.4.1/bin" "$CUDAENV_ROOT/cuda/12.4.1/lib64"
echo '{"kind":"cuda","version":"12.4.1","source":"bench"}' > "$CUDAENV_ROOT/cuda/12.4.1/receipt.json"
echo 12.4 > "$proj/.cuda-version"
# The toolkit's libcudart and nvJitLink as NVIDIA links them, and a venv
# as pip lays out torch 2.9's wheels (17 nvidia-* folders, nvJitLink newer).
lib="$CUDAENV_ROOT/cuda/12.4.1/lib64"
for l in libcudart libnvJitLink; do : >"$lib/$l.so.12.4.127"; ln -s "$l.so.12.4.127" "$lib/$l.so.12"; done
site="$work/venv/lib/python3.12/site-packages"
for p in cublas cuda_cupti cuda_nvrtc cuda_runtime cudnn cufft curand cusolver cusparse cusparselt nccl nvjitlink nvtx cufile nvshmem cuda_nvcc cccl; do
  mkdir -p "$site/nvidia/$p/lib"; : >"$site/nvidia/$p/lib/lib$p.so.1"
done
: >"$site/nvidia/nvjitlink/lib/libnvJitLink.so.12"; : >"$site/nvidia/cuda_runtime/lib/libcudart.so.12"
mkdir -p "$site/nvidia_nvjitlink_cu12-12.6.85.dist-info" "$site/torch-2.9.0.dist-info"
printf 'Metadata-Version: 2.1\nName: nvidia-nvjitlink-cu12\nVersion: 12.6.85\n' >"$site/nvidia_nvjitlink_cu12-12.6.85.dist-info/METADATA"
printf 'nvidia/nvjitlink/lib/libnvJitLink.so.12,sha256=x,1\n' >"$site/nvidia_nvjitlink_cu12-12.6.85.dist-info/RECORD"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\nRequires-Dist: nvidia-nvjitlink-cu12==12.6.85\n' >"$site/torch-2.9.0.dist-info/METADATA"

bash --norc --noprofile -c '
set -u
n=$1 proj=$2 NOSHIM=$3 VENV=$4
eval "$(cudaenv init bash)"
bare_hook() { local rc=$?; return $rc; }
per() { # name iterations start end
  local us=$(( (${4/./} - ${3/./}) ))
  printf "%s %d\n" "$1" $(( us * 1000 / $2 ))   # nanoseconds per call
}
cd "$proj"; __cudaenv_hook; __cudaenv_hook

t0=$EPOCHREALTIME; for ((i=0;i<n;i++)); do bare_hook; done; t1=$EPOCHREALTIME
per bare "$n" "$t0" "$t1"

t0=$EPOCHREALTIME; for ((i=0;i<n;i++)); do __cudaenv_hook; done; t1=$EPOCHREALTIME
per idle "$n" "$t0" "$t1"

t0=$EPOCHREALTIME
for ((i=0;i<n;i++)); do
  if (( i % 2 )); then cd "$proj"; else cd "$proj/sub"; fi
  __cudaenv_hook
done
t1=$EPOCHREALTIME
per cd-inside "$n" "$t0" "$t1"

m=$(( n / 10 ))
t0=$EPOCHREALTIME
for ((i=0;i<m;i++)); do
  if (( i % 2 )); then cd "$proj"; else cd "$proj/.."; fi
  __cudaenv_hook
done
t1=$EPOCHREALTIME
per cd "$m" "$t0" "$t1"

eval "$("$NOSHIM/cudaenv" init bash)"
t0=$EPOCHREALTIME
for ((i=0;i<m;i++)); do
  if (( i % 2 )); then cd "$proj"; else cd "$proj/.."; fi
  __cudaenv_hook
done
t1=$EPOCHREALTIME
per cd-nosh "$m" "$t0" "$t1"

eval "$(cudaenv init bash)"
export VIRTUAL_ENV=$VENV
t0=$EPOCHREALTIME
for ((i=0;i<m;i++)); do
  if (( i % 2 )); then cd "$proj"; else cd "$proj/.."; fi
  __cudaenv_hook 2>/dev/null
done
t1=$EPOCHREALTIME
per cd-venv "$m" "$t0" "$t1"
unset VIRTUAL_ENV

if command -v direnv >/dev/null; then
  cd "$proj"
  t0=$EPOCHREALTIME; for ((i=0;i<m;i++)); do eval "$(direnv export bash)"; done; t1=$EPOCHREALTIME
  per direnv "$m" "$t0" "$t1"
fi
' bash "$n" "$proj" "$work/bin-noshim" "$work/venv" | awk '
  { ns[$1] = $2; order[++k] = $1 }
  END {
    printf "%-10s %12s %12s %14s\n", "case", "us/prompt", "added_us", "vs_direnv"
    for (i = 1; i <= k; i++) {
      c = order[i]
      added = (c == "bare") ? 0 : ns[c] - ns["bare"]
      ratio = ("direnv" in ns) ? sprintf("%.4f", (ns[c] - ns["bare"]) / (ns["direnv"] - ns["bare"])) : "n/a"
      printf "%-10s %12.1f %12.1f %14s\n", c, ns[c] / 1000, added / 1000, ratio
    }
  }'

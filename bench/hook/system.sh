#!/usr/bin/env bash
# What a system store adds to the idle prompt: the prompt hook's check
# (__cudaenv_check, the builtin-only test the hook runs at every prompt)
# as hook-env writes it without and with CUDAENV_SYSTEM_ROOT, timed in one
# bash process in alternating blocks with $EPOCHREALTIME; medians of the
# blocks. With BASELINE=REV, the check of cudaenv built at that git
# revision (no system store) is timed alongside.
# Usage: [BASELINE=REV] bash bench/hook/system.sh [blocks] [calls-per-block]
set -euo pipefail
cd "$(dirname "$0")/../.."
blocks=${1:-200} per=${2:-500}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
go build -o "$t/bin/" ./cmd/cudaenv
checks=(without with)
if [ -n "${BASELINE:-}" ]; then
  mkdir "$t/base-src"
  git archive "$BASELINE" | tar -x -C "$t/base-src"
  (cd "$t/base-src" && go build -o "$t/base-bin/" ./cmd/cudaenv)
  checks=(baseline without with)
fi
export CUDAENV_ROOT="$t/root" CUDAENV_CONFIG_DIR="$t/config" CUDAENV_CACHE_DIR="$t/cache"
unset CUDAENV_SYSTEM_ROOT CUDAENV_VERSION __CUDAENV_STATE
proj="$t/home/user/src/team/project"
mkdir -p "$proj" "$CUDAENV_ROOT/cuda/12.4.1/bin" "$CUDAENV_ROOT/cudnn" "$t/sys/cuda/12.6.3" "$t/sys/cudnn"
echo '{"kind":"cuda","version":"12.4.1","source":"bench"}' > "$CUDAENV_ROOT/cuda/12.4.1/receipt.json"
echo '{"kind":"cuda","version":"12.6.3","source":"bench"}' > "$t/sys/cuda/12.6.3/receipt.json"
echo 12.4 > "$proj/.cuda-version"
cd "$proj"
"$t/bin/cudaenv" hook-env bash | sed 's/^__cudaenv_check()/check_without()/' > "$t/without.sh"
CUDAENV_SYSTEM_ROOT="$t/sys" "$t/bin/cudaenv" hook-env bash | sed 's/^__cudaenv_check()/check_with()/' > "$t/with.sh"
: > "$t/baseline.sh"
[ -n "${BASELINE:-}" ] && "$t/base-bin/cudaenv" hook-env bash | sed 's/^__cudaenv_check()/check_baseline()/' > "$t/baseline.sh"
bash --norc --noprofile -c '
blocks=$1 per=$2; shift 2
source "$1"; source "$2"; source "$3"; shift 3
for c in "$@"; do check_$c || { echo "check_$c fails" >&2; exit 1; }; done
for ((b = 0; b < blocks; b++)); do
  for c in "$@"; do
    t0=$EPOCHREALTIME
    for ((i = 0; i < per; i++)); do check_$c; done
    t1=$EPOCHREALTIME
    echo "$c $(( (${t1/./} - ${t0/./}) * 1000 / per ))"
  done
done' bash "$blocks" "$per" "$t/baseline.sh" "$t/without.sh" "$t/with.sh" "${checks[@]}" | sort -k1,1 -k2n | awk '
  { v[$1, ++n[$1]] = $2 }
  END {
    printf "idle check (a project 6 folders deep selecting 12.4), median of blocks of calls:\n"
    for (c in n) {
      m = (n[c] % 2) ? v[c, (n[c] + 1) / 2] : (v[c, n[c] / 2] + v[c, n[c] / 2 + 1]) / 2
      printf "  %-9s %7.2f us\n", c, m / 1000
    }
  }'

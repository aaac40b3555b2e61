#!/usr/bin/env bash
# Times `cudaenv doctor` as whole process runs, on this machine's own
# compilers, cmake and python3 (the PATH as it is), with a fake toolkit
# selected (bin/nvcc a shell script), in three setups: no Python
# environment active, a venv active (python3 -m venv), and, for scale, a
# same-run baseline (/bin/true). With BEFORE=FILE (an older build's
# cudaenv) it runs in the same rounds, interleaved. Prints, per binary and
# setup, the median wall time and the median CPU time (user+sys, children
# included) in ms.
# Usage: BEFORE=/path/to/old/cudaenv bash bench/doctor/run.sh [ROUNDS]  (default 15)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-15}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags urfave_cli_no_docs -o "$tmp/after/" ./cmd/cudaenv
bins=("after=$tmp/after/cudaenv")
[[ -z "${BEFORE:-}" ]] || bins+=("before=$BEFORE")

export CUDAENV_ROOT="$tmp/root" CUDAENV_CONFIG_DIR="$tmp/config" CUDAENV_CACHE_DIR="$tmp/cache"
tk="$CUDAENV_ROOT/cuda/12.4.1"
mkdir -p "$tk/bin" "$tk/lib64" "$tk/include/crt" "$tk/nvvm/bin" "$tmp/proj"
printf '#!/bin/sh\ncase "$1" in --list-gpu-arch) printf "compute_80\\ncompute_90\\n";; *) echo "Cuda compilation tools, release 12.4, V12.4.131";; esac\n' >"$tk/bin/nvcc"
chmod 755 "$tk/bin/nvcc"
echo '{"cuda": {"version": "12.4.1"}}' >"$tk/version.json"
: >"$tk/lib64/libcudart.so.12"
: >"$tk/include/cuda_runtime.h"
printf '#if __GNUC__ > 13\n#error unsupported\n#endif\n' >"$tk/include/crt/host_config.h"
echo '{"kind":"cuda","version":"12.4.1","source":"test"}' >"$tk/receipt.json"
echo 12.4 >"$tmp/proj/.cuda-version"
python3 -m venv "$tmp/venv" >/dev/null 2>&1 || echo "no venv: its setup is left out" >&2

# one BIN SETUP: wall and CPU ms of one run.
one() {
	local bin=$1 setup=$2
	(
		cd "$tmp/proj"
		case $setup in
		venv) export VIRTUAL_ENV="$tmp/venv" PATH="$tmp/venv/bin:$PATH" ;;
		esac
		if [[ $bin == true ]]; then
			/usr/bin/time -o "$tmp/t" -f '%e %U %S' /bin/true
		else
			/usr/bin/time -o "$tmp/t" -f '%e %U %S' "$bin" doctor >/dev/null 2>&1 || true
		fi
		awk 'END { printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000 }' "$tmp/t"
	)
}
setups=(plain)
[[ -x "$tmp/venv/bin/python3" ]] && setups+=(venv)
declare -A wall cpu
for _ in $(seq "$rounds"); do
	for b in "${bins[@]}" "true=true"; do
		for s in "${setups[@]}"; do
			read -r w c < <(one "${b#*=}" "$s")
			wall["${b%%=*}/$s"]+="$w "
			cpu["${b%%=*}/$s"]+="$c "
		done
	done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds"
for k in $(printf '%s\n' "${!wall[@]}" | sort); do
	printf '%-14s wall median %5s ms   cpu median %5s ms\n' "$k" "$(med <<<"${wall[$k]}")" "$(med <<<"${cpu[$k]}")"
done

#!/bin/sh
# Builds the ELF fixtures the tests read. nvcc from NVIDIA's CUDA 13 PyPI
# wheels (nvidia-cuda-nvcc, -crt, -runtime 13.5.37; see
# ../../fatbin/testdata/build.sh), gcc and ldconfig for the rest:
#   PATH=$VENV/lib/python3.*/site-packages/nvidia/cu13/bin:$PATH CUDART=$VENV/lib/python3.*/site-packages/nvidia/cu13/lib/libcudart.so.13 sh build.sh
set -eu
cd "$(dirname "$0")"
rm -rf lnk cudart jit124 jit121 sparse_runpath sparse_rpath sparse_plain root
mkdir -p lnk cudart jit124 jit121 sparse_runpath sparse_rpath sparse_plain root/etc root/opt/cuda-12.1/lib64
ln -s "$CUDART" lnk/libcudart.so
# A shared object: cubins for sm_75 and sm_90, PTX for compute_90, the
# runtime found through RUNPATH $ORIGIN/cudart.
nvcc -shared -Xcompiler -fPIC -cudart shared -Llnk -o libkernel.so src.cu \
	-gencode arch=compute_75,code=sm_75 -gencode 'arch=compute_90,code=[sm_90,compute_90]' \
	-Xlinker --enable-new-dtags -Xlinker -rpath -Xlinker '$ORIGIN/cudart'
# An executable, every entry compressed (zstd): sm_80, sm_120, compute_120.
nvcc -DWITH_MAIN -cudart shared -Llnk -o app src.cu -Xfatbin -compress-all \
	-gencode arch=compute_80,code=sm_80 -gencode 'arch=compute_120,code=[sm_120,compute_120]'
strip libkernel.so app
rm -rf lnk
# A stand-in runtime defining what libkernel.so and app take from it, at
# the version node libcudart.so.13 (NVIDIA's is 700 KB).
syms=$(nm -D --undefined-only libkernel.so app | sed -n 's/^ *U \([A-Za-z0-9_]*\)@libcudart.so.13$/\1/p' | sort -u)
: >cudart.c
for s in $syms; do echo "int $s(void) { return 0; }" >>cudart.c; done
echo 'libcudart.so.13 { global: *; };' >cudart.map
gcc -shared -fPIC -nostdlib -s -o cudart/libcudart.so.13 -Wl,-soname,libcudart.so.13 -Wl,--version-script=cudart.map cudart.c
rm cudart.c cudart.map
# nvJitLink 12.4 and 12.1 stand-ins, and cuSPARSE stand-ins finding
# 12.4 through RUNPATH, through RPATH, or not at all.
gcc -shared -fPIC -nostdlib -s -DV124 -o jit124/libnvJitLink.so.12 -Wl,-soname,libnvJitLink.so.12 -Wl,--version-script=jit.map jit.c
gcc -shared -fPIC -nostdlib -s -o jit121/libnvJitLink.so.12 -Wl,-soname,libnvJitLink.so.12 -Wl,--version-script=jit.map jit.c
for kind in runpath rpath plain; do
	case $kind in
	runpath) flags='-Wl,--enable-new-dtags -Wl,-rpath,$ORIGIN/../jit124' ;;
	rpath) flags='-Wl,--disable-new-dtags -Wl,-rpath,$ORIGIN/../jit124' ;;
	plain) flags= ;;
	esac
	gcc -shared -fPIC -nostdlib -s -o sparse_$kind/libcusparse.so.12 -Wl,-soname,libcusparse.so.12 sparse.c -Ljit124 -l:libnvJitLink.so.12 $flags
done
# A root whose ld.so.cache lists nvJitLink 12.1 in /opt/cuda-12.1/lib64.
cp jit121/libnvJitLink.so.12 root/opt/cuda-12.1/lib64/
echo /opt/cuda-12.1/lib64 >root/etc/ld.so.conf
ldconfig -X -r root -C /etc/ld.so.cache -f /etc/ld.so.conf
# patchelf moves .dynstr past .dynamic, as PyTorch's wheels have it.
mkdir -p patched
cp sparse_plain/libcusparse.so.12 patched/
patchelf --set-rpath '$ORIGIN/../jit124/a-much-longer-runpath-so-that-patchelf-moves-the-string-table' patched/libcusparse.so.12

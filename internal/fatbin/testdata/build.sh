#!/bin/sh
# Builds the fat binaries the tests read, with the nvcc, fatbinary and
# cuobjdump of NVIDIA's CUDA 13 PyPI wheels (nvidia-cuda-nvcc,
# nvidia-cuda-crt, nvidia-cuda-runtime, nvidia-cuda-cuobjdump 13.5.37):
#   python3 -m venv nv && nv/bin/pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cuobjdump nvidia-cuda-crt
#   PATH=$PWD/nv/lib/python3.*/site-packages/nvidia/cu13/bin:$PATH sh build.sh
# Each NAME.fatbin comes with NAME.cuobjdump: what `cuobjdump --list-elf
# --list-ptx` prints for it, which the tests compare with.
set -eu
cd "$(dirname "$0")"
fb() { # name, nvcc options...
	name=$1; shift
	nvcc -fatbin -o "$name.fatbin" kernel.cu "$@"
	cuobjdump --list-elf --list-ptx "$name.fatbin" >"$name.cuobjdump"
}
# Uncompressed: two cubins and PTX.
fb plain -compress-mode=none -gencode arch=compute_75,code=sm_75 -gencode 'arch=compute_90,code=[sm_90,compute_90]'
# LZ4 (flag 0x2000) on every entry, an arch-specific and a family target.
fb lz4 -compress-mode=speed -Xfatbin -compress-all -gencode arch=compute_75,code=sm_75 -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]' -gencode 'arch=compute_100f,code=[sm_100f,compute_100f]'
# zstd (flag 0x8000), sm_120's longer entry headers.
fb zstd -compress-mode=size -gencode arch=compute_80,code=sm_80 -gencode 'arch=compute_120,code=[sm_120,compute_120]'
# nvcc's default: cubins plain, PTX compressed.
fb default -gencode arch=compute_86,code=sm_86 -gencode 'arch=compute_89,code=[sm_89,compute_89]'
# --concat: images concatenated in one entry.
fb concat --concat -Xfatbin -compress-all -gencode arch=compute_75,code=sm_75 -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]' -gencode 'arch=compute_100f,code=[sm_100f,compute_100f]' -gencode arch=compute_120,code=sm_120
# PTX ISA 7.8 (CUDA 11.8's) put in a fat binary as it is.
fatbinary --create=ptx78.fatbin -64 --image3=kind=ptx,sm=80,file=old.ptx
cuobjdump --list-elf --list-ptx ptx78.fatbin >ptx78.cuobjdump

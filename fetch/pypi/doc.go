// Package pypi installs CUDA toolkit components from NVIDIA's wheels on a
// Python package index: it turns a CUDA release and a profile into pinned wheel
// requirements, finds each wheel on a PEP 691/503 index, and unpacks wheels
// into the same tree layout as NVIDIA's redist archives.
//
// The package plans and resolves; it does not download. Resolved wheels are
// Artifacts that the caller converts for the fetch package's downloader, and
// ExtractWheel is the extractor for them.
//
// Facts the package relies on, checked against the real index (see
// testdata/real_layouts.txt and e2e_test.go):
//
//   - A wheel's version equals the redist component's version of the release:
//     CUDA 12.4.1 ships cuda_cudart 12.4.127, so nvidia-cuda-runtime-cu12==12.4.127.
//   - CUDA 11 and 12 wheels are named nvidia-<x>-cu11|cu12 and unpack into one
//     folder per package, nvidia/<pkg>/{bin,include,lib,...}; the cu12 nvcc
//     wheel carries ptxas and nvvm but no nvcc.
//   - CUDA 13 wheels drop the suffix and all unpack into
//     nvidia/cu13/{bin,include,lib,nvvm}; nvidia-cuda-nvcc carries nvcc itself.
//   - cuDNN wheels keep the suffix (nvidia-cudnn-cu12, nvidia-cudnn-cu13), take
//     the cuDNN build version (9.5.1 → 9.5.1.17) and unpack into
//     nvidia/cudnn/{include,lib} for every CUDA major.
//
// The built-in catalog (catalog_gen.go, from the manifests in
// catalog/manifests, which go generate refreshes from ../shared/nvidia) is
// the table of component versions per release. With it an index alone
// tells which CUDA releases it has (Offers, from the versions of its runtime
// wheels; Complete for a release the table does not know yet), which wheel
// sets are known not to work (BrokenWheel), and which release shipped a
// component build.
package pypi

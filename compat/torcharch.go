package compat

import "strings"

// torchArchRow is the GPU architectures one CUDA build of a range of
// PyTorch releases carries kernels for (torch.cuda.get_arch_list()).
type torchArchRow struct {
	from, to string // torch minors, inclusive; "" to: still so
	variant  string // "cu126"
	archs    string // compute capabilities with SASS, ";"-separated
	ptx      string // the capability PTX is shipped for ("" none): runs on any newer GPU through JIT
	source   string
}

// torchArchRows: what each CUDA build of PyTorch runs on. A build runs on
// a GPU when it has SASS for the GPU's major at a minor not above the
// GPU's, or PTX for a capability not above the GPU's.
var torchArchRows = []torchArchRow{
	{"2.0", "2.7", "cu117", "5.0;6.0;7.0;7.5;8.0;8.6", "", "pytorch/pytorch .ci/manywheel/build_cuda.sh TORCH_CUDA_ARCH_LIST"},
	{"2.0", "2.7", "cu118", "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "", "pytorch/pytorch .ci/manywheel/build_cuda.sh TORCH_CUDA_ARCH_LIST"},
	{"2.1", "2.7", "cu121", "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "", "pytorch/pytorch .ci/manywheel/build_cuda.sh TORCH_CUDA_ARCH_LIST"},
	{"2.4", "2.7", "cu124", "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "", "pytorch/pytorch .ci/manywheel/build_cuda.sh TORCH_CUDA_ARCH_LIST"},
	{"2.6", "2.10", "cu126", "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "", "pytorch/pytorch .ci/manywheel/build_cuda.sh (12.6 keeps Maxwell/Pascal); RFC pytorch/pytorch#172352 matrix"},
	{"2.11", "", "cu126", "5.0;6.0;7.0;7.5;8.0;8.6", "", "pytorch/pytorch .ci/manywheel/build_cuda.sh on 2.11: 12.6 keeps Maxwell/Pascal/Volta, drops Hopper"},
	{"2.7", "2.7", "cu128", "7.5;8.0;8.6;9.0;10.0;12.0", "12.0", "torch 2.7.1+cu128 lacks sm_70 (EutropicAI/vs-playground#59); build_cuda.sh"},
	{"2.8", "2.10", "cu128", "7.0;7.5;8.0;8.6;9.0;10.0;12.0", "12.0", "PyTorch 2.8.0 release notes (sm50-sm60 dropped from CUDA 12.8/12.9 builds); get_arch_list() in pytorch/pytorch#158700"},
	{"2.11", "", "cu128", "7.5;8.0;8.6;9.0;10.0;12.0", "12.0", "RFC pytorch/pytorch#172352 (sm70 deprecated for CUDA 12.8 builds)"},
	{"2.8", "2.9", "cu129", "7.0;7.5;8.0;8.6;9.0;10.0;12.0", "12.0", "PyTorch 2.8.0 release notes; pytorch/pytorch#157517"},
	{"2.9", "", "cu130", "7.5;8.0;8.6;9.0;10.0;12.0", "12.0", "RFC pytorch/pytorch#172352 matrix: Turing to Blackwell, 12.0+PTX"},
}

// TorchArchs returns the compute capabilities a PyTorch release's CUDA
// build carries kernels for ("5.0", ...), the one it ships PTX for, and
// false when the tables do not know the build's list.
func TorchArchs(torch, variant string) (archs []string, ptx string, ok bool) {
	mm := majorMinor(torch)
	for _, r := range torchArchRows {
		if r.variant != variant || CompareVersions(mm, r.from) < 0 || (r.to != "" && CompareVersions(mm, r.to) > 0) {
			continue
		}
		return strings.Split(r.archs, ";"), r.ptx, true
	}
	return nil, "", false
}

// ArchRuns reports whether code built for archs (SASS) and ptx runs on a
// GPU of capability gpu: SASS of the same major at a minor not above the
// GPU's, or PTX for a capability not above it.
func ArchRuns(archs []string, ptx, gpu string) bool {
	g, ok := ParseCapability(gpu)
	if !ok {
		return false
	}
	for _, a := range archs {
		if Major(a) == Major(g) && CompareVersions(a, g) <= 0 {
			return true
		}
	}
	return ptx != "" && CompareVersions(ptx, g) <= 0
}

package compat

// ExtensionHeader is a CUDA header that PyTorch's ATen/cuda/CUDAContext.h
// includes, and the NVIDIA component that ships it.
type ExtensionHeader struct {
	Header    string // "cusparse.h", under the toolkit's include/
	Component string // "libcusparse"
}

// ExtensionHeaders are the CUDA headers ATen/cuda/CUDAContext.h includes
// (through CUDAContextLight.h and ATen/cuda/Exceptions.h), so a C++/CUDA
// extension that includes it (torch.utils.cpp_extension, flash-attn,
// xformers, detectron2) builds only where they are. Source:
// pytorch/pytorch aten/src/ATen/cuda/CUDAContextLight.h and Exceptions.h.
var ExtensionHeaders = []ExtensionHeader{
	{"cuda_runtime_api.h", "cuda_cudart"},
	{"cublas_v2.h", "libcublas"},
	{"cublasLt.h", "libcublas"},
	{"cusparse.h", "libcusparse"},
	{"cusolverDn.h", "libcusolver"},
	{"cusolver_common.h", "libcusolver"},
}

/*
 * A header shaped like NVIDIA's cuda.h (written for these tests, not
 * NVIDIA's text): the declarations, #defines and blocks the stub reader
 * meets in the real one. CUresult CUDAAPI cuInComment(void); is no
 * declaration.
 */
#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__

#include <stdlib.h>

#if defined(__CUDA_API_VERSION_INTERNAL) || defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
    #define __CUDA_API_PER_THREAD_DEFAULT_STREAM
    #define __CUDA_API_PTDS(api) api ## _ptds
    #define __CUDA_API_PTSZ(api) api ## _ptsz
#else
    #define __CUDA_API_PTDS(api) api
    #define __CUDA_API_PTSZ(api) api
#endif

#define cuDeviceTotalMem                    cuDeviceTotalMem_v2
#define cuCtxCreate                         cuCtxCreate_v4
#define cuMemcpyHtoD                        __CUDA_API_PTDS(cuMemcpyHtoD_v2)
#define cuMemcpyHtoDAsync                   __CUDA_API_PTSZ(cuMemcpyHtoDAsync_v2)
#define cuStreamQuery                       __CUDA_API_PTSZ(cuStreamQuery)
#define CU_LAUNCH_PARAM_END                 ((void*)0x00)

#ifdef _WIN32
#define CUDAAPI __stdcall
#else
#define CUDAAPI
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

typedef struct CUDA_HOST_NODE_PARAMS_st {
    void (CUDAAPI *fn)(void *userData);
    CUresult cuNotInAStruct(int);
} CUDA_HOST_NODE_PARAMS;

typedef CUresult (CUDAAPI *PFN_cuInit)(unsigned int Flags);
typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_STUB_LIBRARY = 34
} CUresult_e;

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr);
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev);
CUresult CUDAAPI cuCtxCreate(CUcontext *pctx,
                             unsigned int flags,
                             CUdevice dev);
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuStreamQuery(CUstream hStream);
const char * CUDAAPI cuDescribe(int what); // a comment: CUresult cuAlsoNot(void);
int (*cuPointerNotAFunction)(void);
extern int cuVariable;

#if defined(__CUDA_API_VERSION_INTERNAL)
    #undef cuDeviceTotalMem
    #undef cuCtxCreate
    CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
#elif defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
static inline CUresult cuInlineHelper_ptsz(CUstream hStream) {
    if (hStream) { return cuStreamQuery(hStream); }
    return 0;
}
#endif

#ifdef __cplusplus
}
#endif

#endif

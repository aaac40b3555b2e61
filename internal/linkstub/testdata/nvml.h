/* A header shaped like NVIDIA's nvml.h (written for these tests). */
#ifndef __nvml_nvml_h__
#define __nvml_nvml_h__

#ifdef __cplusplus
extern "C" {
#endif

#if defined _WINDOWS
    #define DECLDIR __declspec(dllexport)
#else
    #define DECLDIR
#endif

#define DEPRECATED(ver) /* nop */

#ifndef NVML_NO_UNVERSIONED_FUNC_DEFS
    #define nvmlInit                                    nvmlInit_v2
    #define nvmlDeviceGetCount                          nvmlDeviceGetCount_v2
#endif

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

nvmlReturn_t DECLDIR nvmlInit(void);
nvmlReturn_t DECLDIR nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t DECLDIR nvmlShutdown(void);
const DECLDIR char* nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t DECLDIR nvmlDeviceGetCount(unsigned int *deviceCount);
DEPRECATED(13.0) nvmlReturn_t DECLDIR nvmlDeviceGetHandleBySerial(const char *serial, nvmlDevice_t *device);
nvmlReturn_t  DECLDIR nvmlDevicePowerSmoothingSetState(nvmlDevice_t device,
                                                        unsigned int state);

#ifdef NVML_NO_UNVERSIONED_FUNC_DEFS
nvmlReturn_t DECLDIR nvmlInit(void);
#endif

#ifdef __cplusplus
}
#endif
#endif

/* rtm_cuda_driver.h - the CUDA driver API without linking libcuda.
 *
 * rtm3d must start on machines that have the CUDA toolkit but no NVIDIA driver (CI
 * builds the kernels there and runs the CPU tests). Linking libcuda.so would make the
 * loader refuse the program there, so cuda_driver.c defines the driver entry points the
 * project uses (cuMemCreate, cuTensorMapEncodeTiled, ...) as forwarders that look the real
 * function up through the runtime (cudaGetDriverEntryPointByVersion) at the call. Code keeps
 * calling cu* functions from <cuda.h> as usual; a function not listed in cuda_driver.c
 * shows up as an undefined symbol at link time: add it there.
 *
 * The same machines have no GPU: rtm_cuda_device_count says so in words a user acts on. */
#ifndef RTM_CUDA_DRIVER_H
#define RTM_CUDA_DRIVER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The number of CUDA devices the runtime sees: RTM_OK with *count >= 1, or
 * RTM_ERR_UNSUPPORTED with *count = 0 and `why` saying in plain words why there is none:
 * no NVIDIA GPU driver loaded (the usual case on a machine without a GPU), a driver that
 * sees no GPU, or a driver older than this build's CUDA runtime (both versions named).
 * Every "no GPU" message of rtm3d starts from this text. */
int rtm_cuda_device_count(int *count, char *why, size_t why_size);

/* 1 when the installed driver exports `symbol` (e.g. "cuTensorMapEncodeTiled"). */
int rtm_cuda_driver_has(const char *symbol);

#ifdef __cplusplus
}
#endif

#endif

/* rtm_cuda_driver.h - the CUDA driver API without linking libcuda.
 *
 * rtm3d must start on machines that have the CUDA toolkit but no NVIDIA driver (CI
 * builds the kernels there and runs the CPU tests). Linking libcuda.so would make the
 * loader refuse the program there, so cuda_driver.c defines the driver entry points the
 * project uses (cuMemCreate, cuTensorMapEncodeTiled, ...) as forwarders that look the real
 * function up through the runtime (cudaGetDriverEntryPointByVersion) at the call. Code keeps
 * calling cu* functions from <cuda.h> as usual; a function not listed in cuda_driver.c
 * shows up as an undefined symbol at link time: add it there. */
#ifndef RTM_CUDA_DRIVER_H
#define RTM_CUDA_DRIVER_H

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the installed driver exports `symbol` (e.g. "cuTensorMapEncodeTiled"). */
int rtm_cuda_driver_has(const char *symbol);

#ifdef __cplusplus
}
#endif

#endif

/* rtm_cuda_check.h - checking macros for CUDA runtime and driver calls (C and CUDA), for
 * memory/ and every module above it.
 *
 * Each logs the call text, file and line with the CUDA error name, stores a status in the
 * enclosing function's `status` and jumps to its `fail:` label (RTM_TRY's contract).
 *
 * Driver functions (cu*) are memory/rtm_cuda_driver.h's forwarders: nothing links libcuda,
 * so binaries start on machines without the NVIDIA driver. */
#ifndef RTM_CUDA_CHECK_H
#define RTM_CUDA_CHECK_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "rtm_status.h"

/* A runtime call whose failure is reported and handled here; the runtime's last error is
 * cleared with it, so that a handled failure (a refused page-locking, a kernel shape the
 * device refuses) is not reported again by the next launch's check (sticky errors stay). */
#define RTM_CUDA_TRY(call)                                                                         \
  do {                                                                                             \
    cudaError_t rtm_cuda_err_ = (call);                                                            \
    if (rtm_cuda_err_ != cudaSuccess) {                                                            \
      rtm_log_error("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call,                        \
                    cudaGetErrorName(rtm_cuda_err_), cudaGetErrorString(rtm_cuda_err_));           \
      (void)cudaGetLastError();                                                                    \
      status = rtm_cuda_err_ == cudaErrorMemoryAllocation ? RTM_ERR_NOMEM : RTM_ERR_DEVICE;        \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

/* After a kernel launch: the launch itself (configuration, resources) is checked here;
 * faults during execution surface at the next synchronizing call. */
#define RTM_CUDA_TRY_LAUNCH(what)                                                                  \
  do {                                                                                             \
    cudaError_t rtm_launch_err_ = cudaGetLastError();                                              \
    if (rtm_launch_err_ != cudaSuccess) {                                                          \
      rtm_log_error("%s:%d: launch of %s failed: %s (%s)", __FILE__, __LINE__, (what),             \
                    cudaGetErrorName(rtm_launch_err_), cudaGetErrorString(rtm_launch_err_));       \
      status = RTM_ERR_DEVICE;                                                                     \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

#define RTM_CU_TRY(call)                                                                           \
  do {                                                                                             \
    CUresult rtm_cu_res_ = (call);                                                                 \
    if (rtm_cu_res_ != CUDA_SUCCESS) {                                                             \
      const char *rtm_cu_name_ = NULL;                                                             \
      cuGetErrorName(rtm_cu_res_, &rtm_cu_name_);                                                  \
      rtm_log_error("%s:%d: %s failed: %s", __FILE__, __LINE__, #call,                             \
                    rtm_cu_name_ ? rtm_cu_name_ : "unknown driver error");                         \
      status = rtm_cu_res_ == CUDA_ERROR_OUT_OF_MEMORY ? RTM_ERR_NOMEM : RTM_ERR_DEVICE;           \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

#endif

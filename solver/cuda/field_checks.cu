/* Checks of a whole field on the device (rtm_cuda_field_checks.h): the count of cells that
 * are not finite, so that a run's last check reads 8 bytes back, not the volume. */
#include <cuda_runtime.h>

#include "rtm_cuda_check.h"
#include "rtm_cuda_field_checks.h"
#include "rtm_status.h"

/* Grid-stride: each thread counts its cells, a warp sums by shuffles, one atomic a warp
 * that found any. */
__global__ void count_nonfinite_kernel(const float *__restrict__ data, size_t n,
                                       unsigned long long *count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    local += !isfinite(data[i]);
  for (int offset = 16; offset > 0; offset >>= 1)
    local += __shfl_down_sync(0xffffffffu, local, offset);
  if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

extern "C" int rtm_cuda_count_nonfinite(const float *data, size_t n, cudaStream_t stream,
                                        size_t *count) {
  int status = RTM_OK;
  unsigned long long *device_count = NULL, host_count = 0;
  int device = 0, sms = 0;
  RTM_CUDA_TRY(cudaGetDevice(&device));
  RTM_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  RTM_CUDA_TRY(cudaMalloc(&device_count, sizeof *device_count));
  RTM_CUDA_TRY(cudaMemsetAsync(device_count, 0, sizeof *device_count, stream));
  if (n > 0) {
    count_nonfinite_kernel<<<4 * sms, 256, 0, stream>>>(data, n, device_count);
    RTM_CUDA_TRY_LAUNCH("count_nonfinite_kernel");
  }
  RTM_CUDA_TRY(cudaMemcpyAsync(&host_count, device_count, sizeof host_count, cudaMemcpyDeviceToHost,
                               stream));
  RTM_CUDA_TRY(cudaStreamSynchronize(stream));
  *count = (size_t)host_count;
fail:
  cudaFree(device_count);
  return status;
}

/* A window of every trace packed into a dense [receivers][count] block on the device
 * (rtm_cuda_trace_window.h): the copy to the host of a window of [receivers][length] traces
 * is then one contiguous transfer, not a 2D copy of rows a few hundred bytes long. */
#include <cuda_runtime.h>

#include "rtm_cuda_check.h"
#include "rtm_cuda_trace_window.h"
#include "rtm_status.h"

/* Grid-stride over the window's samples, receiver-major: consecutive threads read
 * consecutive samples of a trace and write consecutive floats of the window. */
__global__ void pack_trace_window_kernel(const float *__restrict__ traces, size_t receivers,
                                         size_t length, size_t first, size_t count,
                                         float *__restrict__ window) {
  const size_t n = receivers * count;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const size_t r = i / count, s = i - r * count;
    window[i] = traces[r * length + first + s];
  }
}

extern "C" int rtm_cuda_pack_trace_window(const float *traces, int receivers, int length, int first,
                                          int count, float *window, cudaStream_t stream) {
  int status = RTM_OK;
  if (receivers <= 0 || count <= 0) return RTM_OK;
  const size_t n = (size_t)receivers * (size_t)count;
  const size_t blocks = (n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536;
  pack_trace_window_kernel<<<(unsigned)blocks, 256, 0, stream>>>(
      traces, (size_t)receivers, (size_t)length, (size_t)first, (size_t)count, window);
  RTM_CUDA_TRY_LAUNCH("pack_trace_window_kernel");
fail:
  return status;
}

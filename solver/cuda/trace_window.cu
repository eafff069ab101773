/* A window of every trace packed into a dense [receivers][count] block on the device
 * (rtm_cuda_trace_window.h): the copy to the host of a window of [receivers][length] traces
 * is then one contiguous transfer, not a 2D copy of rows a few hundred bytes long. As
 * recorded, or through the time-dispersion warp's band (the reference:
 * rtm_traces_band_apply, solver/traces/warp_band.c). */
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

enum { BAND_THREADS = 128, BAND_ROWS = RTM_TRACES_BAND_ROWS, BAND_QUADS = BAND_ROWS / 4 };

/* A block: BAND_THREADS receivers, one group of rows (blockIdx.y after the window's first),
 * the group's coefficients [width][BAND_ROWS] in shared memory; a thread sums its
 * receiver's BAND_ROWS corrected samples over the group's columns in order, as the
 * reference does (fmaf, the coefficients of one column read by every thread at once). */
__global__ void __launch_bounds__(BAND_THREADS)
    band_trace_window_kernel(const float *__restrict__ traces, int receivers, size_t length,
                             int first, int count, const int *__restrict__ group_first,
                             const int *__restrict__ group_width,
                             const long long *__restrict__ group_offset,
                             const float *__restrict__ coef, float *__restrict__ window) {
  extern __shared__ float4 block_coef[]; /* [width][BAND_QUADS] */
  const int g = first / BAND_ROWS + blockIdx.y, width = group_width[g];
  const float4 *source = reinterpret_cast<const float4 *>(coef + group_offset[g]);
  for (int i = threadIdx.x; i < width * BAND_QUADS; i += BAND_THREADS)
    block_coef[i] = source[i];
  __syncthreads();
  const int r = blockIdx.x * BAND_THREADS + threadIdx.x;
  if (r >= receivers) return;
  const float *x = traces + (size_t)r * length + group_first[g];
  float acc[BAND_ROWS];
#pragma unroll
  for (int j = 0; j < BAND_ROWS; ++j)
    acc[j] = 0.0f;
  for (int m = 0; m < width; ++m) {
    const float v = __ldg(x + m);
#pragma unroll
    for (int q = 0; q < BAND_QUADS; ++q) {
      const float4 c = block_coef[m * BAND_QUADS + q];
      acc[4 * q] = __fmaf_rn(c.x, v, acc[4 * q]);
      acc[4 * q + 1] = __fmaf_rn(c.y, v, acc[4 * q + 1]);
      acc[4 * q + 2] = __fmaf_rn(c.z, v, acc[4 * q + 2]);
      acc[4 * q + 3] = __fmaf_rn(c.w, v, acc[4 * q + 3]);
    }
  }
  const int row = g * BAND_ROWS - first;
  float *out = window + (size_t)r * count;
#pragma unroll
  for (int j = 0; j < BAND_ROWS; ++j)
    if (row + j < count) out[row + j] = acc[j];
}

static size_t band_shared_bytes(int max_width) {
  return (size_t)max_width * BAND_ROWS * sizeof(float);
}

extern "C" int rtm_cuda_band_fits(int max_width, int device) {
  int limit = 0;
  if (cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
      cudaSuccess)
    return 0;
  return band_shared_bytes(max_width) <= (size_t)limit;
}

extern "C" int rtm_cuda_band_trace_window(const float *traces, int receivers, int length, int first,
                                          int count, const rtm_cuda_band_t *band, float *window,
                                          cudaStream_t stream) {
  int status = RTM_OK;
  if (receivers <= 0 || count <= 0) return RTM_OK;
  if (first % BAND_ROWS != 0 || first + count > length)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: a band window [%d, %d) of traces of %d samples",
             first, first + count, length);
  {
    const size_t shared = band_shared_bytes(band->max_width);
    RTM_CUDA_TRY(cudaFuncSetAttribute(band_trace_window_kernel,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
    const dim3 blocks((unsigned)((receivers + BAND_THREADS - 1) / BAND_THREADS),
                      (unsigned)((count + BAND_ROWS - 1) / BAND_ROWS));
    band_trace_window_kernel<<<blocks, BAND_THREADS, shared, stream>>>(
        traces, receivers, (size_t)length, first, count, band->first, band->width, band->offset,
        band->coef, window);
    RTM_CUDA_TRY_LAUNCH("band_trace_window_kernel");
  }
fail:
  return status;
}

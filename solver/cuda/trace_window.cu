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

enum {
  BAND_THREADS = 128,
  BAND_ROWS = RTM_TRACES_BAND_ROWS,
  BAND_QUADS = BAND_ROWS / 4,
  WARP = 32,
  BAND_WARPS = BAND_THREADS / WARP
};

/* A block: BAND_THREADS receivers, one group of rows (blockIdx.y after the window's first);
 * a thread sums its receiver's BAND_ROWS corrected samples over the group's columns in
 * order, as the reference does (fmaf). A receiver's columns are contiguous in `traces`, so a
 * warp reads its 32 receivers' next 32 columns a receiver at a time (one line a load) into
 * its tile, which each thread then reads along its own row (the tile's odd pitch keeps
 * the 32 rows on 32 banks); the coefficients of a column, the same for every thread, are
 * read once a warp and broadcast. */
__global__ void __launch_bounds__(BAND_THREADS)
    band_trace_window_kernel(const float *__restrict__ traces, int receivers, size_t length,
                             int first, int count, const int *__restrict__ group_first,
                             const int *__restrict__ group_width,
                             const long long *__restrict__ group_offset,
                             const float *__restrict__ coef, float *__restrict__ window) {
  __shared__ float tile[BAND_WARPS][WARP][WARP + 1];
  const int g = first / BAND_ROWS + blockIdx.y, width = group_width[g];
  const float4 *c = reinterpret_cast<const float4 *>(coef + group_offset[g]);
  const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
  const int base = blockIdx.x * BAND_THREADS + warp * WARP; /* the warp's first receiver */
  const float *x = traces + (size_t)base * length + group_first[g];
  float(*rows)[WARP + 1] = tile[warp];
  float acc[BAND_ROWS];
#pragma unroll
  for (int j = 0; j < BAND_ROWS; ++j)
    acc[j] = 0.0f;
  for (int m0 = 0; m0 < width; m0 += WARP) {
    const int span = width - m0 < WARP ? width - m0 : WARP;
#pragma unroll 8
    for (int i = 0; i < WARP; ++i)
      rows[i][lane] =
          base + i < receivers && lane < span ? __ldg(x + (size_t)i * length + m0 + lane) : 0.0f;
    __syncwarp();
    for (int m = 0; m < span; ++m) {
      const float v = rows[lane][m];
#pragma unroll
      for (int q = 0; q < BAND_QUADS; ++q) {
        const float4 k = __ldg(c + (m0 + m) * BAND_QUADS + q);
        acc[4 * q] = __fmaf_rn(k.x, v, acc[4 * q]);
        acc[4 * q + 1] = __fmaf_rn(k.y, v, acc[4 * q + 1]);
        acc[4 * q + 2] = __fmaf_rn(k.z, v, acc[4 * q + 2]);
        acc[4 * q + 3] = __fmaf_rn(k.w, v, acc[4 * q + 3]);
      }
    }
    __syncwarp(); /* the tile read before the next columns overwrite it */
  }
  const int r = base + lane;
  if (r >= receivers) return;
  const int row = g * BAND_ROWS - first;
  float *out = window + (size_t)r * count;
#pragma unroll
  for (int j = 0; j < BAND_ROWS; ++j)
    if (row + j < count) out[row + j] = acc[j];
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
    const dim3 blocks((unsigned)((receivers + BAND_THREADS - 1) / BAND_THREADS),
                      (unsigned)((count + BAND_ROWS - 1) / BAND_ROWS));
    band_trace_window_kernel<<<blocks, BAND_THREADS, 0, stream>>>(
        traces, receivers, (size_t)length, first, count, band->first, band->width, band->offset,
        band->coef, window);
    RTM_CUDA_TRY_LAUNCH("band_trace_window_kernel");
  }
fail:
  return status;
}

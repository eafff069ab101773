/* imaging_cuda.cu - the device side of solver/rtm's imaging (imaging_cuda.h): the image
 * accumulation, the snapshot pack (fp32 and binary16) and binary16 unpack kernels, and the
 * copies around them, all on the legacy default stream, with the host loops' arithmetic. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <new>

#include "imaging_cuda.h"
#include "rtm_cuda_codec.h"
#include "rtm_cuda_check.h"
#include "rtm_half.h" /* rtm_half_scale_exponent */

namespace {

constexpr int ROW_THREADS = 256;            /* threads along a row of x */
constexpr long long MAX_ROW_BLOCKS = 65535; /* gridDim.y limit; more rows are strided over */
constexpr int CELL_THREADS = 256;
constexpr int QUAD_THREADS_X = 32; /* accumulate_quads_kernel: quads along a row (128 cells) */
constexpr int QUAD_THREADS_Y = 8;  /* and rows along y */
constexpr long long MAX_CELL_BLOCKS = 1 << 20;

/* Blocks of CELL_THREADS for a grid-stride loop over elements, at most MAX_CELL_BLOCKS. */
unsigned cell_blocks(size_t elements) {
  const size_t wanted = (elements + CELL_THREADS - 1) / CELL_THREADS;
  return (unsigned)(wanted < (size_t)MAX_CELL_BLOCKS ? wanted : (size_t)MAX_CELL_BLOCKS);
}

/* Launch shape of the row kernels: x tiles of ROW_THREADS cells, then the (z, y) rows. */
dim3 row_grid(rtm_imaging_extent_t extent) {
  const long long rows = (long long)extent.ny * extent.nz;
  return dim3((unsigned)((extent.nx + ROW_THREADS - 1) / ROW_THREADS),
              (unsigned)(rows < MAX_ROW_BLOCKS ? rows : MAX_ROW_BLOCKS));
}

bool empty(rtm_imaging_extent_t extent) {
  return extent.nx <= 0 || extent.ny <= 0 || extent.nz <= 0;
}

} // namespace

/* Element of interior cell (ix, iy, iz) in an array laid out as `layout`. */
static __device__ __forceinline__ long long element(const rtm_layout_t &layout, int ix,
                                                    long long iy, long long iz) {
  return layout.origin + iz * layout.stride_z + iy * layout.stride_y + ix;
}

/* lit + s^2 by one __fmaf_rn a lane. */
static __device__ __forceinline__ float square_add(float s, float lit) {
  return __fmaf_rn(s, s, lit);
}
static __device__ __forceinline__ float4 square_add(float4 s, float4 lit) {
  return make_float4(__fmaf_rn(s.x, s.x, lit.x), __fmaf_rn(s.y, s.y, lit.y),
                     __fmaf_rn(s.z, s.z, lit.z), __fmaf_rn(s.w, s.w, lit.w));
}

/* image += source * receiver, then illumination += source^2, one __fmaf_rn each (the host
 * loop's fmaf, exactly rounded: the same floats); the image alone where illumination is NULL
 * (the same in every thread: no divergence). Over the extent's cells, the outputs laid out as
 * image_layout (the dense volume's, or a box of it).
 * Thread mapping: ix = blockIdx.x * blockDim.x + threadIdx.x (one cell each, coalesced along
 * x); row = iz ny + iy from blockIdx.y, striding by gridDim.y over the rows. */
static __global__ void accumulate_kernel(rtm_imaging_extent_t extent, float *__restrict__ image,
                                         float *__restrict__ illumination,
                                         rtm_layout_t image_layout,
                                         const float *__restrict__ source,
                                         rtm_layout_t source_layout,
                                         const float *__restrict__ receiver,
                                         rtm_layout_t receiver_layout) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  if (ix >= extent.nx) return;
  const long long rows = (long long)extent.ny * extent.nz;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
    const long long iz = row / extent.ny, iy = row % extent.ny;
    const long long dense = element(image_layout, ix, iy, iz);
    const float s = source[element(source_layout, ix, iy, iz)];
    image[dense] = __fmaf_rn(s, receiver[element(receiver_layout, ix, iy, iz)], image[dense]);
    if (illumination) illumination[dense] = __fmaf_rn(s, s, illumination[dense]);
  }
}

/* accumulate_kernel four cells at a time, where every array's rows start 16-byte aligned
 * (quads_fit): one float4 of each of the four arrays read and two written a thread, the same
 * __fmaf_rn a cell, so the same floats. Thread mapping: the quad qx of a row from blockIdx.x
 * and threadIdx.x, iy from blockIdx.y and threadIdx.y, iz = blockIdx.z striding by gridDim.z:
 * no division a row (the one-cell kernel divides in 64 bits), 64 bytes of loads in flight
 * a thread (its 16). */
static __global__ void accumulate_quads_kernel(rtm_imaging_extent_t extent,
                                               float4 *__restrict__ image,
                                               float4 *__restrict__ illumination,
                                               rtm_layout_t image_layout,
                                               const float *__restrict__ source,
                                               rtm_layout_t source_layout,
                                               const float *__restrict__ receiver,
                                               rtm_layout_t receiver_layout) {
  const int quads = extent.nx / 4;
  const int qx = blockIdx.x * blockDim.x + threadIdx.x;
  const long long iy = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  if (qx >= quads || iy >= extent.ny) return;
  for (long long iz = blockIdx.z; iz < extent.nz; iz += gridDim.z) {
    const long long dense = element(image_layout, 4 * qx, iy, iz) / 4; /* quads_fit: whole */
    const float4 s = __ldcs(reinterpret_cast<const float4 *>(
        source + element(source_layout, 4 * qx, iy, iz)));
    const float4 r = __ldcs(reinterpret_cast<const float4 *>(
        receiver + element(receiver_layout, 4 * qx, iy, iz)));
    float4 sum = image[dense];
    sum.x = __fmaf_rn(s.x, r.x, sum.x);
    sum.y = __fmaf_rn(s.y, r.y, sum.y);
    sum.z = __fmaf_rn(s.z, r.z, sum.z);
    sum.w = __fmaf_rn(s.w, r.w, sum.w);
    image[dense] = sum;
    if (illumination) illumination[dense] = square_add(s, illumination[dense]);
  }
}

/* The illumination of the snapshots a backward pass images, in its order (the last slot
 * first), each volume read once: lit += s_k^2 for k = count - 1 down to 0, one __fmaf_rn
 * each, as count accumulations would add them. Thread mapping: one element of V (float4
 * where the volumes allow, else float) a thread, a grid-stride loop over the elements; the
 * slots' loads unrolled so that several are in flight. */
template <typename V>
static __global__ void illuminate_kernel(size_t elements, V *__restrict__ illumination,
                                         const V *__restrict__ first, size_t stride, int count) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < elements;
       i += (size_t)gridDim.x * blockDim.x) {
    V lit = illumination[i];
#pragma unroll 8
    for (int k = count - 1; k >= 0; --k)
      lit = square_add(__ldcs(first + (size_t)k * stride + i), lit);
    illumination[i] = lit;
  }
}

/* The value a snapshot slot stores for a field value: the float itself, or the binary16 bits
 * of value 2^e (an exact scaling, rtm_half_scale_exponent) rounded to nearest even
 * (__float2half_rn, as rtm_half_from_float). */
static __device__ __forceinline__ float stored(float value, float, float *) {
  return value;
}
static __device__ __forceinline__ unsigned short stored(float value, float scale,
                                                        unsigned short *) {
  return __half_as_ushort(__float2half_rn(value * scale));
}

/* dense[cell] = stored(field[cell]) over the interior: an fp32 or a binary16 snapshot, the
 * latter scaled by the 2^e that *max_bits (the interior's largest |x|, max_abs_kernel)
 * gives. Thread mapping as accumulate_kernel. */
template <typename T>
static __global__ void pack_kernel(rtm_imaging_extent_t extent, const float *__restrict__ field,
                                   rtm_layout_t layout, T *__restrict__ dense,
                                   const unsigned *__restrict__ max_bits) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  if (ix >= extent.nx) return;
  const float scale =
      max_bits ? rtm_half_power_of_two(rtm_half_scale_exponent(*max_bits)) : 1.0f;
  const long long rows = (long long)extent.ny * extent.nz;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
    const float value = field[element(layout, ix, row % extent.ny, row / extent.ny)];
    dense[row * extent.nx + ix] = stored(value, scale, dense);
  }
}

/* *max_bits = the largest of the interior's |x| as bits (x's bits & 0x7fffffff: for
 * non-negative floats the order of the bits is the order of the values, a NaN above all),
 * over a *max_bits zeroed before. Thread mapping as accumulate_kernel; a warp's largest by
 * shuffles, one atomicMax a warp. */
static __global__ void max_abs_kernel(rtm_imaging_extent_t extent, const float *__restrict__ field,
                                      rtm_layout_t layout, unsigned *__restrict__ max_bits) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned largest = 0;
  const long long rows = (long long)extent.ny * extent.nz;
  for (long long row = blockIdx.y; ix < extent.nx && row < rows; row += gridDim.y) {
    const unsigned bits =
        __float_as_uint(field[element(layout, ix, row % extent.ny, row / extent.ny)]) &
        0x7fffffffu;
    largest = bits > largest ? bits : largest;
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const unsigned other = __shfl_down_sync(0xffffffffu, largest, offset);
    largest = other > largest ? other : largest;
  }
  if ((threadIdx.x & 31) == 0 && largest) atomicMax(max_bits, largest);
}

/* sums[0] += (dense - field)^2, sums[1] += field^2 over the interior, in double: a snapshot's
 * round-trip error (dense: the decoded snapshot) without the volumes leaving the device.
 * Thread mapping as accumulate_kernel; a warp's sums by shuffles, one atomicAdd a warp each
 * (the order of the additions varies: the last bits of the sums do too). */
static __global__ void difference_kernel(rtm_imaging_extent_t extent,
                                         const float *__restrict__ field, rtm_layout_t layout,
                                         const float *__restrict__ dense,
                                         double *__restrict__ sums) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  double squares[2] = {0.0, 0.0};
  const long long rows = (long long)extent.ny * extent.nz;
  for (long long row = blockIdx.y; ix < extent.nx && row < rows; row += gridDim.y) {
    const double original = field[element(layout, ix, row % extent.ny, row / extent.ny)];
    const double difference = (double)dense[row * extent.nx + ix] - original;
    squares[0] += difference * difference;
    squares[1] += original * original;
  }
  for (int offset = 16; offset > 0; offset >>= 1)
    for (int k = 0; k < 2; ++k)
      squares[k] += __shfl_down_sync(0xffffffffu, squares[k], offset);
  if ((threadIdx.x & 31) == 0)
    for (int k = 0; k < 2; ++k)
      if (squares[k] != 0.0) atomicAdd(&sums[k], squares[k]);
}

/* out[i] = binary16 half_bits[i] as float times 2^-e (both exact), e from *max_bits as the
 * pack took it. Thread mapping: one cell per thread, a grid-stride loop over the cells. */
static __global__ void unpack_half_kernel(const unsigned short *__restrict__ half_bits,
                                          float *__restrict__ out, size_t cells,
                                          const unsigned *__restrict__ max_bits) {
  const float unscale = rtm_half_power_of_two(-rtm_half_scale_exponent(*max_bits));
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < cells;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = __half2float(__ushort_as_half(half_bits[i])) * unscale;
}

extern "C" int rtm_imaging_cuda_use_device(int device) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaSetDevice(device));
fail:
  return status;
}

/* Launches a row kernel (row_grid's shape) on the legacy default stream and checks the
 * launch; nothing to do for an empty extent. */
template <typename... Parameters, typename... Arguments>
static int launch_rows(void (*kernel)(rtm_imaging_extent_t, Parameters...), const char *name,
                       rtm_imaging_extent_t extent, Arguments... arguments) {
  int status = RTM_OK;
  if (empty(extent)) return RTM_OK;
  kernel<<<row_grid(extent), ROW_THREADS, 0, cudaStreamLegacy>>>(extent, arguments...);
  RTM_CUDA_TRY_LAUNCH(name);
fail:
  return status;
}

/* Whether every row of an array laid out as `layout` from `base` starts 16-byte aligned
 * and holds whole quads: accumulate_quads_kernel's condition. */
static bool quads_fit(rtm_imaging_extent_t extent, const void *base, rtm_layout_t layout) {
  return extent.nx % 4 == 0 && reinterpret_cast<uintptr_t>(base) % 16 == 0 &&
         layout.origin % 4 == 0 && layout.stride_y % 4 == 0 && layout.stride_z % 4 == 0;
}

/* accumulate_quads_kernel on the legacy default stream: quads along x and rows along y in
 * its blocks (gridDim.y = ny / 8: ny <= 100000, grid.ny's bound, keeps it within 65535),
 * planes over gridDim.z, strided past 65535. */
static int launch_quads(rtm_imaging_extent_t extent, float *d_image, float *d_illumination,
                        rtm_layout_t image_layout, const float *d_source, rtm_layout_t source_layout,
                        const float *d_receiver, rtm_layout_t receiver_layout) {
  int status = RTM_OK;
  const dim3 threads(QUAD_THREADS_X, QUAD_THREADS_Y);
  const unsigned quads = (unsigned)(extent.nx / 4);
  const dim3 blocks((quads + threads.x - 1) / threads.x,
                    (unsigned)((extent.ny + threads.y - 1) / threads.y),
                    (unsigned)(extent.nz < MAX_ROW_BLOCKS ? extent.nz : MAX_ROW_BLOCKS));
  accumulate_quads_kernel<<<blocks, threads, 0, cudaStreamLegacy>>>(
      extent, reinterpret_cast<float4 *>(d_image), reinterpret_cast<float4 *>(d_illumination),
      image_layout, d_source, source_layout, d_receiver, receiver_layout);
  RTM_CUDA_TRY_LAUNCH("accumulate_quads_kernel");
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_accumulate(rtm_imaging_extent_t extent, float *d_image,
                                           float *d_illumination, rtm_layout_t image_layout,
                                           const float *d_source, rtm_layout_t source_layout,
                                           const float *d_receiver,
                                           rtm_layout_t receiver_layout) {
  if (empty(extent)) return RTM_OK;
  if (!quads_fit(extent, d_source, source_layout) ||
      !quads_fit(extent, d_receiver, receiver_layout) ||
      !quads_fit(extent, d_image, image_layout) ||
      (d_illumination && !quads_fit(extent, d_illumination, image_layout)))
    return launch_rows(accumulate_kernel, "accumulate_kernel", extent, d_image, d_illumination,
                       image_layout, d_source, source_layout, d_receiver, receiver_layout);
  return launch_quads(extent, d_image, d_illumination, image_layout, d_source, source_layout,
                      d_receiver, receiver_layout);
}

extern "C" int rtm_imaging_cuda_illuminate(size_t cells, float *d_illumination,
                                           const float *d_first, size_t stride, int count) {
  int status = RTM_OK;
  if (cells == 0 || count <= 0) return RTM_OK;
  const bool quads = cells % 4 == 0 && stride % 4 == 0 &&
                     reinterpret_cast<uintptr_t>(d_illumination) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(d_first) % 16 == 0;
  const size_t elements = quads ? cells / 4 : cells;
  const unsigned blocks = cell_blocks(elements);
  if (quads) {
    illuminate_kernel<<<blocks, CELL_THREADS, 0, cudaStreamLegacy>>>(
        elements, reinterpret_cast<float4 *>(d_illumination),
        reinterpret_cast<const float4 *>(d_first), stride / 4, count);
    RTM_CUDA_TRY_LAUNCH("illuminate_kernel<float4>");
  } else {
    illuminate_kernel<<<blocks, CELL_THREADS, 0, cudaStreamLegacy>>>(elements, d_illumination,
                                                                     d_first, stride, count);
    RTM_CUDA_TRY_LAUNCH("illuminate_kernel<float>");
  }
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_pack(rtm_imaging_extent_t extent, const float *d_field,
                                     rtm_layout_t layout, float *d_dense) {
  return launch_rows(pack_kernel<float>, "pack_kernel<float>", extent, d_field, layout, d_dense,
                     static_cast<const unsigned *>(nullptr));
}

extern "C" int rtm_imaging_cuda_pack_half(rtm_imaging_extent_t extent, const float *d_field,
                                          rtm_layout_t layout, uint16_t *d_dense,
                                          uint32_t *d_max_bits) {
  int status = RTM_OK;
  unsigned *max_bits = reinterpret_cast<unsigned *>(d_max_bits);
  RTM_CUDA_TRY(cudaMemsetAsync(max_bits, 0, sizeof *max_bits, cudaStreamLegacy));
  RTM_TRY(launch_rows(max_abs_kernel, "max_abs_kernel", extent, d_field, layout, max_bits));
  RTM_TRY(launch_rows(pack_kernel<unsigned short>, "pack_kernel<binary16>", extent, d_field,
                      layout, reinterpret_cast<unsigned short *>(d_dense),
                      static_cast<const unsigned *>(max_bits)));
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_unpack_half(const uint16_t *d_half, float *d_out, size_t cells,
                                            const uint32_t *d_max_bits) {
  int status = RTM_OK;
  if (cells == 0) return RTM_OK;
  unpack_half_kernel<<<cell_blocks(cells), CELL_THREADS, 0, cudaStreamLegacy>>>(
      reinterpret_cast<const unsigned short *>(d_half), d_out, cells,
      reinterpret_cast<const unsigned *>(d_max_bits));
  RTM_CUDA_TRY_LAUNCH("unpack_half_kernel");
fail:
  return status;
}

/* The two difference sums of d_field's interior against the dense d_dense, or where it is
 * NULL against the blocks d_in decoded, on the host when it returns. */
static int difference_sums(rtm_imaging_extent_t extent, const float *d_field, rtm_layout_t layout,
                           const float *d_dense, const void *d_in, int rate, void *d_scratch,
                           double sums[2]) {
  int status = RTM_OK;
  double *d_sums = NULL;
  const int n[3] = {extent.nx, extent.ny, extent.nz};
  sums[0] = sums[1] = 0.0;
  RTM_CUDA_TRY(cudaMallocAsync((void **)&d_sums, 2 * sizeof *d_sums, cudaStreamLegacy));
  if (d_dense) {
    RTM_CUDA_TRY(cudaMemsetAsync(d_sums, 0, 2 * sizeof *d_sums, cudaStreamLegacy));
    RTM_TRY(launch_rows(difference_kernel, "difference_kernel", extent, d_field, layout, d_dense,
                        d_sums));
  } else {
    RTM_TRY(rtm_cuda_codec_difference(d_in, n, rate, d_scratch, d_field + layout.origin,
                                      (size_t)layout.stride_y, (size_t)layout.stride_z, d_sums,
                                      cudaStreamLegacy));
  }
  RTM_CUDA_TRY(cudaMemcpyAsync(sums, d_sums, 2 * sizeof *d_sums, cudaMemcpyDeviceToHost,
                               cudaStreamLegacy));
  RTM_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
fail:
  if (d_sums) (void)cudaFreeAsync(d_sums, cudaStreamLegacy);
  return status;
}

extern "C" int rtm_imaging_cuda_difference(rtm_imaging_extent_t extent, const float *d_field,
                                           rtm_layout_t layout, const float *d_dense,
                                           double sums[2]) {
  return difference_sums(extent, d_field, layout, d_dense, NULL, 0, NULL, sums);
}

extern "C" int rtm_imaging_cuda_difference_blocks(rtm_imaging_extent_t extent,
                                                  const float *d_field, rtm_layout_t layout,
                                                  const void *d_in, int rate, void *d_scratch,
                                                  double sums[2]) {
  return difference_sums(extent, d_field, layout, NULL, d_in, rate, d_scratch, sums);
}

extern "C" int rtm_imaging_cuda_pack_to_host(rtm_imaging_extent_t extent, const float *d_field,
                                             rtm_layout_t layout, float *host_dense) {
  int status = RTM_OK;
  const size_t row_bytes = (size_t)extent.nx * sizeof(float);
  const size_t plane = (size_t)extent.nx * (size_t)extent.ny;
  for (long long iz = 0; iz < extent.nz; ++iz)
    RTM_CUDA_TRY(cudaMemcpy2DAsync(host_dense + iz * plane, row_bytes,
                                   d_field + layout.origin + iz * layout.stride_z,
                                   (size_t)layout.stride_y * sizeof(float), row_bytes,
                                   (size_t)extent.ny, cudaMemcpyDefault, cudaStreamLegacy));
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_compress(rtm_imaging_extent_t extent, const float *d_field,
                                         rtm_layout_t layout, int rate, void *d_out,
                                         void *d_scratch, uint64_t *d_first_refused) {
  static_assert(sizeof(uint64_t) == sizeof(unsigned long long), "the codec's refused word");
  const int n[3] = {extent.nx, extent.ny, extent.nz};
  return rtm_cuda_codec_compress(d_field + layout.origin, n, (size_t)layout.stride_y,
                                 (size_t)layout.stride_z, rate, d_out, d_scratch,
                                 reinterpret_cast<unsigned long long *>(d_first_refused),
                                 cudaStreamLegacy);
}

extern "C" int rtm_imaging_cuda_decompress(rtm_imaging_extent_t extent, const void *d_in, int rate,
                                           void *d_scratch, float *d_dense) {
  const int n[3] = {extent.nx, extent.ny, extent.nz};
  const size_t row = (size_t)extent.nx;
  return rtm_cuda_codec_decompress(d_in, n, rate, d_scratch, d_dense, row, row * (size_t)extent.ny,
                                   cudaStreamLegacy);
}

extern "C" int rtm_imaging_cuda_decompress_accumulate(rtm_imaging_extent_t extent,
                                                      const void *d_in, int rate,
                                                      void *d_scratch, float *d_image,
                                                      float *d_illumination,
                                                      const float *d_receiver,
                                                      rtm_layout_t receiver_layout) {
  const int n[3] = {extent.nx, extent.ny, extent.nz};
  return rtm_cuda_codec_decompress_image(d_in, n, rate, d_scratch, d_image, d_illumination,
                                         d_receiver + receiver_layout.origin,
                                         (size_t)receiver_layout.stride_y,
                                         (size_t)receiver_layout.stride_z, cudaStreamLegacy);
}

extern "C" int rtm_imaging_cuda_copy(void *dst, const void *src, size_t bytes) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cudaStreamLegacy));
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_read(void *host, const void *d_src, size_t bytes) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaMemcpyAsync(host, d_src, bytes, cudaMemcpyDefault, cudaStreamLegacy));
  RTM_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_zero(void *d_ptr, size_t bytes) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaMemsetAsync(d_ptr, 0, bytes, cudaStreamLegacy));
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_synchronize(void) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
fail:
  return status;
}

struct rtm_imaging_cuda_hold {
  cudaStream_t stream; /* non-blocking: the copy does not hold back the backends' streams */
  cudaEvent_t queued;  /* on the legacy stream: the work the copy follows */
  cudaEvent_t copied;  /* on the hold's stream: the copy's end */
};

static int hold_create(rtm_imaging_cuda_hold_t **hold) {
  int status = RTM_OK;
  rtm_imaging_cuda_hold_t *made = new (std::nothrow) rtm_imaging_cuda_hold_t();
  if (!made) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the image's copy stream");
  *hold = made;
  RTM_CUDA_TRY(cudaStreamCreateWithFlags(&made->stream, cudaStreamNonBlocking));
  RTM_CUDA_TRY(cudaEventCreateWithFlags(&made->queued, cudaEventDisableTiming));
  RTM_CUDA_TRY(cudaEventCreateWithFlags(&made->copied, cudaEventDisableTiming));
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_hold_start(rtm_imaging_cuda_hold_t **hold, void *host_a,
                                           const void *d_a, void *host_b, const void *d_b,
                                           size_t bytes) {
  int status = RTM_OK;
  if (!*hold) RTM_TRY(hold_create(hold));
  RTM_CUDA_TRY(cudaEventRecord((*hold)->queued, cudaStreamLegacy));
  RTM_CUDA_TRY(cudaStreamWaitEvent((*hold)->stream, (*hold)->queued, 0));
  if (host_a) RTM_CUDA_TRY(cudaMemcpyAsync(host_a, d_a, bytes, cudaMemcpyDefault, (*hold)->stream));
  if (host_b) RTM_CUDA_TRY(cudaMemcpyAsync(host_b, d_b, bytes, cudaMemcpyDefault, (*hold)->stream));
  RTM_CUDA_TRY(cudaEventRecord((*hold)->copied, (*hold)->stream));
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_hold_order(rtm_imaging_cuda_hold_t *hold) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaStreamWaitEvent(cudaStreamLegacy, hold->copied, 0));
fail:
  return status;
}

extern "C" int rtm_imaging_cuda_hold_wait(rtm_imaging_cuda_hold_t *hold) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaEventSynchronize(hold->copied));
fail:
  return status;
}

extern "C" void rtm_imaging_cuda_hold_destroy(rtm_imaging_cuda_hold_t *hold) {
  if (!hold) return;
  if (hold->stream) {
    cudaStreamSynchronize(hold->stream); /* the copy reads device memory about to be freed */
    cudaStreamDestroy(hold->stream);
  }
  if (hold->queued) cudaEventDestroy(hold->queued);
  if (hold->copied) cudaEventDestroy(hold->copied);
  delete hold;
}

/* A thread: one lag (hy, hx) of one CIP and a run of up to GATHER_Z of its depths, walked
 * down its trace of the gathers (contiguous in z) four depths a float4 where the trace is
 * 16-byte aligned (the first depths one at a time until it is). Threads are numbered in the
 * order (CIP row j, hy, CIP i along x, hx): a warp's lanes take consecutive hx, so S(cx -
 * hx, cy - hy, z) and R(cx + hx, cy + hy, z) are read along x, coalesced, and a block's
 * CIPs along x read overlapping windows of the same rows, which its L1 serves. Each
 * element takes its fmafs in the steps' order, the host loop's, so the floats are its.
 * STEPS imaging steps a pass (1 to GATHER_STEPS_MOST, GatherSteps). An element whose x -+ hx
 * or y -+ hy lies in the layer is left alone. The kernel before (a block a row (cip, hy) and
 * 32 depths, S and R through shared tiles) issued some 200 instructions an element; this one
 * takes 2.67 against 5.65 ms a pass of two steps over a 512^3 survey's 2 GB of gathers
 * (30 x 30 CIPs, 16 lags each way) on an H200, the same floats (docs/migration.md's
 * common-image gathers). Four steps a pass: 1.20 against 1.49 ms an imaging step for two
 * (run/experiments/gathers_pass.sh, an H200). */
enum { GATHER_Z = 64, GATHER_THREADS = 256, GATHER_STEPS_MOST = 4 };

/* The S and R volumes of the imaging steps of one pass, in their order. */
struct GatherSteps {
  const float *source[GATHER_STEPS_MOST], *receiver[GATHER_STEPS_MOST];
  rtm_layout_t source_layout[GATHER_STEPS_MOST], receiver_layout[GATHER_STEPS_MOST];
};

/* g after the steps' fmafs at depth offset dz of the thread's S and R (one __fmaf_rn each,
 * in the steps' order). */
template <int STEPS>
static __device__ __forceinline__ float gather_element(const float *const s[], const float *const r[],
                                                       const long long s_z[], const long long r_z[],
                                                       int dz, float g) {
#pragma unroll
  for (int t = 0; t < STEPS; ++t)
    g = __fmaf_rn(__ldg(s[t] + dz * s_z[t]), __ldg(r[t] + dz * r_z[t]), g);
  return g;
}

template <int STEPS>
static __global__ void __launch_bounds__(GATHER_THREADS)
    gathers_kernel(rtm_gather_plan_t plan, int nx, int ny, long long z_begin, long long z_end,
                   long long nz_local, float *__restrict__ values, const GatherSteps steps) {
  const int lags = plan.lags, nh = 2 * lags + 1, w = plan.layer;
  const long long index = (long long)blockIdx.x * GATHER_THREADS + threadIdx.x;
  const int line = nh * plan.count[0]; /* the threads of one (j, hy) */
  if (index >= (long long)line * nh * plan.count[1]) return;
  const long long z0 = z_begin + (long long)blockIdx.y * GATHER_Z;
  const int depths = (int)(z_end - z0 < GATHER_Z ? z_end - z0 : GATHER_Z);
  const int jy = (int)(index / line), rest = (int)(index - (long long)jy * line);
  const int j = jy / nh, hy = jy - j * nh - lags, i = rest / nh, hx = rest - i * nh - lags;
  const int cx = plan.first[0] + i * plan.step[0], cy = plan.first[1] + j * plan.step[1];
  if (cy - hy < w || cy - hy >= ny - w || cy + hy < w || cy + hy >= ny - w) return;
  if (cx - hx < w || cx - hx >= nx - w || cx + hx < w || cx + hx >= nx - w) return;
  const float *s[STEPS], *r[STEPS];
  long long s_z[STEPS], r_z[STEPS];
#pragma unroll
  for (int t = 0; t < STEPS; ++t) {
    s[t] = steps.source[t] + element(steps.source_layout[t], cx - hx, cy - hy, z0);
    r[t] = steps.receiver[t] + element(steps.receiver_layout[t], cx + hx, cy + hy, z0);
    s_z[t] = steps.source_layout[t].stride_z;
    r_z[t] = steps.receiver_layout[t].stride_z;
  }
  const long long cip = (long long)j * plan.count[0] + i;
  float *g = values + ((cip * nh + hy + lags) * nh + hx + lags) * nz_local + z0;
  int dz = 0;
  for (; dz < depths && ((uintptr_t)(g + dz) & 15u) != 0; ++dz)
    g[dz] = gather_element<STEPS>(s, r, s_z, r_z, dz, g[dz]);
  for (; dz + 4 <= depths; dz += 4) {
    float4 v = *reinterpret_cast<const float4 *>(g + dz);
    v.x = gather_element<STEPS>(s, r, s_z, r_z, dz, v.x);
    v.y = gather_element<STEPS>(s, r, s_z, r_z, dz + 1, v.y);
    v.z = gather_element<STEPS>(s, r, s_z, r_z, dz + 2, v.z);
    v.w = gather_element<STEPS>(s, r, s_z, r_z, dz + 3, v.w);
    *reinterpret_cast<float4 *>(g + dz) = v;
  }
  for (; dz < depths; ++dz)
    g[dz] = gather_element<STEPS>(s, r, s_z, r_z, dz, g[dz]);
}

extern "C" int rtm_imaging_cuda_gathers(const rtm_gather_plan_t *plan, const int n[2], long z_begin,
                                        long z_end, long nz_local, float *d_values, int count,
                                        const float *const d_source[],
                                        const rtm_layout_t source_layout[],
                                        const float *const d_receiver[],
                                        const rtm_layout_t receiver_layout[]) {
  int status = RTM_OK;
  const long long nh = 2 * plan->lags + 1;
  const long long rows = (long long)plan->count[0] * plan->count[1] * nh;
  if (rows <= 0 || z_end <= z_begin) return RTM_OK;
  if (count < 1 || count > GATHER_STEPS_MOST)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_imaging_cuda_gathers: %d imaging steps a pass (1 to %d)", count,
             GATHER_STEPS_MOST);
  {
    GatherSteps steps = {};
    for (int t = 0; t < count; ++t) {
      steps.source[t] = d_source[t];
      steps.receiver[t] = d_receiver[t];
      steps.source_layout[t] = source_layout[t];
      steps.receiver_layout[t] = receiver_layout[t];
    }
    const long long threads = rows * nh;
    if ((threads + GATHER_THREADS - 1) / GATHER_THREADS > 0x7fffffffLL ||
        (z_end - z_begin + GATHER_Z - 1) / GATHER_Z > 65535)
      RTM_FAIL(RTM_ERR_INTERNAL,
               "rtm_imaging_cuda_gathers: %lld traces over %ld planes exceed a launch's grid",
               threads, z_end - z_begin);
    const dim3 blocks((unsigned)((threads + GATHER_THREADS - 1) / GATHER_THREADS),
                      (unsigned)((z_end - z_begin + GATHER_Z - 1) / GATHER_Z));
    void (*const kernels[GATHER_STEPS_MOST])(rtm_gather_plan_t, int, int, long long, long long,
                                             long long, float *__restrict__, const GatherSteps) = {
        gathers_kernel<1>, gathers_kernel<2>, gathers_kernel<3>, gathers_kernel<4>};
    kernels[count - 1]<<<blocks, GATHER_THREADS, 0, cudaStreamLegacy>>>(
        *plan, n[0], n[1], z_begin, z_end, nz_local, d_values, steps);
    RTM_CUDA_TRY_LAUNCH("gathers_kernel");
  }
fail:
  return status;
}

/* The fixed-rate codec's CUDA kernels (rtm_cuda_codec.h): one thread a 4 x 4 x 4 block,
 * running the block coder the C reference runs (solver/grid/rtm_codec_block.h), so the
 * bytes and the floats are the reference's, bit for bit. The block stays in the thread's
 * registers (the coder is written for it: no array in local memory); a whole block of a
 * volume whose rows are 16-byte aligned moves as 16 float4s, a warp's row of blocks as
 * contiguous 512-byte pieces. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "rtm_codec.h"
#include "rtm_codec_block.h"
#include "rtm_cuda_check.h"
#include "rtm_cuda_codec.h"
#include "rtm_status.h"

/* Threads a block; the decoder asks for 5 resident blocks an SM (96 registers, against 118
 * unbounded: the decode is latency-bound, 60% of its cycles without an eligible warp at 4),
 * the decoder that images for 4 (at 5 it spills 352 bytes a thread). */
enum { CODEC_THREADS = 128, CODEC_DECODE_BLOCKS = 5, CODEC_IMAGE_BLOCKS = 4 };

/* The volume as the kernels see it: extents, pitches (floats), blocks along each axis. */
struct CodecShape {
  int n[3];
  size_t pitch_y, pitch_z, blocks[3], total;
  bool rows_aligned; /* every block row starts on 16 bytes: float4 moves */
};

static CodecShape codec_shape(const float *volume, const int n[3], size_t pitch_y,
                              size_t pitch_z) {
  CodecShape s;
  for (int a = 0; a < 3; ++a)
    s.n[a] = n[a];
  s.pitch_y = pitch_y;
  s.pitch_z = pitch_z;
  rtm_codec_block_counts(n, s.blocks);
  s.total = s.blocks[0] * s.blocks[1] * s.blocks[2];
  s.rows_aligned = (uintptr_t)volume % 16 == 0 && pitch_y % 4 == 0 && pitch_z % 4 == 0;
  return s;
}

static __device__ __forceinline__ bool codec_whole(const int count[3]) {
  return count[0] == RTM_CODEC_EDGE && count[1] == RTM_CODEC_EDGE && count[2] == RTM_CODEC_EDGE;
}

/* A block's bits: 16 float4 loads where it is whole and aligned, else the reference's gather
 * (the same bits either way). */
static __device__ __forceinline__ void codec_load(const float *__restrict__ first,
                                                  const int count[3], const CodecShape &s,
                                                  uint32_t *bits) {
  if (s.rows_aligned && codec_whole(count)) {
#pragma unroll
    for (int row = 0; row < 16; ++row) {
      const float4 v =
          __ldcs((const float4 *)(first + (size_t)(row >> 2) * s.pitch_z + (row & 3) * s.pitch_y));
      bits[4 * row] = __float_as_uint(v.x);
      bits[4 * row + 1] = __float_as_uint(v.y);
      bits[4 * row + 2] = __float_as_uint(v.z);
      bits[4 * row + 3] = __float_as_uint(v.w);
    }
  } else {
    rtm_codec_gather(first, count, s.pitch_y, s.pitch_z, bits);
  }
}

static __device__ __forceinline__ void codec_store(const uint32_t *bits, const int count[3],
                                                   const CodecShape &s, float *__restrict__ first) {
  if (s.rows_aligned && codec_whole(count)) {
#pragma unroll
    for (int row = 0; row < 16; ++row)
      *(float4 *)(first + (size_t)(row >> 2) * s.pitch_z + (row & 3) * s.pitch_y) =
          make_float4(__uint_as_float(bits[4 * row]), __uint_as_float(bits[4 * row + 1]),
                      __uint_as_float(bits[4 * row + 2]), __uint_as_float(bits[4 * row + 3]));
  } else {
    rtm_codec_scatter(bits, count, s.pitch_y, s.pitch_z, first);
  }
}

/* Enough blocks of CODEC_THREADS to cover `total` once, at most 2^20 (grid-stride past). */
static unsigned codec_grid(size_t total) {
  const size_t blocks = (total + CODEC_THREADS - 1) / CODEC_THREADS;
  return (unsigned)(blocks < (1u << 20) ? blocks : (1u << 20));
}

/* Thread mapping: codec block b = blockIdx.x * CODEC_THREADS + threadIdx.x, grid-stride;
 * blocks are numbered x-major, so neighbouring threads read neighbouring 16-byte pieces of
 * a row. The thread gathers its 64 values (padding in integers), codes them and stores its
 * `rate` words; a refused block lowers *first_refused. */
static __global__ void __launch_bounds__(CODEC_THREADS)
    codec_compress_kernel(const float *__restrict__ volume, const CodecShape s, int rate,
                          uint64_t *__restrict__ words, unsigned long long *first_refused) {
  for (size_t b = blockIdx.x * (size_t)CODEC_THREADS + threadIdx.x; b < s.total;
       b += (size_t)gridDim.x * CODEC_THREADS) {
    int count[3];
    const size_t first = rtm_codec_block_place(s.n, s.blocks, b, s.pitch_y, s.pitch_z, count);
    uint32_t bits[RTM_CODEC_VALUES];
    codec_load(volume + first, count, s, bits);
    if (rtm_codec_encode_block(bits, count, rate, words + b * (size_t)rate) && first_refused)
      atomicMin(first_refused, (unsigned long long)b);
  }
}

/* The same mapping: a thread decodes its block's words and stores its present values. */
static __global__ void __launch_bounds__(CODEC_THREADS, CODEC_DECODE_BLOCKS)
    codec_decompress_kernel(const uint64_t *__restrict__ words, const CodecShape s, int rate,
                            float *__restrict__ volume) {
  for (size_t b = blockIdx.x * (size_t)CODEC_THREADS + threadIdx.x; b < s.total;
       b += (size_t)gridDim.x * CODEC_THREADS) {
    int count[3];
    const size_t first = rtm_codec_block_place(s.n, s.blocks, b, s.pitch_y, s.pitch_z, count);
    uint32_t bits[RTM_CODEC_VALUES];
    rtm_codec_decode_block(words + b * (size_t)rate, rate, bits);
    codec_store(bits, count, s, volume + first);
  }
}

/* The imaging condition at one cell: image first, then illumination, one __fmaf_rn each
 * (accumulate_kernel's order and rounding). */
static __device__ __forceinline__ void codec_image_cell(float s, float r, float &image,
                                                        float &illumination) {
  image = __fmaf_rn(s, r, image);
  illumination = __fmaf_rn(s, s, illumination);
}

/* The decompress kernel's mapping, imaging instead of storing: the block's s meets the
 * receiver's r and the dense image and illumination in place (float4 where whole and
 * aligned, as codec_store; s's shape is the image's and the illumination's, r's the
 * receiver's, the same blocks). */
static __global__ void __launch_bounds__(CODEC_THREADS, CODEC_IMAGE_BLOCKS)
    codec_image_kernel(const uint64_t *__restrict__ words, const CodecShape s, int rate,
                       float *__restrict__ image, float *__restrict__ illumination,
                       const float *__restrict__ receiver, const CodecShape r) {
  for (size_t b = blockIdx.x * (size_t)CODEC_THREADS + threadIdx.x; b < s.total;
       b += (size_t)gridDim.x * CODEC_THREADS) {
    int count[3];
    const size_t first = rtm_codec_block_place(s.n, s.blocks, b, s.pitch_y, s.pitch_z, count);
    const size_t tap = rtm_codec_block_place(r.n, r.blocks, b, r.pitch_y, r.pitch_z, count);
    uint32_t bits[RTM_CODEC_VALUES];
    rtm_codec_decode_block(words + b * (size_t)rate, rate, bits);
    if (s.rows_aligned && r.rows_aligned && codec_whole(count)) {
#pragma unroll
      for (int row = 0; row < 16; ++row) {
        const size_t at = first + (size_t)(row >> 2) * s.pitch_z + (row & 3) * s.pitch_y;
        const float4 rv =
            __ldg((const float4 *)(receiver + tap + (size_t)(row >> 2) * r.pitch_z +
                                   (row & 3) * r.pitch_y));
        float4 im = *(const float4 *)(image + at), il = *(const float4 *)(illumination + at);
        codec_image_cell(__uint_as_float(bits[4 * row]), rv.x, im.x, il.x);
        codec_image_cell(__uint_as_float(bits[4 * row + 1]), rv.y, im.y, il.y);
        codec_image_cell(__uint_as_float(bits[4 * row + 2]), rv.z, im.z, il.z);
        codec_image_cell(__uint_as_float(bits[4 * row + 3]), rv.w, im.w, il.w);
        *(float4 *)(image + at) = im;
        *(float4 *)(illumination + at) = il;
      }
    } else {
#pragma unroll
      for (int i = 0; i < RTM_CODEC_VALUES; ++i) {
        const int x = i & 3, y = (i >> 2) & 3, z = i >> 4;
        if (x < count[0] && y < count[1] && z < count[2]) {
          const size_t at = first + (size_t)z * s.pitch_z + (size_t)y * s.pitch_y + x;
          codec_image_cell(__uint_as_float(bits[i]),
                           receiver[tap + (size_t)z * r.pitch_z + (size_t)y * r.pitch_y + x],
                           image[at], illumination[at]);
        }
      }
    }
  }
}

extern "C" int rtm_cuda_codec_compress(const float *d_volume, const int n[3], size_t pitch_y,
                                       size_t pitch_z, int rate, void *d_out,
                                       unsigned long long *d_first_refused, cudaStream_t stream) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, d_out));
  {
    const CodecShape s = codec_shape(d_volume, n, pitch_y, pitch_z);
    if (d_first_refused) /* all ones: RTM_CODEC_NO_BLOCK */
      RTM_CUDA_TRY(cudaMemsetAsync(d_first_refused, 0xff, sizeof *d_first_refused, stream));
    codec_compress_kernel<<<codec_grid(s.total), CODEC_THREADS, 0, stream>>>(
        d_volume, s, rate, (uint64_t *)d_out, d_first_refused);
    RTM_CUDA_TRY_LAUNCH("codec_compress_kernel");
  }
fail:
  return status;
}

extern "C" int rtm_cuda_codec_decompress(const void *d_in, const int n[3], int rate,
                                         float *d_volume, size_t pitch_y, size_t pitch_z,
                                         cudaStream_t stream) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, d_in));
  {
    const CodecShape s = codec_shape(d_volume, n, pitch_y, pitch_z);
    codec_decompress_kernel<<<codec_grid(s.total), CODEC_THREADS, 0, stream>>>(
        (const uint64_t *)d_in, s, rate, d_volume);
    RTM_CUDA_TRY_LAUNCH("codec_decompress_kernel");
  }
fail:
  return status;
}

extern "C" int rtm_cuda_codec_decompress_image(const void *d_in, const int n[3], int rate,
                                               float *d_image, float *d_illumination,
                                               const float *d_receiver, size_t receiver_pitch_y,
                                               size_t receiver_pitch_z, cudaStream_t stream) {
  int status = RTM_OK;
  const size_t row = (size_t)n[0], plane = row * (size_t)n[1];
  RTM_TRY(rtm_codec_check(n, row, plane, rate, d_in));
  RTM_TRY(rtm_codec_check(n, receiver_pitch_y, receiver_pitch_z, rate, d_in));
  {
    CodecShape s = codec_shape(d_image, n, row, plane); /* the illumination's too */
    s.rows_aligned = s.rows_aligned && (uintptr_t)d_illumination % 16 == 0;
    const CodecShape r = codec_shape(d_receiver, n, receiver_pitch_y, receiver_pitch_z);
    codec_image_kernel<<<codec_grid(s.total), CODEC_THREADS, 0, stream>>>(
        (const uint64_t *)d_in, s, rate, d_image, d_illumination, d_receiver, r);
    RTM_CUDA_TRY_LAUNCH("codec_image_kernel");
  }
fail:
  return status;
}

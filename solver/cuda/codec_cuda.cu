/* The codec's CUDA kernels (rtm_cuda_codec.h): one thread a 4 x 4 x 4 block, running the
 * block coder the C reference runs (solver/grid/rtm_codec_block.h), so the bytes and the
 * floats are the reference's, bit for bit. A block stays in its thread's registers; a whole
 * block of a volume whose rows are 16-byte aligned moves as 16 float4s.
 *
 * Compressing takes three launches (the reference's steps for a slab, rtm_codec.h):
 *   analyse   a thread a block: its exponent, top plane and the words it takes through each
 *             plane into the scratch; a slab's words at each level summed in shared memory,
 *             then into the slab's histogram;
 *   allocate  a CTA a slab: its level from the histogram, each block's words (the left-over
 *             granted in block order through a block-wide scan), the block table and each
 *             block's offset, the unused words zeroed; the slab's schedule;
 *   encode    a thread a block: coded again, written at its offset.
 * Decompressing takes two: locate (a CTA a slab: the table's offsets, a scan, and the
 * schedule) and the decoder (or the decoder that images).
 *
 * The schedule: a block's work grows with its words, and a slab's words go where its
 * wavefield is, so blocks taken in their order leave a warp waiting on its one long block
 * while most of its threads idle (8.6 of 32 threads active coding a Ricker wavefront at 4
 * bits, 9.4 decoding, on an H200). The coder and the decoders take a slab's blocks by
 * their words instead, the longest first (codec_schedule); which thread takes a block
 * changes neither its words nor where they go. The decoders read a block's words from
 * shared memory, staged there together (codec_stage), and the coder a block's bit planes,
 * transposed there at once (rtm_codec_planes_from). */
#include <cuda_runtime.h>
#include <stdint.h>

#include <cub/block/block_scan.cuh>

#include "rtm_codec.h"
#include "rtm_codec_block.h"
#include "rtm_cuda_check.h"
#include "rtm_cuda_codec.h"
#include "rtm_status.h"

/* Threads a block; the decoder asks for 5 resident blocks an SM (96 registers, against 118
 * unbounded: the decode is latency-bound, 60% of its cycles without an eligible warp at 4),
 * the decoder that images for 4 (at 5 it spills 352 bytes a thread). A slab's allocation
 * and location run a CTA of CODEC_SLAB_THREADS a slab. */
enum {
  CODEC_THREADS = 128,
  CODEC_DECODE_BLOCKS = 5,
  CODEC_IMAGE_BLOCKS = 4,
  CODEC_SLAB_THREADS = 1024
};

/* The volume as the kernels see it: extents, pitches (floats), blocks along each axis, a
 * slab's blocks and words. */
struct CodecShape {
  int n[3];
  size_t pitch_y, pitch_z, blocks[3], total, per_slab, slab_words, table_words;
  bool rows_aligned; /* every block row starts on 16 bytes: float4 moves */
};

static CodecShape codec_shape(const float *volume, const int n[3], size_t pitch_y, size_t pitch_z,
                              int rate) {
  CodecShape s;
  for (int a = 0; a < 3; ++a)
    s.n[a] = n[a];
  s.pitch_y = pitch_y;
  s.pitch_z = pitch_z;
  rtm_codec_block_counts(n, s.blocks);
  s.total = s.blocks[0] * s.blocks[1] * s.blocks[2];
  s.per_slab = s.blocks[0] * s.blocks[1];
  s.slab_words = s.per_slab * (size_t)rate;
  s.table_words = rtm_codec_table_words(s.per_slab);
  s.rows_aligned = (uintptr_t)volume % 16 == 0 && pitch_y % 4 == 0 && pitch_z % 4 == 0;
  return s;
}

/* The scratch's parts (rtm_codec_scratch_layout). */
struct CodecScratch {
  unsigned *hist, *head, *offsets, *order;
  unsigned char *curve;
};

static CodecScratch codec_scratch(void *d_scratch, const CodecShape &s) {
  const rtm_codec_scratch_t l = rtm_codec_scratch_layout(s.blocks);
  unsigned char *base = static_cast<unsigned char *>(d_scratch);
  return CodecScratch{reinterpret_cast<unsigned *>(base + l.hist),
                      reinterpret_cast<unsigned *>(base + l.head),
                      reinterpret_cast<unsigned *>(base + l.offsets),
                      reinterpret_cast<unsigned *>(base + l.order), base + l.curve};
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

/* Block b's words coded down to `level` (codec.c's words_at). */
static __device__ __forceinline__ unsigned codec_words_at(unsigned head,
                                                          const unsigned char *__restrict__ curve,
                                                          size_t total, size_t b, int level) {
  if (!head) return 0u;
  const int emax = (int)(head >> 8) + RTM_CODEC_LEVEL_MIN, top = (int)(head & 0xffu) - 1;
  const int plane = rtm_codec_plane_at(level, emax, top);
  return plane < 0 ? 0u : curve[(size_t)plane * total + b];
}

/* Analyse: the thread of block b (blockIdx.y the slab, blocks numbered x-major, so
 * neighbouring threads read neighbouring 16-byte pieces of a row) codes its block's
 * coefficients and their plane costs (rtm_codec_plane_costs' sums, from records kept in
 * shared memory); a refused block lowers *first_refused. */
static __global__ void __launch_bounds__(CODEC_THREADS)
    codec_analyse_kernel(const float *__restrict__ volume, const CodecShape s, CodecScratch k,
                         unsigned long long *first_refused) {
  __shared__ unsigned counts[2 * RTM_CODEC_LEVELS]; /* the slab's histogram, this CTA's part */
  /* each thread's plane records (rtm_codec_plane_records): kept in local memory, 384 bytes
   * a thread with the costs, they took the kernel's L2 to 75% of its throughput in a 512^3
   * shot (51% with them in shared memory) and its time from 464 to about 295 us */
  __shared__ unsigned char last[RTM_CODEC_PLANES][CODEC_THREADS];
  __shared__ unsigned char ones[RTM_CODEC_PLANES][CODEC_THREADS];
  for (int i = threadIdx.x; i < 2 * RTM_CODEC_LEVELS; i += CODEC_THREADS)
    counts[i] = 0u;
  __syncthreads();
  const size_t slab = blockIdx.y, local = blockIdx.x * (size_t)CODEC_THREADS + threadIdx.x;
  if (local < s.per_slab) {
    const size_t b = slab * s.per_slab + local;
    int count[3];
    const size_t first = rtm_codec_block_place(s.n, s.blocks, b, s.pitch_y, s.pitch_z, count);
    uint32_t bits[RTM_CODEC_VALUES], coef[RTM_CODEC_VALUES];
    codec_load(volume + first, count, s, bits);
    int emax = 0;
    const int kind = rtm_codec_coefficients(bits, count, coef, &emax);
    unsigned head = 0u;
    if (kind == RTM_CODEC_BLOCK_REFUSED && first_refused)
      atomicMin(first_refused, (unsigned long long)b);
    if (kind == RTM_CODEC_BLOCK_CODED) {
      const int top = rtm_codec_top_plane(coef);
      rtm_codec_plane_records(coef, &last[0][threadIdx.x], &ones[0][threadIdx.x],
                              CODEC_THREADS);
      int prefix_last = -1, spent = 0; /* rtm_codec_plane_costs, a plane at a time */
      for (int plane = RTM_CODEC_PLANES - 1; plane >= 0; --plane) {
        spent += rtm_codec_plane_cost(last[plane][threadIdx.x], ones[plane][threadIdx.x],
                                      &prefix_last);
        if (plane > top) continue;
        const unsigned words = (unsigned)rtm_codec_words_through(spent);
        k.curve[(size_t)plane * s.total + b] = (unsigned char)words;
        atomicAdd(&counts[rtm_codec_hist_index(emax, plane)], words);
      }
      head = (unsigned)(emax - RTM_CODEC_LEVEL_MIN) << 8 | (unsigned)(top + 1);
    }
    k.head[b] = head;
  }
  __syncthreads();
  unsigned *hist = k.hist + slab * 2 * RTM_CODEC_LEVELS;
  for (int i = threadIdx.x; i < 2 * RTM_CODEC_LEVELS; i += CODEC_THREADS)
    if (counts[i]) atomicAdd(hist + i, counts[i]);
}

using CodecSlabScan = cub::BlockScan<unsigned, CODEC_SLAB_THREADS>;

/* The schedule's buckets: a block of w words goes in bucket CODEC_BUCKETS - 1 - w, those of
 * CODEC_BUCKETS - 1 words and more in bucket 0, so that the buckets in order run from the
 * longest blocks to the blocks of no words. */
enum { CODEC_BUCKETS = 64 };

static __device__ __forceinline__ unsigned codec_bucket(unsigned words) {
  return CODEC_BUCKETS - 1u - min(words, CODEC_BUCKETS - 1u);
}

/* A place in `bucket` (shared counters) for each active thread of the warp: one atomic for
 * the threads that share a bucket, their places in lane order. Every thread of the warp
 * calls it. */
static __device__ __forceinline__ unsigned codec_take(unsigned *counters, unsigned bucket,
                                                      bool active) {
  const unsigned lanes = __ballot_sync(0xffffffffu, active);
  unsigned place = 0u;
  if (active) {
    const unsigned peers = __match_any_sync(lanes, bucket);
    const int lane = (int)(threadIdx.x & 31u), leader = __ffs((int)peers) - 1;
    unsigned first = 0u;
    if (lane == leader) first = atomicAdd(counters + bucket, (unsigned)__popc(peers));
    place = __shfl_sync(peers, first, leader) + (unsigned)__popc(peers & ((1u << lane) - 1u));
  }
  return place;
}

/* The slab's schedule from its block table (a CTA of CODEC_SLAB_THREADS, after the table is
 * written): the blocks counted by bucket, the buckets' first places, and each block's number
 * in the slab written at its place, k.order[slab blocks + place]. Within a bucket the order
 * is the atomics', which may differ from run to run. */
static __device__ void codec_schedule(const unsigned char *table, const CodecShape &s,
                                      size_t slab, const CodecScratch &k) {
  __shared__ unsigned counters[CODEC_BUCKETS];
  for (int i = threadIdx.x; i < CODEC_BUCKETS; i += CODEC_SLAB_THREADS)
    counters[i] = 0u;
  __syncthreads(); /* the table's bytes too */
  for (size_t base = 0; base < s.per_slab; base += CODEC_SLAB_THREADS) {
    const size_t local = base + threadIdx.x;
    const bool active = local < s.per_slab;
    (void)codec_take(counters, active ? codec_bucket(table[local]) : 0u, active);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned first = 0u;
    for (int i = 0; i < CODEC_BUCKETS; ++i) {
      const unsigned count = counters[i];
      counters[i] = first;
      first += count;
    }
  }
  __syncthreads();
  unsigned *order = k.order + slab * s.per_slab;
  for (size_t base = 0; base < s.per_slab; base += CODEC_SLAB_THREADS) {
    const size_t local = base + threadIdx.x;
    const bool active = local < s.per_slab;
    const unsigned place = codec_take(counters, active ? codec_bucket(table[local]) : 0u, active);
    if (active) order[place] = (unsigned)local;
  }
}

/* The block the schedule puts at place i of the volume (its slab's block number order[i]). */
static __device__ __forceinline__ size_t codec_scheduled(const CodecShape &s,
                                                         const CodecScratch &k, size_t i) {
  return i / s.per_slab * s.per_slab + k.order[i];
}

/* Allocate: a CTA a slab (blockIdx.x). Its level is the lowest whose words fit
 * (rtm_codec_slab_level on the histogram, brought into shared memory first, as codec.c);
 * each block takes its words at that level, and the words left over go in block order to
 * the blocks' next planes; the table and the offsets written, the table's padding and the
 * words after the last block zeroed; then the slab's schedule. */
static __global__ void __launch_bounds__(CODEC_SLAB_THREADS)
    codec_allocate_kernel(const CodecShape s, CodecScratch k, uint64_t *__restrict__ out) {
  __shared__ typename CodecSlabScan::TempStorage temp;
  __shared__ unsigned hist[2 * RTM_CODEC_LEVELS];
  __shared__ int slab_level;
  __shared__ unsigned slab_left;
  const size_t slab = blockIdx.x, capacity = s.slab_words - s.table_words;
  for (int i = threadIdx.x; i < 2 * RTM_CODEC_LEVELS; i += CODEC_SLAB_THREADS)
    hist[i] = k.hist[slab * 2 * RTM_CODEC_LEVELS + i];
  __syncthreads();
  if (threadIdx.x == 0) {
    size_t total = 0;
    slab_level = rtm_codec_slab_level(hist, capacity, &total);
    slab_left = (unsigned)(capacity - total);
  }
  __syncthreads();
  const int level = slab_level;
  const unsigned left = slab_left;
  uint64_t *words_out = out + slab * s.slab_words;
  unsigned char *table = reinterpret_cast<unsigned char *>(words_out);
  unsigned carry_more = 0u, carry_words = (unsigned)s.table_words;
  for (size_t base = 0; base < s.per_slab; base += CODEC_SLAB_THREADS) {
    const size_t local = base + threadIdx.x, b = slab * s.per_slab + local;
    unsigned words = 0u, more = 0u;
    if (local < s.per_slab) {
      const unsigned head = k.head[b];
      words = codec_words_at(head, k.curve, s.total, b, level);
      if (level > RTM_CODEC_LEVEL_MIN)
        more = codec_words_at(head, k.curve, s.total, b, level - 1) - words;
    }
    unsigned before, more_sum, offset, words_sum;
    CodecSlabScan(temp).ExclusiveSum(more, before, more_sum);
    __syncthreads();
    before += carry_more;
    words += before >= left ? 0u : min(more, left - before);
    CodecSlabScan(temp).ExclusiveSum(words, offset, words_sum);
    __syncthreads();
    if (local < s.per_slab) {
      table[local] = (unsigned char)words;
      k.offsets[b] = carry_words + offset;
    }
    carry_more += more_sum;
    carry_words += words_sum;
  }
  for (size_t i = s.per_slab + threadIdx.x; i < s.table_words * sizeof(uint64_t);
       i += CODEC_SLAB_THREADS)
    table[i] = 0;
  for (size_t i = carry_words + threadIdx.x; i < s.slab_words; i += CODEC_SLAB_THREADS)
    words_out[i] = 0ull;
  codec_schedule(table, s, slab, k);
}

/* Encode: the thread of the schedule's i-th block b codes it again and writes its words at
 * its offset. */
static __global__ void __launch_bounds__(CODEC_THREADS)
    codec_encode_kernel(const float *__restrict__ volume, const CodecShape s,
                        const CodecScratch k, uint64_t *__restrict__ out) {
  /* the thread's plane masks (rtm_codec_planes_t): its column of these words */
  __shared__ uint32_t plane_words[2 * RTM_CODEC_PLANES][CODEC_THREADS];
  const rtm_codec_planes_t planes = {&plane_words[0][threadIdx.x], CODEC_THREADS};
  for (size_t i = blockIdx.x * (size_t)CODEC_THREADS + threadIdx.x; i < s.total;
       i += (size_t)gridDim.x * CODEC_THREADS) {
    const size_t b = codec_scheduled(s, k, i), slab = b / s.per_slab, local = b % s.per_slab;
    uint64_t *words_out = out + slab * s.slab_words;
    const int words = reinterpret_cast<const unsigned char *>(words_out)[local];
    if (!words) continue;
    int count[3];
    const size_t first = rtm_codec_block_place(s.n, s.blocks, b, s.pitch_y, s.pitch_z, count);
    uint32_t bits[RTM_CODEC_VALUES], coef[RTM_CODEC_VALUES];
    codec_load(volume + first, count, s, bits);
    int emax = 0;
    (void)rtm_codec_coefficients(bits, count, coef, &emax);
    rtm_codec_encode_coefficients(coef, emax, words, words_out + k.offsets[b], planes);
  }
}

/* Locate: a CTA a slab; each block's word offset from the table, and the slab's schedule. */
static __global__ void __launch_bounds__(CODEC_SLAB_THREADS)
    codec_locate_kernel(const uint64_t *__restrict__ in, const CodecShape s, CodecScratch k) {
  __shared__ typename CodecSlabScan::TempStorage temp;
  const size_t slab = blockIdx.x;
  const unsigned char *table = reinterpret_cast<const unsigned char *>(in + slab * s.slab_words);
  unsigned carry = (unsigned)s.table_words;
  for (size_t base = 0; base < s.per_slab; base += CODEC_SLAB_THREADS) {
    const size_t local = base + threadIdx.x;
    const unsigned words = local < s.per_slab ? table[local] : 0u;
    unsigned offset, sum;
    CodecSlabScan(temp).ExclusiveSum(words, offset, sum);
    __syncthreads();
    if (local < s.per_slab) k.offsets[slab * s.per_slab + local] = carry + offset;
    carry += sum;
  }
  codec_schedule(table, s, slab, k);
}

/* Block b's words and their count, read where locate put them; a block whose words would
 * run past its slab (bytes not of this codec) decodes as zeros. */
static __device__ __forceinline__ const uint64_t *codec_block_words(const uint64_t *in,
                                                                    const CodecShape &s,
                                                                    const CodecScratch &k,
                                                                    size_t b, int *words) {
  const size_t slab = b / s.per_slab, local = b % s.per_slab;
  const uint64_t *slab_words = in + slab * s.slab_words;
  const size_t at = k.offsets[b];
  *words = reinterpret_cast<const unsigned char *>(slab_words)[local];
  if (at + (size_t)*words > s.slab_words) *words = 0;
  return slab_words + at;
}

/* A block's words staged in shared memory, CODEC_STAGE a thread (odd, so that the threads'
 * words fall in different banks), where it has no more than that: the decoder reads them
 * one after another as it goes, and from global memory each read waited on the last (the
 * decoder's warps stalled on L1TEX 39% of their cycles); staged, their loads are issued
 * together, eight at a time. A longer block is read where it lies. */
enum { CODEC_STAGE = 33, CODEC_STAGE_BATCH = 8 };

static __device__ __forceinline__ const uint64_t *codec_stage(const uint64_t *__restrict__ block,
                                                              int words, uint64_t *stage) {
  if (words > CODEC_STAGE) return block;
  uint64_t *mine = stage + threadIdx.x * CODEC_STAGE;
  for (int first = 0; first < words; first += CODEC_STAGE_BATCH) {
    uint64_t batch[CODEC_STAGE_BATCH];
#pragma unroll
    for (int j = 0; j < CODEC_STAGE_BATCH; ++j)
      batch[j] = first + j < words ? block[first + j] : 0ull;
#pragma unroll
    for (int j = 0; j < CODEC_STAGE_BATCH; ++j)
      if (first + j < words) mine[first + j] = batch[j];
  }
  return mine;
}

/* The schedule's i-th block decoded into bits (its words staged in shared memory where
 * they fit): its first cell's place in s's layout, and its present cells in count. */
static __device__ __forceinline__ size_t codec_decode_at(const uint64_t *__restrict__ in,
                                                         const CodecShape &s,
                                                         const CodecScratch &k, size_t i,
                                                         uint64_t *stage, int count[3],
                                                         uint32_t bits[RTM_CODEC_VALUES],
                                                         size_t *block_number) {
  int words;
  const size_t b = codec_scheduled(s, k, i);
  const size_t first = rtm_codec_block_place(s.n, s.blocks, b, s.pitch_y, s.pitch_z, count);
  rtm_codec_decode_block(codec_stage(codec_block_words(in, s, k, b, &words), words, stage), words,
                         bits);
  if (block_number) *block_number = b;
  return first;
}

/* The decoder: the thread of the schedule's i-th block decodes its words and stores its
 * present values. */
static __global__ void __launch_bounds__(CODEC_THREADS, CODEC_DECODE_BLOCKS)
    codec_decompress_kernel(const uint64_t *__restrict__ in, const CodecShape s,
                            const CodecScratch k, float *__restrict__ volume) {
  __shared__ uint64_t stage[CODEC_THREADS * CODEC_STAGE];
  for (size_t i = blockIdx.x * (size_t)CODEC_THREADS + threadIdx.x; i < s.total;
       i += (size_t)gridDim.x * CODEC_THREADS) {
    int count[3];
    uint32_t bits[RTM_CODEC_VALUES];
    const size_t first = codec_decode_at(in, s, k, i, stage, count, bits, NULL);
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

/* The decoder's mapping, imaging instead of storing: the block's s meets the receiver's r
 * and the dense image and illumination in place (float4 where whole and aligned, as
 * codec_store; s's shape is the image's and the illumination's, r's the receiver's, the
 * same blocks). */
static __global__ void __launch_bounds__(CODEC_THREADS, CODEC_IMAGE_BLOCKS)
    codec_image_kernel(const uint64_t *__restrict__ in, const CodecShape s, const CodecScratch k,
                       float *__restrict__ image, float *__restrict__ illumination,
                       const float *__restrict__ receiver, const CodecShape r) {
  __shared__ uint64_t stage[CODEC_THREADS * CODEC_STAGE];
  for (size_t i = blockIdx.x * (size_t)CODEC_THREADS + threadIdx.x; i < s.total;
       i += (size_t)gridDim.x * CODEC_THREADS) {
    int count[3];
    size_t b;
    uint32_t bits[RTM_CODEC_VALUES];
    const size_t first = codec_decode_at(in, s, k, i, stage, count, bits, &b);
    const size_t tap = rtm_codec_block_place(r.n, r.blocks, b, r.pitch_y, r.pitch_z, count);
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

/* The decoder's mapping, measuring instead of storing: sums[0] += (s - v)^2 and sums[1] +=
 * v^2 over the cells, s the value the decoder would store and v the volume's (a thread's
 * blocks summed in double, then the CTA's threads, one atomicAdd a CTA). */
static __global__ void __launch_bounds__(CODEC_THREADS, CODEC_DECODE_BLOCKS)
    codec_difference_kernel(const uint64_t *__restrict__ in, const CodecShape s,
                            const CodecScratch k, const float *__restrict__ volume,
                            double *__restrict__ sums) {
  __shared__ uint64_t stage[CODEC_THREADS * CODEC_STAGE];
  __shared__ double partial[2][CODEC_THREADS / 32];
  double error = 0.0, norm = 0.0;
  for (size_t i = blockIdx.x * (size_t)CODEC_THREADS + threadIdx.x; i < s.total;
       i += (size_t)gridDim.x * CODEC_THREADS) {
    int count[3];
    uint32_t bits[RTM_CODEC_VALUES];
    const size_t first = codec_decode_at(in, s, k, i, stage, count, bits, NULL);
#pragma unroll
    for (int v = 0; v < RTM_CODEC_VALUES; ++v) {
      const int x = v & 3, y = (v >> 2) & 3, z = v >> 4;
      if (x < count[0] && y < count[1] && z < count[2]) {
        const double original =
            volume[first + (size_t)z * s.pitch_z + (size_t)y * s.pitch_y + x];
        const double d = (double)__uint_as_float(bits[v]) - original;
        error += d * d;
        norm += original * original;
      }
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    error += __shfl_down_sync(0xffffffffu, error, offset);
    norm += __shfl_down_sync(0xffffffffu, norm, offset);
  }
  if (threadIdx.x % 32 == 0) {
    partial[0][threadIdx.x / 32] = error;
    partial[1][threadIdx.x / 32] = norm;
  }
  __syncthreads();
  if (threadIdx.x < 2) {
    double sum = 0.0;
    for (int w = 0; w < CODEC_THREADS / 32; ++w)
      sum += partial[threadIdx.x][w];
    atomicAdd(sums + threadIdx.x, sum);
  }
}

/* The slabs' offsets for the decoders (locate). */
static int codec_locate(const void *d_in, const CodecShape &s, const CodecScratch &k,
                        cudaStream_t stream) {
  int status = RTM_OK;
  codec_locate_kernel<<<(unsigned)s.blocks[2], CODEC_SLAB_THREADS, 0, stream>>>(
      (const uint64_t *)d_in, s, k);
  RTM_CUDA_TRY_LAUNCH("codec_locate_kernel");
fail:
  return status;
}

extern "C" int rtm_cuda_codec_compress(const float *d_volume, const int n[3], size_t pitch_y,
                                       size_t pitch_z, int rate, void *d_out, void *d_scratch,
                                       unsigned long long *d_first_refused, cudaStream_t stream) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, d_out));
  {
    const CodecShape s = codec_shape(d_volume, n, pitch_y, pitch_z, rate);
    const CodecScratch k = codec_scratch(d_scratch, s);
    const rtm_codec_scratch_t l = rtm_codec_scratch_layout(s.blocks);
    if (d_first_refused) /* all ones: RTM_CODEC_NO_BLOCK */
      RTM_CUDA_TRY(cudaMemsetAsync(d_first_refused, 0xff, sizeof *d_first_refused, stream));
    RTM_CUDA_TRY(cudaMemsetAsync(k.hist, 0, l.head - l.hist, stream));
    const dim3 analyse((unsigned)((s.per_slab + CODEC_THREADS - 1) / CODEC_THREADS),
                       (unsigned)s.blocks[2]);
    codec_analyse_kernel<<<analyse, CODEC_THREADS, 0, stream>>>(d_volume, s, k, d_first_refused);
    RTM_CUDA_TRY_LAUNCH("codec_analyse_kernel");
    codec_allocate_kernel<<<(unsigned)s.blocks[2], CODEC_SLAB_THREADS, 0, stream>>>(
        s, k, (uint64_t *)d_out);
    RTM_CUDA_TRY_LAUNCH("codec_allocate_kernel");
    codec_encode_kernel<<<codec_grid(s.total), CODEC_THREADS, 0, stream>>>(d_volume, s, k,
                                                                          (uint64_t *)d_out);
    RTM_CUDA_TRY_LAUNCH("codec_encode_kernel");
  }
fail:
  return status;
}

extern "C" int rtm_cuda_codec_decompress(const void *d_in, const int n[3], int rate,
                                         void *d_scratch, float *d_volume, size_t pitch_y,
                                         size_t pitch_z, cudaStream_t stream) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, d_in));
  {
    const CodecShape s = codec_shape(d_volume, n, pitch_y, pitch_z, rate);
    const CodecScratch k = codec_scratch(d_scratch, s);
    RTM_TRY(codec_locate(d_in, s, k, stream));
    codec_decompress_kernel<<<codec_grid(s.total), CODEC_THREADS, 0, stream>>>(
        (const uint64_t *)d_in, s, k, d_volume);
    RTM_CUDA_TRY_LAUNCH("codec_decompress_kernel");
  }
fail:
  return status;
}

extern "C" int rtm_cuda_codec_decompress_image(const void *d_in, const int n[3], int rate,
                                               void *d_scratch, float *d_image,
                                               float *d_illumination, const float *d_receiver,
                                               size_t receiver_pitch_y, size_t receiver_pitch_z,
                                               cudaStream_t stream) {
  int status = RTM_OK;
  const size_t row = (size_t)n[0], plane = row * (size_t)n[1];
  RTM_TRY(rtm_codec_check(n, row, plane, rate, d_in));
  RTM_TRY(rtm_codec_check(n, receiver_pitch_y, receiver_pitch_z, rate, d_in));
  {
    CodecShape s = codec_shape(d_image, n, row, plane, rate); /* the illumination's too */
    s.rows_aligned = s.rows_aligned && (uintptr_t)d_illumination % 16 == 0;
    const CodecShape r = codec_shape(d_receiver, n, receiver_pitch_y, receiver_pitch_z, rate);
    const CodecScratch k = codec_scratch(d_scratch, s);
    RTM_TRY(codec_locate(d_in, s, k, stream));
    codec_image_kernel<<<codec_grid(s.total), CODEC_THREADS, 0, stream>>>(
        (const uint64_t *)d_in, s, k, d_image, d_illumination, d_receiver, r);
    RTM_CUDA_TRY_LAUNCH("codec_image_kernel");
  }
fail:
  return status;
}

extern "C" int rtm_cuda_codec_difference(const void *d_in, const int n[3], int rate,
                                         void *d_scratch, const float *d_volume, size_t pitch_y,
                                         size_t pitch_z, double *d_sums, cudaStream_t stream) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, d_in));
  {
    const CodecShape s = codec_shape(d_volume, n, pitch_y, pitch_z, rate);
    const CodecScratch k = codec_scratch(d_scratch, s);
    RTM_CUDA_TRY(cudaMemsetAsync(d_sums, 0, 2 * sizeof *d_sums, stream));
    RTM_TRY(codec_locate(d_in, s, k, stream));
    codec_difference_kernel<<<codec_grid(s.total), CODEC_THREADS, 0, stream>>>(
        (const uint64_t *)d_in, s, k, d_volume, d_sums);
    RTM_CUDA_TRY_LAUNCH("codec_difference_kernel");
  }
fail:
  return status;
}

/* iso_cuda.cu - isotropic z-marching kernels (shape: iso_cuda.h) and their launchers. */
#include <cuda.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include "cuda_async.cuh"
#include "rtm_cuda_check.h"
#include "iso_cuda.h"
#include "rtm_backend.h"
#include "rtm_status.h"
#include "zmarch_common.cuh"

constexpr int VEC = 4; /* cells per thread along x: one float4 */
constexpr int MAX_THREADS = 512;
/* the most stages of iso_zmarch_tma's instances (2 to 4); ldgsts takes 2 or 3 */
constexpr int TMA_MAX_STAGES = 4;
constexpr int MAX_CHUNKS = 4; /* 16-byte tile chunks a thread copies from registers */
/* sync: planes iz .. iz+4 resident, and the slot written at iteration i (plane i) must not
 * be the one computed from at iteration i-1 (plane i-1-R), there being no barrier between
 * that compute and this load: R + 2 slots. */
constexpr int SYNC_SLOTS = R + 2;

/* What a step writes besides p_other: nothing, its new level also into the dense copy
 * (a source snapshot taken in the step), or the imaging condition with its centre level
 * (image_next_step). Each an instance of its own, so that the plain steps keep their code. */
enum { EXTRA_NONE = 0, EXTRA_COPY = 1, EXTRA_IMAGE = 2 };

struct IsoArgs {
  float *p_other;
  float *level_copy; /* NULL, or p_other's new cells also here, dense (rtm_iso_fields_t) */
  /* EXTRA_IMAGE (rtm_step_image_t): S at image_source + source_origin + k source_stride_z
   * + iy source_stride_y + ix, the sums dense, over image_box's cells; image_vec: every one
   * of them keeps 16-byte alignment at a float4 of cells */
  const float *image_source;
  long long source_origin, source_stride_y, source_stride_z;
  float *image, *illumination;
  int image_vec;
  int image_box[3][2];
  const float *p;
  const float *v2dt2;
  ZmarchDomain domain;
  int stages;
  int block_x, block_y, tiles_x, tiles; /* tma: the tile (blockDim is one-dimensional) */
  float damping_sign; /* +1 forward, -1 backward (the forward update solved for p[n-1]) */
  float c[R + 1];     /* second-derivative stencil */
  float inv_h2[3];    /* 1 / h_a^2 */
};

static __host__ __device__ inline int ring_slots(int halo, int stages) {
  return halo == RTM_HALO_SYNC ? SYNC_SLOTS : R + stages;
}

/* Component c of a float4. */
static __device__ __forceinline__ float lane(const float4 &v, int c) {
  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}
static __device__ __forceinline__ void set_lane(float4 &v, int c, float x) {
  if (c == 0)
    v.x = x;
  else if (c == 1)
    v.y = x;
  else if (c == 2)
    v.z = x;
  else
    v.w = x;
}
static __device__ __forceinline__ float4 ld4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}

/* The register queue: p along z of a thread's 4 columns, 2R + 1 = 9 planes, q4 the centre. */
struct ZQueue {
  float4 q0, q1, q2, q3, q4, q5, q6, q7, q8;
};
/* Shifts the queue by one plane: `front` (read from the newest tile) enters at q8. (By value:
 * a reference to the temporary float4 changes the generated code.) */
static __device__ __forceinline__ void push(ZQueue &z, float4 front) {
  z.q0 = z.q1;
  z.q1 = z.q2;
  z.q2 = z.q3;
  z.q3 = z.q4;
  z.q4 = z.q5;
  z.q5 = z.q6;
  z.q6 = z.q7;
  z.q7 = z.q8;
  z.q8 = front;
}

/* A thread's damping in the x and y layer, the same on every plane of its march: exy =
 * eta_x + eta_y of each of its cells, rcp = 1 / (1 + s exy) rounded (s the damping's sign:
 * the denominator of the planes outside the z layer), damped: whether any cell of the warp
 * lies in the x or y layer (the same in every lane, so that a warp takes one branch). */
struct LayerXY {
  float4 exy, rcp;
  bool damped, rcp_holds; /* rcp_holds: every denominator in layer_rcp_holds's range */
};
static __device__ __forceinline__ LayerXY layer_xy(const IsoArgs &a, int ix, int iy, int lanes) {
  LayerXY l;
  l.exy = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int c = 0; c < lanes; ++c)
    set_lane(l.exy, c, a.domain.eta_x[ix + c] + a.domain.eta_y[iy]);
  l.rcp_holds = true;
#pragma unroll
  for (int c = 0; c < VEC; ++c) {
    const float d = lane(l.exy, c);
    const float den = __fadd_rn(1.f, d > 0.f ? a.damping_sign * d : 0.f);
    set_lane(l.rcp, c, __frcp_rn(den));
    l.rcp_holds = l.rcp_holds && layer_rcp_holds(den);
  }
  l.damped = __any_sync(0xffffffffu,
                        l.exy.x > 0.f || l.exy.y > 0.f || l.exy.z > 0.f || l.exy.w > 0.f);
  return l;
}

/* Whether damped4's branch-free quotient is layer_div's: the numerator in
 * layer_div_fast_holds's range and the denominator in layer_rcp_holds's ([1/4, 2), where
 * test_layer_div checks the reciprocals; outside it a layer far stronger than the defaults'). */
template <bool Z_LAYER>
static __device__ __forceinline__ bool fast_holds(const LayerXY &l, float num, float den) {
  return layer_div_fast_holds(num) && (Z_LAYER ? layer_rcp_holds(den) : l.rcp_holds);
}

/* update4's damped cells: the layer's update of the float4 whose laplacians are lap, p at
 * the centre p1[0..3], v = v^2 dt^2, pp = p_other; d = exy + ez in the z layer and exy
 * outside it (ez = 0 there: the float exy + 0 is, and the one l.rcp was made from). Every lane
 * takes it, so that a warp takes one path: where d = 0, sd = 0 and (p2 - 1 prev + v lap) / 1
 * is the float the undamped update gives. The four quotients first, without a branch
 * (layer_div_fast), so that they interleave, through the thread's reciprocals outside the z
 * layer (Z_LAYER false) and reciprocals made here in it; a numerator or denominator outside
 * their range then, rarely, through layer_div, the float it gives either way. */
template <bool Z_LAYER>
static __device__ __forceinline__ float4 damped4(const IsoArgs &a, const LayerXY &l, float ez,
                                                 const float *lap, const float *p1,
                                                 const float4 &v, const float4 &pp) {
  float4 out;
  float num[VEC], den[VEC];
  bool slow = false;
#pragma unroll
  for (int c = 0; c < VEC; ++c) {
    const float d = Z_LAYER ? lane(l.exy, c) + ez : lane(l.exy, c);
    const float sd = d > 0.f ? a.damping_sign * d : 0.f;
    num[c] = __fmaf_rn(lane(v, c), lap[c],
                       __fsub_rn(2.f * p1[c], __fmul_rn(__fsub_rn(1.f, sd), lane(pp, c))));
    den[c] = __fadd_rn(1.f, sd);
    const float rcp = Z_LAYER ? layer_rcp(den[c]) : lane(l.rcp, c);
    set_lane(out, c, layer_div_fast(num[c], den[c], rcp));
    slow |= !fast_holds<Z_LAYER>(l, num[c], den[c]);
  }
  if (slow) {
#pragma unroll
    for (int c = 0; c < VEC; ++c)
      if (!fast_holds<Z_LAYER>(l, num[c], den[c])) set_lane(out, c, layer_div(num[c], den[c]));
  }
  return out;
}

/* The new value of 4 cells along x (one float4): t points at the tile row of plane k at
 * cell ix - R (x neighbours t[0..3], t[8..11]; y neighbours t[4 + m tw], t[4 - m tw]),
 * z.q0 .. z.q8 hold p along z from k - 4 to k + 4 (in either marching direction: each pair
 * is added as a sum, and IEEE addition is commutative), prev = p_other, v = v^2 dt^2,
 * l.exy + ez the layer's damping of each cell (LayerXY: l.rcp the thread's reciprocals for
 * the planes outside the z layer, where ez = 0). Every
 * operation is rounded as the cpu reference's (iso_row), in its order, its fused
 * multiply-adds fused and nothing else contracted: the kernel then reproduces the reference
 * bit for bit instead of drifting from it by rounding that the leapfrog accumulates. */
static __device__ __forceinline__ float4 update4(const IsoArgs &a, const float *t, int tw,
                                                 const ZQueue &z, const float4 &pp, const float4 &v,
                                                 const LayerXY &l, float ez) {
  const float4 wl = ld4(t), wr = ld4(t + 2 * R), q4 = z.q4;
  const float w[3 * VEC] = {wl.x, wl.y, wl.z, wl.w, q4.x, q4.y, q4.z, q4.w, wr.x, wr.y, wr.z, wr.w};
  float dx[VEC], dy[VEC], dz[VEC];
#pragma unroll
  for (int c = 0; c < VEC; ++c) {
    dx[c] = __fmul_rn(a.c[0], w[R + c]);
    dy[c] = dx[c];
    dz[c] = dx[c];
  }
#pragma unroll
  for (int m = 1; m <= R; ++m) {
    const float4 up = ld4(t + R + m * tw), down = ld4(t + R - m * tw);
    const float4 ahead = m == 1 ? z.q5 : m == 2 ? z.q6 : m == 3 ? z.q7 : z.q8;
    const float4 behind = m == 1 ? z.q3 : m == 2 ? z.q2 : m == 3 ? z.q1 : z.q0;
#pragma unroll
    for (int c = 0; c < VEC; ++c) {
      dx[c] = __fmaf_rn(a.c[m], __fadd_rn(w[R + c + m], w[R + c - m]), dx[c]);
      dy[c] = __fmaf_rn(a.c[m], __fadd_rn(lane(up, c), lane(down, c)), dy[c]);
      dz[c] = __fmaf_rn(a.c[m], __fadd_rn(lane(ahead, c), lane(behind, c)), dz[c]);
    }
  }
  float lap[VEC];
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    lap[c] = __fmaf_rn(dz[c], a.inv_h2[2],
                       __fmaf_rn(dy[c], a.inv_h2[1], __fmul_rn(dx[c], a.inv_h2[0])));
  float4 out;
  if (!l.damped && !(ez > 0.f)) {
#pragma unroll
    for (int c = 0; c < VEC; ++c)
      set_lane(out, c, __fmaf_rn(lane(v, c), lap[c], __fsub_rn(2.f * w[R + c], lane(pp, c))));
  } else if (ez > 0.f) {
    out = damped4<true>(a, l, ez, lap, w + R, v, pp);
  } else {
    out = damped4<false>(a, l, ez, lap, w + R, v, pp);
  }
  return out;
}

/* Writes `out` to the thread's cells at dst: one float4, or the lanes inside nx. Callers
 * compute `out` before dst, the order that keeps the generated code. */
static __device__ __forceinline__ void store4(float *dst, int lanes, float4 out) {
  if (lanes == VEC) {
    *reinterpret_cast<float4 *>(dst) = out;
  } else {
    for (int c = 0; c < lanes; ++c)
      dst[c] = lane(out, c);
  }
}

/* The new cells of plane k also into the dense copy, when the step takes one: one float4
 * when the dense rows keep 16-byte alignment (nx a multiple of VEC), else lane by lane. */
static __device__ __forceinline__ void copy_level4(const IsoArgs &a, int k, int iy, int ix,
                                                   int lanes, float4 out) {
  if (!a.level_copy) return;
  float *dst = a.level_copy + ((long long)k * a.domain.ny + iy) * a.domain.nx + ix;
  if (a.domain.nx % VEC == 0) {
    store4(dst, lanes, out);
    return;
  }
  for (int c = 0; c < lanes; ++c)
    dst[c] = lane(out, c);
}

/* The imaging condition at the thread's cells of plane k (EXTRA_IMAGE): image += S r, then
 * illumination += S S, one __fmaf_rn each (rtm_image_accumulate's floats), r being p's centre
 * level there, which the stencil has in its queue; the image alone where illumination is NULL
 * (added later from the stored S: rtm_image_defer_illumination). One float4 a volume where
 * all of them keep 16-byte alignment, else lane by lane. */
static __device__ __forceinline__ void image4(const IsoArgs &a, int k, int iy, int ix, int lanes,
                                              float4 r) {
  /* the box's x faces are multiples of 4 (or nx), as ix is: a float4 is in or out whole */
  if (k < a.image_box[2][0] || k >= a.image_box[2][1] || iy < a.image_box[1][0] ||
      iy >= a.image_box[1][1] || ix < a.image_box[0][0] || ix >= a.image_box[0][1])
    return;
  const long long dense = ((long long)k * a.domain.ny + iy) * a.domain.nx + ix;
  const float *source = a.image_source + a.source_origin + (long long)k * a.source_stride_z +
                        (long long)iy * a.source_stride_y + ix;
  float *image = a.image + dense;
  float *illumination = a.illumination ? a.illumination + dense : nullptr;
  if (a.image_vec && lanes == VEC) {
    const float4 sv = ld4(source);
    float4 iv = ld4(image);
#pragma unroll
    for (int c = 0; c < VEC; ++c)
      set_lane(iv, c, __fmaf_rn(lane(sv, c), lane(r, c), lane(iv, c)));
    *reinterpret_cast<float4 *>(image) = iv;
    if (!illumination) return;
    float4 lv = ld4(illumination);
#pragma unroll
    for (int c = 0; c < VEC; ++c)
      set_lane(lv, c, __fmaf_rn(lane(sv, c), lane(sv, c), lane(lv, c)));
    *reinterpret_cast<float4 *>(illumination) = lv;
    return;
  }
  for (int c = 0; c < lanes; ++c) {
    const float sc = source[c];
    image[c] = __fmaf_rn(sc, lane(r, c), image[c]);
    if (illumination) illumination[c] = __fmaf_rn(sc, sc, illumination[c]);
  }
}

/* One 16-byte chunk of a tile: a cp.async copy (ldgsts) or a load and a store (sync); zeros
 * when not `valid`. */
template <int HALO>
static __device__ __forceinline__ void copy_chunk(float *dst, const float *src, bool valid) {
  if (HALO == RTM_HALO_LDGSTS) {
    cp_async16(dst, src, valid);
  } else {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (valid) v = __ldg(reinterpret_cast<const float4 *>(src));
    *reinterpret_cast<float4 *>(dst) = v;
  }
}

/* sync, ldgsts: how a block's threads copy the tile of a loaded plane (tw x th floats: the
 * block's tile with its R-wide halo) into a ring slot, in 16-byte chunks, chunk c by thread
 * c % nthreads. */
struct TileCopy {
  const float *origin; /* the tile's first float in loaded plane 0 */
  float *ring;
  int slot_floats, tw, tid, nthreads, chunks_per_row, chunks, ix0, iy0;
};
static __device__ __forceinline__ TileCopy tile_copy(const IsoArgs &a, float *ring, int ix0,
                                                     int iy0, int zb0, int tid, int nthreads) {
  const int bx = VEC * blockDim.x, by = blockDim.y;
  TileCopy t;
  /* Padded x = ix0 is interior ix0 - R: the tile row starts on a 128-byte boundary. */
  t.origin = a.p + (long long)zb0 * a.domain.stride_z + (long long)iy0 * a.domain.stride_y + ix0;
  t.ring = ring;
  t.slot_floats = tile_floats(bx, by);
  t.tw = bx + 2 * R;
  t.tid = tid;
  t.nthreads = nthreads;
  t.chunks_per_row = t.tw / 4;
  t.chunks = t.chunks_per_row * (by + 2 * R);
  t.ix0 = ix0;
  t.iy0 = iy0;
  return t;
}

/* A thread's chunks, at most MAX_CHUNKS, kept as offsets (src < 0: the chunk lies beyond the
 * padded row or plane and is zero-filled; dst < 0: none). MULTI: more chunks than that per
 * thread, none kept (load_tile computes them per plane). Apart from TileCopy: arrays indexed
 * in a loop stay in memory until the loop is unrolled, and would keep TileCopy's fields
 * there with them, which changes the generated code (as does src_off before dst_off). */
struct TileChunks {
  int dst_off[MAX_CHUNKS], src_off[MAX_CHUNKS];
};
template <bool MULTI>
static __device__ __forceinline__ TileChunks tile_chunks(const IsoArgs &a, const TileCopy &t) {
  TileChunks own;
#pragma unroll
  for (int j = 0; j < MAX_CHUNKS; ++j) {
    const int c = t.tid + j * t.nthreads;
    own.src_off[j] = -1;
    own.dst_off[j] = -1;
    if (!MULTI && c < t.chunks) {
      const int r = c / t.chunks_per_row, col = 4 * (c - r * t.chunks_per_row);
      own.dst_off[j] = r * t.tw + col;
      if (t.ix0 + col < a.domain.row_floats && t.iy0 + r < a.domain.rows)
        own.src_off[j] = r * (int)a.domain.stride_y + col;
    }
  }
  return own;
}
/* The thread's chunks of loaded plane j into ring slot `slot`. */
template <int HALO, bool MULTI>
static __device__ __forceinline__ void load_tile(const IsoArgs &a, const TileCopy &t,
                                                 const TileChunks &own, int j, int slot) {
  const float *src_plane = t.origin + (long long)j * a.domain.stride_z;
  float *dst_tile = t.ring + slot * t.slot_floats;
  if (!MULTI) {
#pragma unroll
    for (int k = 0; k < MAX_CHUNKS; ++k)
      if (own.dst_off[k] >= 0)
        copy_chunk<HALO>(dst_tile + own.dst_off[k], src_plane + max(own.src_off[k], 0),
                         own.src_off[k] >= 0);
  } else {
    for (int c = t.tid; c < t.chunks; c += t.nthreads) {
      const int r = c / t.chunks_per_row, col = 4 * (c - r * t.chunks_per_row);
      const bool valid = t.ix0 + col < a.domain.row_floats && t.iy0 + r < a.domain.rows;
      copy_chunk<HALO>(dst_tile + r * t.tw + col,
                       valid ? src_plane + (long long)r * a.domain.stride_y + col : src_plane,
                       valid);
    }
  }
}

/* ldgsts: waits for plane i's copies; the stages - 2 groups committed after it may still be
 * in flight. */
static __device__ __forceinline__ void wait_ring_copies(int stages) {
  if (stages == 3)
    cp_async_wait<1>();
  else
    cp_async_wait<0>();
}

/* Isotropic leapfrog, z-marching, halo sync or ldgsts (see iso_cuda.h for the shape and
 * the equation). Block (bx, by, bz): tile of BX = VEC blockDim.x by BY = blockDim.y cells at
 * (bx BX, by BY), output planes [zb0, zb1) of the launch's z-range. Thread (tx, ty) owns
 * the VEC cells ix = bx BX + VEC tx + 0..3 of row iy (one float4 everywhere: tile reads,
 * queue, global loads and stores). Loaded planes are numbered j = 0 .. zb1 - zb0 + 2R - 1
 * from plane zb0 - R; plane j lives in ring slot j % slots. Iteration i makes plane i the
 * front of the register queue and computes plane i - R once the queue is full.
 * MULTI: a thread copies more than MAX_CHUNKS 16-byte chunks of each tile. EXTRA: the new
 * cells also go to the level copy (a snapshot taken in the step), or the step takes the
 * imaging condition with the queue's centre (EXTRA_IMAGE); each an instance of its own, so
 * that the plain steps keep their code (the level copy's test in the loop cost 6% of bench). */
template <int HALO, bool MULTI, int EXTRA>
static __global__ void __launch_bounds__(MAX_THREADS) iso_zmarch(const IsoArgs a) {
  extern __shared__ __align__(1024) float smem[];
  const int bx = VEC * blockDim.x, by = blockDim.y;
  const int stages = HALO == RTM_HALO_SYNC ? 1 : a.stages;
  const int slots = ring_slots(HALO, a.stages);

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * blockDim.x + tx, nthreads = blockDim.x * by;
  const int ix0 = blockIdx.x * bx, iy0 = blockIdx.y * by;
  const int ix = ix0 + VEC * tx, iy = iy0 + ty;
  const bool active = ix < a.domain.nx && iy < a.domain.ny;
  const int lanes = active ? min(VEC, a.domain.nx - ix) : 0; /* cells of the float4 inside nx */
  const ZmarchPlanes planes = zmarch_planes(a.domain, blockIdx.z);
  const int zb0 = planes.zb0, zb1 = planes.zb1, nplanes = planes.nplanes, kfirst = zb0 - R;

  const TileCopy copy = tile_copy(a, smem, ix0, iy0, zb0, tid, nthreads);
  const TileChunks chunk = tile_chunks<MULTI>(a, copy);
  const int tw = copy.tw, slot_floats = copy.slot_floats;

  /* Prologue: planes 0 .. stages-2 in flight. */
  if (HALO == RTM_HALO_LDGSTS) {
    for (int j = 0; j < stages - 1; ++j) {
      if (j < nplanes) load_tile<HALO, MULTI>(a, copy, chunk, j, j);
      cp_async_commit();
    }
  }

  const long long column = a.domain.origin + (long long)iy * a.domain.stride_y + ix;
  const LayerXY layer = layer_xy(a, ix, iy, lanes);
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  ZQueue z = {zero, zero, zero, zero, zero, zero, zero, zero, zero};
  float4 pp_cur = zero, v_cur = zero;
  float ez_cur = 0.f;
  int slot_front = 0;                              /* slot of plane i */
  int slot_out = slots - R;                        /* slot of plane i - R, (i - R) mod slots */
  const int row_offset = (ty + R) * tw + VEC * tx; /* tile index of cell ix - R, row iy */

  for (int i = 0; i < nplanes; ++i) {
    if (HALO == RTM_HALO_SYNC)
      load_tile<HALO, MULTI>(a, copy, chunk, i, slot_front);
    else
      wait_ring_copies(stages);
    /* Plane i visible to all; every thread is past the reads of iteration i-1, so the
     * slot of plane i + stages - 1 (last used by plane i - R - 1) may be refilled. */
    __syncthreads();
    /* Plane i + stages - 1 takes the slot of plane i - R - 1 (slots = R + stages). */
    const int slot_next = slot_out == 0 ? slots - 1 : slot_out - 1;
    if (HALO == RTM_HALO_LDGSTS) {
      if (i + stages - 1 < nplanes)
        load_tile<HALO, MULTI>(a, copy, chunk, i + stages - 1, slot_next);
      cp_async_commit();
    }

    push(z, ld4(smem + slot_front * slot_floats + row_offset + R));

    const int k = kfirst + i - R; /* output plane of this iteration */
    /* p[n-1], v^2 dt^2 and eta_z of plane k+1 are loaded now and used next iteration. */
    float4 pp_next = zero, v_next = zero;
    float ez_next = 0.f;
    if (k + 1 >= zb0 && k + 1 < zb1) {
      ez_next = __ldg(&a.domain.eta_z[a.domain.z_offset + k + 1]);
      if (active) {
        const long long cell = column + (long long)(k + 1) * a.domain.stride_z;
        pp_next = ld4(a.p_other + cell);
        v_next = __ldg(reinterpret_cast<const float4 *>(a.v2dt2 + cell));
      }
    }
    if (k >= zb0 && active) {
      const float4 out = update4(a, smem + slot_out * slot_floats + row_offset, tw, z, pp_cur,
                                 v_cur, layer, ez_cur);
      store4(a.p_other + column + (long long)k * a.domain.stride_z, lanes, out);
      if (EXTRA == EXTRA_COPY) copy_level4(a, k, iy, ix, lanes, out);
      if (EXTRA == EXTRA_IMAGE) image4(a, k, iy, ix, lanes, z.q4);
    }
    pp_cur = pp_next;
    v_cur = v_next;
    ez_cur = ez_next;
    slot_front = slot_front + 1 == slots ? 0 : slot_front + 1;
    slot_out = slot_out + 1 == slots ? 0 : slot_out + 1;
  }
}

/* iso_zmarch_tma's shared memory and block: a ring of P = R + S tiles of p with halo, a ring
 * of S pairs (p[n-1], v^2 dt^2) of the tile's cells (slot s: p[n-1] at 2 s cells, v^2 dt^2
 * after it), each slot's full and empty mbarriers; the tile of bx x by cells at (ix0, iy0)
 * and its planes. */
struct IsoTmaBlock {
  float *p_ring, *pv_ring;
  uint64_t *full_p, *empty_p, *full_pv, *empty_pv;
  int bx, by, tw, slot_floats, cells, consumers, ix0, iy0;
  ZmarchPlanes planes;
};
template <int S>
static __device__ __forceinline__ IsoTmaBlock iso_tma_block(const IsoArgs &a, float *smem) {
  constexpr int P = R + S;
  IsoTmaBlock b;
  b.bx = a.block_x;
  b.by = a.block_y;
  b.tw = b.bx + 2 * R;
  b.slot_floats = tile_floats(b.bx, b.by);
  b.cells = b.bx * b.by;
  b.consumers = b.bx / VEC * b.by;
  b.p_ring = smem;
  b.pv_ring = smem + P * b.slot_floats;
  b.full_p = reinterpret_cast<uint64_t *>(b.pv_ring + 2 * S * b.cells);
  b.empty_p = b.full_p + P;
  b.full_pv = b.empty_p + P;
  b.empty_pv = b.full_pv + S;
  const int tile = blockIdx.x % a.tiles, chunk = blockIdx.x / a.tiles;
  b.ix0 = (tile % a.tiles_x) * b.bx;
  b.iy0 = (tile / a.tiles_x) * b.by;
  b.planes = zmarch_planes(a.domain, chunk);
  return b;
}

/* Producer: plane i of p, then p[n-1] and v^2 dt^2 of output i - 2R, the order in which
 * the consumers wait for them. A slot is refilled once every consumer released it: plane i
 * waits for the release of plane i - P (completion i / P - 1 of its empty barrier), the pair
 * of output o for that of output o - S. Planes are in local z + R, the tensor maps'
 * coordinates. */
template <int S>
static __device__ __forceinline__ void
iso_tma_produce(const IsoTmaBlock &b, const CUtensorMap &p_map, const CUtensorMap &pp_map,
                const CUtensorMap &v_map) {
  constexpr int P = R + S;
  const int zb0 = b.planes.zb0;
  const uint32_t p_bytes = (uint32_t)(b.tw * (b.by + 2 * R) * sizeof(float));
  const uint32_t pv_bytes = (uint32_t)(b.cells * sizeof(float));
  for (int i = 0; i < b.planes.nplanes; ++i) {
    const int s = i % P;
    if (i >= P) mbar_wait(&b.empty_p[s], (uint32_t)(i / P - 1) & 1u);
    mbar_expect_tx(&b.full_p[s], p_bytes);
    tma_load_3d(b.p_ring + s * b.slot_floats, &p_map, b.ix0, b.iy0, zb0 + i, &b.full_p[s]);
    const int o = i - 2 * R;
    if (o < 0) continue;
    const int s2 = o % S;
    if (o >= S) mbar_wait(&b.empty_pv[s2], (uint32_t)(o / S - 1) & 1u);
    mbar_expect_tx(&b.full_pv[s2], 2 * pv_bytes);
    float *dst = b.pv_ring + 2 * s2 * b.cells;
    tma_load_3d(dst, &pp_map, b.ix0 + R, b.iy0 + R, zb0 + o + R, &b.full_pv[s2]);
    tma_load_3d(dst + b.cells, &v_map, b.ix0 + R, b.iy0 + R, zb0 + o + R, &b.full_pv[s2]);
  }
}

/* Isotropic leapfrog, z-marching, every input through the tensor memory accelerator in a
 * pipeline S planes deep (kernel.stages; see iso_cuda.h for the shape and the equation).
 * Threads: bx / 4 x by consumers (thread c owns cells ix = ix0 + 4 (c % (bx/4)) + 0..3 of
 * row iy = iy0 + c / (bx/4)) and one producer warp, of which one thread issues the copies.
 * Block b: tile b % tiles (x fastest, so the blocks that share halo rows start together
 * and march through z side by side: their second reads of a row hit L2), z-chunk
 * b / tiles, output planes [zb0, zb1). Planes of p are numbered j = 0 .. nplanes - 1 from
 * zb0 - R; iteration i makes plane i the front of the register queue and computes plane
 * i - R, output o = i - 2R.
 * Shared memory: a ring of P = R + S tiles of p with halo (plane j in slot j % P: read at
 * iteration j as the queue's front and at j + R as the centre, released then) and a ring
 * of S pairs (p[n-1], v^2 dt^2) of the tile's cells (output o in slot o % S). Each slot has
 * a full mbarrier (the producer's expect_tx, completed by the copy) and an empty one
 * (every consumer thread arrives once it has read the slot): consumers never meet at a
 * block-wide barrier, and the producer runs up to S - 1 planes ahead of the slowest one.
 * Measured on an H100 (run/results/kernels.md): marking p[n-1] and v^2 dt^2 evict-first in
 * L2 cost 13% of the throughput, and launching the z-chunks of a column side by side cost
 * 10% (y neighbours no longer in step); neither is done. EXTRA as iso_zmarch's. */
template <int S, int EXTRA>
static __global__ void __launch_bounds__(MAX_THREADS + 32)
    iso_zmarch_tma(const IsoArgs a, const __grid_constant__ CUtensorMap p_map,
                   const __grid_constant__ CUtensorMap pp_map,
                   const __grid_constant__ CUtensorMap v_map) {
  constexpr int P = R + S;
  extern __shared__ __align__(1024) float smem[];
  const IsoTmaBlock b = iso_tma_block<S>(a, smem);
  const int tid = threadIdx.x;

  if (tid == 0) {
    mbar_init_slots(b.full_p, b.empty_p, P, 1, b.consumers);
    mbar_init_slots(b.full_pv, b.empty_pv, S, 1, b.consumers);
    mbar_fence_init();
  }
  __syncthreads();

  if (tid >= b.consumers) {
    if (tid != b.consumers) return;
    iso_tma_produce<S>(b, p_map, pp_map, v_map);
    return;
  }
  /* Consumers. Threads outside the field wait and release like the others (the empty
   * barriers count every consumer) but neither compute nor store. */
  const int row_threads = b.bx / VEC;
  const int tx = tid % row_threads, ty = tid / row_threads;
  const int ix = b.ix0 + VEC * tx, iy = b.iy0 + ty;
  const bool active = ix < a.domain.nx && iy < a.domain.ny;
  const int lanes = active ? min(VEC, a.domain.nx - ix) : 0;
  const long long column = a.domain.origin + (long long)iy * a.domain.stride_y + ix;
  const LayerXY layer = layer_xy(a, ix, iy, lanes);
  const int row_offset = (ty + R) * b.tw + VEC * tx; /* tile index of cell ix - R, row iy */
  const int cell_offset = ty * b.bx + VEC * tx;
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  ZQueue z = {zero, zero, zero, zero, zero, zero, zero, zero, zero};

  /* The rings' positions, stepped along with i (no division a plane): plane i's slot and its
   * fill's parity, plane i - R's slot, output o's pair slot and its parity. */
  int front = 0, front_parity = 0, centre = 0, pair = 0, pair_parity = 0;
  for (int i = 0; i < b.planes.nplanes; ++i) {
    const int o = i - 2 * R, k = b.planes.zb0 + o; /* output of this iteration when o >= 0 */
    const float ez = o >= 0 ? __ldg(&a.domain.eta_z[a.domain.z_offset + k]) : 0.f;
    mbar_wait(&b.full_p[front], (uint32_t)front_parity);
    push(z, ld4(b.p_ring + front * b.slot_floats + row_offset + R));
    if (++front == P) {
      front = 0;
      front_parity ^= 1;
    }
    if (i < R) continue;
    if (o >= 0) {
      mbar_wait(&b.full_pv[pair], (uint32_t)pair_parity);
      const float *pv = b.pv_ring + 2 * pair * b.cells + cell_offset;
      const float4 pp = ld4(pv), v = ld4(pv + b.cells);
      mbar_arrive(&b.empty_pv[pair]);
      if (++pair == S) {
        pair = 0;
        pair_parity ^= 1;
      }
      if (active) {
        const float4 out = update4(a, b.p_ring + centre * b.slot_floats + row_offset, b.tw, z, pp,
                                   v, layer, ez);
        store4(a.p_other + column + (long long)k * a.domain.stride_z, lanes, out);
        if (EXTRA == EXTRA_COPY) copy_level4(a, k, iy, ix, lanes, out);
        if (EXTRA == EXTRA_IMAGE) image4(a, k, iy, ix, lanes, z.q4);
      }
    }
    mbar_arrive(&b.empty_p[centre]);
    if (++centre == P) centre = 0;
  }
}

/* Point injection: one thread per tap, atomicAdd since taps of nearby points may share a
 * cell; only the taps whose cell lies in [index_begin, index_end) (the planes a split step
 * has just updated). */
static __global__ void inject_kernel(float *field, const size_t *tap_index, const float *tap_coeff,
                                     const float *wavelets, long long all_taps, int taps,
                                     int samples, int sample, size_t index_begin,
                                     size_t index_end) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= all_taps) return;
  const float c = tap_coeff[t];
  if (c == 0.f || tap_index[t] < index_begin || tap_index[t] >= index_end) return;
  atomicAdd(&field[tap_index[t]], c * wavelets[(size_t)(t / taps) * samples + sample]);
}

/* The same from each point's first tap's index (rtm_points_t's base_index, WIDTH taps an
 * axis, x fastest, then y, then z): each tap's index formed where it is used, so a tap
 * reads its weight alone (4 bytes, not 12). A tap of weight 0 (outside the volume or this
 * rank's planes) is skipped before its index is formed. */
template <int WIDTH>
static __device__ __forceinline__ long long based_index(const long long *base_index, long long t,
                                                        long long stride_y, long long stride_z) {
  constexpr int TAPS = WIDTH * WIDTH * WIDTH;
  const long long p = t / TAPS;
  const int r = (int)(t - p * TAPS);
  return base_index[p] + (r / (WIDTH * WIDTH)) * stride_z + (r / WIDTH % WIDTH) * stride_y +
         r % WIDTH;
}

template <int WIDTH>
static __global__ void inject_based_kernel(float *field, const long long *base_index,
                                           const float *tap_coeff, const float *wavelets,
                                           long long all_taps, long long stride_y,
                                           long long stride_z, int samples, int sample,
                                           size_t index_begin, size_t index_end) {
  constexpr int TAPS = WIDTH * WIDTH * WIDTH;
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= all_taps) return;
  const float c = tap_coeff[t];
  if (c == 0.f) return;
  const long long index = based_index<WIDTH>(base_index, t, stride_y, stride_z);
  if (index < (long long)index_begin || index >= (long long)index_end) return;
  atomicAdd(&field[index], c * wavelets[(size_t)(t / TAPS) * samples + sample]);
}

/* A level copy's cell (rtm_iso_level_copy_t) made the field's again after the injection
 * changed it: the interior cell at padded index `index`. */
static __device__ __forceinline__ void copy_cell(const float *field, const rtm_iso_level_copy_t &copy,
                                                 long long index) {
  const long long at = index - copy.origin;
  if (at < 0) return;
  const long long iz = at / copy.stride_z, iy = at % copy.stride_z / copy.stride_y;
  const long long ix = at % copy.stride_y;
  if (ix >= copy.nx || iy >= copy.ny) return; /* the x/y halo: no interior cell */
  copy.dense[(iz * copy.ny + iy) * copy.nx + ix] = field[index];
}

/* inject_kernel's taps, their cells copied into the level copy once injected. */
static __global__ void copy_taps_kernel(const float *field, const size_t *tap_index,
                                        const float *tap_coeff, long long all_taps,
                                        size_t index_begin, size_t index_end,
                                        rtm_iso_level_copy_t copy) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= all_taps) return;
  if (tap_coeff[t] == 0.f || tap_index[t] < index_begin || tap_index[t] >= index_end) return;
  copy_cell(field, copy, (long long)tap_index[t]);
}

/* inject_based_kernel's taps, the same. */
template <int WIDTH>
static __global__ void copy_taps_based_kernel(const float *field, const long long *base_index,
                                              const float *tap_coeff, long long all_taps,
                                              long long stride_y, long long stride_z,
                                              size_t index_begin, size_t index_end,
                                              rtm_iso_level_copy_t copy) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= all_taps || tap_coeff[t] == 0.f) return;
  const long long index = based_index<WIDTH>(base_index, t, stride_y, stride_z);
  if (index < (long long)index_begin || index >= (long long)index_end) return;
  copy_cell(field, copy, index);
}

/* Receiver recording: one thread per receiver, its taps summed without FMA as the cpu
 * reference does: each z plane's taps in tap order, then the planes in order (trilinear:
 * the 4 of the lower plane, the 4 of the upper one, then the two), so that ranks owning one
 * plane each of a trilinear point sum to the one-rank value (rtm_mpi.h). Taps with weight 0
 * (outside this rank's z-range or the volume) are not read. */
static __global__ void record_kernel(const float *field, const size_t *tap_index,
                                     const float *tap_weight, float *traces, int count, int taps,
                                     int per_plane, int trace_length, int sample) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= count) return;
  const size_t first = (size_t)r * taps;
  float sum = 0.f;
  for (int plane = 0; plane < taps / per_plane; ++plane) {
    float plane_sum = 0.f;
    for (int k = plane * per_plane; k < (plane + 1) * per_plane; ++k) {
      const float w = tap_weight[first + k];
      if (w != 0.f) plane_sum = __fadd_rn(plane_sum, __fmul_rn(w, field[tap_index[first + k]]));
    }
    sum = __fadd_rn(sum, plane_sum);
  }
  traces[(size_t)r * trace_length + sample] = sum;
}

/* The recorder above from the taps' tensor-product form: thread r forms tap (i, j, k)'s
 * weight as the cpu did ((wx wy) wz in double, rounded to float once) and reads the field
 * only where it is not 0, in the same order: z planes, y rows, x. WIDTH taps an axis (2 for
 * trilinear, 2 radius for sinc) as a template, so that the 3 WIDTH weights sit in registers:
 * read from memory at every tap, a warp's 32 points 192 bytes apart made each weight a
 * 32-line request and cost more than the field's reads. */
template <int WIDTH>
static __global__ void record_separable_kernel(const float *field, const long long *base_index,
                                               const double *axis_weight, long long stride_y,
                                               long long stride_z, float *traces, int count,
                                               int trace_length, int sample) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= count) return;
  double w[3][WIDTH];
  const double *axes = axis_weight + (size_t)r * 3 * WIDTH;
#pragma unroll
  for (int a = 0; a < 3; ++a)
#pragma unroll
    for (int i = 0; i < WIDTH; ++i)
      w[a][i] = axes[a * WIDTH + i];
  const long long base = base_index[r];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < WIDTH; ++k) {
    float plane_sum = 0.f;
    if (w[2][k] != 0.0) {
#pragma unroll
      for (int j = 0; j < WIDTH; ++j) {
        const float *row = field + base + k * stride_z + j * stride_y;
#pragma unroll
        for (int i = 0; i < WIDTH; ++i) {
          const float weight = __double2float_rn(__dmul_rn(__dmul_rn(w[0][i], w[1][j]), w[2][k]));
          if (weight != 0.f) plane_sum = __fadd_rn(plane_sum, __fmul_rn(weight, row[i]));
        }
      }
    }
    sum = __fadd_rn(sum, plane_sum);
  }
  traces[(size_t)r * trace_length + sample] = sum;
}

/* ---- launchers ---- */

static const char *const halo_names[] = {"sync", "ldgsts", "tma"};

extern "C" int rtm_iso_halo_parse(const char *name, rtm_halo_t *halo) {
  for (int h = 0; h < 3; ++h)
    if (name && strcmp(name, halo_names[h]) == 0) {
      *halo = (rtm_halo_t)h;
      return RTM_OK;
    }
  rtm_log_error("kernel.halo = '%s' is unknown (known: sync, ldgsts, tma)", name ? name : "");
  return RTM_ERR_CONFIG;
}

extern "C" const char *rtm_iso_halo_name(rtm_halo_t halo) {
  return halo >= RTM_HALO_SYNC && halo <= RTM_HALO_TMA ? halo_names[halo] : "?";
}

extern "C" size_t rtm_iso_cuda_shared_bytes(const rtm_iso_shape_t *shape) {
  const size_t tile = (size_t)tile_floats(shape->block[0], shape->block[1]) * sizeof(float);
  if (shape->halo == RTM_HALO_TMA) {
    /* R + S tiles of p, S pairs of cell tiles, a full and an empty barrier per slot */
    const size_t p_slots = (size_t)(R + shape->stages), pv_slots = (size_t)shape->stages;
    const size_t cells = (size_t)shape->block[0] * shape->block[1] * sizeof(float);
    return p_slots * tile + pv_slots * 2 * cells + 2 * (p_slots + pv_slots) * sizeof(uint64_t);
  }
  return (size_t)ring_slots(shape->halo, shape->stages) * tile;
}

extern "C" int rtm_cuda_halo_check(rtm_halo_t halo, int stages, int max_stages, int zblock,
                                   const int block[2], const char *what, int device, int *optin) {
  int status = RTM_OK, major = 0, minor = 0;
  if (halo != RTM_HALO_SYNC && (stages < 2 || stages > max_stages))
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.stages = %d: the %s kernel with kernel.halo = %s takes 2 to %d",
             stages, what, rtm_iso_halo_name(halo), max_stages);
  if (zblock < 0)
    RTM_FAIL(RTM_ERR_CONFIG, "kernel.zblock = %d: must be 0 (whole z-range) or positive", zblock);
  RTM_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  RTM_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  RTM_CUDA_TRY(cudaDeviceGetAttribute(optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (halo == RTM_HALO_LDGSTS && major < 8)
    RTM_FAIL(RTM_ERR_UNSUPPORTED,
             "kernel.halo = ldgsts needs compute capability 8.0 or newer; device %d is %d.%d "
             "(use kernel.halo = sync)",
             device, major, minor);
  if (halo == RTM_HALO_TMA) {
    if (major < 9)
      RTM_FAIL(RTM_ERR_UNSUPPORTED,
               "kernel.halo = tma needs a Hopper GPU (compute capability 9.0 or newer); "
               "device %d is %d.%d (use kernel.halo = ldgsts or sync)",
               device, major, minor);
    if (block[0] + 2 * R > 256 || block[1] + 2 * R > 256)
      RTM_FAIL(RTM_ERR_CONFIG,
               "kernel.block_x, kernel.block_y = %d, %d: with kernel.halo = tma the tile plus "
               "its halo must be at most 256 cells on each side",
               block[0], block[1]);
  }
  return RTM_OK;
fail:
  return status;
}

extern "C" int rtm_cuda_kernel_prepare(const void *kernel, size_t shared_bytes, rtm_halo_t halo) {
  int status = RTM_OK;
  cudaFuncAttributes attributes;
  RTM_CUDA_TRY(cudaFuncGetAttributes(&attributes, kernel));
  RTM_CUDA_TRY(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared_bytes));
  /* The copy instructions exist only in code generated for their architecture: a binary
   * built for sm_80 alone and run on a Hopper GPU has no TMA in its tma kernel. */
  if (halo == RTM_HALO_TMA && attributes.ptxVersion < 90)
    RTM_FAIL(RTM_ERR_UNSUPPORTED,
             "kernel.halo = tma: this build has no sm_90 code for the kernel (compiled for "
             "compute_%d; configure with RTM3D_CUDA_ARCHITECTURES including 90)",
             attributes.ptxVersion);
  return RTM_OK;
fail:
  return status;
}

template <int HALO> static int prepare_kernels(size_t shared_bytes) {
  int status = RTM_OK;
  const void *kernels[6] = {(const void *)iso_zmarch<HALO, false, EXTRA_NONE>,
                            (const void *)iso_zmarch<HALO, true, EXTRA_NONE>,
                            (const void *)iso_zmarch<HALO, false, EXTRA_COPY>,
                            (const void *)iso_zmarch<HALO, true, EXTRA_COPY>,
                            (const void *)iso_zmarch<HALO, false, EXTRA_IMAGE>,
                            (const void *)iso_zmarch<HALO, true, EXTRA_IMAGE>};
  for (int k = 0; k < 6; ++k)
    RTM_TRY(rtm_cuda_kernel_prepare(kernels[k], shared_bytes, (rtm_halo_t)HALO));
  return RTM_OK;
fail:
  return status;
}

template <int S> static int prepare_tma_kernels(size_t shared_bytes) {
  int status = RTM_OK;
  const void *kernels[3] = {(const void *)iso_zmarch_tma<S, EXTRA_NONE>,
                            (const void *)iso_zmarch_tma<S, EXTRA_COPY>,
                            (const void *)iso_zmarch_tma<S, EXTRA_IMAGE>};
  for (int k = 0; k < 3; ++k)
    RTM_TRY(rtm_cuda_kernel_prepare(kernels[k], shared_bytes, RTM_HALO_TMA));
  return RTM_OK;
fail:
  return status;
}

extern "C" int rtm_iso_cuda_prepare(const rtm_iso_shape_t *shape, int device) {
  int status = RTM_OK;
  size_t bytes = 0;
  RTM_TRY(zmarch_block_check(shape->block, VEC, MAX_THREADS, "iso"));
  bytes = rtm_iso_cuda_shared_bytes(shape);
  RTM_TRY(zmarch_device_check(shape->halo, shape->stages,
                              shape->halo == RTM_HALO_TMA ? TMA_MAX_STAGES : 3, shape->zblock,
                              shape->block, bytes, "iso", device));
  switch (shape->halo) {
  case RTM_HALO_SYNC: RTM_TRY(prepare_kernels<RTM_HALO_SYNC>(bytes)); break;
  case RTM_HALO_LDGSTS: RTM_TRY(prepare_kernels<RTM_HALO_LDGSTS>(bytes)); break;
  case RTM_HALO_TMA:
    switch (shape->stages) {
    case 2: RTM_TRY(prepare_tma_kernels<2>(bytes)); break;
    case 3: RTM_TRY(prepare_tma_kernels<3>(bytes)); break;
    default: RTM_TRY(prepare_tma_kernels<4>(bytes)); break;
    }
    break;
  }
  return RTM_OK;
fail:
  return status;
}

/* A map over the whole padded field: x over the padded row, y over ny + 2R rows, z over
 * the local planes and their halos; boxes of box_x x box_y cells, one plane deep. Boxes
 * hanging past a far edge are zero-filled. The L2 promotes a box row's misses to 128-byte
 * lines, not to 256-byte pairs of them: the faster of the promotions on Hopper, for every
 * map (run/results/kernels.md, "The tensor maps' L2 promotion"). */
static int encode_map(const rtm_grid_t *grid, const void *field, int box_x, int box_y, bool half,
                      rtm_iso_tensor_map_t *map) {
  static_assert(sizeof(CUtensorMap) == sizeof(rtm_iso_tensor_map_t), "tensor map size");
  int status = RTM_OK;
  CUtensorMap encoded;
  const size_t element = half ? 2 : sizeof(float);
  const cuuint64_t dims[3] = {(cuuint64_t)grid->stride_y, (cuuint64_t)grid->n[1] + 2 * R,
                              (cuuint64_t)grid->nz_local + 2 * R};
  const cuuint64_t strides[2] = {(cuuint64_t)(grid->stride_y * element),
                                 (cuuint64_t)(grid->stride_z * element)};
  const cuuint32_t box[3] = {(cuuint32_t)box_x, (cuuint32_t)box_y, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  RTM_CU_TRY(cuTensorMapEncodeTiled(
      &encoded, half ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3,
      const_cast<void *>(field), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  memcpy(map, &encoded, sizeof encoded);
  return RTM_OK;
fail:
  return status;
}

extern "C" int rtm_iso_cuda_tensor_map(const rtm_grid_t *grid, const float *field,
                                       const rtm_iso_shape_t *shape, rtm_iso_tensor_map_t *map) {
  return encode_map(grid, field, shape->block[0] + 2 * R, shape->block[1] + 2 * R, false, map);
}

extern "C" int rtm_iso_cuda_cell_map(const rtm_grid_t *grid, const float *field,
                                     const rtm_iso_shape_t *shape, rtm_iso_tensor_map_t *map) {
  return encode_map(grid, field, shape->block[0], shape->block[1], false, map);
}

extern "C" int rtm_iso_cuda_cell_map_half(const rtm_grid_t *grid, const void *volume,
                                          const rtm_iso_shape_t *shape, rtm_iso_tensor_map_t *map) {
  return encode_map(grid, volume, shape->block[0] + RTM_TMA_HALF_EXTRA, shape->block[1], true, map);
}

/* The arguments of a launch; the tma tile fields are iso_launch_tma's. */
static IsoArgs iso_args(const rtm_grid_t *grid, const rtm_iso_shape_t *shape,
                        const rtm_iso_fields_t *fields, int backward, int z_begin, int z_end) {
  IsoArgs a = zmarch_args<IsoArgs>(grid, fields->eta_dt, shape->zblock, backward, z_begin, z_end);
  a.p_other = fields->p_other;
  a.level_copy = fields->level_copy;
  if (fields->image) {
    const rtm_step_image_t *im = fields->image;
    a.image_source = im->source;
    a.source_origin = im->source_origin;
    a.source_stride_y = im->source_stride_y;
    a.source_stride_z = im->source_stride_z;
    a.image = im->image;
    a.illumination = im->illumination;
    memcpy(a.image_box, im->box, sizeof a.image_box);
    const auto aligned = [](const void *p) { return ((uintptr_t)p & 15u) == 0; };
    a.image_vec = grid->n[0] % VEC == 0 && a.source_origin % VEC == 0 &&
                  a.source_stride_y % VEC == 0 && a.source_stride_z % VEC == 0 &&
                  aligned(a.image_source) && aligned(a.image) && aligned(a.illumination);
  }
  a.p = fields->p;
  a.v2dt2 = fields->v2dt2;
  a.stages = shape->stages;
  for (int k = 0; k <= R; ++k)
    a.c[k] = fields->stencil[k];
  for (int axis = 0; axis < 3; ++axis)
    a.inv_h2[axis] = fields->inv_h2[axis];
  return a;
}

/* The instance a launch takes: EXTRA_COPY with a level copy, EXTRA_IMAGE with the imaging
 * condition (never both: iso_args refuses it), else EXTRA_NONE. */
static int extra_of(const IsoArgs &a) {
  return a.level_copy ? EXTRA_COPY : a.image ? EXTRA_IMAGE : EXTRA_NONE;
}

/* sync and ldgsts: blocks of bx / VEC x by threads over tiles (x, y) and z-blocks (z). */
static int iso_launch_ring(const IsoArgs &a, const rtm_iso_shape_t *shape, cudaStream_t s) {
  int status = RTM_OK;
  const int bx = shape->block[0], by = shape->block[1];
  const dim3 block((unsigned)(bx / VEC), (unsigned)by, 1);
  const dim3 blocks = zmarch_blocks(a.domain, bx, by);
  const size_t shared = rtm_iso_cuda_shared_bytes(shape);
  const bool multi = (bx + 2 * R) / 4 * (by + 2 * R) > MAX_CHUNKS * (bx / VEC) * by;
  /* the instance for the halo, the tile's chunks and what the step writes besides p */
  const int which = (multi ? 1 : 0) + 2 * extra_of(a);
  void (*const sync[6])(IsoArgs) = {
      iso_zmarch<RTM_HALO_SYNC, false, EXTRA_NONE>,  iso_zmarch<RTM_HALO_SYNC, true, EXTRA_NONE>,
      iso_zmarch<RTM_HALO_SYNC, false, EXTRA_COPY>,  iso_zmarch<RTM_HALO_SYNC, true, EXTRA_COPY>,
      iso_zmarch<RTM_HALO_SYNC, false, EXTRA_IMAGE>, iso_zmarch<RTM_HALO_SYNC, true, EXTRA_IMAGE>};
  void (*const ldgsts[6])(IsoArgs) = {iso_zmarch<RTM_HALO_LDGSTS, false, EXTRA_NONE>,
                                      iso_zmarch<RTM_HALO_LDGSTS, true, EXTRA_NONE>,
                                      iso_zmarch<RTM_HALO_LDGSTS, false, EXTRA_COPY>,
                                      iso_zmarch<RTM_HALO_LDGSTS, true, EXTRA_COPY>,
                                      iso_zmarch<RTM_HALO_LDGSTS, false, EXTRA_IMAGE>,
                                      iso_zmarch<RTM_HALO_LDGSTS, true, EXTRA_IMAGE>};
  if (shape->halo == RTM_HALO_SYNC) {
    sync[which]<<<blocks, block, shared, s>>>(a);
    RTM_CUDA_TRY_LAUNCH("iso_zmarch<sync>");
  } else {
    ldgsts[which]<<<blocks, block, shared, s>>>(a);
    RTM_CUDA_TRY_LAUNCH("iso_zmarch<ldgsts>");
  }
  return RTM_OK;
fail:
  return status;
}

/* The tma instances by stages and extra_of. */
typedef void (*iso_tma_kernel_t)(IsoArgs, CUtensorMap, CUtensorMap, CUtensorMap);
static const iso_tma_kernel_t tma_two[3] = {iso_zmarch_tma<2, EXTRA_NONE>,
                                            iso_zmarch_tma<2, EXTRA_COPY>,
                                            iso_zmarch_tma<2, EXTRA_IMAGE>};
static const iso_tma_kernel_t tma_three[3] = {iso_zmarch_tma<3, EXTRA_NONE>,
                                              iso_zmarch_tma<3, EXTRA_COPY>,
                                              iso_zmarch_tma<3, EXTRA_IMAGE>};
static const iso_tma_kernel_t tma_four[3] = {iso_zmarch_tma<4, EXTRA_NONE>,
                                             iso_zmarch_tma<4, EXTRA_COPY>,
                                             iso_zmarch_tma<4, EXTRA_IMAGE>};
static const iso_tma_kernel_t *const tma_by_stages[TMA_MAX_STAGES - 1] = {tma_two, tma_three,
                                                                           tma_four};

/* tma: a one-dimensional grid, tiles fastest (see iso_zmarch_tma), of bx / VEC x by
 * consumer threads and a producer warp. */
static int iso_launch_tma(IsoArgs a, const rtm_iso_shape_t *shape, const rtm_iso_fields_t *fields,
                          cudaStream_t s) {
  int status = RTM_OK;
  const int bx = shape->block[0], by = shape->block[1];
  const dim3 blocks = zmarch_blocks(a.domain, bx, by);
  const unsigned count = blocks.x * blocks.y * blocks.z, threads = (unsigned)(bx / VEC * by + 32);
  const size_t shared = rtm_iso_cuda_shared_bytes(shape);
  CUtensorMap p_map, pp_map, v_map;
  if (!fields->p_map || !fields->p_other_map || !fields->v2dt2_map)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_iso_cuda_step: kernel.halo = tma without its tensor maps");
  /* rtm_iso_cuda_prepare refuses these first; never an index past tma_by_stages */
  if (shape->stages < 2 || shape->stages > TMA_MAX_STAGES)
    RTM_FAIL(RTM_ERR_INTERNAL,
             "rtm_iso_cuda_step: kernel.stages = %d with kernel.halo = tma (the kernel has 2 "
             "to %d)",
             shape->stages, TMA_MAX_STAGES);
  memcpy(&p_map, fields->p_map, sizeof p_map);
  memcpy(&pp_map, fields->p_other_map, sizeof pp_map);
  memcpy(&v_map, fields->v2dt2_map, sizeof v_map);
  a.block_x = bx;
  a.block_y = by;
  a.tiles_x = (int)blocks.x;
  a.tiles = (int)(blocks.x * blocks.y);
  tma_by_stages[shape->stages - 2][extra_of(a)]<<<count, threads, shared, s>>>(a, p_map, pp_map,
                                                                              v_map);
  RTM_CUDA_TRY_LAUNCH("iso_zmarch_tma");
  return RTM_OK;
fail:
  return status;
}

extern "C" int rtm_iso_cuda_step(const rtm_grid_t *grid, const rtm_iso_shape_t *shape,
                                 const rtm_iso_fields_t *fields, int backward, int z_begin,
                                 int z_end, void *stream) {
  if (z_end <= z_begin) return RTM_OK;
  if (fields->level_copy && fields->image) {
    rtm_log_error("rtm_iso_cuda_step: a level copy and the imaging condition in one step");
    return RTM_ERR_INTERNAL;
  }
  const IsoArgs a = iso_args(grid, shape, fields, backward, z_begin, z_end);
  if (shape->halo == RTM_HALO_TMA) return iso_launch_tma(a, shape, fields, (cudaStream_t)stream);
  return iso_launch_ring(a, shape, (cudaStream_t)stream);
}

/* Point kernels: one thread per tap or receiver, in blocks of POINT_THREADS. */
constexpr int POINT_THREADS = 128;

/* The status of the kernel launch just made, `what` naming the kernel in the error. */
static int launch_status(const char *what) {
  int status = RTM_OK;
  RTM_CUDA_TRY_LAUNCH(what);
  return RTM_OK;
fail:
  return status;
}

extern "C" int rtm_iso_cuda_inject(float *field, const size_t *tap_index, const float *tap_coeff,
                                   const float *wavelets, int count, int taps, int samples,
                                   int sample, size_t index_begin, size_t index_end, void *stream) {
  if (count <= 0 || sample < 0 || sample >= samples || index_begin >= index_end) return RTM_OK;
  const long long all_taps = (long long)count * taps;
  inject_kernel<<<(unsigned)((all_taps + POINT_THREADS - 1) / POINT_THREADS), POINT_THREADS, 0,
                  (cudaStream_t)stream>>>(field, tap_index, tap_coeff, wavelets, all_taps, taps,
                                          samples, sample, index_begin, index_end);
  return launch_status("inject_kernel");
}

/* The instance of a point kernel for `width` taps an axis (2, 4, 6 or 8: points of radius 1
 * to 4), or nullptr with an error naming `what`. */
template <typename Kernel>
static Kernel by_width(int width, const char *what, Kernel k2, Kernel k4, Kernel k6, Kernel k8) {
  const Kernel k = width == 2 ? k2 : width == 4 ? k4 : width == 6 ? k6 : width == 8 ? k8 : nullptr;
  if (!k) rtm_log_error("%s: %d taps an axis (2, 4, 6 or 8)", what, width);
  return k;
}

extern "C" int rtm_iso_cuda_inject_based(float *field, const long long *base_index,
                                         const float *tap_coeff, const float *wavelets, int count,
                                         int width, long long stride_y, long long stride_z,
                                         int samples, int sample, size_t index_begin,
                                         size_t index_end, void *stream) {
  if (count <= 0 || sample < 0 || sample >= samples || index_begin >= index_end) return RTM_OK;
  const auto kernel =
      by_width(width, "inject_based", &inject_based_kernel<2>, &inject_based_kernel<4>,
               &inject_based_kernel<6>, &inject_based_kernel<8>);
  if (!kernel) return RTM_ERR_INTERNAL;
  const long long all_taps = (long long)count * width * width * width;
  kernel<<<(unsigned)((all_taps + POINT_THREADS - 1) / POINT_THREADS), POINT_THREADS, 0,
           (cudaStream_t)stream>>>(field, base_index, tap_coeff, wavelets, all_taps, stride_y,
                                   stride_z, samples, sample, index_begin, index_end);
  return launch_status("inject_based_kernel");
}

extern "C" int rtm_iso_cuda_copy_taps(const float *field, const size_t *tap_index,
                                      const float *tap_coeff, int count, int taps,
                                      size_t index_begin, size_t index_end,
                                      const rtm_iso_level_copy_t *copy, void *stream) {
  if (count <= 0 || index_begin >= index_end) return RTM_OK;
  const long long all_taps = (long long)count * taps;
  copy_taps_kernel<<<(unsigned)((all_taps + POINT_THREADS - 1) / POINT_THREADS), POINT_THREADS,
                     0, (cudaStream_t)stream>>>(field, tap_index, tap_coeff, all_taps,
                                                index_begin, index_end, *copy);
  return launch_status("copy_taps_kernel");
}

extern "C" int rtm_iso_cuda_copy_taps_based(const float *field, const long long *base_index,
                                            const float *tap_coeff, int count, int width,
                                            long long stride_y, long long stride_z,
                                            size_t index_begin, size_t index_end,
                                            const rtm_iso_level_copy_t *copy, void *stream) {
  if (count <= 0 || index_begin >= index_end) return RTM_OK;
  const auto kernel =
      by_width(width, "copy_taps_based", &copy_taps_based_kernel<2>, &copy_taps_based_kernel<4>,
               &copy_taps_based_kernel<6>, &copy_taps_based_kernel<8>);
  if (!kernel) return RTM_ERR_INTERNAL;
  const long long all_taps = (long long)count * width * width * width;
  kernel<<<(unsigned)((all_taps + POINT_THREADS - 1) / POINT_THREADS), POINT_THREADS, 0,
           (cudaStream_t)stream>>>(field, base_index, tap_coeff, all_taps, stride_y, stride_z,
                                   index_begin, index_end, *copy);
  return launch_status("copy_taps_based_kernel");
}

extern "C" int rtm_iso_cuda_record_separable(const float *field, const long long *base_index,
                                             const double *axis_weight, int width,
                                             long long stride_y, long long stride_z, float *traces,
                                             int count, int trace_length, int sample,
                                             void *stream) {
  if (count <= 0 || sample < 0 || sample >= trace_length) return RTM_OK;
  const auto kernel =
      by_width(width, "record_separable", &record_separable_kernel<2>, &record_separable_kernel<4>,
               &record_separable_kernel<6>, &record_separable_kernel<8>);
  if (!kernel) return RTM_ERR_INTERNAL;
  kernel<<<(unsigned)((count + POINT_THREADS - 1) / POINT_THREADS), POINT_THREADS, 0,
           (cudaStream_t)stream>>>(field, base_index, axis_weight, stride_y, stride_z, traces,
                                   count, trace_length, sample);
  return launch_status("record_separable_kernel");
}

extern "C" int rtm_iso_cuda_record(const float *field, const size_t *tap_index,
                                   const float *tap_weight, float *traces, int count, int taps,
                                   int per_plane, int trace_length, int sample, void *stream) {
  if (count <= 0 || sample < 0 || sample >= trace_length) return RTM_OK;
  record_kernel<<<(count + POINT_THREADS - 1) / POINT_THREADS, POINT_THREADS, 0,
                  (cudaStream_t)stream>>>(field, tap_index, tap_weight, traces, count, taps,
                                          per_plane, trace_length, sample);
  return launch_status("record_kernel");
}

/* tti_cuda.cu - the VTI/TTI z-marching kernel and its launcher (equations and per-cell
 * coefficients: tti_cuda.h).
 *
 * Shape (single pass):
 *   threads    a block owns a block_x x block_y tile of cells, one thread per cell, and
 *              walks the planes of its z-block (kernel.zblock, the whole range when 0).
 *              tma at the compiled-in widths, tiles of 256 cells whose blocks fit three to
 *              a multiprocessor: one thread per two cells, side by side in x at width 64
 *              (2 tx and 2 tx + 1), in y at width 32 (rows 2 ty and 2 ty + 1)
 *              (rtm_tti_shape_t.cells, two_cells and pairs_along_x below).
 *   shared     a ring of R + 2 + lead slots (tma: R + slack + lead, slack 2 or 1), each
 *              the (block_y + 8) x (block_x + 8) tile of p and of q of one plane with its
 *              R = 4 xy halo (corners included); lead =
 *              stages - 1 planes are in flight ahead of the newest resident one (0 for
 *              sync). tti also keeps two buffers of D_y p, D_y q over the tile's columns
 *              (halo columns included) and interior rows, from which d_xy = D_x(D_y f)
 *              comes: one is read for plane c while the other is written for plane c + 1.
 *   registers  queues of the 2R + 1 = 9 values along z of the thread's column: p, q (for
 *              d_zz) and, tti only, D_x p, D_y p, D_x q, D_y q, computed from the tile when a
 *              plane enters the front of the queue (plane c + R); then d_xz = D_z(D_x f),
 *              d_yz = D_z(D_y f) from the queues: the mixed z terms need no second pass and
 *              no scratch volume. The D_y buffer's own columns come from the D_y queues;
 *              only its 2R halo columns are computed from the tile, by as many threads
 *              (2 x 2R x block_y: half the block for 32-wide tiles, whole warps). The tma
 *              kernel at widths 32 and 64 keeps a D_y buffer per warp instead (the warp's
 *              32 cells of a row, or with x pairs its 64, and their 2R halo columns,
 *              computed by the warp's lanes 0 .. 4R - 1).
 *   halo       sync: 16-byte loads through registers into the ring; ldgsts: cp.async
 *              16-byte copies (zero fill past the padded field), one commit per plane by
 *              every thread, never in divergent code; the slot count lets one barrier per
 *              plane order every reuse (see SLOT below). tma (sm_90): its own kernel,
 *              tti_zmarch_tma, with no block-wide barrier: cp.async.bulk.tensor.3d boxes of
 *              the p and q tiles and of the own cells' inputs, every slot handed over by
 *              full and empty mbarriers (its header says how).
 *   per plane  (sync, ldgsts) issue the copies of plane i + lead; load the cell's own
 *              p[n-1], q[n-1] and coefficients of plane c; wait for plane i; barrier; push
 *              the queues; (tti) write the D_y buffer of plane c + 1; update p and q of
 *              plane c.
 *   tile width kernel.block_x = 32 and 64 are compiled with the width known (every y
 *              offset of a shared load an immediate); other widths run the generic build.
 *   order      the cpu reference's operations in its order (tti_cpu.c's header), with the
 *              same floats c, 1 / h^2 and w1 = b / h (rtm_fd_weights) and the same fused
 *              multiply-adds, so that the two agree bit for bit. The Hz factors are
 *              formed here in float from n; the reference forms them in double from the
 *              same float n when the axis is smoothed (the exact product of two floats
 *              rounds to the float product: bit for bit), and from angles in double
 *              otherwise (a 1-ulp difference of the medium).
 *   in place   f[n+1] overwrites f[n-1] (each cell read and written by one thread only).
 *   snapshot   a step that takes a source snapshot (rtm_tti_fields_t.level_copy) also
 *              stores each new p cell into the dense slot, from the update's registers:
 *              an instance of its own (COPY), so that the other steps keep their code.
 * The edges: outside the interior in x and y, f and the reference's first-derivative
 * scratch are zero; the tile's padding is zero, so D_y of a padding column is zero here too.
 * In the z halo planes the first derivatives come from f's halo planes, as in the
 * reference. */
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include "cuda_async.cuh"
#include "rtm_cuda_check.h"
#include "rtm_backend.h"
#include "rtm_status.h"
#include "tti_cuda.h"
#include "zmarch_common.cuh"

namespace {

constexpr int Q = 2 * R + 1; /* queue length */
constexpr int MAX_THREADS = 512;
/* tma, two cells a thread (two_cells): blocks of PAIR_THREADS, PAIR_BLOCKS of them a SM. */
constexpr int PAIR_THREADS = 128, PAIR_BLOCKS = 3;
/* SLOT (sync, ldgsts): plane j's tiles are written at iteration j - lead and read at
 * iterations j (queue front), j + R - 1 (D_y buffer of plane j) and j + R (update of plane
 * j). With one barrier per iteration a thread may issue iteration i's copies while another
 * still reads iteration i - 1's planes i - 1 - R .. i - 1: the ring needs R + 2 + lead
 * slots. The tma kernel has the same count (slack 2): there a slot is refilled once every
 * thread released it (its empty barrier), and the spare slot lets the slowest warp trail by
 * two iterations before the producer waits for it. With slack 1 (two cells a thread at 2
 * stages where slack 2 does not let three blocks fit: two_cells below) it keeps one slot
 * fewer, the fewest that cannot deadlock (the producer, itself a consumer, must have
 * released the slot it refills: R + 1 + lead); run/experiments/tti_tma_protocol.py checks
 * both. */
__host__ __device__ constexpr int ring_slots(int lead, int slack = 2) {
  return R + slack + lead;
}
/* tma: slots of the own-cell inputs (p[n-1], q[n-1], coefficients), one output plane each,
 * with the same slack (the least: lead + 1). */
__host__ __device__ constexpr int cell_slots(int lead, int slack = 2) {
  return lead + slack;
}
/* The least slack a two-cell kernel of `lead` is built with (two_cells, pick_cells): 1 at 2
 * stages; at 3 stages slack 1 ran slower than one cell a thread (tti fp32 32x8 on an H100
 * 42 279 -> 35 642 MCells/s, run/results/kernels.md). */
__host__ __device__ constexpr int min_slack(int lead) {
  return lead == 1 ? 1 : 2;
}
constexpr int DY_BUFFERS_TMA = 3;

struct TtiArgs {
  float *p_other, *q_other;
  float *level_copy; /* COPY: p's new cells also here, dense (rtm_tti_fields_t) */
  const float *p, *q;
  const void *coeff[RTM_TTI_COEFF_MAX];
  ZmarchDomain domain;
  int lead, slots; /* planes in flight ahead; ring_slots(lead) */
  float damping_sign;
  float c2[R + 1], inv_h2[3], w1[3][R]; /* rtm_fd_weights of the axes */
};

/* tma: boxes of the p and q tiles with halo (plane of f[n]), and of the tile's own cells:
 * p[n-1], q[n-1] and the coefficient volumes. */
struct TtiMaps {
  CUtensorMap p, q, p_other, q_other, coeff[RTM_TTI_COEFF_MAX];
};

/* COPY: where interior cell (ix, iy) of local plane k lies in the dense level copy. */
__device__ __forceinline__ float *copy_at(const TtiArgs &a, int k, int iy, int ix) {
  return a.level_copy + ((long long)k * a.domain.ny + iy) * a.domain.nx + ix;
}

/* Floats of one field of one D_y buffer (tti): [block_y][block_x + 2R]. */
__host__ __device__ inline int dy_floats_of(int bx, int by) {
  return by * (bx + 2 * R);
}
/* tma: the same, or of the warp-private layout [warp][32 + 2R] (tti_zmarch_tma, compiled-in
 * widths): whichever is larger, so that one size serves both instances of a shape. x pairs'
 * layout [warp][64 + 2R] at width 64 (one warp a row) is dy_floats_of's size exactly. */
__host__ __device__ inline int dy_floats_tma(int bx, int by) {
  const int shared = dy_floats_of(bx, by), warps = (bx * by + 31) / 32;
  return warps * (32 + 2 * R) > shared ? warps * (32 + 2 * R) : shared;
}

/* tma: bytes of one own-cell array of `element` bytes per cell, 128-byte aligned. */
__host__ __device__ inline int cell_array_bytes(int bx, int by, int element) {
  return (bx * by * element + 127) / 128 * 128;
}
/* tma: cells per row of a coefficient box; binary16 rows are wider (RTM_TMA_HALF_EXTRA:
 * a box starts at a 16-byte aligned cell). */
__host__ __device__ inline int coeff_row(int bx, bool half) {
  return half ? bx + RTM_TMA_HALF_EXTRA : bx;
}
/* tma: bytes of one cell slot: p[n-1], q[n-1] (float) and the coefficient arrays. */
__host__ __device__ inline int cell_slot_bytes(int bx, int by, bool tilted, bool half) {
  const int coeffs = tilted ? RTM_TTI_COEFF_COUNT : RTM_VTI_COEFF_COUNT;
  return 2 * cell_array_bytes(bx, by, 4) +
         coeffs * cell_array_bytes(coeff_row(bx, half), by, half ? 2 : 4);
}

/* sync, ldgsts: the ring of p/q tiles and (tti) two D_y buffers. tma: the ring, the cell
 * slots (their slack: 1 or 2), (tti) DY_BUFFERS_TMA D_y buffers and the full and empty
 * mbarriers of all three. */
__host__ __device__ inline size_t shared_bytes_of(int bx, int by, bool tilted, bool half, int halo,
                                                  int lead, int slack) {
  const size_t slots = (size_t)(halo == RTM_HALO_TMA ? ring_slots(lead, slack) : ring_slots(lead));
  const size_t cells = (size_t)cell_slots(lead, slack);
  const size_t tiles = slots * 2 * (size_t)tile_floats(bx, by) * sizeof(float);
  const size_t dy = 2 * (size_t)dy_floats_of(bx, by) * sizeof(float);
  if (halo != RTM_HALO_TMA) return tiles + (tilted ? 2 * dy : 0);
  size_t bytes = tiles + cells * cell_slot_bytes(bx, by, tilted, half);
  if (tilted) bytes += DY_BUFFERS_TMA * 2 * (size_t)dy_floats_tma(bx, by) * sizeof(float);
  bytes = (bytes + 7) / 8 * 8;
  return bytes + 2 * (slots + cells + (tilted ? DY_BUFFERS_TMA : 0)) * sizeof(uint64_t);
}

/* Coefficient volume `volume` at `cell`: float, or binary16 widened exactly to float. */
template <typename C> __device__ __forceinline__ float coeff_at(const void *volume, long long cell);
template <> __device__ __forceinline__ float coeff_at<float>(const void *volume, long long cell) {
  return __ldg(static_cast<const float *>(volume) + cell);
}
template <> __device__ __forceinline__ float coeff_at<__half>(const void *volume, long long cell) {
  return __half2float(__ldg(static_cast<const __half *>(volume) + cell));
}

/* Rounded operations, spelled out so that nvcc neither fuses nor reorders them. */
__device__ __forceinline__ float add(float a, float b) {
  return __fadd_rn(a, b);
}
__device__ __forceinline__ float sub(float a, float b) {
  return __fsub_rn(a, b);
}
__device__ __forceinline__ float mul(float a, float b) {
  return __fmul_rn(a, b);
}
__device__ __forceinline__ float fmadd(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}

/* The reference's second() and first() along a stride of t around t[centre]: t is a tile in
 * shared memory, or a register queue (centre R, stride 1; the indices are constants once
 * inlined, so the queue stays in registers). second(): fma chain of c_k (f[+k] + f[-k])
 * from c_0 f, times 1 / h^2. */
__device__ __forceinline__ float second(const float *t, int centre, int stride, const float *c2,
                                        float inv_h2) {
  float d = mul(c2[0], t[centre]);
#pragma unroll
  for (int k = 1; k <= R; ++k)
    d = fmadd(c2[k], add(t[centre + k * stride], t[centre - k * stride]), d);
  return mul(d, inv_h2);
}

/* first(): fma chain of w1_k (g[+k] - g[-k]) from w1_1 (g[+1] - g[-1]). */
__device__ __forceinline__ float first(const float *t, int centre, int stride, const float *w1) {
  float d = mul(w1[0], sub(t[centre + stride], t[centre - stride]));
#pragma unroll
  for (int k = 2; k <= R; ++k)
    d = fmadd(w1[k - 1], sub(t[centre + k * stride], t[centre - k * stride]), d);
  return d;
}

/* x pairs (pairs_along_x): a thread's two cells side by side in x. Its centre c in a tile, a
 * D_y buffer row or a cell slot is even (R, RTM_TMA_HALF_SHIFT and every row and array of
 * even length; the padded fields' origin and strides too), so that both cells' floats come as
 * one 8-byte pair (binary16: one 4-byte pair). */
static_assert(R % 2 == 0 && RTM_TMA_HALF_SHIFT % 2 == 0, "x pairs read pairs at even centres");
constexpr int PAIR_ROW = 2 * R + 2; /* floats c - R .. c + R + 1: both cells' x stencils */
__device__ __forceinline__ void pair_row(const float *t, int c, float (&v)[PAIR_ROW]) {
  const float2 *pair = reinterpret_cast<const float2 *>(t + c - R);
#pragma unroll
  for (int k = 0; k <= R; ++k) {
    const float2 x = pair[k];
    v[2 * k] = x.x;
    v[2 * k + 1] = x.y;
  }
}
__device__ __forceinline__ float2 pair_at(const float *t, int i) {
  return *reinterpret_cast<const float2 *>(t + i);
}
/* second() and first() along x of both cells, from their pair_row. */
__device__ __forceinline__ void second_x_pair(const float (&v)[PAIR_ROW], const float *c2,
                                              float inv_h2, float (&d)[2]) {
  d[0] = second(v, R, 1, c2, inv_h2);
  d[1] = second(v, R + 1, 1, c2, inv_h2);
}
__device__ __forceinline__ void first_x_pair(const float (&v)[PAIR_ROW], const float *w1,
                                             float (&d)[2]) {
  d[0] = first(v, R, 1, w1);
  d[1] = first(v, R + 1, 1, w1);
}
/* second() and first() of both cells along a stride (y), one pair a point, in their order. */
__device__ __forceinline__ void second_pair(const float *t, int c, int stride, const float *c2,
                                            float inv_h2, float (&d)[2]) {
  const float2 m = pair_at(t, c);
  float e0 = mul(c2[0], m.x), e1 = mul(c2[0], m.y);
#pragma unroll
  for (int k = 1; k <= R; ++k) {
    const float2 u = pair_at(t, c + k * stride), l = pair_at(t, c - k * stride);
    e0 = fmadd(c2[k], add(u.x, l.x), e0);
    e1 = fmadd(c2[k], add(u.y, l.y), e1);
  }
  d[0] = mul(e0, inv_h2);
  d[1] = mul(e1, inv_h2);
}
__device__ __forceinline__ void first_pair(const float *t, int c, int stride, const float *w1,
                                           float (&d)[2]) {
  float2 u = pair_at(t, c + stride), l = pair_at(t, c - stride);
  float e0 = mul(w1[0], sub(u.x, l.x)), e1 = mul(w1[0], sub(u.y, l.y));
#pragma unroll
  for (int k = 2; k <= R; ++k) {
    u = pair_at(t, c + k * stride);
    l = pair_at(t, c - k * stride);
    e0 = fmadd(w1[k - 1], sub(u.x, l.x), e0);
    e1 = fmadd(w1[k - 1], sub(u.y, l.y), e1);
  }
  d[0] = e0;
  d[1] = e1;
}

/* The reference's leapfrog: fma(2, f, fma(-keep, f_other, rhs)), over `scale` in the layer. */
__device__ __forceinline__ float leapfrog_layer(float f, float f_other, float rhs, float keep,
                                                float scale) {
  return layer_div(fmadd(2.f, f, fmadd(-keep, f_other, rhs)), scale);
}
/* Outside the layer keep = scale = 1: fma(-1, g, rhs) is rhs - g and x / 1 is x. */
__device__ __forceinline__ float leapfrog(float f, float f_other, float rhs) {
  return fmadd(2.f, f, sub(rhs, f_other));
}

__device__ __forceinline__ void push(float (&f)[Q], float front) {
#pragma unroll
  for (int k = 0; k < Q - 1; ++k)
    f[k] = f[k + 1];
  f[Q - 1] = front;
}

__device__ __forceinline__ void wait_copies(int pending) {
  if (pending >= 2)
    cp_async_wait<2>();
  else if (pending == 1)
    cp_async_wait<1>();
  else
    cp_async_wait<0>();
}

/* Where a thread works: its (first) cell (tx, ty) of the block's tile at (ix0, iy0), inside
 * the interior or not, and the block's planes: output planes [zb0, zb0 + zblock) clipped to
 * the launch's range, loaded planes nplanes = outputs + 2R from plane zb0 - R. With x pairs
 * (cells_x 2) thread x updates cells 2 x and 2 x + 1. */
struct Place {
  int tx, ty, tid, ix0, iy0, ix, iy, zb0, nplanes;
  bool active;
};
__device__ __forceinline__ Place place_of(const TtiArgs &a, int bx, int by, int cells_x = 1) {
  Place p;
  p.tx = cells_x * (int)threadIdx.x;
  p.ty = threadIdx.y;
  p.tid = p.ty * (bx / cells_x) + (int)threadIdx.x;
  p.ix0 = blockIdx.x * bx;
  p.iy0 = blockIdx.y * by;
  p.ix = p.ix0 + p.tx;
  p.iy = p.iy0 + p.ty;
  p.active = p.ix < a.domain.nx && p.iy < a.domain.ny;
  const ZmarchPlanes planes = zmarch_planes(a.domain, blockIdx.z);
  p.zb0 = planes.zb0;
  p.nplanes = planes.nplanes;
  return p;
}

/* The register queues of a thread's column: p and q (d_zz); tti also D_x p, D_y p, D_x q,
 * D_y q (d_xz, d_yz). */
struct Queues {
  float pz[Q], qz[Q], dxp[Q], dyp[Q], dxq[Q], dyq[Q];
};

__device__ __forceinline__ void clear(Queues &z) {
#pragma unroll
  for (int k = 0; k < Q; ++k) {
    z.pz[k] = z.qz[k] = 0.f;
    z.dxp[k] = z.dyp[k] = z.dxq[k] = z.dyq[k] = 0.f;
  }
}

/* Pushes the plane of tiles tp, tq onto the queues (their new front). */
template <bool TILTED>
__device__ __forceinline__ void push_plane(Queues &z, const TtiArgs &a, const float *tp,
                                           const float *tq, int centre, int tw) {
  push(z.pz, tp[centre]);
  push(z.qz, tq[centre]);
  if (TILTED) {
    push(z.dxp, first(tp, centre, 1, a.w1[0]));
    push(z.dyp, first(tp, centre, tw, a.w1[1]));
    push(z.dxq, first(tq, centre, 1, a.w1[0]));
    push(z.dyq, first(tq, centre, tw, a.w1[1]));
  }
}

/* x pairs: push_plane's values of one field (tile t; queues f, dx, dy) for both cells. */
template <bool TILTED>
__device__ __forceinline__ void
push_field_pair(Queues (&z)[2], float (Queues::*f)[Q], float (Queues::*dx)[Q],
                float (Queues::*dy)[Q], const TtiArgs &a, const float *t, int centre, int tw) {
  float v[PAIR_ROW], d[2];
  pair_row(t, centre, v);
  push(z[0].*f, v[R]);
  push(z[1].*f, v[R + 1]);
  if (TILTED) {
    first_x_pair(v, a.w1[0], d);
    push(z[0].*dx, d[0]);
    push(z[1].*dx, d[1]);
    first_pair(t, centre, tw, a.w1[1], d);
    push(z[0].*dy, d[0]);
    push(z[1].*dy, d[1]);
  }
}
/* x pairs: push_plane of both cells (the same values). */
template <bool TILTED>
__device__ __forceinline__ void push_pair(Queues (&z)[2], const TtiArgs &a, const float *tp,
                                          const float *tq, int centre, int tw) {
  push_field_pair<TILTED>(z, &Queues::pz, &Queues::dxp, &Queues::dyp, a, tp, centre, tw);
  push_field_pair<TILTED>(z, &Queues::qz, &Queues::dxq, &Queues::dyq, a, tq, centre, tw);
}

/* The D_y buffer's halo entries: 2 x block_y x 2R (p and q, the R columns left and right
 * of the tile's own); entry e is field e / (2R by), row (e mod 2R by) / 2R, halo column
 * e mod 2R. Its place in a tile slot (q's tile tf floats after p's) and in a buffer. */
struct DyHalo {
  int entries, in_tile, in_buffer;
};
__device__ __forceinline__ void dy_halo_entry(int e, int bx, int by, int tw, int tf, int dy_floats,
                                              int &in_tile, int &in_buffer) {
  const int f = e / (2 * R * by), rest = e - f * 2 * R * by;
  const int r = rest / (2 * R), h = rest - r * 2 * R;
  const int col = h < R ? h : h + bx;
  in_tile = f * tf + (r + R) * tw + col;
  in_buffer = f * dy_floats + r * tw + col;
}

/* Writes D_y of the plane in tile slot tn (p, then q tf floats on) into a buffer of p and
 * q (q dy_floats on): the own columns from the queues (that plane sits at R + 1), the halo
 * columns from the tile, the thread's first entry precomputed in `halo`. */
__device__ __forceinline__ void write_dy(float *buffer, const Queues &z, const TtiArgs &a,
                                         const float *tn, const DyHalo &halo, int own_dy, int tid,
                                         int nthreads, int bx, int by, int tw, int tf,
                                         int dy_floats) {
  buffer[own_dy] = z.dyp[R + 1];
  buffer[dy_floats + own_dy] = z.dyq[R + 1];
  if (tid < halo.entries) buffer[halo.in_buffer] = first(tn, halo.in_tile, tw, a.w1[1]);
  for (int e = tid + nthreads; e < halo.entries; e += nthreads) { /* narrow tiles only */
    int in_tile, in_buffer;
    dy_halo_entry(e, bx, by, tw, tf, dy_floats, in_tile, in_buffer);
    buffer[in_buffer] = first(tn, in_tile, tw, a.w1[1]);
  }
}

/* The output cell's own inputs: f[n-1] of p and q, the coefficients, eta_z dt. */
struct CellIn {
  float pp, qp, vpx2, vpz2, vpn2, vsz2, nx, ny, nz;
};

/* The new p and q of the output cell, whose tiles (plane c) are tp, tq: the reference's
 * expressions in its order. p_xy, q_xy (tti) come from the D_y buffer; d = eta dt. */
template <bool TILTED>
__device__ __forceinline__ void
update_from(const TtiArgs &a, const Queues &z, float p_xx, float q_xx, float p_yy, float q_yy,
            float p_xy, float q_xy, const CellIn &in, float d, float &po, float &qo) {
  const float p_zz = second(z.pz, R, 1, a.c2, a.inv_h2[2]);
  const float q_zz = second(z.qz, R, 1, a.c2, a.inv_h2[2]);
  float hz_p = p_zz, hz_q = q_zz, hxy_p = add(p_xx, p_yy), hxy_q = add(q_xx, q_yy);
  if (TILTED) {
    const float p_xz = first(z.dxp, R, 1, a.w1[2]);
    const float q_xz = first(z.dxq, R, 1, a.w1[2]);
    const float p_yz = first(z.dyp, R, 1, a.w1[2]);
    const float q_yz = first(z.dyq, R, 1, a.w1[2]);
    const float a_xx = mul(in.nx, in.nx), a_yy = mul(in.ny, in.ny), a_zz = mul(in.nz, in.nz);
    const float a_xy = mul(2.f, mul(in.nx, in.ny)), a_yz = mul(2.f, mul(in.ny, in.nz));
    const float a_xz = mul(2.f, mul(in.nx, in.nz));
    hz_p = fmadd(a_xz, p_xz,
                 fmadd(a_yz, p_yz,
                       fmadd(a_xy, p_xy, fmadd(a_zz, p_zz, fmadd(a_yy, p_yy, mul(a_xx, p_xx))))));
    hz_q = fmadd(a_xz, q_xz,
                 fmadd(a_yz, q_yz,
                       fmadd(a_xy, q_xy, fmadd(a_zz, q_zz, fmadd(a_yy, q_yy, mul(a_xx, q_xx))))));
    hxy_p = sub(add(hxy_p, p_zz), hz_p);
    hxy_q = sub(add(hxy_q, q_zz), hz_q);
  }
  const float vz_hz_q = mul(in.vpz2, hz_q);
  const float rhs_p = fmadd(in.vpx2, hxy_p, fmadd(in.vsz2, sub(hz_p, hz_q), vz_hz_q));
  const float rhs_q = fmadd(in.vpn2, hxy_p, fmadd(-in.vsz2, sub(hxy_p, hxy_q), vz_hz_q));
  if (d > 0.f) {
    const float sd = a.damping_sign * d;
    const float keep = sub(1.f, sd), scale = add(1.f, sd);
    po = leapfrog_layer(z.pz[R], in.pp, rhs_p, keep, scale);
    qo = leapfrog_layer(z.qz[R], in.qp, rhs_q, keep, scale);
  } else {
    po = leapfrog(z.pz[R], in.pp, rhs_p);
    qo = leapfrog(z.qz[R], in.qp, rhs_q);
  }
}
template <bool TILTED>
__device__ __forceinline__ void
update_cell(const TtiArgs &a, const Queues &z, const float *tp, const float *tq, int centre, int tw,
            float p_xy, float q_xy, const CellIn &in, float d, float &po, float &qo) {
  const float p_xx = second(tp, centre, 1, a.c2, a.inv_h2[0]);
  const float q_xx = second(tq, centre, 1, a.c2, a.inv_h2[0]);
  const float p_yy = second(tp, centre, tw, a.c2, a.inv_h2[1]);
  const float q_yy = second(tq, centre, tw, a.c2, a.inv_h2[1]);
  update_from<TILTED>(a, z, p_xx, q_xx, p_yy, q_yy, p_xy, q_xy, in, d, po, qo);
}
/* x pairs: update_cell of both cells, d their eta dt. */
template <bool TILTED>
__device__ __forceinline__ void
update_pair(const TtiArgs &a, const Queues (&z)[2], const float *tp, const float *tq, int centre,
            int tw, const float (&p_xy)[2], const float (&q_xy)[2], const CellIn (&in)[2],
            const float (&d)[2], float (&po)[2], float (&qo)[2]) {
  float v[PAIR_ROW], p_xx[2], q_xx[2], p_yy[2], q_yy[2];
  pair_row(tp, centre, v);
  second_x_pair(v, a.c2, a.inv_h2[0], p_xx);
  pair_row(tq, centre, v);
  second_x_pair(v, a.c2, a.inv_h2[0], q_xx);
  second_pair(tp, centre, tw, a.c2, a.inv_h2[1], p_yy);
  second_pair(tq, centre, tw, a.c2, a.inv_h2[1], q_yy);
#pragma unroll
  for (int r = 0; r < 2; ++r)
    update_from<TILTED>(a, z[r], p_xx[r], q_xx[r], p_yy[r], q_yy[r], p_xy[r], q_xy[r], in[r], d[r],
                        po[r], qo[r]);
}

/* sync, ldgsts: how a block's threads copy the p and q tiles of a loaded plane (tw x th
 * floats each: the block's tile with its R-wide halo) into a ring slot, in 16-byte chunks,
 * chunk c by thread c % nthreads, the thread's first chunk precomputed (most shapes have no
 * other). The kernel computes the fields in its own body: computed in a helper, they change
 * the generated code. */
struct PlaneCopy {
  long long tile_origin; /* the tile's first float in loaded plane 0 */
  long long first_global;
  int chunks_per_row, chunks, first_smem;
  bool first_valid;
};

/* Copies (ldgsts) or loads and stores (sync) of loaded plane j into ring slot s. */
template <int HALO>
__device__ __forceinline__ void load_plane(const TtiArgs &a, const Place &place,
                                           const PlaneCopy &pc, float *smem, int tf, int tw,
                                           int nthreads, int j, int s) {
  float *tp = smem + s * 2 * tf, *tq = tp + tf;
  const long long plane = pc.tile_origin + (long long)j * a.domain.stride_z;
  const int tid = place.tid;
  if (j < place.nplanes) {
    if (HALO == RTM_HALO_LDGSTS) {
      if (tid < pc.chunks) {
        cp_async16(tp + pc.first_smem, a.p + plane + pc.first_global, pc.first_valid);
        cp_async16(tq + pc.first_smem, a.q + plane + pc.first_global, pc.first_valid);
      }
    } else if (tid < pc.chunks) {
      float4 vp = make_float4(0.f, 0.f, 0.f, 0.f), vq = vp;
      if (pc.first_valid) {
        vp = __ldg(reinterpret_cast<const float4 *>(a.p + plane + pc.first_global));
        vq = __ldg(reinterpret_cast<const float4 *>(a.q + plane + pc.first_global));
      }
      *reinterpret_cast<float4 *>(tp + pc.first_smem) = vp;
      *reinterpret_cast<float4 *>(tq + pc.first_smem) = vq;
    }
    for (int c = tid + nthreads; c < pc.chunks; c += nthreads) { /* small tiles only */
      const int r = c / pc.chunks_per_row, col = 4 * (c - r * pc.chunks_per_row);
      const bool valid = place.ix0 + col < a.domain.row_floats && place.iy0 + r < a.domain.rows;
      const long long at = plane + (long long)r * a.domain.stride_y + col;
      if (HALO == RTM_HALO_LDGSTS) {
        cp_async16(tp + r * tw + col, a.p + at, valid);
        cp_async16(tq + r * tw + col, a.q + at, valid);
      } else {
        float4 vp = make_float4(0.f, 0.f, 0.f, 0.f), vq = vp;
        if (valid) {
          vp = __ldg(reinterpret_cast<const float4 *>(a.p + at));
          vq = __ldg(reinterpret_cast<const float4 *>(a.q + at));
        }
        *reinterpret_cast<float4 *>(tp + r * tw + col) = vp;
        *reinterpret_cast<float4 *>(tq + r * tw + col) = vq;
      }
    }
  }
  if (HALO == RTM_HALO_LDGSTS) cp_async_commit(); /* every thread, every plane */
}

/* sync, ldgsts: the output cell's own inputs but eta_z, from global memory. */
template <bool TILTED, typename C>
__device__ __forceinline__ void load_cell_in(const TtiArgs &a, long long cell, CellIn &in) {
  in.pp = a.p_other[cell];
  in.qp = a.q_other[cell];
  in.vpx2 = coeff_at<C>(a.coeff[RTM_TTI_VPX2], cell);
  in.vpz2 = coeff_at<C>(a.coeff[RTM_TTI_VPZ2], cell);
  in.vpn2 = coeff_at<C>(a.coeff[RTM_TTI_VPN2], cell);
  in.vsz2 = coeff_at<C>(a.coeff[RTM_TTI_VSZ2], cell);
  if (TILTED) {
    in.nx = coeff_at<C>(a.coeff[RTM_TTI_NX], cell);
    in.ny = coeff_at<C>(a.coeff[RTM_TTI_NY], cell);
    in.nz = coeff_at<C>(a.coeff[RTM_TTI_NZ], cell);
  }
}

/* d_xy = D_x(D_y f) of p and q at the thread's cell, from a D_y buffer (q dy_floats on). */
__device__ __forceinline__ void mixed_xy(const TtiArgs &a, const float *buffer, int own_dy,
                                         int dy_floats, float &p_xy, float &q_xy) {
  p_xy = first(buffer, own_dy, 1, a.w1[0]);
  q_xy = first(buffer + dy_floats, own_dy, 1, a.w1[0]);
}

/* sync, ldgsts: the ring slots of planes i + lead (load), i (front), i - R + 1 (next) and
 * i - R (out) at iteration i; advance() moves them on to iteration i + 1. */
struct RingSlots {
  int load, front, next, out;
};
__device__ __forceinline__ void advance(RingSlots &ring, int slots) {
  ring.load = ring.load + 1 == slots ? 0 : ring.load + 1;
  ring.next = ring.next + 1 == slots ? 0 : ring.next + 1;
  ring.out = ring.out + 1 == slots ? 0 : ring.out + 1;
  ring.front = ring.front + 1 == slots ? 0 : ring.front + 1;
}

/* sync and ldgsts. Block (bx, by, bz): tile of blockDim.x x blockDim.y cells at (bx BX,
 * by BY), output planes [zb0, zb1). Loaded planes are numbered j = 0 .. zb1 - zb0 + 2R - 1
 * from plane zb0 - R; iteration i pushes plane i onto the queues and, once they are full
 * (i >= 2R), updates plane c = zb0 + i - 2R (loaded plane i - R). BXC: the tile width when
 * compiled in (blockDim.x equals it), 0 for any width. */
template <bool TILTED, typename C, int HALO, int BXC, bool COPY>
__global__ void __launch_bounds__(MAX_THREADS)
    tti_zmarch(const __grid_constant__ TtiArgs a, const __grid_constant__ TtiMaps maps) {
  extern __shared__ __align__(128) float smem[];
  const int bx = BXC > 0 ? BXC : (int)blockDim.x, by = blockDim.y;
  const int tw = bx + 2 * R, th = by + 2 * R;
  const int tf = tile_floats(bx, by), dy_floats = dy_floats_of(bx, by);
  const int slots = a.slots, lead = a.lead;
  float *dy_buffer = smem + slots * 2 * tf; /* tti: [2 buffers][p, q][by][tw] */
  const Place place = place_of(a, bx, by);
  const int tx = place.tx, ty = place.ty, tid = place.tid, nthreads = bx * by;

  PlaneCopy copy;
  /* Padded x = ix0 is interior ix0 - R, padded row iy0 is interior iy0 - R; loaded plane j
   * is padded plane zb0 + j. */
  copy.tile_origin = (long long)place.zb0 * a.domain.stride_z +
                     (long long)place.iy0 * a.domain.stride_y + place.ix0;
  copy.chunks_per_row = tw / 4;
  copy.chunks = copy.chunks_per_row * th;
  const int centre = (ty + R) * tw + tx + R;
  const int own_dy = ty * tw + tx + R; /* the cell in a D_y buffer */
  const int first_row = tid / copy.chunks_per_row;
  const int first_col = 4 * (tid - first_row * copy.chunks_per_row);
  copy.first_valid = tid < copy.chunks && place.ix0 + first_col < a.domain.row_floats &&
                     place.iy0 + first_row < a.domain.rows;
  copy.first_smem = first_row * tw + first_col;
  copy.first_global = (long long)first_row * a.domain.stride_y + first_col;
  DyHalo halo = {2 * by * 2 * R, 0, 0};
  if (TILTED && tid < halo.entries)
    dy_halo_entry(tid, bx, by, tw, tf, dy_floats, halo.in_tile, halo.in_buffer);

  const long long column = a.domain.origin + (long long)place.iy * a.domain.stride_y + place.ix;
  const float exy = place.active ? a.domain.eta_x[place.ix] + a.domain.eta_y[place.iy] : 0.f;
  Queues z;
  clear(z);
  RingSlots ring = {lead, 0, slots - R + 1, slots - R};
  for (int j = 0; j < lead; ++j)
    load_plane<HALO>(a, place, copy, smem, tf, tw, nthreads, j, j);

  for (int i = 0; i < place.nplanes; ++i) {
    load_plane<HALO>(a, place, copy, smem, tf, tw, nthreads, i + lead, ring.load);

    /* Plane c's own values, loaded before the wait so that their latency overlaps it. */
    const int c = place.zb0 + i - 2 * R;
    const bool out = i >= 2 * R && place.active;
    CellIn in = {};
    float ez = 0.f;
    long long cell = 0;
    if (out) {
      cell = column + (long long)c * a.domain.stride_z;
      load_cell_in<TILTED, C>(a, cell, in);
      ez = __ldg(a.domain.eta_z + a.domain.z_offset + c);
    }

    if (HALO == RTM_HALO_LDGSTS) wait_copies(lead); /* plane i's group; later ones may be empty */
    __syncthreads();

    {
      const float *tp = smem + ring.front * 2 * tf;
      push_plane<TILTED>(z, a, tp, tp + tf, centre, tw);
    }
    if (TILTED && i >= 2 * R - 1) /* D_y of plane c + 1, read at iteration i + 1 */
      write_dy(dy_buffer + ((i + 1) & 1) * 2 * dy_floats, z, a, smem + ring.next * 2 * tf, halo,
               own_dy, tid, nthreads, bx, by, tw, tf, dy_floats);

    if (out) {
      const float *tp = smem + ring.out * 2 * tf;
      float p_xy = 0.f, q_xy = 0.f;
      if (TILTED) mixed_xy(a, dy_buffer + (i & 1) * 2 * dy_floats, own_dy, dy_floats, p_xy, q_xy);
      float po, qo;
      update_cell<TILTED>(a, z, tp, tp + tf, centre, tw, p_xy, q_xy, in, add(exy, ez), po, qo);
      a.p_other[cell] = po;
      a.q_other[cell] = qo;
      if (COPY) *copy_at(a, c, place.iy, place.ix) = po;
    }
    advance(ring, slots);
  }
}

/* Own-cell array k of a cell slot at this thread's cell: float, or binary16 widened. */
template <typename C>
__device__ __forceinline__ float cell_value(const unsigned char *array, int tid) {
  return reinterpret_cast<const float *>(array)[tid];
}
template <>
__device__ __forceinline__ float cell_value<__half>(const unsigned char *array, int tid) {
  return __half2float(reinterpret_cast<const __half *>(array)[tid]);
}

/* x pairs: the own-cell arrays of cells i and i + 1 (i even), widened to float. */
template <typename C>
__device__ __forceinline__ float2 cell_pair(const unsigned char *array, int i) {
  return *reinterpret_cast<const float2 *>(array + i * (int)sizeof(float));
}
template <> __device__ __forceinline__ float2 cell_pair<__half>(const unsigned char *array, int i) {
  return __half22float2(*reinterpret_cast<const __half2 *>(array + i * (int)sizeof(__half)));
}

/* tma: compiled-in widths are whole warps of one row, with D_y buffers private to each warp
 * ([warp][CELLS][WARP_DY_ROW]: 32 cells of each of the warp's rows and their 2R halo
 * columns; with x pairs [warp][WARP_DY_ROW_X]: the warp's row of 64 cells and its halo). */
template <int BXC> __host__ __device__ constexpr bool warp_dy() {
  return BXC > 0 && BXC % 32 == 0;
}
constexpr int WARP_DY_ROW = 32 + 2 * R, WARP_DY_ROW_X = 64 + 2 * R;
/* Two cells a thread side by side in x (x pairs): at width 64, cells 2 tx and 2 tx + 1 of row
 * ty, a warp one row of the tile (blocks of 32 x block_y threads); at width 32 the two cells
 * are rows 2 ty and 2 ty + 1 of column tx (a warp there would span two rows). Along x the
 * tile's x stencils, the D_y buffer's and the own cells' inputs come as 8-byte pairs and the
 * outputs go as pairs: 1 439 -> 1 297 static instructions of the tti fp32 64-wide 2-stage
 * instance; on an H100 at 512^3, kernel.* auto, tti fp32 +3.0%, fp16 +5.7%, vti level to
 * +1.8% against two rows (run/results/kernels.md). The launcher shapes
 * the block by the same rule. */
__host__ __device__ constexpr bool pairs_along_x(int bx, int cells) {
  return bx == 64 && cells == 2;
}

/* tti_zmarch_tma's block: its tile (bx x by cells at ix0, iy0, with halo tw x th; by counts
 * cells: CELLS a thread along y, or blockDim.y with x pairs), planes, and shared memory: the ring
 * of ring_slots(LEAD, SLACK) p/q tile pairs (tf floats each), the cell_slots(LEAD, SLACK) cell
 * slots (cell_slot bytes: p[n-1] and q[n-1], cell_float_bytes each, then the coefficient arrays,
 * cell_coeff_bytes each), tti's DY_BUFFERS_TMA D_y buffers (dy_floats per field) and the full and
 * empty mbarriers of all three. The kernel fills it in its own body: filled in a helper, the
 * generic-width instances' code changes. */
struct TmaBlock {
  float *ring, *dy_buffer;
  unsigned char *cells;
  uint64_t *full, *empty, *cell_full, *cell_empty, *dy_full, *dy_empty;
  int bx, by, tw, th, tf, dy_floats, cell_float_bytes, cell_coeff_bytes, cell_slot, nthreads;
  int ix0, iy0, zb0, nplanes;
};

/* A thread of it: its CELLS cells, rows CELLS ty + r of column tx (r = 0 .. CELLS - 1), or
 * with x pairs columns 2 tx + r of row ty, given for r = 0 (each next row one tile row, one
 * cell row and one D_y row further; each next column one float further): lane in its
 * warp, centre in a tile, own in a cell slot's float arrays, own_coeff in a coefficient
 * array, own_dy in a D_y buffer, column in a padded plane; the D_y halo entry it computes if
 * any; per cell eta_x + eta_y dt and whether the cell is inside; whether it produces ring or
 * cell copies. */
template <int CELLS> struct TmaThread {
  int tid, lane, centre, own, own_coeff, own_dy, ix, iy;
  DyHalo halo;
  long long column;
  float exy[CELLS];
  bool active[CELLS], ring_producer, cell_producer;
};

/* The thread's part. Its loads of eta dt come before the barriers are set up. */
template <bool TILTED, typename C, int BXC, int CELLS>
__device__ __forceinline__ TmaThread<CELLS> tma_thread(const TtiArgs &a, const TmaBlock &b,
                                                       const Place &place) {
  constexpr bool HALF = sizeof(C) == 2, WARP_DY = warp_dy<BXC>(), XP = pairs_along_x(BXC, CELLS);
  const int tx = place.tx, row = XP ? place.ty : CELLS * place.ty, tid = place.tid;
  TmaThread<CELLS> t;
  t.tid = tid;
  t.centre = (row + R) * b.tw + tx + R;
  t.own = row * b.bx + tx;
  t.own_coeff = HALF ? row * coeff_row(b.bx, true) + tx + RTM_TMA_HALF_SHIFT : t.own;
  /* D_y: warp-private buffers (WARP_DY) or block-wide ones; this thread's own entry and
   * the halo entry it computes, if any (WARP_DY: lane e computes row e / 4R's entry e % 4R;
   * x pairs: the warp's one row, lanes 0 .. 4R - 1). */
  t.lane = tid & 31;
  t.own_dy = XP        ? (tid >> 5) * WARP_DY_ROW_X + tx + R
             : WARP_DY ? (tid >> 5) * CELLS * WARP_DY_ROW + t.lane + R
                       : row * b.tw + tx + R;
  t.halo = {XP ? 4 * R : WARP_DY ? CELLS * 4 * R : 2 * b.by * 2 * R, 0, 0};
  if (TILTED && XP && t.lane < t.halo.entries) {
    const int f = t.lane / (2 * R), h = t.lane - f * 2 * R, col = h < R ? h : h + BXC;
    t.halo.in_tile = f * b.tf + (row + R) * b.tw + col;
    t.halo.in_buffer = f * b.dy_floats + (tid >> 5) * WARP_DY_ROW_X + col;
  } else if (TILTED && WARP_DY && t.lane < t.halo.entries) {
    const int r = t.lane / (4 * R), e = t.lane - r * 4 * R;
    const int f = e / (2 * R), h = e - f * 2 * R, col = h < R ? h : h + 32;
    t.halo.in_tile = f * b.tf + (row + r + R) * b.tw + (tx - t.lane) + col;
    t.halo.in_buffer = f * b.dy_floats + ((tid >> 5) * CELLS + r) * WARP_DY_ROW + col;
  } else if (TILTED && !WARP_DY && tid < t.halo.entries) {
    dy_halo_entry(tid, b.bx, b.by, b.tw, b.tf, b.dy_floats, t.halo.in_tile, t.halo.in_buffer);
  }
  const int ix = b.ix0 + tx, iy = b.iy0 + row;
  t.ix = ix;
  t.iy = iy;
  t.column = a.domain.origin + (long long)iy * a.domain.stride_y + ix;
#pragma unroll
  for (int r = 0; r < CELLS; ++r) {
    const int x = XP ? ix + r : ix, y = XP ? iy : iy + r;
    t.active[r] = x < a.domain.nx && y < a.domain.ny;
    t.exy[r] = t.active[r] ? a.domain.eta_x[x] + a.domain.eta_y[y] : 0.f;
  }
  t.ring_producer = tid == 0;
  t.cell_producer = tid == (b.nthreads > 32 ? 32 : 0);
  return t;
}

/* tma: the barriers' initial counts (thread 0). */
template <bool TILTED, int BXC, int LEAD, int SLACK>
__device__ __forceinline__ void tma_init_barriers(const TmaBlock &b) {
  mbar_init_slots(b.full, b.empty, ring_slots(LEAD, SLACK), 1, b.nthreads);
  mbar_init_slots(b.cell_full, b.cell_empty, cell_slots(LEAD, SLACK), 1, b.nthreads);
  if (TILTED && !warp_dy<BXC>()) /* vti has no D_y buffers, and no room for their barriers */
    mbar_init_slots(b.dy_full, b.dy_empty, DY_BUFFERS_TMA, b.nthreads, b.nthreads);
  mbar_fence_init();
}

/* Producers of plane j: the ring (thread 0) and, from j = 2R on, the cells of output
 * j - 2R (thread 32). The maps' coordinates are padded ones (local z + R). */
template <bool TILTED, typename C, int LEAD, int SLACK, int CELLS>
__device__ __forceinline__ void tma_produce(const TmaBlock &b, const TmaThread<CELLS> &t,
                                            const TtiMaps &maps, int j) {
  constexpr int SLOTS = ring_slots(LEAD, SLACK), CELL_SLOTS = cell_slots(LEAD, SLACK);
  constexpr int COEFFS = TILTED ? RTM_TTI_COEFF_COUNT : RTM_VTI_COEFF_COUNT;
  constexpr bool HALF = sizeof(C) == 2;
  if (j >= b.nplanes) return;
  if (t.ring_producer) {
    const int s = j % SLOTS;
    if (j >= SLOTS) mbar_wait(&b.empty[s], (uint32_t)(j / SLOTS - 1) & 1u);
    float *tp = b.ring + s * 2 * b.tf;
    mbar_expect_tx(&b.full[s], 2u * (uint32_t)(b.tw * b.th) * (uint32_t)sizeof(float));
    tma_load_3d(tp, &maps.p, b.ix0, b.iy0, b.zb0 + j, &b.full[s]);
    tma_load_3d(tp + b.tf, &maps.q, b.ix0, b.iy0, b.zb0 + j, &b.full[s]);
  }
  const int o = j - 2 * R;
  if (!t.cell_producer || o < 0) return;
  const int s2 = o % CELL_SLOTS;
  if (o >= CELL_SLOTS) mbar_wait(&b.cell_empty[s2], (uint32_t)(o / CELL_SLOTS - 1) & 1u);
  unsigned char *slot = b.cells + s2 * b.cell_slot;
  const uint32_t own = (uint32_t)(b.bx * b.by),
                 coeff_box = (uint32_t)(coeff_row(b.bx, HALF) * b.by);
  mbar_expect_tx(&b.cell_full[s2], own * 2u * 4u + coeff_box * (uint32_t)(COEFFS * sizeof(C)));
  const int x = b.ix0 + R, y = b.iy0 + R, zc = b.zb0 + o + R;
  tma_load_3d(slot, &maps.p_other, x, y, zc, &b.cell_full[s2]);
  tma_load_3d(slot + b.cell_float_bytes, &maps.q_other, x, y, zc, &b.cell_full[s2]);
  const int coeff_x = HALF ? x - RTM_TMA_HALF_SHIFT : x;
#pragma unroll
  for (int k = 0; k < COEFFS; ++k)
    tma_load_3d(slot + 2 * b.cell_float_bytes + k * b.cell_coeff_bytes, &maps.coeff[k], coeff_x, y,
                zc, &b.cell_full[s2]);
}

/* tti, iteration i: D_y of plane c + 1 (output o + 1), written into buffer (o + 1) % DYB:
 * the own columns from the queues (that plane sits at R + 1), the halo columns from the
 * tile, by the warp's lanes (WARP_DY: its rows' 2R halo columns of p and q, a neighbour
 * warp's cells included), or block-wide once the buffer's last readers released it. */
template <int BXC, int LEAD, int SLACK, int CELLS>
__device__ __forceinline__ void tma_write_dy(const TtiArgs &a, const TmaBlock &b,
                                             const TmaThread<CELLS> &t, const Queues (&z)[CELLS],
                                             int i) {
  constexpr int SLOTS = ring_slots(LEAD, SLACK), DYB = DY_BUFFERS_TMA;
  const int k = i - 2 * R + 1, buffer = k % DYB;
  const float *tn = b.ring + ((i - R + 1) % SLOTS) * 2 * b.tf;
  float *dy = b.dy_buffer + buffer * 2 * b.dy_floats;
  if (warp_dy<BXC>()) { /* x pairs too: width 64 */
    if (pairs_along_x(BXC, CELLS)) {
      *reinterpret_cast<float2 *>(dy + t.own_dy) = make_float2(z[0].dyp[R + 1], z[1].dyp[R + 1]);
      *reinterpret_cast<float2 *>(dy + b.dy_floats + t.own_dy) =
          make_float2(z[0].dyq[R + 1], z[1].dyq[R + 1]);
    } else {
#pragma unroll
      for (int r = 0; r < CELLS; ++r) {
        dy[t.own_dy + r * WARP_DY_ROW] = z[r].dyp[R + 1];
        dy[b.dy_floats + t.own_dy + r * WARP_DY_ROW] = z[r].dyq[R + 1];
      }
    }
    if (t.lane < t.halo.entries) dy[t.halo.in_buffer] = first(tn, t.halo.in_tile, b.tw, a.w1[1]);
  } else {
    if (k >= DYB) mbar_wait(&b.dy_empty[buffer], (uint32_t)(k / DYB - 1) & 1u);
    write_dy(dy, z[0], a, tn, t.halo, t.own_dy, t.tid, b.nthreads, b.bx, b.by, b.tw, b.tf,
             b.dy_floats);
    mbar_arrive(&b.dy_full[buffer]);
  }
}

/* The output o's own inputs of the thread's CELLS cells from its cell slot (waited for, then
 * released); x pairs read each array's two cells as one pair. */
template <bool TILTED, typename C, int BXC, int LEAD, int SLACK, int CELLS>
__device__ __forceinline__ void tma_cell_in(const TmaBlock &b, const TmaThread<CELLS> &t, int o,
                                            CellIn (&in)[CELLS]) {
  constexpr int CELL_SLOTS = cell_slots(LEAD, SLACK);
  const int s2 = o % CELL_SLOTS;
  const int row = coeff_row(b.bx, sizeof(C) == 2); /* cells per row of a coefficient array */
  mbar_wait(&b.cell_full[s2], (uint32_t)(o / CELL_SLOTS) & 1u);
  const unsigned char *slot = b.cells + s2 * b.cell_slot;
  const unsigned char *coeff = slot + 2 * b.cell_float_bytes;
  const int array = b.cell_coeff_bytes; /* bytes of one coefficient array */
  if constexpr (pairs_along_x(BXC, CELLS)) {
    const int own = t.own, oc = t.own_coeff;
    const float2 pp = cell_pair<float>(slot, own),
                 qp = cell_pair<float>(slot + b.cell_float_bytes, own);
    const float2 vpx2 = cell_pair<C>(coeff + RTM_TTI_VPX2 * array, oc);
    const float2 vpz2 = cell_pair<C>(coeff + RTM_TTI_VPZ2 * array, oc);
    const float2 vpn2 = cell_pair<C>(coeff + RTM_TTI_VPN2 * array, oc);
    const float2 vsz2 = cell_pair<C>(coeff + RTM_TTI_VSZ2 * array, oc);
    float2 nx = {}, ny = {}, nz = {};
    if (TILTED) {
      nx = cell_pair<C>(coeff + RTM_TTI_NX * array, oc);
      ny = cell_pair<C>(coeff + RTM_TTI_NY * array, oc);
      nz = cell_pair<C>(coeff + RTM_TTI_NZ * array, oc);
    }
    in[0] = CellIn{pp.x, qp.x, vpx2.x, vpz2.x, vpn2.x, vsz2.x, nx.x, ny.x, nz.x};
    in[1] = CellIn{pp.y, qp.y, vpx2.y, vpz2.y, vpn2.y, vsz2.y, nx.y, ny.y, nz.y};
  } else {
#pragma unroll
    for (int r = 0; r < CELLS; ++r) {
      const int own = t.own + r * b.bx, own_coeff = t.own_coeff + r * row;
      in[r] = CellIn{};
      in[r].pp = cell_value<float>(slot, own);
      in[r].qp = cell_value<float>(slot + b.cell_float_bytes, own);
      in[r].vpx2 = cell_value<C>(coeff + RTM_TTI_VPX2 * array, own_coeff);
      in[r].vpz2 = cell_value<C>(coeff + RTM_TTI_VPZ2 * array, own_coeff);
      in[r].vpn2 = cell_value<C>(coeff + RTM_TTI_VPN2 * array, own_coeff);
      in[r].vsz2 = cell_value<C>(coeff + RTM_TTI_VSZ2 * array, own_coeff);
      if (TILTED) {
        in[r].nx = cell_value<C>(coeff + RTM_TTI_NX * array, own_coeff);
        in[r].ny = cell_value<C>(coeff + RTM_TTI_NY * array, own_coeff);
        in[r].nz = cell_value<C>(coeff + RTM_TTI_NZ * array, own_coeff);
      }
    }
  }
  mbar_arrive(&b.cell_empty[s2]);
}

/* tti: d_xy of output o at the thread's CELLS cells from D_y buffer o % DYB (block-wide ones
 * waited for, then released). */
template <int BXC, int CELLS>
__device__ __forceinline__ void tma_mixed_xy(const TtiArgs &a, const TmaBlock &b,
                                             const TmaThread<CELLS> &t, int o, float (&p_xy)[CELLS],
                                             float (&q_xy)[CELLS]) {
  constexpr int DYB = DY_BUFFERS_TMA;
  const int buffer = o % DYB;
  if (!warp_dy<BXC>()) mbar_wait(&b.dy_full[buffer], (uint32_t)(o / DYB) & 1u);
  if constexpr (pairs_along_x(BXC, CELLS)) {
    const float *dy = b.dy_buffer + buffer * 2 * b.dy_floats;
    float v[PAIR_ROW];
    pair_row(dy, t.own_dy, v);
    first_x_pair(v, a.w1[0], p_xy);
    pair_row(dy + b.dy_floats, t.own_dy, v);
    first_x_pair(v, a.w1[0], q_xy);
  } else {
#pragma unroll
    for (int r = 0; r < CELLS; ++r)
      mixed_xy(a, b.dy_buffer + buffer * 2 * b.dy_floats, t.own_dy + r * WARP_DY_ROW, b.dy_floats,
               p_xy[r], q_xy[r]);
  }
  if (!warp_dy<BXC>()) mbar_arrive(&b.dy_empty[buffer]);
}

/* tma: a thread's next output, moved on a plane after each: its (first) cell in the padded
 * fields and its plane's eta_z dt. Kept from plane to plane instead of formed from the plane
 * index, which took 64-bit products and, at 168 registers, the block's indices formed again
 * each iteration: tti fp16 430 -> 420 instructions a cell, +2% on an H100
 * (run/results/kernels.md). */
struct TmaOut {
  long long cell;
  const float *eta_z;
};

/* Iteration i of a thread: its copies for plane i + LEAD if it produces, the queues' new
 * front (plane i), tti's D_y of plane c + 1, and the update of plane c = zb0 + i - 2R
 * (output o = i - 2R, at `out`, which then moves on) once the queues are full; then plane
 * i - R's slot is released. */
template <bool TILTED, typename C, int BXC, int LEAD, int SLACK, bool COPY, int CELLS>
__device__ __forceinline__ void tma_iteration(const TtiArgs &a, const TtiMaps &maps,
                                              const TmaBlock &b, const TmaThread<CELLS> &t,
                                              Queues (&z)[CELLS], TmaOut &out, int i) {
  constexpr int SLOTS = ring_slots(LEAD, SLACK);
  if (t.ring_producer || t.cell_producer) tma_produce<TILTED, C, LEAD, SLACK>(b, t, maps, i + LEAD);
  const int o = i - 2 * R;
  const float ez = o >= 0 ? __ldg(out.eta_z) : 0.f;

  mbar_wait(&b.full[i % SLOTS], (uint32_t)(i / SLOTS) & 1u);
  {
    const float *tp = b.ring + (i % SLOTS) * 2 * b.tf;
    if constexpr (pairs_along_x(BXC, CELLS)) {
      push_pair<TILTED>(z, a, tp, tp + b.tf, t.centre, b.tw);
    } else {
#pragma unroll
      for (int r = 0; r < CELLS; ++r)
        push_plane<TILTED>(z[r], a, tp, tp + b.tf, t.centre + r * b.tw, b.tw);
    }
  }
  if (TILTED && i >= 2 * R - 1) tma_write_dy<BXC, LEAD, SLACK>(a, b, t, z, i);
  /* WARP_DY: buffer o % DYB, written at iteration i - 1, is read below; buffer (o + 1) %
   * DYB, written above, was last read at iteration i - 2: one __syncwarp per iteration
   * orders both. */
  if (TILTED && warp_dy<BXC>()) __syncwarp();

  if (o >= 0) {
    CellIn in[CELLS];
    tma_cell_in<TILTED, C, BXC, LEAD, SLACK>(b, t, o, in);
    float p_xy[CELLS] = {}, q_xy[CELLS] = {};
    if (TILTED) tma_mixed_xy<BXC>(a, b, t, o, p_xy, q_xy);
    const float *tp = b.ring + ((i - R) % SLOTS) * 2 * b.tf;
    if constexpr (pairs_along_x(BXC, CELLS)) {
      const float d[2] = {add(t.exy[0], ez), add(t.exy[1], ez)};
      float po[2], qo[2];
      update_pair<TILTED>(a, z, tp, tp + b.tf, t.centre, b.tw, p_xy, q_xy, in, d, po, qo);
      const long long cell = out.cell; /* even: 8-byte pairs */
      if (t.active[1]) {
        *reinterpret_cast<float2 *>(a.p_other + cell) = make_float2(po[0], po[1]);
        *reinterpret_cast<float2 *>(a.q_other + cell) = make_float2(qo[0], qo[1]);
      } else if (t.active[0]) {
        a.p_other[cell] = po[0];
        a.q_other[cell] = qo[0];
      }
      if (COPY && t.active[0]) { /* one 8-byte pair where the dense rows keep it aligned */
        float *copy = copy_at(a, b.zb0 + o, t.iy, t.ix);
        if (t.active[1] && a.domain.nx % 2 == 0) {
          *reinterpret_cast<float2 *>(copy) = make_float2(po[0], po[1]);
        } else {
          copy[0] = po[0];
          if (t.active[1]) copy[1] = po[1];
        }
      }
    } else {
#pragma unroll
      for (int r = 0; r < CELLS; ++r) {
        float po, qo;
        update_cell<TILTED>(a, z[r], tp, tp + b.tf, t.centre + r * b.tw, b.tw, p_xy[r], q_xy[r],
                            in[r], add(t.exy[r], ez), po, qo);
        if (t.active[r]) {
          const long long cell = out.cell + (long long)r * a.domain.stride_y;
          a.p_other[cell] = po;
          a.q_other[cell] = qo;
          if (COPY) *copy_at(a, b.zb0 + o, t.iy + r, t.ix) = po;
        }
      }
    }
    out.cell += a.domain.stride_z;
    ++out.eta_z;
  }
  if (i >= R) mbar_arrive(&b.empty[(i - R) % SLOTS]); /* plane i - R: last read */
}

/* tma (sm_90): the same iterations as tti_zmarch, every input through the tensor memory
 * accelerator and no block-wide barrier. Two threads also produce, in different warps so
 * that neither warp carries all of it: at iteration i thread 0 copies plane i + LEAD of p
 * and q (tiles with halo) into the ring, and thread 32 (0 in a one-warp block), for the
 * output of that plane's iteration, the own cells' p[n-1], q[n-1] and coefficients into a
 * cell slot; each slot's full mbarrier counts the bytes in. Every thread consumes: it waits on the
 * full barriers, and arrives on a slot's empty barrier once it no longer reads it (ring slot of
 * plane j after iteration j + R, cell slot after reading its inputs); the producer refills a slot
 * only after all nthreads arrivals. D_y: with a compiled-in width (32 or 64, WARP_DY) a warp holds
 * 32 cells of one row (64 with x pairs) and keeps DY_BUFFERS_TMA buffers of its own: lanes 0 .. 4R
 * - 1 compute the row's 2R halo columns of p and q again (a neighbour warp's cells included)
 * instead of waiting for other warps, so d_xy ties no warp to another (a block-wide handover made
 * warps wait there for the two that also produce and compute the halo: a fifth of the stall samples
 * on an H200). Other widths hand block-wide buffers over like the slots: every thread arrives on
 * the buffer's full barrier once it wrote its entries, reads it after waiting on it one iteration
 * later, and arrives on its empty barrier after reading. Slack: a warp may trail the producer by
 * two iterations before anyone waits for it (ring_slots, cell_slots; one iteration with SLACK 1:
 * two_cells). Slot and parity of the k-th use of a family of N slots: k % N and (k / N) & 1, N
 * known at compile time. The protocol is modelled, with these formulas, in
 * run/experiments/tti_tma_protocol.py. CELLS = 2 (compiled-in widths, two_cells): a thread updates
 * two cells, with a queue set each: at width 32 rows 2 ty and 2 ty + 1 of its column, whose y
 * stencils read the same tile rows; at width 64 (x pairs) columns 2 tx and 2 tx + 1 of its row,
 * whose x stencils read the same floats. With x pairs every read of both cells' values (the
 * tile's, the D_y buffer's, the own inputs') is one 8-byte pair, and so is the store of their
 * outputs. Either way the iteration's waits, slots and loop are shared by both cells. */
template <bool TILTED, typename C, int BXC, int LEAD, int CELLS, int SLACK, bool COPY>
__global__ void __launch_bounds__(CELLS == 1 ? MAX_THREADS : PAIR_THREADS,
                                  CELLS == 1 ? 1 : PAIR_BLOCKS)
    tti_zmarch_tma(const __grid_constant__ TtiArgs a, const __grid_constant__ TtiMaps maps) {
  extern __shared__ __align__(128) float smem[];
  constexpr int SLOTS = ring_slots(LEAD, SLACK), CELL_SLOTS = cell_slots(LEAD, SLACK);
  constexpr int DYB = DY_BUFFERS_TMA;
  constexpr bool HALF = sizeof(C) == 2;
  TmaBlock b;
  b.bx = BXC > 0 ? BXC : (int)blockDim.x;
  b.by = (pairs_along_x(BXC, CELLS) ? 1 : CELLS) * (int)blockDim.y;
  b.tw = b.bx + 2 * R;
  b.th = b.by + 2 * R;
  b.tf = tile_floats(b.bx, b.by);
  b.dy_floats = dy_floats_tma(b.bx, b.by);
  b.cell_float_bytes = cell_array_bytes(b.bx, b.by, 4);
  b.cell_coeff_bytes = cell_array_bytes(coeff_row(b.bx, HALF), b.by, (int)sizeof(C));
  b.cell_slot = cell_slot_bytes(b.bx, b.by, TILTED, HALF);
  b.ring = smem;
  b.cells = reinterpret_cast<unsigned char *>(smem + SLOTS * 2 * b.tf);
  b.dy_buffer = reinterpret_cast<float *>(b.cells + CELL_SLOTS * b.cell_slot);
  /* the barriers, 8-byte aligned, after the D_y buffers */
  const uintptr_t dy_end =
      reinterpret_cast<uintptr_t>(b.dy_buffer + (TILTED ? DYB * 2 * b.dy_floats : 0));
  b.full = reinterpret_cast<uint64_t *>((dy_end + 7) / 8 * 8);
  b.empty = b.full + SLOTS;
  b.cell_full = b.empty + SLOTS;
  b.cell_empty = b.cell_full + CELL_SLOTS;
  b.dy_full = b.cell_empty + CELL_SLOTS;
  b.dy_empty = b.dy_full + DYB;
  b.nthreads = (int)(blockDim.x * blockDim.y);
  const Place place = place_of(a, b.bx, b.by, pairs_along_x(BXC, CELLS) ? 2 : 1);
  b.ix0 = place.ix0;
  b.iy0 = place.iy0;
  b.zb0 = place.zb0;
  b.nplanes = place.nplanes;
  const TmaThread<CELLS> t = tma_thread<TILTED, C, BXC, CELLS>(a, b, place);

  if (t.tid == 0) tma_init_barriers<TILTED, BXC, LEAD, SLACK>(b);
  __syncthreads();

  Queues z[CELLS];
#pragma unroll
  for (int r = 0; r < CELLS; ++r)
    clear(z[r]);
  if (t.ring_producer || t.cell_producer)
    for (int j = 0; j < LEAD; ++j)
      tma_produce<TILTED, C, LEAD, SLACK>(b, t, maps, j);

  /* Iteration i as a function called by a plain loop, as the lambda was whose instructions
   * were profiled (tti fp16 420 a cell on an H100, run/results/kernels.md; the body written
   * into the loop schedules differently). */
  TmaOut out = {t.column + (long long)b.zb0 * a.domain.stride_z,
                a.domain.eta_z + a.domain.z_offset + b.zb0};
  for (int i = 0; i < b.nplanes; ++i)
    tma_iteration<TILTED, C, BXC, LEAD, SLACK, COPY>(a, maps, b, t, z, out, i);
}
/* The kernel instance of (tilted, coefficient type, halo, tile width, stages), as a
 * function pointer. */
typedef void (*kernel_t)(TtiArgs, TtiMaps);

/* tma at a compiled-in width: one cell a thread (slack 2), or two with slack 2, or two with
 * slack 1 where min_slack allows it; NULL for a combination that has no instance. */
template <bool TILTED, typename C, int BXC, int LEAD, bool COPY>
kernel_t pick_cells(int cells, int slack) {
  if (cells == 1) return slack == 2 ? tti_zmarch_tma<TILTED, C, BXC, LEAD, 1, 2, COPY> : nullptr;
  if (cells != 2) return nullptr;
  if (slack == 2) return tti_zmarch_tma<TILTED, C, BXC, LEAD, 2, 2, COPY>;
  if constexpr (min_slack(LEAD) == 1)
    if (slack == 1) return tti_zmarch_tma<TILTED, C, BXC, LEAD, 2, 1, COPY>;
  return nullptr;
}

template <bool TILTED, typename C, int HALO, bool COPY>
kernel_t pick_width(int bx, int stages, int cells, int slack) {
  const bool one = cells == 1 && slack == 2; /* every other path has one cell a thread */
  if constexpr (HALO == RTM_HALO_TMA) {
    const bool three = stages == 3;
    switch (bx) {
    case 32:
      return three ? pick_cells<TILTED, C, 32, 2, COPY>(cells, slack)
                   : pick_cells<TILTED, C, 32, 1, COPY>(cells, slack);
    case 64:
      return three ? pick_cells<TILTED, C, 64, 2, COPY>(cells, slack)
                   : pick_cells<TILTED, C, 64, 1, COPY>(cells, slack);
    default:
      if (!one) return nullptr;
      return three ? tti_zmarch_tma<TILTED, C, 0, 2, 1, 2, COPY>
                   : tti_zmarch_tma<TILTED, C, 0, 1, 1, 2, COPY>;
    }
  } else {
    if (!one) return nullptr;
    switch (bx) {
    case 32: return tti_zmarch<TILTED, C, HALO, 32, COPY>;
    case 64: return tti_zmarch<TILTED, C, HALO, 64, COPY>;
    default: return tti_zmarch<TILTED, C, HALO, 0, COPY>;
    }
  }
}

template <bool TILTED, typename C, bool COPY>
kernel_t pick_halo(rtm_halo_t halo, int bx, int stages, int cells, int slack) {
  switch (halo) {
  case RTM_HALO_LDGSTS:
    return pick_width<TILTED, C, RTM_HALO_LDGSTS, COPY>(bx, stages, cells, slack);
  case RTM_HALO_TMA: return pick_width<TILTED, C, RTM_HALO_TMA, COPY>(bx, stages, cells, slack);
  default: return pick_width<TILTED, C, RTM_HALO_SYNC, COPY>(bx, stages, cells, slack);
  }
}

template <bool COPY> kernel_t pick_copy(const rtm_tti_shape_t *shape) {
  const int bx = shape->block[0], st = shape->stages, cells = shape->cells, slack = shape->slack;
  if (shape->tilted)
    return shape->coeff_half ? pick_halo<true, __half, COPY>(shape->halo, bx, st, cells, slack)
                             : pick_halo<true, float, COPY>(shape->halo, bx, st, cells, slack);
  return shape->coeff_half ? pick_halo<false, __half, COPY>(shape->halo, bx, st, cells, slack)
                           : pick_halo<false, float, COPY>(shape->halo, bx, st, cells, slack);
}

/* The instance of `shape`; `copy`: the one that also writes the level copy (COPY: its own
 * instance, as iso's, so that the steps without a copy keep their code). */
kernel_t pick(const rtm_tti_shape_t *shape, bool copy) {
  return copy ? pick_copy<true>(shape) : pick_copy<false>(shape);
}

int lead_of(const rtm_tti_shape_t *shape) {
  return shape->halo == RTM_HALO_SYNC ? 0 : shape->stages - 1;
}

/* The arguments of a launch. */
TtiArgs tti_args(const rtm_grid_t *grid, const rtm_tti_shape_t *shape,
                 const rtm_tti_fields_t *fields, int backward, int z_begin, int z_end) {
  TtiArgs a = zmarch_args<TtiArgs>(grid, fields->eta_dt, shape->zblock, backward, z_begin, z_end);
  a.lead = lead_of(shape);
  a.slots = ring_slots(a.lead);
  memcpy(a.c2, fields->weights[0].c2, sizeof a.c2); /* the same on every axis */
  for (int axis = 0; axis < 3; ++axis) {
    a.inv_h2[axis] = fields->weights[axis].inv_h2;
    memcpy(a.w1[axis], fields->weights[axis].w1, sizeof a.w1[axis]);
  }
  a.p_other = fields->p_other;
  a.q_other = fields->q_other;
  a.level_copy = fields->level_copy;
  a.p = fields->p;
  a.q = fields->q;
  for (int k = 0; k < RTM_TTI_COEFF_MAX; ++k)
    a.coeff[k] = fields->coeff[k];
  return a;
}

/* tma: the maps of the fields; zero for sync and ldgsts. */
TtiMaps tti_maps(const rtm_tti_shape_t *shape, const rtm_tti_fields_t *fields) {
  TtiMaps maps;
  memset(&maps, 0, sizeof maps);
  if (shape->halo == RTM_HALO_TMA) {
    memcpy(&maps.p, fields->p_map, sizeof maps.p);
    memcpy(&maps.q, fields->q_map, sizeof maps.q);
    memcpy(&maps.p_other, fields->p_other_map, sizeof maps.p_other);
    memcpy(&maps.q_other, fields->q_other_map, sizeof maps.q_other);
    for (int k = 0; k < RTM_TTI_COEFF_MAX; ++k)
      if (fields->coeff_map[k]) memcpy(&maps.coeff[k], fields->coeff_map[k], sizeof maps.coeff[k]);
  }
  return maps;
}

} // namespace

/* Two cells a thread where they pay (tti fp32 tma 2 32x8 on an H100 40 928 -> 45 390
 * MCells/s, run/results/kernels.md): tma at a compiled-in width, a tile of PAIR_THREADS x 2
 * cells, and three such blocks fitting an
 * SM's shared memory, with slack 2, or else with the least slack the stages allow
 * (min_slack). With two cells a thread the kernel needs more registers (PAIR_BLOCKS blocks of
 * PAIR_THREADS at most: 168); where only two blocks fit, the warps a SM holds halve and it
 * runs no faster than one cell a thread. Sets shape->cells and shape->slack where it takes
 * two cells; leaves the one-cell values that rtm_tti_cuda_prepare set otherwise. */
static void two_cells(rtm_tti_shape_t *shape, int device) {
  const int bx = shape->block[0], by = shape->block[1], lead = lead_of(shape);
  int per_sm = 0, reserved = 0;
  if (shape->halo != RTM_HALO_TMA || (bx != 32 && bx != 64) || bx * by != 2 * PAIR_THREADS) return;
  if (cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device) !=
          cudaSuccess)
    return;
  for (int slack = 2; slack >= min_slack(lead); --slack) {
    const size_t bytes = shared_bytes_of(bx, by, shape->tilted != 0, shape->coeff_half != 0,
                                         shape->halo, lead, slack);
    if (PAIR_BLOCKS * (bytes + (size_t)reserved) <= (size_t)per_sm) {
      shape->cells = 2;
      shape->slack = slack;
      return;
    }
  }
}

extern "C" int rtm_tti_cuda_prepare(rtm_tti_shape_t *shape, int device) {
  int status = RTM_OK;
  const char *what = shape->tilted ? "tti" : "vti";
  size_t bytes = 0;
  const void *kernel = NULL;
  shape->cells = 1; /* one cell a thread until two_cells says otherwise */
  shape->slack = 2;
  RTM_TRY(zmarch_block_check(shape->block, 1, MAX_THREADS, what));
  if (shape->halo == RTM_HALO_TMA && shape->coeff_half && shape->block[0] % 8 != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x = %d with kernel.halo = tma and memory.model_precision = fp16: "
             "must be a multiple of 8 (a row of binary16 coefficients is copied in 16-byte "
             "pieces)",
             shape->block[0]);
  bytes = rtm_tti_cuda_shared_bytes(shape);
  RTM_TRY(zmarch_device_check(shape->halo, shape->stages, 3, shape->zblock, shape->block, bytes,
                              what, device));
  two_cells(shape, device);
  for (int copy = 0; copy < 2; ++copy) { /* the steps without a level copy and with one */
    kernel = (const void *)pick(shape, copy != 0);
    RTM_TRY(rtm_cuda_kernel_prepare(kernel, rtm_tti_cuda_shared_bytes(shape), shape->halo));
    /* three blocks of up to 76 800 bytes a multiprocessor (two_cells) need all of its shared
     * memory: asked for, not left to the driver's choice of carveout */
    if (shape->cells == 2)
      RTM_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        (int)cudaSharedmemCarveoutMaxShared));
  }
  return RTM_OK;
fail:
  return status;
}

/* two_cells sets cells 2 on tma only: the launch below and the description read the same rule */
extern "C" int rtm_tti_cuda_pairs_along_x(const rtm_tti_shape_t *shape) {
  return pairs_along_x(shape->block[0], shape->cells);
}

extern "C" size_t rtm_tti_cuda_shared_bytes(const rtm_tti_shape_t *shape) {
  return shared_bytes_of(shape->block[0], shape->block[1], shape->tilted != 0,
                         shape->coeff_half != 0, shape->halo, lead_of(shape),
                         shape->slack == 1 ? 1 : 2);
}

extern "C" int rtm_tti_cuda_step(const rtm_grid_t *grid, const rtm_tti_shape_t *shape,
                                 const rtm_tti_fields_t *fields, int backward, int z_begin,
                                 int z_end, void *stream) {
  int status = RTM_OK;
  if (z_end <= z_begin) return RTM_OK;
  if (shape->halo == RTM_HALO_TMA) {
    bool complete = fields->p_map && fields->q_map && fields->p_other_map && fields->q_other_map;
    for (int k = 0; k < (shape->tilted ? RTM_TTI_COEFF_COUNT : RTM_VTI_COEFF_COUNT); ++k)
      complete = complete && fields->coeff_map[k];
    if (!complete)
      RTM_FAIL(RTM_ERR_INTERNAL, "rtm_tti_cuda_step: kernel.halo = tma without its tensor maps");
  }
  {
    const TtiArgs a = tti_args(grid, shape, fields, backward, z_begin, z_end);
    const TtiMaps maps = tti_maps(shape, fields);
    const dim3 block =
        rtm_tti_cuda_pairs_along_x(shape)
            ? dim3((unsigned)(shape->block[0] / 2), (unsigned)shape->block[1], 1)
            : dim3((unsigned)shape->block[0], (unsigned)(shape->block[1] / shape->cells), 1);
    const dim3 blocks = zmarch_blocks(a.domain, shape->block[0], shape->block[1]);
    const size_t shared = rtm_tti_cuda_shared_bytes(shape);
    const kernel_t kernel = pick(shape, fields->level_copy != NULL);
    if (!kernel)
      RTM_FAIL(RTM_ERR_INTERNAL,
               "rtm_tti_cuda_step: a shape rtm_tti_cuda_prepare did not make (%d cells a thread, "
               "slack %d)",
               shape->cells, shape->slack);
    kernel<<<blocks, block, shared, (cudaStream_t)stream>>>(a, maps);
    RTM_CUDA_TRY_LAUNCH(shape->tilted ? "tti_zmarch<tti>" : "tti_zmarch<vti>");
  }
  return RTM_OK;
fail:
  return status;
}

/* tti_cuda.cu - the VTI/TTI z-marching kernel and its launcher (equations and per-cell
 * coefficients: tti_cuda.h).
 *
 * Shape (single pass, halo `sync`):
 *   threads    a block owns a block_x x block_y tile of cells, one thread per cell, and
 *              walks the planes of its z-block (kernel.zblock, the whole range when 0).
 *   shared     a ring of R + 2 = 6 slots, each the (block_y + 8) x (block_x + 8) tile of p
 *              and of q of one plane with its R = 4 xy halo (corners included): planes
 *              c .. c + R are resident while plane c is computed. tti also keeps a scratch
 *              D_x p, D_x q of plane c over the tile's rows (halo rows included) and its
 *              interior columns, from which d_xy = D_y(D_x f) comes.
 *   registers  queues of the 2R + 1 = 9 values along z of the thread's column: p, q (for
 *              d_zz) and, tti only, D_x p, D_y p, D_x q, D_y q, computed from the tile when a
 *              plane enters the front of the queue (plane c + R), then d_xz = D_z(D_x f),
 *              d_yz = D_z(D_y f) from the queues: the mixed z terms need no second pass and
 *              no scratch volume.
 *   per plane  load the tiles of plane c + R (plain 16-byte loads through registers,
 *              zero-filled past the padded field), barrier, push the queues, (tti) write the
 *              D_x scratch of plane c, barrier, update p and q of plane c.
 *   order      every operation rounded on its own (no FMA) in the cpu reference's order
 *              (tti_cpu.c). The Hz factors are formed here in float from n; the reference
 *              forms them in double from the same float n when the axis is smoothed (the
 *              exact product of two floats rounds to the float product: bit for bit), and
 *              from angles in double otherwise (a 1-ulp difference of the medium).
 *   in place   f[n+1] overwrites f[n-1] (each cell read and written by one thread only).
 * The edges: outside the interior in x and y, f and the reference's first-derivative
 * scratch are zero; the tile's padding is zero, so D_x of a padding row is zero here too. In
 * the z halo planes the first derivatives come from f's halo planes, as in the reference. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include "cuda_check.h"
#include "rtm_solver.h"
#include "rtm_status.h"
#include "tti_cuda.h"

namespace {

constexpr int R = RTM_RADIUS;
constexpr int Q = 2 * R + 1; /* queue length */
constexpr int MAX_THREADS = 512;
/* Plane j's tiles are written at iteration j (before that iteration's first barrier) and
 * last read at iteration j + R; with no barrier between the compute of iteration i - 1 and
 * the loads of iteration i, slot reuse needs R + 2 slots. */
constexpr int SLOTS = R + 2;

struct TtiArgs {
  float *p_other, *q_other;
  const float *p, *q;
  const void *coeff[RTM_TTI_COEFF_MAX];
  const float *eta_x, *eta_y, *eta_z;
  long long stride_y, stride_z, origin;
  int nx, ny, z_offset;
  int row_floats; /* stride_y: a 16-byte chunk starting below it lies inside the row */
  int rows;       /* ny + 2R padded rows per plane */
  int z_begin, z_end, zblock;
  float damping_sign;
  float c2[R + 1], c1[R];
  float inv_h2[3], inv_h[3];
};

/* Tile floats rounded to 4 so that every tile starts 16-byte aligned. */
__host__ __device__ inline int tile_floats(int bx, int by) {
  return ((bx + 2 * R) * (by + 2 * R) + 3) / 4 * 4;
}

__host__ __device__ inline size_t shared_floats(int bx, int by, bool tilted) {
  return (size_t)SLOTS * 2 * (size_t)tile_floats(bx, by) +
         (tilted ? 2 * (size_t)(by + 2 * R) * (size_t)bx : 0);
}

/* Coefficient k of `cell`: float, or binary16 widened exactly to float. */
template <typename C> __device__ __forceinline__ float coeff_at(const void *volume, long long cell);
template <> __device__ __forceinline__ float coeff_at<float>(const void *volume, long long cell) {
  return __ldg(static_cast<const float *>(volume) + cell);
}
template <> __device__ __forceinline__ float coeff_at<__half>(const void *volume, long long cell) {
  return __half2float(__ldg(static_cast<const __half *>(volume) + cell));
}

__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }

/* The reference's second(): c0 f + sum c_k (f[+k] + f[-k]), then times 1/h^2. */
__device__ __forceinline__ float second_tile(const float *t, int centre, int stride, const float *c2,
                                             float inv_h2) {
  float d = mul(c2[0], t[centre]);
#pragma unroll
  for (int k = 1; k <= R; ++k)
    d = add(d, mul(c2[k], add(t[centre + k * stride], t[centre - k * stride])));
  return mul(d, inv_h2);
}

/* The reference's first(): sum b_k (g[+k] - g[-k]) from 0, then times 1/h. */
__device__ __forceinline__ float first_tile(const float *t, int centre, int stride, const float *c1,
                                            float inv_h) {
  float d = 0.f;
#pragma unroll
  for (int k = 1; k <= R; ++k)
    d = add(d, mul(c1[k - 1], sub(t[centre + k * stride], t[centre - k * stride])));
  return mul(d, inv_h);
}

__device__ __forceinline__ float second_queue(const float (&f)[Q], const float *c2, float inv_h2) {
  float d = mul(c2[0], f[R]);
#pragma unroll
  for (int k = 1; k <= R; ++k)
    d = add(d, mul(c2[k], add(f[R + k], f[R - k])));
  return mul(d, inv_h2);
}

__device__ __forceinline__ float first_queue(const float (&g)[Q], const float *c1, float inv_h) {
  float d = 0.f;
#pragma unroll
  for (int k = 1; k <= R; ++k)
    d = add(d, mul(c1[k - 1], sub(g[R + k], g[R - k])));
  return mul(d, inv_h);
}

__device__ __forceinline__ void push(float (&f)[Q], float front) {
#pragma unroll
  for (int k = 0; k < Q - 1; ++k)
    f[k] = f[k + 1];
  f[Q - 1] = front;
}

/* Block (bx, by, bz): tile of blockDim.x x blockDim.y cells at (bx BX, by BY), output planes
 * [zb0, zb1). Loaded planes are numbered j = 0 .. zb1 - zb0 + 2R - 1 from plane zb0 - R;
 * iteration i loads plane i into slot i % SLOTS, pushes it onto the queues and, once they
 * are full (i >= 2R), updates plane c = zb0 + i - 2R. */
template <bool TILTED, typename C>
__global__ void __launch_bounds__(MAX_THREADS) tti_zmarch(const TtiArgs a) {
  extern __shared__ __align__(16) float smem[];
  const int bx = blockDim.x, by = blockDim.y;
  const int tw = bx + 2 * R, th = by + 2 * R;
  const int tf = tile_floats(bx, by);
  float *scratch = smem + SLOTS * 2 * tf; /* tti: [2][th][bx] */

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * bx + tx, nthreads = bx * by;
  const int ix0 = blockIdx.x * bx, iy0 = blockIdx.y * by;
  const int ix = ix0 + tx, iy = iy0 + ty;
  const bool active = ix < a.nx && iy < a.ny;
  const int zb0 = a.z_begin + blockIdx.z * a.zblock;
  const int zb1 = min(zb0 + a.zblock, a.z_end);
  const int kfirst = zb0 - R;
  const int nplanes = zb1 - zb0 + 2 * R;

  /* Padded x = ix0 is interior ix0 - R, padded row iy0 is interior iy0 - R. */
  const long long tile_origin =
      (long long)(kfirst + R) * a.stride_z + (long long)iy0 * a.stride_y + ix0;
  const int chunks_per_row = tw / 4, chunks = chunks_per_row * th;
  const int centre = (ty + R) * tw + tx + R;

  const long long column = a.origin + (long long)iy * a.stride_y + ix;
  const float exy = active ? a.eta_x[ix] + a.eta_y[iy] : 0.f;
  float c2[R + 1], c1[R];
#pragma unroll
  for (int k = 0; k <= R; ++k)
    c2[k] = a.c2[k];
#pragma unroll
  for (int k = 0; k < R; ++k)
    c1[k] = a.c1[k];

  float pz[Q], qz[Q], dxp[Q], dyp[Q], dxq[Q], dyq[Q];
#pragma unroll
  for (int k = 0; k < Q; ++k) {
    pz[k] = qz[k] = 0.f;
    dxp[k] = dyp[k] = dxq[k] = dyq[k] = 0.f;
  }

  int slot_front = 0, slot_out = SLOTS - R; /* slot of plane i - R (valid once i >= R) */
  for (int i = 0; i < nplanes; ++i) {
    /* Tiles of plane i. */
    {
      const long long plane = tile_origin + (long long)i * a.stride_z;
      float *tp = smem + slot_front * 2 * tf, *tq = tp + tf;
      for (int c = tid; c < chunks; c += nthreads) {
        const int r = c / chunks_per_row, col = 4 * (c - r * chunks_per_row);
        float4 vp = make_float4(0.f, 0.f, 0.f, 0.f), vq = vp;
        if (ix0 + col < a.row_floats && iy0 + r < a.rows) {
          const long long at = plane + (long long)r * a.stride_y + col;
          vp = __ldg(reinterpret_cast<const float4 *>(a.p + at));
          vq = __ldg(reinterpret_cast<const float4 *>(a.q + at));
        }
        *reinterpret_cast<float4 *>(tp + r * tw + col) = vp;
        *reinterpret_cast<float4 *>(tq + r * tw + col) = vq;
      }
    }
    /* Plane c's own values, loaded before the barrier so that their latency overlaps. */
    const int c = zb0 + i - 2 * R;
    const bool out = i >= 2 * R && active;
    float pp = 0.f, qp = 0.f, vpx2 = 0.f, vpz2 = 0.f, vpn2 = 0.f, vsz2 = 0.f;
    float nx = 0.f, ny = 0.f, nz = 0.f, ez = 0.f;
    long long cell = 0;
    if (out) {
      cell = column + (long long)c * a.stride_z;
      pp = a.p_other[cell];
      qp = a.q_other[cell];
      vpx2 = coeff_at<C>(a.coeff[RTM_TTI_VPX2], cell);
      vpz2 = coeff_at<C>(a.coeff[RTM_TTI_VPZ2], cell);
      vpn2 = coeff_at<C>(a.coeff[RTM_TTI_VPN2], cell);
      vsz2 = coeff_at<C>(a.coeff[RTM_TTI_VSZ2], cell);
      if (TILTED) {
        nx = coeff_at<C>(a.coeff[RTM_TTI_NX], cell);
        ny = coeff_at<C>(a.coeff[RTM_TTI_NY], cell);
        nz = coeff_at<C>(a.coeff[RTM_TTI_NZ], cell);
      }
      ez = __ldg(a.eta_z + a.z_offset + c);
    }
    __syncthreads();

    {
      const float *tp = smem + slot_front * 2 * tf, *tq = tp + tf;
      push(pz, tp[centre]);
      push(qz, tq[centre]);
      if (TILTED) {
        push(dxp, first_tile(tp, centre, 1, c1, a.inv_h[0]));
        push(dyp, first_tile(tp, centre, tw, c1, a.inv_h[1]));
        push(dxq, first_tile(tq, centre, 1, c1, a.inv_h[0]));
        push(dyq, first_tile(tq, centre, tw, c1, a.inv_h[1]));
      }
    }
    const float *tp = smem + slot_out * 2 * tf, *tq = tp + tf;
    if (TILTED && i >= 2 * R) {
      /* D_x of plane c over the tile's rows: what d_xy differentiates along y. */
      for (int e = tid; e < th * bx; e += nthreads) {
        const int r = e / bx, x = e - r * bx;
        scratch[e] = first_tile(tp, r * tw + x + R, 1, c1, a.inv_h[0]);
        scratch[th * bx + e] = first_tile(tq, r * tw + x + R, 1, c1, a.inv_h[0]);
      }
      __syncthreads();
    }

    if (out) {
      const float p_xx = second_tile(tp, centre, 1, c2, a.inv_h2[0]);
      const float q_xx = second_tile(tq, centre, 1, c2, a.inv_h2[0]);
      const float p_yy = second_tile(tp, centre, tw, c2, a.inv_h2[1]);
      const float q_yy = second_tile(tq, centre, tw, c2, a.inv_h2[1]);
      const float p_zz = second_queue(pz, c2, a.inv_h2[2]);
      const float q_zz = second_queue(qz, c2, a.inv_h2[2]);
      float hz_p, hz_q, hxy_p, hxy_q;
      if (TILTED) {
        const int s = (ty + R) * bx + tx;
        const float p_xy = first_tile(scratch, s, bx, c1, a.inv_h[1]);
        const float q_xy = first_tile(scratch + th * bx, s, bx, c1, a.inv_h[1]);
        const float p_xz = first_queue(dxp, c1, a.inv_h[2]);
        const float q_xz = first_queue(dxq, c1, a.inv_h[2]);
        const float p_yz = first_queue(dyp, c1, a.inv_h[2]);
        const float q_yz = first_queue(dyq, c1, a.inv_h[2]);
        const float a_xx = mul(nx, nx), a_yy = mul(ny, ny), a_zz = mul(nz, nz);
        const float a_xy = mul(2.f, mul(nx, ny)), a_yz = mul(2.f, mul(ny, nz));
        const float a_xz = mul(2.f, mul(nx, nz));
        hz_p = add(add(add(add(add(mul(a_xx, p_xx), mul(a_yy, p_yy)), mul(a_zz, p_zz)),
                           mul(a_xy, p_xy)),
                       mul(a_yz, p_yz)),
                   mul(a_xz, p_xz));
        hz_q = add(add(add(add(add(mul(a_xx, q_xx), mul(a_yy, q_yy)), mul(a_zz, q_zz)),
                           mul(a_xy, q_xy)),
                       mul(a_yz, q_yz)),
                   mul(a_xz, q_xz));
        hxy_p = sub(add(add(p_xx, p_yy), p_zz), hz_p);
        hxy_q = sub(add(add(q_xx, q_yy), q_zz), hz_q);
      } else {
        hxy_p = add(p_xx, p_yy);
        hxy_q = add(q_xx, q_yy);
        hz_p = p_zz;
        hz_q = q_zz;
      }
      const float rhs_p = add(add(mul(vpx2, hxy_p), mul(vpz2, hz_q)), mul(vsz2, sub(hz_p, hz_q)));
      const float rhs_q =
          sub(add(mul(vpn2, hxy_p), mul(vpz2, hz_q)), mul(vsz2, sub(hxy_p, hxy_q)));
      const float p2 = mul(2.f, pz[R]), q2 = mul(2.f, qz[R]);
      const float d = add(exy, ez);
      float po, qo;
      if (d > 0.f) {
        const float sd = a.damping_sign * d;
        const float keep = sub(1.f, sd), scale = add(1.f, sd);
        po = __fdiv_rn(add(sub(p2, mul(keep, pp)), rhs_p), scale);
        qo = __fdiv_rn(add(sub(q2, mul(keep, qp)), rhs_q), scale);
      } else { /* (1 - 0) f and x / 1 are exact: the same numbers */
        po = add(sub(p2, pp), rhs_p);
        qo = add(sub(q2, qp), rhs_q);
      }
      a.p_other[cell] = po;
      a.q_other[cell] = qo;
    }
    slot_front = slot_front + 1 == SLOTS ? 0 : slot_front + 1;
    slot_out = slot_out + 1 == SLOTS ? 0 : slot_out + 1;
  }
}

template <bool TILTED, typename C> int prepare_kernel(size_t shared_bytes) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaFuncSetAttribute(tti_zmarch<TILTED, C>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared_bytes));
  return RTM_OK;
fail:
  return status;
}

} // namespace

extern "C" size_t rtm_tti_cuda_shared_bytes(const rtm_tti_shape_t *shape) {
  return shared_floats(shape->block[0], shape->block[1], shape->tilted != 0) * sizeof(float);
}

extern "C" int rtm_tti_cuda_prepare(const rtm_tti_shape_t *shape, int device) {
  int status = RTM_OK, optin = 0;
  const int bx = shape->block[0], by = shape->block[1];
  size_t bytes = 0;
  if (bx < 4 || bx % 4 != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x = %d: the tile width must be a positive multiple of 4 "
             "(tile rows are copied in 16-byte pieces)",
             bx);
  if (by < 1) RTM_FAIL(RTM_ERR_CONFIG, "kernel.block_y = %d: must be at least 1", by);
  if (bx * by > MAX_THREADS)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x x kernel.block_y = %d x %d: the vti/tti kernel runs one thread per "
             "cell and at most %d threads per block",
             bx, by, MAX_THREADS);
  if ((bx * by) % 32 != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x x kernel.block_y = %d x %d = %d threads (one per cell for "
             "vti/tti): must be whole warps (a multiple of 32 threads)",
             bx, by, bx * by);
  if (shape->zblock < 0)
    RTM_FAIL(RTM_ERR_CONFIG, "kernel.zblock = %d: must be 0 (whole z-range) or positive",
             shape->zblock);
  RTM_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  bytes = rtm_tti_cuda_shared_bytes(shape);
  if (bytes > (size_t)optin)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x x kernel.block_y = %d x %d needs %zu bytes of shared memory per "
             "block for %s; device %d allows %d",
             bx, by, bytes, shape->tilted ? "tti" : "vti", device, optin);
  if (shape->tilted && shape->coeff_half)
    RTM_TRY((prepare_kernel<true, __half>(bytes)));
  else if (shape->tilted)
    RTM_TRY((prepare_kernel<true, float>(bytes)));
  else if (shape->coeff_half)
    RTM_TRY((prepare_kernel<false, __half>(bytes)));
  else
    RTM_TRY((prepare_kernel<false, float>(bytes)));
  return RTM_OK;
fail:
  return status;
}

extern "C" int rtm_tti_cuda_step(const rtm_grid_t *grid, const rtm_tti_shape_t *shape,
                                 const rtm_tti_fields_t *fields, int backward, int z_begin,
                                 int z_end, void *stream) {
  int status = RTM_OK;
  if (z_end <= z_begin) return RTM_OK;
  {
    const int bx = shape->block[0], by = shape->block[1], range = z_end - z_begin;
    TtiArgs a;
    memset(&a, 0, sizeof a);
    a.p_other = fields->p_other;
    a.q_other = fields->q_other;
    a.p = fields->p;
    a.q = fields->q;
    for (int k = 0; k < RTM_TTI_COEFF_MAX; ++k)
      a.coeff[k] = fields->coeff[k];
    a.eta_x = fields->eta_dt[0];
    a.eta_y = fields->eta_dt[1];
    a.eta_z = fields->eta_dt[2];
    a.stride_y = (long long)grid->stride_y;
    a.stride_z = (long long)grid->stride_z;
    a.origin = (long long)grid->origin_index;
    a.nx = grid->n[0];
    a.ny = grid->n[1];
    a.z_offset = grid->z_offset;
    a.row_floats = (int)grid->stride_y;
    a.rows = grid->n[1] + 2 * R;
    a.z_begin = z_begin;
    a.z_end = z_end;
    a.zblock = shape->zblock > 0 && shape->zblock < range ? shape->zblock : range;
    a.damping_sign = backward ? -1.f : 1.f;
    for (int k = 0; k <= R; ++k)
      a.c2[k] = fields->c2[k];
    for (int k = 0; k < R; ++k)
      a.c1[k] = fields->c1[k];
    for (int axis = 0; axis < 3; ++axis) {
      a.inv_h2[axis] = fields->inv_h2[axis];
      a.inv_h[axis] = fields->inv_h[axis];
    }
    const dim3 block((unsigned)bx, (unsigned)by, 1);
    const dim3 blocks((unsigned)((a.nx + bx - 1) / bx), (unsigned)((a.ny + by - 1) / by),
                      (unsigned)((range + a.zblock - 1) / a.zblock));
    const size_t shared = rtm_tti_cuda_shared_bytes(shape);
    cudaStream_t s = (cudaStream_t)stream;
    if (shape->tilted && shape->coeff_half)
      tti_zmarch<true, __half><<<blocks, block, shared, s>>>(a);
    else if (shape->tilted)
      tti_zmarch<true, float><<<blocks, block, shared, s>>>(a);
    else if (shape->coeff_half)
      tti_zmarch<false, __half><<<blocks, block, shared, s>>>(a);
    else
      tti_zmarch<false, float><<<blocks, block, shared, s>>>(a);
    RTM_CUDA_TRY_LAUNCH("tti_zmarch");
  }
  return RTM_OK;
fail:
  return status;
}

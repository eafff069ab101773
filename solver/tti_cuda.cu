/* tti_cuda.cu - the VTI/TTI z-marching kernel and its launcher (equations and per-cell
 * coefficients: tti_cuda.h).
 *
 * Shape (single pass):
 *   threads    a block owns a block_x x block_y tile of cells, one thread per cell, and
 *              walks the planes of its z-block (kernel.zblock, the whole range when 0).
 *   shared     a ring of R + 2 + lead slots, each the (block_y + 8) x (block_x + 8) tile of
 *              p and of q of one plane with its R = 4 xy halo (corners included); lead =
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
 *              (2 x 2R x block_y: half the block for 32-wide tiles, whole warps).
 *   halo       sync: 16-byte loads through registers into the ring; ldgsts: cp.async
 *              16-byte copies (zero fill past the padded field), one commit per plane by
 *              every thread, never in divergent code; tma (sm_90): one thread issues the
 *              two cp.async.bulk.tensor.3d boxes of a plane (p and q, tile with halo) on the
 *              slot's mbarrier, OOB zero fill. The slot count lets one barrier per plane
 *              order every reuse (see SLOT below).
 *   per plane  issue the copies of plane i + lead; load the cell's own p[n-1], q[n-1] and
 *              coefficients of plane c; wait for plane i; barrier; push the queues; (tti)
 *              write the D_y buffer of plane c + 1; update p and q of plane c.
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
#include "cuda_check.h"
#include "rtm_solver.h"
#include "rtm_status.h"
#include "tti_cuda.h"

namespace {

constexpr int R = RTM_RADIUS;
constexpr int Q = 2 * R + 1; /* queue length */
constexpr int MAX_THREADS = 512;

/* SLOT: plane j's tiles are written at iteration j - lead and read at iterations j (queue
 * front), j + R - 1 (D_x buffer of plane j) and j + R (update of plane j). With one
 * barrier per iteration a thread may issue iteration i's copies while another still reads
 * iteration i - 1's planes i - 1 - R .. i - 1: the ring needs R + 2 + lead slots. */
__host__ __device__ inline int ring_slots(int lead) {
  return R + 2 + lead;
}

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
  int lead, slots; /* planes in flight ahead; ring_slots(lead) */
  float damping_sign;
  float c2[R + 1], inv_h2[3], w1[3][R]; /* rtm_fd_weights of the axes */
};

/* Tile floats rounded to 32 so that every tile starts 128-byte aligned (TMA's rule). */
__host__ __device__ inline int tile_floats(int bx, int by) {
  return ((bx + 2 * R) * (by + 2 * R) + 31) / 32 * 32;
}

/* Floats of the two D_y buffers of p and q (tti): [2][p, q][block_y][block_x + 2R]. */
__host__ __device__ inline int dy_buffer_floats(int bx, int by) {
  return 4 * by * (bx + 2 * R);
}

/* Ring of p/q tiles, (tti) the D_y buffers, (tma) one mbarrier per slot. */
__host__ __device__ inline size_t shared_bytes_of(int bx, int by, bool tilted, int halo, int lead) {
  const size_t slots = (size_t)ring_slots(lead);
  size_t floats = slots * 2 * (size_t)tile_floats(bx, by);
  if (tilted) floats += (size_t)dy_buffer_floats(bx, by);
  floats = (floats + 1) / 2 * 2; /* 8-byte alignment of the barriers */
  return floats * sizeof(float) + (halo == RTM_HALO_TMA ? slots * sizeof(uint64_t) : 0);
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
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float fmadd(float a, float b, float c) { return __fmaf_rn(a, b, c); }

/* The reference's second(): fma chain of c_k (f[+k] + f[-k]) from c_0 f, times 1 / h^2. */
__device__ __forceinline__ float second_tile(const float *t, int centre, int stride,
                                             const float *c2, float inv_h2) {
  float d = mul(c2[0], t[centre]);
#pragma unroll
  for (int k = 1; k <= R; ++k)
    d = fmadd(c2[k], add(t[centre + k * stride], t[centre - k * stride]), d);
  return mul(d, inv_h2);
}

/* The reference's first(): fma chain of w1_k (g[+k] - g[-k]) from w1_1 (g[+1] - g[-1]). */
__device__ __forceinline__ float first_tile(const float *t, int centre, int stride,
                                            const float *w1) {
  float d = mul(w1[0], sub(t[centre + stride], t[centre - stride]));
#pragma unroll
  for (int k = 2; k <= R; ++k)
    d = fmadd(w1[k - 1], sub(t[centre + k * stride], t[centre - k * stride]), d);
  return d;
}

__device__ __forceinline__ float second_queue(const float (&f)[Q], const float *c2,
                                              float inv_h2) {
  float d = mul(c2[0], f[R]);
#pragma unroll
  for (int k = 1; k <= R; ++k)
    d = fmadd(c2[k], add(f[R + k], f[R - k]), d);
  return mul(d, inv_h2);
}

__device__ __forceinline__ float first_queue(const float (&g)[Q], const float *w1) {
  float d = mul(w1[0], sub(g[R + 1], g[R - 1]));
#pragma unroll
  for (int k = 2; k <= R; ++k)
    d = fmadd(w1[k - 1], sub(g[R + k], g[R - k]), d);
  return d;
}

/* The reference's leapfrog: fma(2, f, fma(-keep, f_other, rhs)), over `scale` in the layer. */
__device__ __forceinline__ float leapfrog_layer(float f, float f_other, float rhs, float keep,
                                                float scale) {
  return __fdiv_rn(fmadd(2.f, f, fmadd(-keep, f_other, rhs)), scale);
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

/* Block (bx, by, bz): tile of blockDim.x x blockDim.y cells at (bx BX, by BY), output planes
 * [zb0, zb1). Loaded planes are numbered j = 0 .. zb1 - zb0 + 2R - 1 from plane zb0 - R;
 * iteration i pushes plane i onto the queues and, once they are full (i >= 2R), updates
 * plane c = zb0 + i - 2R (loaded plane i - R). BXC: the tile width when compiled in
 * (blockDim.x equals it), 0 for any width. */
template <bool TILTED, typename C, int HALO, int BXC>
__global__ void __launch_bounds__(MAX_THREADS)
    tti_zmarch(const __grid_constant__ TtiArgs a, const __grid_constant__ CUtensorMap p_map,
               const __grid_constant__ CUtensorMap q_map) {
  extern __shared__ __align__(128) float smem[];
  const int bx = BXC > 0 ? BXC : (int)blockDim.x, by = blockDim.y;
  const int tw = bx + 2 * R, th = by + 2 * R;
  const int tf = tile_floats(bx, by);
  const int slots = a.slots, lead = a.lead;
  float *dy_buffer = smem + slots * 2 * tf; /* tti: [2 buffers][p, q][by][tw] */
  const int dy_floats = by * tw;            /* one field of one buffer */
  uint64_t *full = reinterpret_cast<uint64_t *>(
      smem + (slots * 2 * tf + (TILTED ? dy_buffer_floats(bx, by) : 0) + 1) / 2 * 2); /* tma */

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * bx + tx, nthreads = bx * by;
  const int ix0 = blockIdx.x * bx, iy0 = blockIdx.y * by;
  const int ix = ix0 + tx, iy = iy0 + ty;
  const bool active = ix < a.nx && iy < a.ny;
  const int zb0 = a.z_begin + blockIdx.z * a.zblock;
  const int zb1 = min(zb0 + a.zblock, a.z_end);
  const int nplanes = zb1 - zb0 + 2 * R;

  /* Padded x = ix0 is interior ix0 - R, padded row iy0 is interior iy0 - R; loaded plane j
   * is padded plane zb0 + j. */
  const long long tile_origin = (long long)zb0 * a.stride_z + (long long)iy0 * a.stride_y + ix0;
  const int chunks_per_row = tw / 4, chunks = chunks_per_row * th;
  const int centre = (ty + R) * tw + tx + R;
  const int own_dy = ty * tw + tx + R; /* the cell in a D_y buffer */
  /* sync, ldgsts: this thread's first 16-byte chunk of a tile (most shapes have no other) */
  const int first_row = tid / chunks_per_row, first_col = 4 * (tid - first_row * chunks_per_row);
  const bool first_valid = tid < chunks && ix0 + first_col < a.row_floats && iy0 + first_row < a.rows;
  const int first_smem = first_row * tw + first_col;
  const long long first_global = (long long)first_row * a.stride_y + first_col;
  /* tti: D_y of the 2R halo columns of the buffer, 2 x by x 2R entries (p and q); entry e
   * is field e / (2R by), row (e mod 2R by) / 2R, halo column e mod 2R (R left, R right).
   * Its place in a tile slot (field offset included) and in a buffer. */
  const int halo_entries = 2 * by * 2 * R;
  auto halo_entry = [&](int e, int &in_tile, int &in_buffer) {
    const int f = e / (2 * R * by), rest = e - f * 2 * R * by;
    const int r = rest / (2 * R), h = rest - r * 2 * R;
    const int col = h < R ? h : h + bx;
    in_tile = f * tf + (r + R) * tw + col;
    in_buffer = f * dy_floats + r * tw + col;
  };
  int halo_tile = 0, halo_buffer = 0;
  if (TILTED && tid < halo_entries) halo_entry(tid, halo_tile, halo_buffer);

  const long long column = a.origin + (long long)iy * a.stride_y + ix;
  const float exy = active ? a.eta_x[ix] + a.eta_y[iy] : 0.f;

  if (HALO == RTM_HALO_TMA) {
    if (tid == 0) {
      for (int s = 0; s < slots; ++s)
        mbar_init(&full[s], 1);
      mbar_fence_init();
    }
    __syncthreads();
  }

  /* Copies (or, for sync, loads and stores) of loaded plane j into ring slot s. */
  auto load_plane = [&](int j, int s) {
    float *tp = smem + s * 2 * tf, *tq = tp + tf;
    if (HALO == RTM_HALO_TMA) {
      if (tid == 0 && j < nplanes) {
        mbar_expect_tx(&full[s], 2u * (uint32_t)(tw * th) * (uint32_t)sizeof(float));
        tma_load_3d(tp, &p_map, ix0, iy0, zb0 + j, &full[s]);
        tma_load_3d(tq, &q_map, ix0, iy0, zb0 + j, &full[s]);
      }
      return;
    }
    const long long plane = tile_origin + (long long)j * a.stride_z;
    if (j < nplanes) {
      if (HALO == RTM_HALO_LDGSTS) {
        if (tid < chunks) {
          cp_async16(tp + first_smem, a.p + plane + first_global, first_valid);
          cp_async16(tq + first_smem, a.q + plane + first_global, first_valid);
        }
      } else if (tid < chunks) {
        float4 vp = make_float4(0.f, 0.f, 0.f, 0.f), vq = vp;
        if (first_valid) {
          vp = __ldg(reinterpret_cast<const float4 *>(a.p + plane + first_global));
          vq = __ldg(reinterpret_cast<const float4 *>(a.q + plane + first_global));
        }
        *reinterpret_cast<float4 *>(tp + first_smem) = vp;
        *reinterpret_cast<float4 *>(tq + first_smem) = vq;
      }
      for (int c = tid + nthreads; c < chunks; c += nthreads) { /* small tiles only */
        const int r = c / chunks_per_row, col = 4 * (c - r * chunks_per_row);
        const bool valid = ix0 + col < a.row_floats && iy0 + r < a.rows;
        const long long at = plane + (long long)r * a.stride_y + col;
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
  };

  float pz[Q], qz[Q], dxp[Q], dyp[Q], dxq[Q], dyq[Q];
#pragma unroll
  for (int k = 0; k < Q; ++k) {
    pz[k] = qz[k] = 0.f;
    dxp[k] = dyp[k] = dxq[k] = dyq[k] = 0.f;
  }

  /* Ring positions of planes i + lead (load), i (front), i - R + 1 (next), i - R (out). */
  int slot_load = lead, slot_front = 0;
  int slot_next = slots - R + 1, slot_out = slots - R;
  uint32_t phase = 0; /* tma: parity of the front slot's barrier */
  for (int j = 0; j < lead; ++j)
    load_plane(j, j);

  for (int i = 0; i < nplanes; ++i) {
    load_plane(i + lead, slot_load);

    /* Plane c's own values, loaded before the wait so that their latency overlaps it. */
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

    if (HALO == RTM_HALO_LDGSTS) wait_copies(lead); /* plane i's group; later ones may be empty */
    if (HALO == RTM_HALO_TMA)
      while (!mbar_try_wait(&full[slot_front], phase)) {
      }
    __syncthreads();

    {
      const float *tp = smem + slot_front * 2 * tf, *tq = tp + tf;
      push(pz, tp[centre]);
      push(qz, tq[centre]);
      if (TILTED) {
        push(dxp, first_tile(tp, centre, 1, a.w1[0]));
        push(dyp, first_tile(tp, centre, tw, a.w1[1]));
        push(dxq, first_tile(tq, centre, 1, a.w1[0]));
        push(dyq, first_tile(tq, centre, tw, a.w1[1]));
      }
    }
    if (TILTED && i >= 2 * R - 1) {
      /* D_y of plane c + 1 over the tile's columns, read at iteration i + 1: the own
       * columns from the queues (D_y of plane c + 1 sits at R + 1), the 2R halo columns
       * from the tile. */
      float *buffer = dy_buffer + ((i + 1) & 1) * 2 * dy_floats;
      const float *tn = smem + slot_next * 2 * tf;
      buffer[own_dy] = dyp[R + 1];
      buffer[dy_floats + own_dy] = dyq[R + 1];
      if (tid < halo_entries) buffer[halo_buffer] = first_tile(tn, halo_tile, tw, a.w1[1]);
      for (int e = tid + nthreads; e < halo_entries; e += nthreads) { /* narrow tiles only */
        int in_tile, in_buffer;
        halo_entry(e, in_tile, in_buffer);
        buffer[in_buffer] = first_tile(tn, in_tile, tw, a.w1[1]);
      }
    }

    if (out) {
      const float *tp = smem + slot_out * 2 * tf, *tq = tp + tf;
      const float p_xx = second_tile(tp, centre, 1, a.c2, a.inv_h2[0]);
      const float q_xx = second_tile(tq, centre, 1, a.c2, a.inv_h2[0]);
      const float p_yy = second_tile(tp, centre, tw, a.c2, a.inv_h2[1]);
      const float q_yy = second_tile(tq, centre, tw, a.c2, a.inv_h2[1]);
      const float p_zz = second_queue(pz, a.c2, a.inv_h2[2]);
      const float q_zz = second_queue(qz, a.c2, a.inv_h2[2]);
      float hz_p = p_zz, hz_q = q_zz, hxy_p = add(p_xx, p_yy), hxy_q = add(q_xx, q_yy);
      if (TILTED) {
        const float *buffer = dy_buffer + (i & 1) * 2 * dy_floats;
        const float p_xy = first_tile(buffer, own_dy, 1, a.w1[0]);
        const float q_xy = first_tile(buffer + dy_floats, own_dy, 1, a.w1[0]);
        const float p_xz = first_queue(dxp, a.w1[2]);
        const float q_xz = first_queue(dxq, a.w1[2]);
        const float p_yz = first_queue(dyp, a.w1[2]);
        const float q_yz = first_queue(dyq, a.w1[2]);
        const float a_xx = mul(nx, nx), a_yy = mul(ny, ny), a_zz = mul(nz, nz);
        const float a_xy = mul(2.f, mul(nx, ny)), a_yz = mul(2.f, mul(ny, nz));
        const float a_xz = mul(2.f, mul(nx, nz));
        hz_p = fmadd(a_xz, p_xz,
                     fmadd(a_yz, p_yz,
                           fmadd(a_xy, p_xy, fmadd(a_zz, p_zz, fmadd(a_yy, p_yy, mul(a_xx, p_xx))))));
        hz_q = fmadd(a_xz, q_xz,
                     fmadd(a_yz, q_yz,
                           fmadd(a_xy, q_xy, fmadd(a_zz, q_zz, fmadd(a_yy, q_yy, mul(a_xx, q_xx))))));
        hxy_p = sub(add(hxy_p, p_zz), hz_p);
        hxy_q = sub(add(hxy_q, q_zz), hz_q);
      }
      const float vz_hz_q = mul(vpz2, hz_q);
      const float rhs_p = fmadd(vpx2, hxy_p, fmadd(vsz2, sub(hz_p, hz_q), vz_hz_q));
      const float rhs_q = fmadd(vpn2, hxy_p, fmadd(-vsz2, sub(hxy_p, hxy_q), vz_hz_q));
      const float d = add(exy, ez);
      float po, qo;
      if (d > 0.f) {
        const float sd = a.damping_sign * d;
        const float keep = sub(1.f, sd), scale = add(1.f, sd);
        po = leapfrog_layer(pz[R], pp, rhs_p, keep, scale);
        qo = leapfrog_layer(qz[R], qp, rhs_q, keep, scale);
      } else {
        po = leapfrog(pz[R], pp, rhs_p);
        qo = leapfrog(qz[R], qp, rhs_q);
      }
      a.p_other[cell] = po;
      a.q_other[cell] = qo;
    }
    slot_load = slot_load + 1 == slots ? 0 : slot_load + 1;
    slot_next = slot_next + 1 == slots ? 0 : slot_next + 1;
    slot_out = slot_out + 1 == slots ? 0 : slot_out + 1;
    if (++slot_front == slots) {
      slot_front = 0;
      phase ^= 1u;
    }
  }
}

/* The kernel instance of (tilted, coefficient type, halo, tile width), as a function
 * pointer. */
typedef void (*kernel_t)(TtiArgs, CUtensorMap, CUtensorMap);

template <bool TILTED, typename C, int HALO> kernel_t pick_width(int bx) {
  switch (bx) {
  case 32: return tti_zmarch<TILTED, C, HALO, 32>;
  case 64: return tti_zmarch<TILTED, C, HALO, 64>;
  default: return tti_zmarch<TILTED, C, HALO, 0>;
  }
}

template <bool TILTED, typename C> kernel_t pick_halo(rtm_halo_t halo, int bx) {
  switch (halo) {
  case RTM_HALO_LDGSTS: return pick_width<TILTED, C, RTM_HALO_LDGSTS>(bx);
  case RTM_HALO_TMA: return pick_width<TILTED, C, RTM_HALO_TMA>(bx);
  default: return pick_width<TILTED, C, RTM_HALO_SYNC>(bx);
  }
}

kernel_t pick(const rtm_tti_shape_t *shape) {
  const int bx = shape->block[0];
  if (shape->tilted)
    return shape->coeff_half ? pick_halo<true, __half>(shape->halo, bx)
                             : pick_halo<true, float>(shape->halo, bx);
  return shape->coeff_half ? pick_halo<false, __half>(shape->halo, bx)
                           : pick_halo<false, float>(shape->halo, bx);
}

int lead_of(const rtm_tti_shape_t *shape) {
  return shape->halo == RTM_HALO_SYNC ? 0 : shape->stages - 1;
}

} // namespace

extern "C" size_t rtm_tti_cuda_shared_bytes(const rtm_tti_shape_t *shape) {
  return shared_bytes_of(shape->block[0], shape->block[1], shape->tilted != 0, shape->halo,
                         lead_of(shape));
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
  RTM_TRY(rtm_cuda_halo_check(shape->halo, shape->stages, shape->zblock, shape->block, device,
                              &optin));
  bytes = rtm_tti_cuda_shared_bytes(shape);
  if (bytes > (size_t)optin)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x x kernel.block_y = %d x %d with kernel.halo = %s, kernel.stages = "
             "%d needs %zu bytes of shared memory per block for %s; device %d allows %d",
             bx, by, rtm_iso_halo_name(shape->halo), shape->stages, bytes,
             shape->tilted ? "tti" : "vti", device, optin);
  RTM_TRY(rtm_cuda_kernel_prepare((const void *)pick(shape), bytes, shape->halo));
  return RTM_OK;
fail:
  return status;
}

extern "C" int rtm_tti_cuda_step(const rtm_grid_t *grid, const rtm_tti_shape_t *shape,
                                 const rtm_tti_fields_t *fields, int backward, int z_begin,
                                 int z_end, void *stream) {
  int status = RTM_OK;
  if (z_end <= z_begin) return RTM_OK;
  if (shape->halo == RTM_HALO_TMA && (!fields->p_map || !fields->q_map))
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_tti_cuda_step: kernel.halo = tma without its tensor maps");
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
    a.lead = lead_of(shape);
    a.slots = ring_slots(a.lead);
    a.damping_sign = backward ? -1.f : 1.f;
    memcpy(a.c2, fields->weights[0].c2, sizeof a.c2); /* the same on every axis */
    for (int axis = 0; axis < 3; ++axis) {
      a.inv_h2[axis] = fields->weights[axis].inv_h2;
      memcpy(a.w1[axis], fields->weights[axis].w1, sizeof a.w1[axis]);
    }
    CUtensorMap p_map, q_map;
    memset(&p_map, 0, sizeof p_map);
    memset(&q_map, 0, sizeof q_map);
    if (shape->halo == RTM_HALO_TMA) {
      memcpy(&p_map, fields->p_map, sizeof p_map);
      memcpy(&q_map, fields->q_map, sizeof q_map);
    }
    const dim3 block((unsigned)bx, (unsigned)by, 1);
    const dim3 blocks((unsigned)((a.nx + bx - 1) / bx), (unsigned)((a.ny + by - 1) / by),
                      (unsigned)((range + a.zblock - 1) / a.zblock));
    const size_t shared = rtm_tti_cuda_shared_bytes(shape);
    pick(shape)<<<blocks, block, shared, (cudaStream_t)stream>>>(a, p_map, q_map);
    RTM_CUDA_TRY_LAUNCH(shape->tilted ? "tti_zmarch<tti>" : "tti_zmarch<vti>");
  }
  return RTM_OK;
fail:
  return status;
}

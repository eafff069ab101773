/* tti_cuda.h - launchers of the VTI/TTI z-marching kernel (tti_cuda.cu), plain C.
 *
 * Equations (rtm_anisotropy.h, tti_cpu.c): the Fletcher-Du-Fowler system, alpha = 1,
 *   rhs_p = vpx^2 dt^2 Hxy p + vpz^2 dt^2 Hz q + vsz^2 dt^2 (Hz p - Hz q)
 *   rhs_q = vpn^2 dt^2 Hxy p + vpz^2 dt^2 Hz q - vsz^2 dt^2 (Hxy p - Hxy q)
 *   Hz f = n_x^2 d_xx f + n_y^2 d_yy f + n_z^2 d_zz f + 2 n_x n_y d_xy f + 2 n_y n_z d_yz f
 *          + 2 n_x n_z d_xz f   (vti: Hz f = d_zz f),   Hxy f = lap f - Hz f,
 *   forward f[n+1] = (2 f[n] - (1 - d) f[n-1] + rhs_f) / (1 + d), backward with d -> -d,
 *   d = eta_dt_x[ix] + eta_dt_y[iy] + eta_dt_z[iz].
 * Space: 8th order (R = 4); d_aa the second-derivative stencil, d_ab (a != b) the
 * first-derivative stencil in b of the first-derivative stencil in a (d_xy = D_x(D_y f),
 * d_xz = D_z(D_x f), d_yz = D_z(D_y f)), summed with fused multiply-adds in the
 * reference's order (tti_cpu.c).
 *
 * Per-cell coefficients (memory.model strategy, padded like the fields), from
 * rtm_anisotropy_prepare / rtm_anisotropy_cell, so the kernel sees the reference's medium:
 *   vti: vpx^2 dt^2, vpz^2 dt^2, vpn^2 dt^2, vsz^2 dt^2                         16 B/cell
 *   tti: the same and the unit axis n_x, n_y, n_z                               28 B/cell
 * Four velocities are the least that carries vp, epsilon, delta and the conditioned vsz
 * (sigma, the delta <= epsilon and vsz limits of rtm_fdf_condition) without recomputing the
 * conditioning per cell; the products dt^2 are the reference's floats bit for bit. The six
 * Hz factors are products of n (3 floats instead of 6: 12 B/cell less for 6 multiplications).
 * Two components would do for a unit n with n_z >= 0, but n_z = sqrt(1 - n_x^2 - n_y^2)
 * loses half its digits for a near-horizontal axis, and 2 n_x n_z with it.
 * Traffic per cell at least (fp32): read p, q, p[n-1], q[n-1]; write p[n+1], q[n+1] (24 B),
 * plus the coefficients: 40 B vti, 52 B tti.
 *
 * Kernel shape: see tti_cuda.cu's header. */
#ifndef RTM_TTI_CUDA_H
#define RTM_TTI_CUDA_H

#include <stddef.h>

#include "iso_cuda.h"
#include "rtm_grid.h"
#include "rtm_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Coefficient volumes, in this order. */
enum {
  RTM_TTI_VPX2,
  RTM_TTI_VPZ2,
  RTM_TTI_VPN2,
  RTM_TTI_VSZ2,
  RTM_TTI_NX,
  RTM_TTI_NY,
  RTM_TTI_NZ,
  RTM_TTI_COEFF_MAX
};
#define RTM_VTI_COEFF_COUNT 4
#define RTM_TTI_COEFF_COUNT 7

typedef struct {
  int tilted;      /* 0: vti (4 coefficient volumes), 1: tti (7) */
  int coeff_half;  /* 1: the coefficient volumes hold IEEE binary16 (memory.model_precision =
                      fp16), converted to float on load; 0: float */
  rtm_halo_t halo; /* how the p and q tiles reach shared memory (kernel.halo) */
  int stages;      /* ldgsts, tma: 2 or 3 (planes in flight + 1) */
  int zblock;      /* planes per thread block; 0 = the whole z-range of a launch */
  int block[2];    /* xy tile in cells */
  int cells;       /* cells a thread updates, 1 or 2, and */
  int slack;       /* tma: iterations of slack in its rings, 2 or 1: rtm_tti_cuda_prepare sets
                      both */
} rtm_tti_shape_t;

typedef struct {
  float *p_other, *q_other;             /* in: f[n-1], out: f[n+1] (backward the reverse) */
  const float *p, *q;                   /* f[n] */
  const void *coeff[RTM_TTI_COEFF_MAX]; /* padded volumes, see above: float, or binary16
                                           when shape.coeff_half */
  const float *eta_dt[3];               /* device profiles over each axis' global interior */
  /* tma only (NULL for sync and ldgsts), maps made with the tile of shape.block: the halo
   * maps of `p` and `q` (rtm_iso_cuda_tensor_map) and the cell maps of `p_other`, `q_other`
   * (rtm_iso_cuda_cell_map) and of the coefficient volumes (rtm_iso_cuda_cell_map, or
   * rtm_iso_cuda_cell_map_half for binary16) */
  const rtm_iso_tensor_map_t *p_map, *q_map, *p_other_map, *q_other_map;
  const rtm_iso_tensor_map_t *coeff_map[RTM_TTI_COEFF_MAX];
  rtm_fd_weights_t weights[3]; /* rtm_fd_weights of each axis' spacing */
  float *level_copy;           /* NULL, or the new p level's interior cells written here too, dense
                                  [nz_local][ny][nx] (a source snapshot taken in the step) */
} rtm_tti_fields_t;

/* Checks that `device` can run `shape` (tile width a positive multiple of 4, at most 512
 * threads and whole warps, stages 2 or 3, ldgsts on sm_80+, tma on sm_90+ with a tile plus
 * halo of at most 256 cells a side and, with fp16 coefficients, a tile width that is a
 * multiple of 8, shared memory within the device's limit), sets shape->cells and
 * slack (2 cells a thread for a tma tile of 32 x 8 or 64 x 4 cells whose blocks fit
 * three to a multiprocessor, with slack 1 at 2 stages where slack 2 does not fit: see
 * tti_cuda.cu) and raises the kernel's dynamic shared-memory limit. Errors name the config
 * key. Launch with the shape it prepared. */
int rtm_tti_cuda_prepare(rtm_tti_shape_t *shape, int device);

/* 1 when a prepared shape's two cells a thread sit side by side in x (width 64), 0 when
 * they are rows of a column (width 32) or it has one cell a thread. */
int rtm_tti_cuda_pairs_along_x(const rtm_tti_shape_t *shape);

/* Shared memory one block of `shape` uses, in bytes. */
size_t rtm_tti_cuda_shared_bytes(const rtm_tti_shape_t *shape);

/* One leapfrog update of p and q over the local planes [z_begin, z_end) on `stream`. */
int rtm_tti_cuda_step(const rtm_grid_t *grid, const rtm_tti_shape_t *shape,
                      const rtm_tti_fields_t *fields, int backward, int z_begin, int z_end,
                      void *stream);

#ifdef __cplusplus
}
#endif

#endif

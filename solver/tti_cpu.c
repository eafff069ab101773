/* The VTI and TTI physics of backend `cpu`: the pseudo-acoustic system of Fletcher, Du &
 * Fowler (2009) with alpha = 1 (rtm_anisotropy.h has the equations and the conditioning).
 * cpu_backend.c does sources (added to p and q), receivers (p) and the time levels.
 *
 * Per cell, for f = p and q at level n:
 *   d_aa f = (c0 f + sum_{k=1..4} c_k (f[+k e_a] + f[-k e_a])) / h_a^2      (8th order)
 *   D_a f  = sum_{k=1..4} b_k (f[+k e_a] - f[-k e_a]) / h_a    (b = 4/5, -1/5, 4/105, -1/280)
 *   d_ab f = D_b (D_a f)  for a != b: the first-derivative stencil in both directions
 *   Hz f   = n_x^2 d_xx f + n_y^2 d_yy f + n_z^2 d_zz f
 *            + 2 n_x n_y d_xy f + 2 n_y n_z d_yz f + 2 n_x n_z d_xz f    (vti: Hz f = d_zz f)
 *   Hxy f  = lap f - Hz f                                                  (vti: d_xx f + d_yy f)
 *   rhs_p  = vpx^2 dt^2 Hxy p + vpz^2 dt^2 Hz q + vsz^2 dt^2 (Hz p - Hz q)
 *   rhs_q  = vpn^2 dt^2 Hxy p + vpz^2 dt^2 Hz q - vsz^2 dt^2 (Hxy p - Hxy q)
 * and the leapfrog with the damping layer of iso_cpu.c, d = eta dt:
 *   forward   f[n+1] = (2 f[n] - (1 - d) f[n-1] + rhs_f) / (1 + d)
 *   backward  f[n-1] = (2 f[n] - (1 + d) f[n+1] + rhs_f) / (1 - d)
 * The mixed derivatives go through two scratch fields per field, D_x f and D_y f, computed
 * first over the planes the update needs (R more on each side along z): d_xy = D_y(D_x f),
 * d_xz = D_z(D_x f), d_yz = D_z(D_y f). That is the 64-point product stencil, summed in
 * another order. Outside the interior in x and y the scratch stays zero, as f does (the
 * wall one cell past each face); in the z halos it is computed from f's halo planes, which
 * MPI fills. With eps = delta = 0 both equations are the iso one with p = q, bit for bit
 * p[n] = q[n] (same expression, vsz = 0).
 *
 * Per cell, precomputed at create (padded like the fields): vpx^2 dt^2, vpz^2 dt^2,
 * vpn^2 dt^2, vsz^2 dt^2 and, for tti, the six factors of Hz. With memory.model_precision =
 * fp16 they hold the values of the binary16 volumes the cuda backend reads (still floats
 * here: the reference is for comparing numbers, not bytes). */
#include <stdlib.h>
#include <string.h>

#include "cpu_backend.h"
#include "rtm_anisotropy.h"
#include "rtm_status.h"

enum { P = 0, Q = 1 };

/* Per-cell coefficients; the Hz factors exist for tti only. */
enum { VPX2, VPZ2, VPN2, VSZ2, HZ_XX, HZ_YY, HZ_ZZ, HZ_XY, HZ_YZ, HZ_XZ, COEFF_COUNT };
static const char *const coeff_label[COEFF_COUNT] = {
    "model.vpx2dt2", "model.vpz2dt2", "model.vpn2dt2", "model.vsz2dt2", "model.hz_xx",
    "model.hz_yy",   "model.hz_zz",   "model.hz_xy",   "model.hz_yz",   "model.hz_xz"};

/* Scratch first derivatives of the centre level (tti). */
enum { DX_P, DY_P, DX_Q, DY_Q, FIRST_COUNT };
static const char *const first_label[FIRST_COUNT] = {"scratch.dx_p", "scratch.dy_p", "scratch.dx_q",
                                                     "scratch.dy_q"};

typedef struct {
  rtm_grid_t grid;
  int tilted;
  int coeff_count;
  float c2[RTM_RADIUS + 1]; /* rtm_fd2_coeff */
  float c1[RTM_RADIUS];     /* rtm_fd1_coeff */
  float inv_h2[3], inv_h[3];
  rtm_allocation_t level[2][2]; /* [field][0/1] */
  float *current[2], *previous[2];
  rtm_allocation_t coeff[COEFF_COUNT];
  rtm_allocation_t first[FIRST_COUNT];
  rtm_allocation_t eta;
  const float *eta_dt[3];
} tti_cpu_t;

static void tti_destroy(void *state) {
  tti_cpu_t *s = state;
  if (!s) return;
  rtm_mem_free(&s->eta);
  for (int k = FIRST_COUNT - 1; k >= 0; --k)
    rtm_mem_free(&s->first[k]);
  for (int k = COEFF_COUNT - 1; k >= 0; --k)
    rtm_mem_free(&s->coeff[k]);
  for (int f = 1; f >= 0; --f) {
    rtm_mem_free(&s->level[f][1]);
    rtm_mem_free(&s->level[f][0]);
  }
  free(s);
}

/* Fills the per-cell coefficients from the conditioned parameters, as the GPU stores them
 * (rtm_anisotropy_stored). The Hz factors are products of the axis in double rounded to
 * float: with fp32 the axis itself (from the angles, or the smoothed float axis); with fp16
 * the binary16 axis the GPU holds, whose products are exact in float, so that they equal
 * the kernel's float products of the widened halves bit for bit. */
static int fill_coefficients(tti_cpu_t *s, const rtm_backend_desc_t *desc) {
  int status = RTM_OK;
  rtm_anisotropy_t prepared;
  int prepared_ok = 0;
  RTM_TRY(rtm_anisotropy_prepare(desc->config, desc->grid, desc->model, &prepared));
  prepared_ok = 1;
  const rtm_grid_t *g = &s->grid;
  const long nx = g->n[0], ny = g->n[1];
  const double dt2 = desc->dt_s * desc->dt_s;
  const rtm_precision_t precision = rtm_config_model_precision(desc->config);
  float *c[COEFF_COUNT];
  for (int k = 0; k < s->coeff_count; ++k)
    c[k] = s->coeff[k].ptr;
  for (long iz = 0; iz < g->nz_local; ++iz)
    for (long iy = 0; iy < ny; ++iy)
      for (long ix = 0; ix < nx; ++ix) {
        rtm_fdf_cell_t cell;
        float stored[RTM_FDF_STORED_COUNT];
        RTM_TRY(rtm_anisotropy_stored(&prepared, (size_t)((iz * ny + iy) * nx + ix), dt2,
                                      precision, &cell, stored));
        const size_t i = rtm_grid_index(g, ix, iy, iz);
        c[VPX2][i] = stored[RTM_FDF_VPX2DT2];
        c[VPZ2][i] = stored[RTM_FDF_VPZ2DT2];
        c[VPN2][i] = stored[RTM_FDF_VPN2DT2];
        c[VSZ2][i] = stored[RTM_FDF_VSZ2DT2];
        if (!s->tilted) continue;
        double n[3];
        for (int r = 0; r < 3; ++r)
          n[r] = precision == RTM_PRECISION_FP16 ? stored[RTM_FDF_AXIS_X + r] : cell.axis[r];
        c[HZ_XX][i] = (float)(n[0] * n[0]);
        c[HZ_YY][i] = (float)(n[1] * n[1]);
        c[HZ_ZZ][i] = (float)(n[2] * n[2]);
        c[HZ_XY][i] = (float)(2.0 * n[0] * n[1]);
        c[HZ_YZ][i] = (float)(2.0 * n[1] * n[2]);
        c[HZ_XZ][i] = (float)(2.0 * n[0] * n[2]);
      }
fail:
  if (prepared_ok) rtm_anisotropy_release(&prepared);
  return status;
}

static int tti_create(const rtm_backend_desc_t *desc, void **state) {
  int status = RTM_OK;
  tti_cpu_t *s = NULL;
  *state = NULL;
  if (!desc->config)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: vti/tti need the config (physics.sigma)");
  s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "backend cpu: out of memory for its state");
  s->grid = *desc->grid;
  s->tilted = desc->config->physics.equation == RTM_EQUATION_TTI;
  s->coeff_count = s->tilted ? COEFF_COUNT : HZ_XX;
  for (int k = 0; k <= RTM_RADIUS; ++k)
    s->c2[k] = (float)rtm_fd2_coeff[k];
  for (int k = 0; k < RTM_RADIUS; ++k)
    s->c1[k] = (float)rtm_fd1_coeff[k];
  for (int a = 0; a < 3; ++a) {
    s->inv_h2[a] = (float)(1.0 / (s->grid.spacing_m[a] * s->grid.spacing_m[a]));
    s->inv_h[a] = (float)(1.0 / s->grid.spacing_m[a]);
  }

  const size_t field_bytes = s->grid.padded_cells * sizeof(float);
  static const char *const level_label[2][2] = {{"p.current", "p.previous"},
                                                {"q.current", "q.previous"}};
  for (int f = 0; f < 2; ++f) {
    for (int l = 0; l < 2; ++l)
      RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, level_label[f][l], &s->level[f][l]));
    s->current[f] = s->level[f][0].ptr;
    s->previous[f] = s->level[f][1].ptr;
  }
  for (int k = 0; k < s->coeff_count; ++k)
    RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, coeff_label[k], &s->coeff[k]));
  if (s->tilted)
    for (int k = 0; k < FIRST_COUNT; ++k)
      RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, first_label[k], &s->first[k]));
  RTM_TRY(fill_coefficients(s, desc));
  RTM_TRY(rtm_cpu_copy_damping(desc, desc->ledger, &s->eta, s->eta_dt));
  *state = s;
  return RTM_OK;
fail:
  tti_destroy(s);
  return status;
}

/* D_x f and D_y f over the interior x, y of planes [z_begin - R, z_end + R) within the
 * padded z-range. */
static void first_derivatives(const tti_cpu_t *s, const float *restrict f, float *restrict fx,
                              float *restrict fy, long z_begin, long z_end) {
  const rtm_grid_t *g = &s->grid;
  const long nx = g->n[0], ny = g->n[1], sy = (long)g->stride_y;
  const long z_lo = z_begin - RTM_RADIUS > -RTM_RADIUS ? z_begin - RTM_RADIUS : -RTM_RADIUS;
  const long z_hi =
      z_end + RTM_RADIUS < g->nz_local + RTM_RADIUS ? z_end + RTM_RADIUS : g->nz_local + RTM_RADIUS;
  float c1[RTM_RADIUS];
  memcpy(c1, s->c1, sizeof c1);
  const float inv_hx = s->inv_h[0], inv_hy = s->inv_h[1];

  RTM_OMP_ROWS
  for (long iz = z_lo; iz < z_hi; ++iz) {
    for (long iy = 0; iy < ny; ++iy) {
      const size_t row = rtm_grid_index(g, 0, iy, iz);
      const float *restrict v = f + row;
      RTM_OMP_SIMD
      for (long ix = 0; ix < nx; ++ix) {
        float dx = 0.0f, dy = 0.0f;
        for (int k = 1; k <= RTM_RADIUS; ++k) {
          dx += c1[k - 1] * (v[ix + k] - v[ix - k]);
          dy += c1[k - 1] * (v[ix + k * sy] - v[ix - k * sy]);
        }
        fx[row + (size_t)ix] = dx * inv_hx;
        fy[row + (size_t)ix] = dy * inv_hy;
      }
    }
  }
}

/* d_aa f at element i along a stride, times 1 / h_a^2 */
static inline float second(const float *restrict f, long i, long stride, const float *c2,
                           float inv_h2) {
  float d2 = c2[0] * f[i];
  for (int k = 1; k <= RTM_RADIUS; ++k)
    d2 += c2[k] * (f[i + k * stride] + f[i - k * stride]);
  return d2 * inv_h2;
}

/* D_b g at element i along a stride, times 1 / h_b (g is a first derivative) */
static inline float first(const float *restrict g, long i, long stride, const float *c1,
                          float inv_h) {
  float d = 0.0f;
  for (int k = 1; k <= RTM_RADIUS; ++k)
    d += c1[k - 1] * (g[i + k * stride] - g[i - k * stride]);
  return d * inv_h;
}

/* The leapfrog of one cell given Hz and Hxy of p and q. sd = +d forward, -d backward: with
 * d -> -d the forward formula is the backward one (negation is exact, so the results are those
 * of the two formulas written out). */
static inline void advance(const float *restrict p, const float *restrict q, float *restrict p_out,
                           float *restrict q_out, long i, float hz_p, float hz_q, float hxy_p,
                           float hxy_q, float vpx2, float vpz2, float vpn2, float vsz2, float sd) {
  const float rhs_p = vpx2 * hxy_p + vpz2 * hz_q + vsz2 * (hz_p - hz_q);
  const float rhs_q = vpn2 * hxy_p + vpz2 * hz_q - vsz2 * (hxy_p - hxy_q);
  p_out[i] = (2.0f * p[i] - (1.0f - sd) * p_out[i] + rhs_p) / (1.0f + sd);
  q_out[i] = (2.0f * q[i] - (1.0f - sd) * q_out[i] + rhs_q) / (1.0f + sd);
}

static void tti_update(void *state, long z_begin, long z_end, rtm_direction_t direction) {
  const tti_cpu_t *s = state;
  const int forward = direction == RTM_FORWARD;
  const float sign = forward ? 1.0f : -1.0f;
  /* Forward: centre f[n] = current, out = previous; backward: centre = previous, out =
   * current (holding f[n+1]). */
  const float *restrict p = forward ? s->current[P] : s->previous[P];
  const float *restrict q = forward ? s->current[Q] : s->previous[Q];
  float *restrict p_out = forward ? s->previous[P] : s->current[P];
  float *restrict q_out = forward ? s->previous[Q] : s->current[Q];
  const rtm_grid_t *g = &s->grid;
  const long nx = g->n[0], ny = g->n[1];
  const long sy = (long)g->stride_y, sz = (long)g->stride_z;
  const float *restrict vpx2 = s->coeff[VPX2].ptr, *restrict vpz2 = s->coeff[VPZ2].ptr;
  const float *restrict vpn2 = s->coeff[VPN2].ptr, *restrict vsz2 = s->coeff[VSZ2].ptr;
  const float *restrict eta_x = s->eta_dt[0];
  const float *restrict eta_y = s->eta_dt[1];
  const float *restrict eta_z = s->eta_dt[2] + g->z_offset;
  float c2[RTM_RADIUS + 1], c1[RTM_RADIUS], inv_h2[3], inv_h[3];
  memcpy(c2, s->c2, sizeof c2);
  memcpy(c1, s->c1, sizeof c1);
  memcpy(inv_h2, s->inv_h2, sizeof inv_h2);
  memcpy(inv_h, s->inv_h, sizeof inv_h);

  if (!s->tilted) { /* vti: Hz = d_zz, Hxy = d_xx + d_yy */
    RTM_OMP_ROWS
    for (long iz = z_begin; iz < z_end; ++iz) {
      for (long iy = 0; iy < ny; ++iy) {
        const long row = (long)rtm_grid_index(g, 0, iy, iz);
        RTM_OMP_SIMD
        for (long ix = 0; ix < nx; ++ix) {
          const long i = row + ix;
          const float hxy_p = second(p, i, 1, c2, inv_h2[0]) + second(p, i, sy, c2, inv_h2[1]);
          const float hxy_q = second(q, i, 1, c2, inv_h2[0]) + second(q, i, sy, c2, inv_h2[1]);
          const float hz_p = second(p, i, sz, c2, inv_h2[2]),
                      hz_q = second(q, i, sz, c2, inv_h2[2]);
          const float sd = sign * (eta_x[ix] + eta_y[iy] + eta_z[iz]);
          advance(p, q, p_out, q_out, i, hz_p, hz_q, hxy_p, hxy_q, vpx2[i], vpz2[i], vpn2[i],
                  vsz2[i], sd);
        }
      }
    }
    return;
  }

  float *restrict px = s->first[DX_P].ptr, *restrict py = s->first[DY_P].ptr;
  float *restrict qx = s->first[DX_Q].ptr, *restrict qy = s->first[DY_Q].ptr;
  first_derivatives(s, p, px, py, z_begin, z_end);
  first_derivatives(s, q, qx, qy, z_begin, z_end);
  const float *restrict a_xx = s->coeff[HZ_XX].ptr, *restrict a_yy = s->coeff[HZ_YY].ptr;
  const float *restrict a_zz = s->coeff[HZ_ZZ].ptr, *restrict a_xy = s->coeff[HZ_XY].ptr;
  const float *restrict a_yz = s->coeff[HZ_YZ].ptr, *restrict a_xz = s->coeff[HZ_XZ].ptr;

  RTM_OMP_ROWS
  for (long iz = z_begin; iz < z_end; ++iz) {
    for (long iy = 0; iy < ny; ++iy) {
      const long row = (long)rtm_grid_index(g, 0, iy, iz);
      RTM_OMP_SIMD
      for (long ix = 0; ix < nx; ++ix) {
        const long i = row + ix;
        const float p_xx = second(p, i, 1, c2, inv_h2[0]), q_xx = second(q, i, 1, c2, inv_h2[0]);
        const float p_yy = second(p, i, sy, c2, inv_h2[1]), q_yy = second(q, i, sy, c2, inv_h2[1]);
        const float p_zz = second(p, i, sz, c2, inv_h2[2]), q_zz = second(q, i, sz, c2, inv_h2[2]);
        const float p_xy = first(px, i, sy, c1, inv_h[1]), q_xy = first(qx, i, sy, c1, inv_h[1]);
        const float p_xz = first(px, i, sz, c1, inv_h[2]), q_xz = first(qx, i, sz, c1, inv_h[2]);
        const float p_yz = first(py, i, sz, c1, inv_h[2]), q_yz = first(qy, i, sz, c1, inv_h[2]);
        const float hz_p = a_xx[i] * p_xx + a_yy[i] * p_yy + a_zz[i] * p_zz + a_xy[i] * p_xy +
                           a_yz[i] * p_yz + a_xz[i] * p_xz;
        const float hz_q = a_xx[i] * q_xx + a_yy[i] * q_yy + a_zz[i] * q_zz + a_xy[i] * q_xy +
                           a_yz[i] * q_yz + a_xz[i] * q_xz;
        const float hxy_p = (p_xx + p_yy + p_zz) - hz_p, hxy_q = (q_xx + q_yy + q_zz) - hz_q;
        const float sd = sign * (eta_x[ix] + eta_y[iy] + eta_z[iz]);
        advance(p, q, p_out, q_out, i, hz_p, hz_q, hxy_p, hxy_q, vpx2[i], vpz2[i], vpn2[i], vsz2[i],
                sd);
      }
    }
  }
}

static float *tti_level(void *state, rtm_field_t field, rtm_level_t level) {
  tti_cpu_t *s = state;
  if (field != RTM_FIELD_P && field != RTM_FIELD_Q) return NULL;
  const int f = field == RTM_FIELD_P ? P : Q;
  return level == RTM_LEVEL_CURRENT ? s->current[f] : s->previous[f];
}

static void tti_rotate(void *state) {
  tti_cpu_t *s = state;
  for (int f = 0; f < 2; ++f) {
    float *swap = s->current[f];
    s->current[f] = s->previous[f];
    s->previous[f] = swap;
  }
}

const rtm_cpu_physics_t rtm_cpu_physics_tti = {
    .name = "vti/tti",
    .field_count = 2,
    .create = tti_create,
    .update = tti_update,
    .level = tti_level,
    .rotate = tti_rotate,
    .destroy = tti_destroy,
};

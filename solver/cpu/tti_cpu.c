/* The VTI and TTI physics of backend `cpu`: the pseudo-acoustic system of Fletcher, Du &
 * Fowler (2009) with alpha = 1 (rtm_anisotropy.h has the equations and the conditioning).
 * cpu_backend.c does sources (added to p and q), receivers (p, q or both: tti_level hands it
 * either field) and the time levels.
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
 * first over the planes the update needs (R more on each side along z): d_xy = D_x(D_y f),
 * d_xz = D_z(D_x f), d_yz = D_z(D_y f). That is the 64-point product stencil, summed in
 * another order.
 *
 * Rounding (the order the cuda kernel repeats bit for bit): the floats of rtm_fd_weights
 * (c, 1 / h^2 and w1 = b / h), every sum a chain of fused multiply-adds from its first term:
 *   d_aa f = fma(c_4, f[+4] + f[-4], ... fma(c_1, f[+1] + f[-1], c_0 f)) * (1 / h^2)
 *   D_a g  = fma(w1_4, g[+4] - g[-4], ... fma(w1_2, g[+2] - g[-2], w1_1 (g[+1] - g[-1])))
 *   Hz f   = fma(a_xz, d_xz f, fma(a_yz, d_yz f, ... fma(a_yy, d_yy f, a_xx d_xx f)))
 *   Hxy f  = ((d_xx f + d_yy f) + d_zz f) - Hz f
 *   rhs_p  = fma(vpx2, Hxy p, fma(vsz2, Hz p - Hz q, vpz2 Hz q))
 *   rhs_q  = fma(vpn2, Hxy p, fma(-vsz2, Hxy p - Hxy q, vpz2 Hz q))
 *   f[n+1] = fma(2, f[n], fma(-(1 - d), f[n-1], rhs_f)) / (1 + d)
 * (fmaf is exactly rounded: the same floats with and without a hardware fma, see
 * RTM_FMA_CLONES). Outside the interior in x and y the scratch stays zero, as f does (the
 * wall one cell past each face); in the z halos it is computed from f's halo planes, which
 * MPI fills. With eps = delta = 0 both equations are the iso one with p = q, bit for bit
 * p[n] = q[n] (same expression, vsz = 0).
 *
 * Per cell, precomputed at create (padded like the fields): vpx^2 dt^2, vpz^2 dt^2,
 * vpn^2 dt^2, vsz^2 dt^2 and, for tti, the six factors of Hz. With memory.model_precision =
 * fp16 they hold the values of the binary16 volumes the cuda backend reads (still floats
 * here: the reference is for comparing numbers, not bytes). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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
  rtm_fd_weights_t weights[3]; /* per axis */
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

/* Cells of a row filled at a time: their values and coefficients on the thread's stack. */
enum { FILL_PIECE = 128 };

/* Fills the per-cell coefficients from the conditioned parameters, as the GPU stores them
 * (rtm_anisotropy_stored), a piece of a row at a time over the threads. The Hz factors are
 * products of the axis in double rounded to float: with fp32 the axis itself (from the
 * angles, or the smoothed float axis); with fp16 the binary16 axis the GPU holds, whose
 * products are exact in float, so that they equal the kernel's float products of the
 * widened halves bit for bit. A value binary16 cannot keep: the first such cell by index,
 * found over the threads, is asked again alone for its message. */
static int fill_coefficients(tti_cpu_t *s, const rtm_backend_desc_t *desc) {
  int status = RTM_OK;
  rtm_anisotropy_t prepared;
  int prepared_ok = 0;
  RTM_TRY(rtm_anisotropy_prepare(desc->config, desc->grid, desc->model, &prepared));
  prepared_ok = 1;
  const rtm_grid_t *g = &s->grid;
  const long nx = g->n[0], ny = g->n[1];
  const double dt2 = desc->dt_s * desc->dt_s;
  const int half = rtm_config_model_precision(desc->config) == RTM_PRECISION_FP16;
  float *c[COEFF_COUNT];
  for (int k = 0; k < s->coeff_count; ++k)
    c[k] = s->coeff[k].ptr;
  size_t beyond = SIZE_MAX; /* the first cell binary16 cannot keep (fp16) */
#pragma omp parallel for collapse(2) schedule(static) reduction(min : beyond)
  for (long iz = 0; iz < g->nz_local; ++iz)
    for (long iy = 0; iy < ny; ++iy)
      for (long x = 0; x < nx; x += FILL_PIECE) {
        const size_t cells = (size_t)(nx - x < FILL_PIECE ? nx - x : FILL_PIECE);
        const size_t first = (size_t)((iz * ny + iy) * nx + x);
        const size_t at = rtm_grid_index(g, x, iy, iz); /* the piece's first cell */
        float axis[3][FILL_PIECE]; /* the v^2 dt^2 straight into their volumes */
        float *const row[RTM_FDF_STORED_COUNT] = {
            [RTM_FDF_VPX2DT2] = c[VPX2] + at, [RTM_FDF_VPZ2DT2] = c[VPZ2] + at,
            [RTM_FDF_VPN2DT2] = c[VPN2] + at, [RTM_FDF_VSZ2DT2] = c[VSZ2] + at,
            [RTM_FDF_AXIS_X] = axis[0],       [RTM_FDF_AXIS_Y] = axis[1],
            [RTM_FDF_AXIS_Z] = axis[2]};
        rtm_fdf_cell_t cell[FILL_PIECE];
        const size_t refused = rtm_anisotropy_stored_row(
            &prepared, first, cells, dt2, half ? RTM_PRECISION_FP16 : RTM_PRECISION_FP32, row, NULL,
            s->tilted && !half ? cell : NULL); /* fp32: the axis in double */
        if (refused < cells && first + refused < beyond) beyond = first + refused;
        for (size_t i = 0; s->tilted && i < cells; ++i) {
          double n[3];
          for (int r = 0; r < 3; ++r)
            n[r] = half ? axis[r][i] : cell[i].axis[r];
          c[HZ_XX][at + i] = (float)(n[0] * n[0]);
          c[HZ_YY][at + i] = (float)(n[1] * n[1]);
          c[HZ_ZZ][at + i] = (float)(n[2] * n[2]);
          c[HZ_XY][at + i] = (float)(2.0 * n[0] * n[1]);
          c[HZ_YZ][at + i] = (float)(2.0 * n[1] * n[2]);
          c[HZ_XZ][at + i] = (float)(2.0 * n[0] * n[2]);
        }
      }
  if (beyond != SIZE_MAX) { /* its message, said once */
    rtm_fdf_cell_t cell;
    float stored[RTM_FDF_STORED_COUNT];
    status = rtm_anisotropy_stored(&prepared, beyond, dt2, RTM_PRECISION_FP16, &cell, stored);
    if (status == RTM_OK) status = RTM_ERR_INTERNAL;
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
  for (int a = 0; a < 3; ++a)
    rtm_fd_weights(s->grid.spacing_m[a], &s->weights[a]);

  const size_t field_bytes = s->grid.padded_cells * sizeof(float);
  static const char *const level_label[2][2] = {{"p.current", "p.previous"},
                                                {"q.current", "q.previous"}};
  for (int f = 0; f < 2; ++f) {
    for (int l = 0; l < 2; ++l)
      RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, level_label[f][l], &s->level[f][l]));
    s->current[f] = s->level[f][0].ptr;
    s->previous[f] = s->level[f][1].ptr;
  }
  const tti_cpu_t *owner = desc->medium_of; /* the same coefficients, made by their state */
  for (int k = 0; k < s->coeff_count; ++k)
    if (owner)
      rtm_mem_borrow(&s->coeff[k], &owner->coeff[k]);
    else
      RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, coeff_label[k], &s->coeff[k]));
  if (s->tilted)
    for (int k = 0; k < FIRST_COUNT; ++k)
      RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, first_label[k], &s->first[k]));
  if (!owner) RTM_TRY(fill_coefficients(s, desc));
  RTM_TRY(rtm_cpu_copy_damping(desc, desc->ledger, &s->eta, s->eta_dt));
  *state = s;
  return RTM_OK;
fail:
  tti_destroy(s);
  return status;
}

/* fmaf is one instruction on x86-64 processors with FMA3 but a call into libm on the
 * baseline x86-64 target, too slow for the sweeps: there the row functions are compiled
 * twice and the loader picks the fma clone when the processor has one. Both give the same
 * floats (fmaf is exactly rounded); only the speed differs. */
#if defined(__x86_64__) && !defined(__FMA__) && defined(__ELF__) &&                         \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8))
#define RTM_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define RTM_FMA_CLONES
#endif

/* d_aa f at element i along a stride (the axis' weights w) */
static inline float second(const float *restrict f, long i, long stride,
                           const rtm_fd_weights_t *w) {
  float d = w->c2[0] * f[i];
  for (int k = 1; k <= RTM_RADIUS; ++k)
    d = fmaf(w->c2[k], f[i + k * stride] + f[i - k * stride], d);
  return d * w->inv_h2;
}

/* D_b g at element i along a stride (weights w1 of the axis) */
static inline float first(const float *restrict g, long i, long stride, const float *w1) {
  float d = w1[0] * (g[i + stride] - g[i - stride]);
  for (int k = 2; k <= RTM_RADIUS; ++k)
    d = fmaf(w1[k - 1], g[i + k * stride] - g[i - k * stride], d);
  return d;
}

/* D_x f and D_y f of one row of nx cells starting at f (row stride sy). */
RTM_FMA_CLONES static void first_row(const float *f, float *fx, float *fy, long nx, long sy,
                                     const float *w1x, const float *w1y) {
  RTM_OMP_SIMD
  for (long ix = 0; ix < nx; ++ix) {
    fx[ix] = first(f, ix, 1, w1x);
    fy[ix] = first(f, ix, sy, w1y);
  }
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
  const float *w1x = s->weights[0].w1, *w1y = s->weights[1].w1;

  RTM_OMP_ROWS
  for (long iz = z_lo; iz < z_hi; ++iz) {
    for (long iy = 0; iy < ny; ++iy) {
      const size_t row = rtm_grid_index(g, 0, iy, iz);
      first_row(f + row, fx + row, fy + row, nx, sy, w1x, w1y);
    }
  }
}

/* The leapfrog of one field at one cell from its rhs: sd = +d forward, -d backward (with
 * d -> -d the forward formula is the backward one, and negation is exact). */
static inline float leapfrog(float f, float f_other, float rhs, float sd) {
  return fmaf(2.0f, f, fmaf(-(1.0f - sd), f_other, rhs)) / (1.0f + sd);
}

/* What one row sweep reads and writes: the fields at the centre level, the new level, the
 * per-cell coefficients and (tti) the first-derivative scratch. */
typedef struct {
  const float *p, *q;
  float *p_out, *q_out;
  const float *coeff[COEFF_COUNT];
  const float *first[FIRST_COUNT];
  const float *eta_x;
  long sy, sz;
  const rtm_fd_weights_t *w; /* [3] */
} sweep_t;

#if defined(__GNUC__) || defined(__clang__)
#define RTM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define RTM_ALWAYS_INLINE inline
#endif

/* One row of nx cells starting at element `row`, whose damping profiles along y and z are
 * eta_y and eta_z; vti (Hz = d_zz, Hxy = d_xx + d_yy) or tti. Inlined with `tilted` a
 * constant (update_row), so that the loop has no branch and vectorises. */
static RTM_ALWAYS_INLINE void row_cells(const sweep_t *w, long row, long nx, float eta_y,
                                        float eta_z, float sign, const int tilted) {
  const float *restrict p = w->p, *restrict q = w->q;
  float *restrict p_out = w->p_out, *restrict q_out = w->q_out;
  const float *restrict vpx2 = w->coeff[VPX2], *restrict vpz2 = w->coeff[VPZ2];
  const float *restrict vpn2 = w->coeff[VPN2], *restrict vsz2 = w->coeff[VSZ2];
  const float *restrict a_xx = w->coeff[HZ_XX], *restrict a_yy = w->coeff[HZ_YY];
  const float *restrict a_zz = w->coeff[HZ_ZZ], *restrict a_xy = w->coeff[HZ_XY];
  const float *restrict a_yz = w->coeff[HZ_YZ], *restrict a_xz = w->coeff[HZ_XZ];
  const float *restrict px = w->first[DX_P], *restrict py = w->first[DY_P];
  const float *restrict qx = w->first[DX_Q], *restrict qy = w->first[DY_Q];
  const float *restrict eta_x = w->eta_x;
  const long sy = w->sy, sz = w->sz;
  const rtm_fd_weights_t wx = w->w[0], wy = w->w[1], wz = w->w[2];
  const float *w1x = wx.w1, *w1z = wz.w1;

  RTM_OMP_SIMD
  for (long ix = 0; ix < nx; ++ix) {
    const long i = row + ix;
    const float p_xx = second(p, i, 1, &wx), q_xx = second(q, i, 1, &wx);
    const float p_yy = second(p, i, sy, &wy), q_yy = second(q, i, sy, &wy);
    const float p_zz = second(p, i, sz, &wz), q_zz = second(q, i, sz, &wz);
    float hz_p = p_zz, hz_q = q_zz, hxy_p = p_xx + p_yy, hxy_q = q_xx + q_yy;
    if (tilted) {
      const float p_xy = first(py, i, 1, w1x), q_xy = first(qy, i, 1, w1x);
      const float p_xz = first(px, i, sz, w1z), q_xz = first(qx, i, sz, w1z);
      const float p_yz = first(py, i, sz, w1z), q_yz = first(qy, i, sz, w1z);
      hz_p = fmaf(a_xz[i], p_xz,
                  fmaf(a_yz[i], p_yz,
                       fmaf(a_xy[i], p_xy,
                            fmaf(a_zz[i], p_zz, fmaf(a_yy[i], p_yy, a_xx[i] * p_xx)))));
      hz_q = fmaf(a_xz[i], q_xz,
                  fmaf(a_yz[i], q_yz,
                       fmaf(a_xy[i], q_xy,
                            fmaf(a_zz[i], q_zz, fmaf(a_yy[i], q_yy, a_xx[i] * q_xx)))));
      hxy_p = (hxy_p + p_zz) - hz_p;
      hxy_q = (hxy_q + q_zz) - hz_q;
    }
    const float vz_hz_q = vpz2[i] * hz_q;
    const float rhs_p = fmaf(vpx2[i], hxy_p, fmaf(vsz2[i], hz_p - hz_q, vz_hz_q));
    const float rhs_q = fmaf(vpn2[i], hxy_p, fmaf(-vsz2[i], hxy_p - hxy_q, vz_hz_q));
    const float sd = sign * (eta_x[ix] + eta_y + eta_z);
    p_out[i] = leapfrog(p[i], p_out[i], rhs_p, sd);
    q_out[i] = leapfrog(q[i], q_out[i], rhs_q, sd);
  }
}

RTM_FMA_CLONES static void update_row(const sweep_t *w, long row, long nx, float eta_y,
                                      float eta_z, float sign, int tilted) {
  if (tilted)
    row_cells(w, row, nx, eta_y, eta_z, sign, 1);
  else
    row_cells(w, row, nx, eta_y, eta_z, sign, 0);
}

static void tti_update(void *state, long z_begin, long z_end, rtm_direction_t direction) {
  tti_cpu_t *s = state;
  const int forward = direction == RTM_FORWARD;
  const float sign = forward ? 1.0f : -1.0f;
  const rtm_grid_t *g = &s->grid;
  const long nx = g->n[0], ny = g->n[1];
  const float *eta_y = s->eta_dt[1];
  const float *eta_z = s->eta_dt[2] + g->z_offset;
  /* Forward: centre f[n] = current, out = previous; backward: centre = previous, out =
   * current (holding f[n+1]). */
  sweep_t w = {
      .p = forward ? s->current[P] : s->previous[P],
      .q = forward ? s->current[Q] : s->previous[Q],
      .p_out = forward ? s->previous[P] : s->current[P],
      .q_out = forward ? s->previous[Q] : s->current[Q],
      .eta_x = s->eta_dt[0],
      .sy = (long)g->stride_y,
      .sz = (long)g->stride_z,
      .w = s->weights,
  };
  for (int k = 0; k < s->coeff_count; ++k)
    w.coeff[k] = s->coeff[k].ptr;
  if (s->tilted) {
    first_derivatives(s, w.p, s->first[DX_P].ptr, s->first[DY_P].ptr, z_begin, z_end);
    first_derivatives(s, w.q, s->first[DX_Q].ptr, s->first[DY_Q].ptr, z_begin, z_end);
    for (int k = 0; k < FIRST_COUNT; ++k)
      w.first[k] = s->first[k].ptr;
  }

  RTM_OMP_ROWS
  for (long iz = z_begin; iz < z_end; ++iz) {
    for (long iy = 0; iy < ny; ++iy)
      update_row(&w, (long)rtm_grid_index(g, 0, iy, iz), nx, eta_y[iy], eta_z[iz], sign,
                 s->tilted);
  }
}

static float *tti_level(void *state, rtm_field_t field, rtm_level_t level) {
  tti_cpu_t *s = state;
  if (field != RTM_FIELD_P && field != RTM_FIELD_Q) return NULL;
  const int f = field == RTM_FIELD_P ? P : Q;
  return level == RTM_LEVEL_CURRENT ? s->current[f] : s->previous[f];
}

static float *tti_damping(void *state) {
  return ((tti_cpu_t *)state)->eta.ptr;
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
    .damping = tti_damping,
    .destroy = tti_destroy,
};

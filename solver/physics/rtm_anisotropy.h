/* rtm_anisotropy.h - VTI/TTI model parameters turned into the coefficients of the
 * pseudo-acoustic system of Fletcher, Du & Fowler (2009), alpha = 1. Every backend takes its
 * per-cell coefficients from here, so that all of them propagate through the same medium.
 *
 *   p_tt = vpx^2 Hxy p + vpz^2 Hz q + vsz^2 Hz (p - q)
 *   q_tt = vpn^2 Hxy p + vpz^2 Hz q - vsz^2 Hxy (p - q)
 *   Hz = (n.grad)^2 = sum_ab n_a n_b d_ab,  Hxy = lap - Hz,
 *   n = (sin th cos ph, sin th sin ph, cos th),
 *   vpx^2 = vpz^2 (1 + 2 eps), vpn^2 = vpz^2 (1 + 2 delta), vsz^2 = vpz^2 (eps - delta) / sigma.
 *
 * For a plane wave, Hz -> -a and Hxy -> -b with a, b >= 0 (a = k_n^2, b = k_perp^2; the
 * 8th-order stencils keep both >= 0 because the 2nd-derivative symbol is at least the square
 * of the 1st-derivative one), and the system becomes omega^2 u = M(a, b) u with
 *   M = [[vpx^2 b + vsz^2 a, (vpz^2 - vsz^2) a], [(vpn^2 - vsz^2) b, vpz^2 a + vsz^2 b]],
 * the P-SV Christoffel matrix of an elastic VTI medium with C44 = vsz^2 (Tsvankin's exact
 * relation). Its eigenvalues are real and non-negative, i.e. the system is stable, when
 *   (1) delta <= epsilon (else det M < 0 for some direction: exponential growth), and
 *   (2) 0 <= vsz^2 <= min(vpz^2, vpn^2), the range where an elastic medium with these
 *       speeds exists. Between vpn^2 and vpz^2 (possible only for delta < 0) the eigenvalues
 *       are complex; above both they are real but the "shear" wave outruns vpx.
 * Conditioning (the usual practice for pseudo-acoustic TTI, e.g. Fletcher et al. 2009,
 * Duveneck & Bakker 2011): where (1) fails, delta is set to epsilon (elliptic, vsz = 0); where
 * (2) fails, vsz^2 is lowered to min(vpz^2, vpn^2). Each is a warning naming how many cells
 * and the first. With (1) and (2) the largest eigenvalue of M over directions is
 * max(vpz^2, vpx^2) (a + b) (checked numerically, tests/solver/test_anisotropy.c), so the
 * leapfrog limit is the iso one at vp sqrt(1 + 2 max(eps, 0)).
 *
 * Sharp changes of tilt: the variable-coefficient FDF operator is not self-adjoint, and rapid
 * tilt changes can feed energy into the qSV mode, at any dt. Measured (48^3, vp gradient,
 * 3000-5000 steps at 99% of the dt limit): a smooth tilt field (0-60 degrees, azimuth
 * turning) stays bounded for eps - delta = 0.2 and 0.6; 6-cell blocks of 0 / +-60 degrees stay
 * bounded for eps 0.3, delta 0.1 but grow for eps 0.6, delta 0 (smoothing over up to 9 cells
 * only slows that); a tilt drawn at random per cell grows for eps 0.3, delta 0.1 without
 * smoothing (at 0.8 of the dt limit too) and stays bounded with w = 1 or 2; elliptic media
 * (eps = delta, vsz = 0) stay bounded even so. Beyond smoothing, the literature makes the
 * medium locally elliptic where the tilt jumps (Yoon et al. 2010) or changes to a
 * self-adjoint form (Duveneck & Bakker 2011); neither is done here.
 * physics.smooth_angles = w (default 1) box-averages the axis over (2w + 1)^3 cells before
 * use; a uniform axis is left alone. What is averaged is the tensor n n^T (the Hz
 * coefficients themselves), not the angles: n and -n are the same axis, so theta = 89 and
 * theta = -89 degrees average to a horizontal axis, not a vertical one. The smoothed axis
 * is the principal eigenvector of the averaged tensor. The box is cut at the edges of the
 * local z-range (a decomposed run needs w planes of the neighbours' model to match a single
 * rank). */
#ifndef RTM_ANISOTROPY_H
#define RTM_ANISOTROPY_H

#include <stddef.h>
#include <stdint.h>

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_half.h"
#include "rtm_physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Coefficients of one cell, conditioned (see above). */
typedef struct {
  double vpz2, vpx2, vpn2, vsz2; /* m^2/s^2 */
  double axis[3];                /* unit symmetry axis n with n_z >= 0; (0, 0, 1) for vti */
} rtm_fdf_cell_t;

/* Conditions one cell: delta lowered to epsilon where it exceeds it, then vsz^2 / vpz^2 =
 * (epsilon - delta) / sigma lowered to min(1, 1 + 2 delta). The flags say which happened. */
void rtm_fdf_condition(double epsilon, double delta, double sigma, double *delta_out,
                       double *vsz2_ratio, int *delta_lowered, int *vsz_lowered);

/* Prepared parameters of the local grid. Refers to the model; keep it alive. */
typedef struct {
  rtm_grid_t grid;
  const rtm_model_t *model;
  int tilted; /* tti: an axis per cell; vti: n = z */
  double sigma;
  float *axis; /* [cells][3] smoothed axes; NULL when taken from the angles directly */
  size_t delta_lowered, vsz_lowered; /* cells conditioned, for reports and tests */
} rtm_anisotropy_t;

/* Range checks of the parameters that vti/tti need; RTM_ERR_INPUT naming the dataset of
 * model.file (or the config key when the model comes from constants), how many cells and
 * the first: 1 + 2 epsilon > 0 and 1 + 2 delta > 0 (vpx, vpn real), epsilon and delta at most
 * 2 (Thomsen parameters are fractions, not percent), angles finite and within +-360 degrees.
 * A missing array is RTM_ERR_INTERNAL (the model loader provides them). */
int rtm_anisotropy_check(const rtm_config_t *cfg, const rtm_grid_t *grid, const rtm_model_t *model);

/* Checks, counts (and warns about) the cells that need conditioning, smooths the axes when
 * physics.smooth_angles > 0. */
int rtm_anisotropy_prepare(const rtm_config_t *cfg, const rtm_grid_t *grid,
                           const rtm_model_t *model, rtm_anisotropy_t *out);
/* Coefficients of dense cell `cell` ([nz_local][ny][nx] order). */
void rtm_anisotropy_cell(const rtm_anisotropy_t *prepared, size_t cell, rtm_fdf_cell_t *out);

/* The per-cell values a backend stores, in this order (tti_cuda.h's coefficient volumes):
 * vpx^2 dt^2, vpz^2 dt^2, vpn^2 dt^2, vsz^2 dt^2 (m^2) and the axis n_x, n_y, n_z. */
enum {
  RTM_FDF_VPX2DT2,
  RTM_FDF_VPZ2DT2,
  RTM_FDF_VPN2DT2,
  RTM_FDF_VSZ2DT2,
  RTM_FDF_AXIS_X,
  RTM_FDF_AXIS_Y,
  RTM_FDF_AXIS_Z,
  RTM_FDF_STORED_COUNT
};
extern const char *const rtm_fdf_stored_name[RTM_FDF_STORED_COUNT]; /* "vpx2dt2", "axis n_x" */

/* The stored values of dense cell `cell`, with `dt2` = dt^2: each v^2 dt^2 formed in double
 * and rounded to float, the axis rounded to float; with precision fp16 (memory.model_precision)
 * each float then rounded to the nearest binary16 (rtm_half.h), so that stored[k] is exactly
 * what a binary16 volume holds and a kernel widens it to. Every backend takes its values from
 * here, so the cpu reference computes with what the GPU reads. `conditioned` receives the
 * cell's coefficients in double (rtm_anisotropy_cell). A value beyond binary16's range
 * (v^2 dt^2 of 65520 m^2 or more, i.e. v dt above 255.9 m), or a vp^2 dt^2 below its normal
 * range (v dt below 7.8 mm: fewer than 11 bits kept), is RTM_ERR_CONFIG naming
 * memory.model_precision, the value and the cell, never a silent infinity or lost bits
 * (rtm_fdf_half_keeps says which). */
/* 1 when stored value k (RTM_FDF_VPX2DT2 ...) keeps its 11 bits as binary16: finite, and for
 * vpx^2, vpz^2 and vpn^2 dt^2 not below binary16's smallest normal (zero is kept); else 0. */
int rtm_fdf_half_keeps(int k, float value);
/* The same with `half` = rtm_half_from_float(value) already made (a fill that stores it). */
int rtm_fdf_half_keeps_as(int k, float value, rtm_half_t half);

int rtm_anisotropy_stored(const rtm_anisotropy_t *prepared, size_t cell, double dt2,
                          rtm_precision_t precision, rtm_fdf_cell_t *conditioned,
                          float stored[RTM_FDF_STORED_COUNT]);

/* rtm_anisotropy_stored's values of the `count` cells from dense cell `first` (a row:
 * consecutive in x) at `precision`: value k of cell first + i into values[k][i] (none where
 * values[k] is NULL), with fp16 its binary16 into halves[k][i] where halves and halves[k]
 * are non-NULL, and with `conditioned` non-NULL the cell's coefficients into
 * conditioned[i]. A cell whose parameters are the previous cell's bit for bit takes its
 * values (the same arithmetic on the same floats gives the same values): layered and
 * constant models repeat them cell after cell, and the arithmetic in double, with the
 * angles' sin and cos, runs once a run of equal cells. Returns the first cell (from `first`)
 * with a value binary16 cannot keep (fp16, a value asked for), or `count`: nothing is said;
 * the caller asks rtm_anisotropy_stored for that cell's message. */
size_t rtm_anisotropy_stored_row(const rtm_anisotropy_t *prepared, size_t first, size_t count,
                                 double dt2, rtm_precision_t precision,
                                 float *const values[RTM_FDF_STORED_COUNT],
                                 rtm_half_t *const halves[RTM_FDF_STORED_COUNT],
                                 rtm_fdf_cell_t *conditioned);
/* Value k (RTM_FDF_VPX2DT2 ...) of `count` cells narrowed to binary16: each of values[] becomes
 * the float of its half (what rtm_anisotropy_stored gives with fp16), the halves also into
 * halves[] where it is non-NULL. A value the same as the last takes its narrowing. Returns
 * the first cell whose value binary16 cannot keep (rtm_fdf_half_keeps), or `count`
 * (rtm_anisotropy_stored_row's narrowing). */
size_t rtm_anisotropy_narrow_row(int k, float *values, size_t count, rtm_half_t *halves);
void rtm_anisotropy_release(rtm_anisotropy_t *prepared);

#ifdef __cplusplus
}
#endif

#endif

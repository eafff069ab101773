/* rtm_physics.h - solver/physics: the equations, independent of where they run.
 *
 * This folder holds what the propagator computes: the 8th-order finite-difference weights,
 * the medium (rtm_model_t) and its conditioning for vti/tti (rtm_anisotropy.h), the stable
 * time step, the Ricker wavelet, the absorbing layer. It stands on the grid (../grid,
 * rtm_grid.h, with binary16 model storage in rtm_half.h) and mpi/; the cpu reference that
 * computes these equations with plain loops is the backend in ../cpu (cpu_backend.c,
 * iso_cpu.c, tti_cpu.c), the oracle every GPU kernel is tested against.
 *
 * iso: p_tt = v^2 lap(p) + s, leapfrog in time, 8th order in space, an absorbing damping
 * layer of boundary.width cells inside every face:
 *   p_tt + 2 eta p_t = v^2 lap(p) + s
 *   p[n+1] = (2 p[n] - (1 - eta dt) p[n-1] + dt^2 v^2 lap(p[n]) + dt^2 s[n]) / (1 + eta dt)
 * with eta(x) = eta_x(ix) + eta_y(iy) + eta_z(iz) from 1D profiles. vti/tti: ../cpu/tti_cpu.c. */
#ifndef RTM_PHYSICS_H
#define RTM_PHYSICS_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- finite-difference coefficients (8th order, R = 4) ---- */
/* Second derivative: c[0] centre, c[k] for offsets +-k (divide by h^2). */
extern const double rtm_fd2_coeff[RTM_RADIUS + 1];
/* First derivative: c[k-1] for offset +k, antisymmetric (divide by h). */
extern const double rtm_fd1_coeff[RTM_RADIUS];

/* The stencils' floats along an axis of spacing h, as the vti/tti reference (tti_cpu.c) and
 * kernel (tti_cuda.cu) use them, in the same order and with fused multiply-adds, so that
 * the two agree bit for bit. The second derivative keeps the iso kernel's weights and its
 * final 1 / h^2: weights rounded otherwise (c_k / h^2 each) sum to another tiny non-zero,
 * a zeroth-order term whose effect grows steadily (3.9e-5 against the iso run after 300
 * steps) where eps = delta = 0 must reproduce it. The first derivative, antisymmetric, has
 * no such term and folds 1 / h into its weights. */
typedef struct {
  float c2[RTM_RADIUS + 1]; /* rtm_fd2_coeff in float */
  float inv_h2;             /* 1 / h^2 */
  float w1[RTM_RADIUS];     /* rtm_fd1_coeff[k] / h */
} rtm_fd_weights_t;
void rtm_fd_weights(double h, rtm_fd_weights_t *weights);

/* ---- model parameters: dense [nz_local][ny][nx] arrays on the host ---- */
typedef struct {
  float *vp;      /* m/s, always present */
  float *epsilon; /* NULL for iso */
  float *delta;
  float *theta_deg; /* NULL for iso and vti */
  float *phi_deg;
  double vp_min, vp_max;
  double epsilon_max;
  /* [min, max] over the cells of epsilon, delta, theta_deg and phi_deg (RTM_MODEL_EPSILON
   * ...; NaN where a value is not finite), and whether they describe the arrays: set by
   * rtm_model_update_range, so that rtm_anisotropy_check, asked at every dt, side and
   * coefficient fill, reads four numbers instead of the volumes (five scans of 2 GB at
   * 512^3 took 0.3 s of a tti migration's set-up) */
  double range[4][2];
  int range_known;
} rtm_model_t;
enum { RTM_MODEL_EPSILON, RTM_MODEL_DELTA, RTM_MODEL_THETA, RTM_MODEL_PHI };

void rtm_model_release(rtm_model_t *model);
/* A model of the grid's local z-range with the [model] constants of the config (the
 * parameters physics.equation needs; the others NULL), below model.interface_z (when set)
 * vp = model.vp_below, its range computed. A model from a
 * file comes through io (rtm_io_read_model), wired by the app. */
int rtm_model_from_constants(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_model_t *model);
/* The largest vp of the model rtm_model_from_constants makes on the whole of `grid` (its
 * rounding to float included), without making it: model.vp, or model.vp_below when
 * model.interface_z leaves cells below it. */
double rtm_model_constants_vp_max(const rtm_config_t *cfg, const rtm_grid_t *grid);
/* Computes vp_min, vp_max, epsilon_max and the ranges; fails on non-positive or non-finite
 * velocity. Called again by whoever changes the arrays after (or range_known set to 0). */
int rtm_model_update_range(rtm_model_t *model, const rtm_grid_t *grid);

/* ---- stability and sampling ---- */
/* Largest stable leapfrog dt for the 8th-order Laplacian: 2 / (v sqrt(S sum 1/h_a^2)),
 * S = |symbol of the 2nd-derivative stencil at Nyquist| = 6.5016. */
double rtm_stable_dt(double v_max, const double spacing_m[3]);
/* Resolves time.dt (auto or explicit) against the stability limit; an unstable explicit dt
 * or cfl is an error naming the key. Warns below 5 points per shortest wavelength
 * (v_min / (2.5 f_peak), the Ricker spectrum being 3% of its peak there). */
int rtm_resolve_dt(const rtm_config_t *cfg, const rtm_model_t *model, const rtm_grid_t *grid,
                   double *dt_s);
/* rtm_resolve_dt's stability check before the model is made, when the deck's [model]
 * constants set v_max (model.file empty; RTM_OK otherwise, the file is checked once read):
 * the same error, so that a command reports it before it claims its output (a deck's
 * errors come before an existing output's). Says nothing when dt is stable. */
int rtm_check_deck_dt(const rtm_config_t *cfg, const rtm_grid_t *grid);

/* ---- wavelets ---- */
/* Ricker w(t) = (1 - 2 pi^2 f^2 (t - t0)^2) exp(-pi^2 f^2 (t - t0)^2). */
double rtm_ricker(double t_s, double frequency_hz, double delay_s);

/* ---- absorbing boundary: 1D damping profiles, eta * dt per cell along each axis ---- */
typedef struct {
  int width_cells;
  float *eta_dt[3]; /* [n[a]] over the global interior of axis a */
} rtm_boundary_t;

int rtm_boundary_init(rtm_boundary_t *boundary, const rtm_grid_t *grid, int width_cells,
                      double reflection, double v_max, double dt_s);
void rtm_boundary_release(rtm_boundary_t *boundary);

#ifdef __cplusplus
}
#endif

#endif

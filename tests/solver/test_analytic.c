/* test_analytic - the cpu backend against the exact solution in a homogeneous medium.
 *
 * With the source term dt^2 v^2 w(t) / (dx dy dz) at a grid node, the pressure at distance
 * r is p(r, t) = w(t - r/v) / (4 pi r), the point-source solution of the 3D wave equation.
 * Ricker at f = 20 Hz, v = 2000 m/s: a peak wavelength of 100 m = 10 cells on the coarse
 * grid (h = 10 m).
 *
 * Receivers sit on grid nodes along the body diagonal from the source, at (m, m, m) cells
 * for m = 18, 23, 29, 35, i.e. r = sqrt(3) m h = 3.1, 4.0, 5.0 and 6.1 wavelengths. The
 * diagonal is chosen for the convergence check below: the 8th-order stencil's dispersion
 * error along a diagonal is about 27x smaller than along an axis (its leading term goes as
 * sum_a (k_a h)^8, and k_a = k / sqrt(3)), so what remains is the leapfrog time error.
 *
 * Error: relative L2 of each trace over [0, r/v + 2.4/f], the whole wavelet (its delay is
 * 1.2/f, it is below 1e-6 of its peak further than 1.2/f from it). No absorbing layer:
 * the walls (p = 0 one cell past each face) lie far enough that no reflection reaches a
 * receiver before its window ends (checked below from the image sources), so the error is
 * pure discretisation (a 99^3 coarse domain gives the same errors to 4 digits).
 *
 * Convergence: halving h and dt at the same Courant number v dt / h = 0.125. The leapfrog
 * phase error grows as (omega dt)^2 / 24 per radian travelled and the spatial one as
 * (k h)^8, so at 10 points per peak wavelength and this small Courant number the time
 * error dominates on the coarse grid (the spatial part is 256x smaller on the fine grid, and
 * the measured ratio leaves it no room): the error is in the asymptotic range of a
 * second-order method and must fall by ~4x. Measured: 2.16% -> 0.55% at 6 wavelengths
 * (ratio 3.97). Along an axis instead, the spatial error at the top of the Ricker band
 * (4-5 points per wavelength) cancels part of the time error on the coarse grid and the
 * ratio drops to 3.1. The Courant number is kept small because the coarse error grows as
 * its square (0.2 would give 5%). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_status.h"
#include "rtm_test_main.h"
#include "sim_helper.h"

enum {
  RECEIVERS = 4,
  SOURCE_TO_WALL = 20, /* coarse cells from the source to the walls behind it */
  SOURCE_TO_FAR = 56,  /* coarse cells from the source to the walls ahead */
  MARGIN_CELLS = 4     /* reflections must arrive this much travel after the window */
};

static const int diagonal_cells[RECEIVERS] = {18, 23, 29, 35};
static const double velocity = 2000.0, frequency = 20.0, courant = 0.125;
static const double max_error = 0.03, min_ratio = 3.0;
static const double pi = 3.14159265358979323846;

/* Relative L2 error of each receiver's trace; refine = 1 (coarse) or 2 (h and dt halved). */
static void run(int refine, double error[RECEIVERS]) {
  const double h = velocity / frequency / 10.0 / refine;
  const int s = SOURCE_TO_WALL * refine - 1; /* walls sit at cells -1 and n */
  sim_params_t params = {0};
  params.n[0] = params.n[1] = params.n[2] = (SOURCE_TO_WALL + SOURCE_TO_FAR) * refine - 1;
  params.h_m = h;
  params.v_m_s = velocity;
  params.frequency_hz = frequency;
  params.courant = courant;
  params.boundary_width = 0;
  params.boundary_reflection = 1e-3;
  double receiver[RECEIVERS][3], distance[RECEIVERS], window_end[RECEIVERS];
  for (int a = 0; a < 3; ++a)
    params.source_m[a] = s * h;
  for (int r = 0; r < RECEIVERS; ++r) {
    const int m = diagonal_cells[r] * refine;
    for (int a = 0; a < 3; ++a)
      receiver[r][a] = (s + m) * h;
    distance[r] = sqrt(3.0) * m * h;
    window_end[r] = distance[r] / velocity + 2.4 / frequency;

    /* Earliest wall reflection: the nearest of the six image sources (mirror in the plane
     * of the wall cells). Every axis looks alike on the diagonal. */
    const double behind = 2.0 * (s + 1) + m, ahead = 2.0 * (params.n[0] - s) - m;
    const double image = fmin(behind, ahead) * h;
    const double first_reflection = sqrt(image * image + 2.0 * m * h * m * h) / velocity;
    assert_true(window_end[r] + MARGIN_CELLS * refine * h / velocity < first_reflection);
  }
  params.duration_s = window_end[RECEIVERS - 1];
  params.source_m[0] = params.source_m[1] = params.source_m[2] = s * h;
  params.receiver_count = RECEIVERS;
  params.receiver_m = &receiver[0][0];

  sim_result_t result;
  assert_int_equal(sim_run(&params, &result), RTM_OK);
  printf("h = %g m, dt = %g s, %d^3 cells, %d steps: %.1f s\n", h, result.dt_s, params.n[0],
         result.steps, result.seconds);
  for (int r = 0; r < RECEIVERS; ++r) {
    double num = 0.0, den = 0.0;
    for (int k = 0; k <= result.steps && k * result.dt_s <= window_end[r]; ++k) {
      const double t = k * result.dt_s;
      const double exact =
          sim_wavelet(t - distance[r] / velocity, frequency) / (4.0 * pi * distance[r]);
      const double e = result.traces[(size_t)r * (result.steps + 1) + k] - exact;
      num += e * e;
      den += exact * exact;
    }
    error[r] = sqrt(num / den);
    printf("  receiver at %.2f wavelengths: relative L2 error %.4f\n",
           distance[r] * frequency / velocity, error[r]);
  }
  free(result.traces);
}

/* The coarse grid's errors, each below max_error. */
static void coarse_run(double coarse[RECEIVERS]) {
  run(1, coarse);
  for (int r = 0; r < RECEIVERS; ++r)
    if (coarse[r] >= max_error)
      fail_msg("receiver %d: error %.4f >= %.2f", r, coarse[r], max_error);
}

static void test_homogeneous_point_source(void **unused) {
  (void)unused;
  double coarse[RECEIVERS];
  coarse_run(coarse);
}

/* The fine grid has 8x the cells and 2x the steps of the coarse one: a long case. */
static void test_convergence(void **unused) {
  (void)unused;
  double coarse[RECEIVERS], fine[RECEIVERS];
  coarse_run(coarse);
  run(2, fine);
  for (int r = 0; r < RECEIVERS; ++r) {
    const double ratio = coarse[r] / fine[r];
    printf("  receiver %d: error ratio coarse / fine = %.2f (second order: 4)\n", r, ratio);
    if (ratio < min_ratio) fail_msg("receiver %d: error fell only %.2fx", r, ratio);
  }
}

RTM_TEST_MAIN(cmocka_unit_test(test_homogeneous_point_source), rtm_long_test(test_convergence))

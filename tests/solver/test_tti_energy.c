/* test_tti_energy - 5000 steps of tti with epsilon 0.3, delta 0.1 (vsz^2 = 0.27 vpz^2) in a
 * medium whose tilt varies from 0 to 60 degrees and whose azimuth turns through 270 degrees,
 * over a vp gradient, at 99% of the stability limit, with no smoothing of the axis: once the
 * source has stopped, the energy proxy E = sum p^2 + q^2 does not grow (the absorbing layer
 * removes what reaches it) and ends far below its peak. Prints the history. */
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
#include "tti_helper.h"

enum { N = 48, STEPS = 5000, EVERY = 250 };
static const double h_m = 10.0, frequency_hz = 14.0; /* 5.1 points at 2.5 f, vp 1800 */

static double energy(tti_run_t *r) {
  float *p = tti_run_field(r, RTM_FIELD_P), *q = tti_run_field(r, RTM_FIELD_Q);
  double e = 0.0;
  for (size_t i = 0; i < r->cells; ++i)
    e += (double)p[i] * p[i] + (double)q[i] * q[i];
  free(p);
  free(q);
  return e;
}

static void test_long_run_stays_bounded(void **unused) {
  (void)unused;
  tti_run_t r;
  const int n[3] = {N, N, N};
  tti_run_init(&r, n, h_m, RTM_EQUATION_TTI);
  for (size_t i = 0; i < r.cells; ++i) {
    const tti_cell_t c = tti_run_cell(&r, i);
    const double x = (double)c.x / N, y = (double)c.y / N, z = (double)c.z / N;
    r.model.vp[i] = (float)(2000.0 + 800.0 * z + 200.0 * sin(6.28 * x));
    r.model.epsilon[i] = 0.3f;
    r.model.delta[i] = 0.1f;
    r.model.theta_deg[i] = (float)(60.0 * (0.5 + 0.5 * sin(6.28 * x) * cos(6.28 * y + 3.0 * z)));
    r.model.phi_deg[i] = (float)(180.0 * z + 90.0 * y);
  }
  r.cfg.physics.sigma = 0.75;
  r.cfg.physics.smooth_angles_cells = 0; /* the operator as given */
  r.cfg.time.cfl = 0.45;                 /* the limit is 0.4529 */
  const double source[3] = {24 * h_m, 24 * h_m, 24 * h_m};
  assert_int_equal(tti_run_start(&r, source, NULL, 0, frequency_hz, STEPS, 10, 1e-3), RTM_OK);
  /* the Ricker is below 1e-6 of its peak after t0 + 1.2 / f: source off by then */
  const int source_off = (int)ceil(2.4 / frequency_hz / r.dt_s);
  assert_true(source_off < EVERY);

  const double start = tti_now_s();
  double history[STEPS / EVERY];
  int count = 0;
  printf("  dt %.4g ms (source off after step %d)\n", r.dt_s * 1e3, source_off);
  for (int first = 0; first < STEPS; first += EVERY) {
    assert_int_equal(tti_run_steps(&r, first, first + EVERY), RTM_OK);
    history[count] = energy(&r);
    printf("  step %4d: E = %.4e%s\n", first + EVERY, history[count],
           count > 0 ? (history[count] <= history[count - 1] ? "" : "  (grew)") : "");
    ++count;
  }
  const double seconds = tti_now_s() - start;
  printf("  %d steps of %d^3 cells in %.1f s (%.1f MCells/s)\n", STEPS, N, seconds,
         (double)r.cells * STEPS / seconds * 1e-6);
  /* E is a proxy, not a conserved energy (none is known for the FDF system with variable
   * tilt): as waves trade between p and q and the last of them leave, it wobbles, once by
   * +20% between checkpoints in the runs seen, while the trend falls by 10^15. The growing
   * modes seen (random tilt, strong anellipticity at sharp tilt, rtm_anisotropy.h) multiply
   * E by 7 or more every 500 steps. So: E never exceeds 1.5 times the lowest of the four
   * checkpoints before it (1000 steps), stays finite, and ends below 1e-8 of its first value. */
  for (int k = 1; k < count; ++k) {
    assert_true(isfinite(history[k]));
    double lowest = history[k - 1];
    for (int j = k - 2; j >= 0 && j >= k - 4; --j)
      lowest = fmin(lowest, history[j]);
    if (history[k] > 1.5 * lowest)
      fail_msg("E grew to %.4e at step %d, above 1.5 x %.4e (the lowest of the 1000 steps "
               "before)",
               history[k], (k + 1) * EVERY, lowest);
  }
  assert_true(history[count - 1] < 1e-8 * history[0]);
  tti_run_release(&r);
}

RTM_TEST_MAIN(cmocka_unit_test(test_long_run_stays_bounded))

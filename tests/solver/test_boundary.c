/* test_boundary - the damping layer reflects < 1% of the energy at normal incidence.
 *
 * A receiver lies between the source and the -x face, on the normal through the source:
 * 5 cells inside the layer's inner edge, the source 20 cells further in. The same run in
 * a domain extended by 60 cells behind the -x face (nothing else changes, and its walls
 * are too far to answer within the window) records the incident wave alone; the
 * difference of the two traces is what the -x face sent back.
 *
 * Reflected and incident waves spread differently: the incident one travels d_inc = 20
 * cells, a reflection at most d_wall = 72 (to the wall plane one cell past the face and
 * back). Scaling the reflected energy by (d_wall / d_inc)^2 thus bounds the energy
 * reflection coefficient from above (reflections from inside the layer travel less and
 * are over-corrected). Both traces cover the same window of 100 cells of travel, which
 * holds the whole reflected wavelet (72 + 24 cells) and ends before any other face's layer
 * can answer (checked below).
 *
 * Default settings: width 20, reflection 1e-3, Courant number 0.4, 10 points per peak
 * wavelength. Measured: 9.0e-4 (the energy centroid of the difference puts the reflection
 * about 7 cells deep in the layer, which gives 3.3e-4 with its actual path). With width 0
 * the walls reflect everything and the same measure gives 1.0, so the test can fail. */
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
  WIDTH = 20,
  RECEIVER_X = WIDTH + 5,
  SOURCE_X = RECEIVER_X + 20,
  NX = 108,
  NYZ = 143,
  CENTRE = NYZ / 2,
  EXTENSION = 60,
  WINDOW_CELLS = 100,
  MARGIN_CELLS = 4
};

static const double h = 10.0, velocity = 2000.0, frequency = 20.0, courant = 0.4;
static const double reflection = 1e-3, max_energy_ratio = 0.01;

/* Shortest path (cells) from source to receiver via a reflection at any face but -x,
 * taking the first damped cell (or, without a layer, the wall) as the mirror. */
static double first_other_reflection(int nx, int width, int shift) {
  const double dx = SOURCE_X - RECEIVER_X;
  const double lateral = 2.0 * (width ? CENTRE - width + 1 : CENTRE + 1);
  const double far_x = width ? nx - width : nx;
  const double via_lateral = sqrt(dx * dx + lateral * lateral);
  const double via_far = (far_x - SOURCE_X - shift) + (far_x - RECEIVER_X - shift);
  return fmin(via_lateral, via_far);
}

/* Trace at the receiver: nx cells along x, everything shifted by `shift` cells. */
static float *trace(int nx, int width, int shift, int *samples, double *dt) {
  sim_params_t params = {0};
  params.n[0] = nx;
  params.n[1] = params.n[2] = NYZ;
  params.h_m = h;
  params.v_m_s = velocity;
  params.frequency_hz = frequency;
  params.courant = courant;
  params.duration_s = WINDOW_CELLS * h / velocity;
  params.boundary_width = width;
  params.boundary_reflection = reflection;
  params.source_m[0] = (SOURCE_X + shift) * h;
  params.source_m[1] = params.source_m[2] = CENTRE * h;
  const double receiver[3] = {(RECEIVER_X + shift) * h, CENTRE * h, CENTRE * h};
  params.receiver_count = 1;
  params.receiver_m = receiver;

  assert_true(first_other_reflection(nx, width, shift) >= WINDOW_CELLS + MARGIN_CELLS);
  if (shift) /* the reference's own -x face */
    assert_true((SOURCE_X + shift - width + 1) + (RECEIVER_X + shift - width + 1) >=
                WINDOW_CELLS + MARGIN_CELLS);
  sim_result_t result;
  assert_int_equal(sim_run(&params, &result), RTM_OK);
  printf("  %d x %d x %d cells, width %d, %d steps: %.1f s\n", nx, NYZ, NYZ, width, result.steps,
         result.seconds);
  *samples = result.steps + 1;
  *dt = result.dt_s;
  return result.traces;
}

/* Energy reflected by the -x face over incident energy, scaled for spreading. */
static double reflected_energy(const float *small, const float *reference, int samples, double dt) {
  double incident = 0.0, reflected = 0.0;
  for (int k = 0; k < samples && k * dt <= WINDOW_CELLS * h / velocity; ++k) {
    const double d = (double)small[k] - reference[k];
    incident += (double)reference[k] * reference[k];
    reflected += d * d;
  }
  const double d_inc = SOURCE_X - RECEIVER_X, d_wall = (SOURCE_X + 1) + (RECEIVER_X + 1);
  const double raw = reflected / incident, bound = raw * (d_wall / d_inc) * (d_wall / d_inc);
  printf("  reflected / incident energy: %.3e at the receiver, %.3e for the face\n", raw, bound);
  return bound;
}

static void test_normal_incidence(void **unused) {
  (void)unused;
  int samples, samples_ref, samples_bare;
  double dt, dt_ref, dt_bare;
  float *reference = trace(NX + EXTENSION, WIDTH, EXTENSION, &samples_ref, &dt_ref);
  float *small = trace(NX, WIDTH, 0, &samples, &dt);
  float *bare = trace(NX, 0, 0, &samples_bare, &dt_bare);
  assert_int_equal(samples, samples_ref);
  assert_int_equal(samples, samples_bare);

  printf("width %d, reflection %g:\n", WIDTH, reflection);
  const double layer = reflected_energy(small, reference, samples, dt);
  printf("width 0 (walls at p = 0):\n");
  const double walls = reflected_energy(bare, reference, samples, dt);
  if (layer >= max_energy_ratio)
    fail_msg("the layer reflects %.3e of the energy (limit %.2g)", layer, max_energy_ratio);
  /* a wall reflects all of it: the measure can fail */
  assert_true(walls > 0.5);
  free(reference);
  free(small);
  free(bare);
}

RTM_TEST_MAIN(cmocka_unit_test(test_normal_incidence))

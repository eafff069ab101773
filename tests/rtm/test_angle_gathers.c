/* The offset-to-angle transform (solver/rtm/angle_gathers.c) on gathers of known form: a
 * gather focused at h = 0 (a reflector in the right velocity) peaks at its depth at every
 * angle, and up to 45 degrees (the lags' Nyquist) is its depth trace; the line z = z0 + h
 * tan(alpha) of one shot's reflection at incidence alpha puts its energy at alpha, within 3
 * degrees, for the shot on either side (h tan(alpha) and -h tan(alpha)), at 15, 30 and 45 degrees;
 * bad arguments refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_imaging.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

static const double pi = 3.14159265358979323846;

enum { LAGS = 16, NH = 2 * LAGS + 1, NZ = 128, ANGLES = 61 };
#define DZ 10.0
#define DH 10.0
#define MAX_ANGLE 60.0
#define Z0 640.0

/* A Ricker of 25 m peak wavelength-ish in depth: w(d) = (1 - 2 (d / s)^2) exp(-(d / s)^2). */
static double wavelet(double depth_m) {
  const double u = depth_m / 15.0;
  return (1.0 - 2.0 * u * u) * exp(-u * u);
}

/* The depth of the largest |A| of angle a's trace. */
static int peak_depth(const float *angle, int a) {
  int best = 0;
  for (int z = 1; z < NZ; ++z)
    if (fabsf(angle[(size_t)a * NZ + z]) > fabsf(angle[(size_t)a * NZ + best])) best = z;
  return best;
}

static void test_focused_gather_is_flat(void **state) {
  (void)state;
  static float offset[NH * NZ], angle[ANGLES * NZ];
  for (int z = 0; z < NZ; ++z)
    offset[LAGS * NZ + z] = (float)wavelet(z * DZ - Z0);
  assert_int_equal(rtm_angle_gathers(offset, 0, 1, LAGS, NZ, DZ, DH, ANGLES, MAX_ANGLE, angle),
                   RTM_OK);
  double worst = 0.0, peak = 0.0;
  for (int z = 0; z < NZ; ++z)
    peak = fmax(peak, fabs(offset[LAGS * NZ + z]));
  /* up to 45 degrees every depth wavenumber's kh = kz tan(theta) lies within the lags'
   * Nyquist (dz = dh): the same trace; beyond, the highest are cut (aliased lags), the peak
   * stays */
  for (int a = 0; a < ANGLES; ++a) {
    assert_int_equal(peak_depth(angle, a), (int)(Z0 / DZ));
    for (int z = 0; a * MAX_ANGLE / (ANGLES - 1) <= 45.0 && z < NZ; ++z)
      worst = fmax(worst, fabs(angle[(size_t)a * NZ + z] - offset[LAGS * NZ + z]));
  }
  printf("focused: every angle's trace peaks at %g m; to 45 degrees within %.2e of the h = 0 "
         "trace (peak 1)\n",
         Z0, worst / peak);
  assert_true(worst < 1e-4 * peak);
}

/* The angle of the most energy, over the depths. */
static double energy_angle(const float *angle) {
  int best = 0;
  double best_energy = -1.0;
  for (int a = 0; a < ANGLES; ++a) {
    double energy = 0.0;
    for (int z = 0; z < NZ; ++z)
      energy += (double)angle[(size_t)a * NZ + z] * angle[(size_t)a * NZ + z];
    if (energy > best_energy) best_energy = energy, best = a;
  }
  return MAX_ANGLE * best / (ANGLES - 1);
}

static void test_one_shot_reflection_angle(void **state) {
  (void)state;
  static float offset[NH * NZ], angle[ANGLES * NZ];
  const double alphas[3] = {15.0, 30.0, 45.0};
  for (int k = 0; k < 3; ++k)
    for (int side = -1; side <= 1; side += 2) {
      const double slope = side * tan(alphas[k] * pi / 180.0);
      for (int h = -LAGS; h <= LAGS; ++h) {
        const double taper = 0.5 + 0.5 * cos(pi * h / (LAGS + 1.0)); /* no cut edge */
        for (int z = 0; z < NZ; ++z)
          offset[(size_t)(h + LAGS) * NZ + z] =
              (float)(taper * wavelet(z * DZ - Z0 - h * DH * slope));
      }
      assert_int_equal(rtm_angle_gathers(offset, 0, 1, LAGS, NZ, DZ, DH, ANGLES, MAX_ANGLE, angle),
                       RTM_OK);
      const double found = energy_angle(angle);
      printf("reflection at %g degrees (the shot %s): the energy peaks at %g degrees, depth %g m\n",
             alphas[k], side > 0 ? "one side" : "the other", found,
             peak_depth(angle, (int)lround(found / MAX_ANGLE * (ANGLES - 1))) * DZ);
      assert_true(fabs(found - alphas[k]) <= 3.0);
    }
}

/* Several CIPs in one call (a stride between their gathers) give each its own call's floats. */
static void test_many_cips(void **state) {
  (void)state;
  enum { STRIDE = NH * NZ + 7 };
  static float offsets[2 * STRIDE], together[2 * ANGLES * NZ], alone[ANGLES * NZ];
  for (size_t i = 0; i < 2 * STRIDE; ++i)
    offsets[i] = (float)wavelet((double)(i % 97) * DZ - 300.0);
  assert_int_equal(
      rtm_angle_gathers(offsets, STRIDE, 2, LAGS, NZ, DZ, DH, ANGLES, MAX_ANGLE, together), RTM_OK);
  for (int c = 0; c < 2; ++c) {
    assert_int_equal(rtm_angle_gathers(offsets + (size_t)c * STRIDE, 0, 1, LAGS, NZ, DZ, DH, ANGLES,
                                       MAX_ANGLE, alone),
                     RTM_OK);
    assert_memory_equal(together + (size_t)c * ANGLES * NZ, alone, sizeof alone);
  }
}

static void test_refusals(void **state) {
  (void)state;
  float offset[3 * 4] = {0}, angle[4] = {0};
  assert_int_not_equal(rtm_angle_gathers(offset, 0, 1, 0, 4, DZ, DH, 1, 0.0, angle), RTM_OK);
  assert_int_not_equal(rtm_angle_gathers(offset, 0, 1, 1, 4, DZ, DH, 1, 90.0, angle), RTM_OK);
  assert_int_not_equal(rtm_angle_gathers(offset, 0, 1, 1, 4, 0.0, DH, 1, 0.0, angle), RTM_OK);
  assert_int_equal(rtm_angle_gathers(offset, 0, 1, 1, 4, DZ, DH, 1, 0.0, angle), RTM_OK);
}

RTM_TEST_MAIN(cmocka_unit_test(test_focused_gather_is_flat),
              cmocka_unit_test(test_one_shot_reflection_angle), cmocka_unit_test(test_many_cips),
              cmocka_unit_test(test_refusals))

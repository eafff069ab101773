/* Migrated images of models whose reflectors are known (iso, cpu backend): a 2 x 2 shot grid
 * and a receiver plane at 120 m over 64 x 64 x 56 cells of 10 m (absorbing layer 10 cells),
 * 20 Hz. Modelled in the model with its sharp interfaces, migrated in the smooth background
 * (2000 m/s, the velocity above the reflectors, which sets the reflections' kinematics; the
 * sharp model would add the backscatter of the interfaces themselves), with the defaults
 * (direct-arrival mute, phase correction, illumination compensation, Laplacian): a velocity
 * increase images as a positive peak, and the picks take the largest value.
 *
 *   flat reflector   2000 over 2800 m/s between cells 35 and 36 (355 m): the image peak of
 *                    every column of the illuminated aperture (cells 20 .. 43 in x and y)
 *                    lies within one cell of 35.5, i.e. at 35 or 36;
 *   diffractor       a 3-cell cube of 3000 m/s centred on (32, 32, 36) in 2000 m/s: the
 *                    image maximum inside the illuminated volume (cells 14 .. 49 in x and y,
 *                    20 .. 45 in z) lies within one cell of its centre;
 *   dipping          2000 over 2800 m/s across a plane dipping 20 degrees along x (depth
 *                    360 m at x = 320 m): the peak of every illuminated column follows the
 *                    interface within one cell, a column being illuminated when at least 20
 *                    shot-receiver pairs of the survey reflect specularly within 2 cells of
 *                    it (mirror source, straight rays: the dip moves the reflection points
 *                    up-dip of the midpoints), and at least 40 columns are.
 *   vti, tti         the flat reflector in an elliptically anisotropic medium (eps = delta
 *                    = 0.2: no shear term, so the pseudo-acoustic system has no slow shear
 *                    artefact to image; tti: axis tilted 45 degrees in x-z), modelled and
 *                    migrated with the same anisotropy: within one cell of the interface;
 *                    and the tti data migrated as iso (vp alone) misplace it: the vertical
 *                    phase velocity at 45 degrees from the axis is vp sqrt(cos^2 + (1 + 2
 *                    eps) sin^2) = 1.095 vp, so the iso image comes out about 2 cells too
 *                    shallow; the test asks for a mean of at least 1.5 cells shallower.
 * A cell is 10 m, a sixth of the 20 Hz wavelength in the slow layer: a misplaced image (a
 * wrong time pairing of S and R, a wrong sign of the reversal, a velocity error of 10%) moves
 * the peaks by more than a cell. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "migration_helper.h"
#include "rtm_test_main.h"

enum { NX = 64, NY = 64, NZ = 56 };
static const int grid_n[3] = {NX, NY, NZ};
static const char *const survey_settings[] = {"shots.x_count=2", "shots.y_count=2",
                                              "time.steps=340", NULL};

static float flat(const void *context, int ix, int iy, int iz) {
  (void)context;
  (void)ix;
  (void)iy;
  return iz <= 35 ? 2000.0f : 2800.0f;
}

static void test_flat_reflector(void **state) {
  (void)state;
  survey_t s;
  survey_config(&s, grid_n, survey_settings);
  survey_model(&s, flat, NULL);
  survey_migrate(&s, survey_background, NULL);
  int worst = 0;
  for (int iy = 20; iy < 44; iy += 3)
    for (int ix = 20; ix < 44; ix += 3) {
      const int peak = survey_column_peak(&s, ix, iy, 20, NZ - 10);
      const int miss = peak < 35 ? 35 - peak : peak > 36 ? peak - 36 : 0;
      if (miss > worst) worst = miss;
      if (miss) printf("flat reflector: column (%d, %d) peaks at %d\n", ix, iy, peak);
    }
  printf("flat reflector: largest miss %d cells beyond [35, 36]\n", worst);
  assert_int_equal(worst, 0);
  survey_release(&s);
}

static float diffractor(const void *context, int ix, int iy, int iz) {
  (void)context;
  const int inside = ix >= 31 && ix <= 33 && iy >= 31 && iy <= 33 && iz >= 35 && iz <= 37;
  return inside ? 3000.0f : 2000.0f;
}

static void test_point_diffractor(void **state) {
  (void)state;
  survey_t s;
  survey_config(&s, grid_n, survey_settings);
  survey_model(&s, diffractor, NULL);
  survey_migrate(&s, survey_background, NULL);
  int at[3] = {0, 0, 0};
  float largest = -INFINITY;
  for (int iz = 20; iz < NZ - 10; ++iz)
    for (int iy = 14; iy < NY - 14; ++iy)
      for (int ix = 14; ix < NX - 14; ++ix)
        if (survey_image_at(&s, ix, iy, iz) > largest) {
          largest = survey_image_at(&s, ix, iy, iz);
          at[0] = ix, at[1] = iy, at[2] = iz;
        }
  printf("diffractor: image maximum at (%d, %d, %d), the diffractor at (32, 32, 36)\n", at[0],
         at[1], at[2]);
  assert_true(abs(at[0] - 32) <= 1 && abs(at[1] - 32) <= 1 && abs(at[2] - 36) <= 1);
  survey_release(&s);
}

/* The interface's depth in cells at column x: 36 cells at x = 32, dipping 20 degrees. */
static double dipping_depth(int ix) {
  return 36.0 + tan(20.0 * 3.14159265358979323846 / 180.0) * (ix - 32);
}

static float dipping(const void *context, int ix, int iy, int iz) {
  (void)context;
  (void)iy;
  return iz <= dipping_depth(ix) ? 2000.0f : 2800.0f;
}

/* Specular reflection points on the dipping plane of every shot-receiver pair of the survey
 * (straight rays in the 2000 m/s above it): hits[iy][ix] counts the pairs reflecting
 * within column (ix, iy). */
static void specular_hits(const survey_t *s, int hits[NY][NX]) {
  const double slope = tan(20.0 * 3.14159265358979323846 / 180.0), h = 10.0;
  memset(hits, 0, sizeof(int) * NX * NY);
  for (int shot = 0; shot < s->shots.count; ++shot) {
    const double *src = s->shots.source_m + 3 * (size_t)shot;
    /* f(q) = 0 on the plane through depth 360 m at x = 320 m; f < 0 above it */
    const double f_src = src[2] - (360.0 + slope * (src[0] - 320.0));
    const double norm2 = 1.0 + slope * slope;
    const double mirror[3] = {src[0] + 2.0 * f_src * slope / norm2, src[1],
                              src[2] - 2.0 * f_src / norm2};
    const double f_mirror = mirror[2] - (360.0 + slope * (mirror[0] - 320.0));
    for (int r = 0; r < s->receiver_count; ++r) {
      const double *rec = s->receivers_m + 3 * ((size_t)shot * s->receiver_count + r);
      const double f_rec = rec[2] - (360.0 + slope * (rec[0] - 320.0));
      const double t = f_mirror / (f_mirror - f_rec);
      const int ix = (int)lround((mirror[0] + t * (rec[0] - mirror[0])) / h);
      const int iy = (int)lround((mirror[1] + t * (rec[1] - mirror[1])) / h);
      if (ix >= 0 && ix < NX && iy >= 0 && iy < NY) ++hits[iy][ix];
    }
  }
}

static void test_dipping_reflector(void **state) {
  (void)state;
  survey_t s;
  survey_config(&s, grid_n, survey_settings);
  survey_model(&s, dipping, NULL);
  survey_migrate(&s, survey_background, NULL);
  static int hits[NY][NX];
  specular_hits(&s, hits);
  double worst = 0.0;
  int columns = 0;
  for (int iy = 16; iy < NY - 16; iy += 2)
    for (int ix = 16; ix < NX - 16; ++ix) {
      int coverage = 0;
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
          coverage += hits[iy + dy][ix + dx];
      if (coverage < 20) continue;
      ++columns;
      /* the interface lies between the last slow cell and the first fast one */
      const double interface = floor(dipping_depth(ix)) + 0.5;
      const int peak = survey_column_peak(&s, ix, iy, 20, NZ - 10);
      const double miss = fabs(peak - interface);
      if (miss > worst) worst = miss;
      if (miss > 1.0)
        printf("dipping reflector: column (%d, %d) (%d pairs) peaks at %d, interface at %.1f\n", ix,
               iy, coverage, peak, interface);
    }
  printf("dipping reflector: %d illuminated columns, largest distance from the interface %.1f "
         "cells\n",
         columns, worst);
  assert_true(columns >= 40); /* a test of many columns, not of a lucky few */
  assert_true(worst <= 1.0);
  survey_release(&s);
}

/* The mean pick of the flat reflector's columns (the aperture of test_flat_reflector). */
static double mean_flat_pick(const survey_t *s) {
  double sum = 0.0;
  int columns = 0;
  for (int iy = 20; iy < 44; iy += 3)
    for (int ix = 20; ix < 44; ix += 3, ++columns)
      sum += survey_column_peak(s, ix, iy, 20, NZ - 10);
  return sum / columns;
}

/* The flat reflector in an elliptic medium (eps = delta = 0.2, the axis tilted by `theta`
 * degrees), modelled and migrated in its background; dt 1.1 ms, stable for the fastest
 * speed 2800 sqrt(1.4) = 3310 m/s. */
static void anisotropic_survey(survey_t *s, const char *equation, const char *theta) {
  const char *settings[] = {"shots.x_count=2",
                            "shots.y_count=2",
                            "time.steps=440",
                            "time.dt=0.0011",
                            equation,
                            "model.epsilon=0.2",
                            "model.delta=0.2",
                            theta,
                            NULL};
  survey_config(s, grid_n, settings);
  survey_model(s, flat, NULL);
}

static void test_vti_flat_reflector(void **state) {
  (void)state;
  survey_t s;
  anisotropic_survey(&s, "physics.equation=vti", "model.theta=0");
  survey_migrate(&s, survey_background, NULL);
  const double pick = mean_flat_pick(&s);
  printf("vti flat reflector: mean pick %.2f, interface at 35.5\n", pick);
  for (int iy = 20; iy < 44; iy += 3)
    for (int ix = 20; ix < 44; ix += 3) {
      const int peak = survey_column_peak(&s, ix, iy, 20, NZ - 10);
      assert_true(peak >= 35 && peak <= 36);
    }
  survey_release(&s);
}

static void test_tti_flat_reflector_and_iso_misplaced(void **state) {
  (void)state;
  survey_t s;
  anisotropic_survey(&s, "physics.equation=tti", "model.theta=45");
  survey_migrate(&s, survey_background, NULL);
  const double tti_pick = mean_flat_pick(&s);
  int worst = 0;
  for (int iy = 20; iy < 44; iy += 3)
    for (int ix = 20; ix < 44; ix += 3) {
      const int peak = survey_column_peak(&s, ix, iy, 20, NZ - 10);
      const int miss = peak < 35 ? 35 - peak : peak > 36 ? peak - 36 : 0;
      if (miss > worst) worst = miss;
    }
  /* the same data migrated as if the medium were isotropic */
  s.cfg.physics.equation = RTM_EQUATION_ISO;
  survey_migrate(&s, survey_background, NULL);
  const double iso_pick = mean_flat_pick(&s);
  printf("tti flat reflector: mean pick %.2f migrated as tti (largest miss %d cells beyond [35, "
         "36]), %.2f as iso; interface at 35.5\n",
         tti_pick, worst, iso_pick);
  assert_int_equal(worst, 0);
  assert_true(iso_pick <= tti_pick - 1.5);
  survey_release(&s);
}

/* the flat reflector is the quick guard of the imaging condition; the others are long (a
 * survey each, the anisotropic ones 440 steps): test_migration_images_long */
RTM_TEST_MAIN(cmocka_unit_test(test_flat_reflector), rtm_long_test(test_point_diffractor),
              rtm_long_test(test_dipping_reflector), rtm_long_test(test_vti_flat_reflector),
              rtm_long_test(test_tti_flat_reflector_and_iso_misplaced))

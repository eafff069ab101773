/* Migrated images of models whose reflectors are known (iso, cpu backend): a 2 x 2 shot grid
 * and a receiver plane at 120 m over 64 x 64 x 56 cells of 10 m (absorbing layer 10 cells),
 * 20 Hz, modelled and migrated with the same operator and the default filters
 * (illumination compensation, Laplacian, direct-arrival mute).
 *
 *   flat reflector   2000 over 2800 m/s between cells 35 and 36 (355 m): the image peak of
 *                    every column of the illuminated aperture (cells 20 .. 43 in x and y)
 *                    lies within one cell of 35.5, i.e. at 35 or 36;
 *   diffractor       a 3-cell cube of 3000 m/s centred on (32, 32, 36) in 2000 m/s: the
 *                    image maximum below the acquisition lies within one cell of its centre;
 *   dipping          2000 over 2800 m/s across a plane dipping 25 degrees along x: the peak of
 *                    the columns x = 24 .. 40 follows the interface within one cell.
 * A cell is 10 m, a sixth of the 20 Hz wavelength in the slow layer: a misplaced image (a
 * wrong time pairing of S and R, a wrong sign of the reversal, a velocity error of 10%) moves
 * the peaks by more than a cell. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

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
  survey_migrate(&s);
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
  survey_migrate(&s);
  int at[3] = {0, 0, 0};
  float largest = -1.0f;
  for (int iz = 20; iz < NZ - 10; ++iz)
    for (int iy = 10; iy < NY - 10; ++iy)
      for (int ix = 10; ix < NX - 10; ++ix)
        if (fabsf(survey_image_at(&s, ix, iy, iz)) > largest) {
          largest = fabsf(survey_image_at(&s, ix, iy, iz));
          at[0] = ix, at[1] = iy, at[2] = iz;
        }
  printf("diffractor: image maximum at (%d, %d, %d), the diffractor at (32, 32, 36)\n", at[0],
         at[1], at[2]);
  assert_true(abs(at[0] - 32) <= 1 && abs(at[1] - 32) <= 1 && abs(at[2] - 36) <= 1);
  survey_release(&s);
}

/* The interface's depth in cells at column x: 30 cells at x = 32, dipping 25 degrees. */
static double dipping_depth(int ix) {
  return 30.0 + tan(25.0 * 3.14159265358979323846 / 180.0) * (ix - 32);
}

static float dipping(const void *context, int ix, int iy, int iz) {
  (void)context;
  (void)iy;
  return iz <= dipping_depth(ix) ? 2000.0f : 2800.0f;
}

static void test_dipping_reflector(void **state) {
  (void)state;
  survey_t s;
  survey_config(&s, grid_n, survey_settings);
  survey_model(&s, dipping, NULL);
  survey_migrate(&s);
  double worst = 0.0;
  for (int iy = 24; iy < 41; iy += 4)
    for (int ix = 24; ix <= 40; ++ix) {
      /* the interface lies between the last slow cell and the first fast one */
      const double interface = floor(dipping_depth(ix)) + 0.5;
      const int peak = survey_column_peak(&s, ix, iy, 20, NZ - 10);
      const double miss = fabs(peak - interface);
      if (miss > worst) worst = miss;
      if (miss > 1.0)
        printf("dipping reflector: column (%d, %d) peaks at %d, interface at %.1f\n", ix, iy, peak,
               interface);
    }
  printf("dipping reflector: largest distance from the interface %.1f cells\n", worst);
  assert_true(worst <= 1.0);
  survey_release(&s);
}

RTM_TEST_MAIN(cmocka_unit_test(test_flat_reflector), cmocka_unit_test(test_point_diffractor),
              cmocka_unit_test(test_dipping_reflector))

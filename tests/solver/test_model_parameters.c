#define _POSIX_C_SOURCE 200809L
/* Constant models from the config (rtm_model_from_constants): the parameters the equation
 * needs, each cell the constant rounded to float, the others absent, the range computed.
 * (Moved from the io tests: io reads model files only; the app chooses file or constants.)
 * The range of a rank's slab (rtm_model_update_range on a local z-range, as the app calls
 * it after reading a slab): over the slab's cells only, a bad cell named by its global z. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rtm_test_capture.h"

#include "rtm_solver.h"
#include "rtm_status.h"
#include "rtm_test_main.h"
#include "rtm_test_random.h"

static void test_model_from_constants(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_model_from_constants");
  rtm_config_t *cfg = calloc(1, sizeof *cfg);
  rtm_grid_t grid;
  rtm_model_t model = {0};
  const int n[3] = {13, 9, 11};
  const double spacing[3] = {10.0, 12.5, 7.5};
  assert_non_null(cfg);
  rtm_config_defaults(cfg); /* one layer: model.interface_z = auto */
  assert_int_equal(rtm_grid_init(&grid, n, spacing, NULL), RTM_OK);
  const size_t cells = rtm_grid_interior_cells(&grid);
  cfg->physics.equation = RTM_EQUATION_VTI;
  cfg->model.vp_m_s = rtm_test_uniform(&rng, 1500.0, 4000.0);
  cfg->model.epsilon = rtm_test_uniform(&rng, 0.05, 0.3);
  cfg->model.delta = rtm_test_uniform(&rng, 0.01, 0.05);
  cfg->model.theta_deg = 30.0;
  cfg->model.phi_deg = 45.0;
  assert_int_equal(rtm_model_from_constants(cfg, &grid, &model), RTM_OK);
  assert_null(model.theta_deg); /* vti: no axis angles */
  assert_null(model.phi_deg);
  for (size_t i = 0; i < cells; ++i) {
    assert_true(model.vp[i] == (float)cfg->model.vp_m_s);
    assert_true(model.epsilon[i] == (float)cfg->model.epsilon);
    assert_true(model.delta[i] == (float)cfg->model.delta);
  }
  assert_true(model.vp_max == (double)(float)cfg->model.vp_m_s);
  assert_true(model.epsilon_max == (double)(float)cfg->model.epsilon);
  rtm_model_release(&model);

  /* tti: the angles too; iso: vp alone */
  cfg->physics.equation = RTM_EQUATION_TTI;
  assert_int_equal(rtm_model_from_constants(cfg, &grid, &model), RTM_OK);
  assert_true(model.theta_deg[cells - 1] == 30.0f && model.phi_deg[0] == 45.0f);
  rtm_model_release(&model);
  cfg->physics.equation = RTM_EQUATION_ISO;
  assert_int_equal(rtm_model_from_constants(cfg, &grid, &model), RTM_OK);
  assert_null(model.epsilon);
  assert_null(model.delta);
  rtm_model_release(&model);

  /* a non-physical constant is refused by the range check, nothing left allocated */
  cfg->model.vp_m_s = -1.0;
  assert_int_equal(rtm_model_from_constants(cfg, &grid, &model), RTM_ERR_INPUT);
  assert_null(model.vp);
  free(cfg);
}

static void test_range_of_a_local_slab(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_range_of_a_local_slab");
  rtm_grid_t grid;
  const int n[3] = {7, 6, 12};
  const double spacing[3] = {10.0, 10.0, 10.0};
  assert_int_equal(rtm_grid_init(&grid, n, spacing, NULL), RTM_OK);
  assert_int_equal(rtm_grid_set_z_range(&grid, 5, 4), RTM_OK); /* planes 5 .. 8 */
  const size_t cells = rtm_grid_interior_cells(&grid);
  assert_int_equal(cells, (size_t)7 * 6 * 4);
  rtm_model_t model = {.vp = malloc(cells * sizeof(float)),
                       .epsilon = malloc(cells * sizeof(float))};
  assert_non_null(model.vp);
  assert_non_null(model.epsilon);
  double vp_max = 0.0, epsilon_max = -1.0, epsilon_min = 1.0;
  for (size_t i = 0; i < cells; ++i) {
    model.vp[i] = (float)rtm_test_uniform(&rng, 1500.0, 4500.0);
    model.epsilon[i] = (float)rtm_test_uniform(&rng, -0.1, 0.3);
    vp_max = fmax(vp_max, model.vp[i]);
    epsilon_max = fmax(epsilon_max, model.epsilon[i]);
    epsilon_min = fmin(epsilon_min, model.epsilon[i]);
  }
  assert_int_equal(rtm_model_update_range(&model, &grid), RTM_OK);
  assert_true(model.vp_max == vp_max);
  assert_true(model.epsilon_max == epsilon_max);
  /* the ranges rtm_anisotropy_check reads: epsilon's, and none for the arrays not there */
  assert_true(model.range_known);
  assert_true(model.range[RTM_MODEL_EPSILON][0] == epsilon_min);
  assert_true(model.range[RTM_MODEL_EPSILON][1] == epsilon_max);
  assert_true(isnan(model.range[RTM_MODEL_DELTA][0]) && isnan(model.range[RTM_MODEL_PHI][1]));

  /* local plane 2 is global plane 7: the message says iz 7 */
  const size_t bad = (2 * 6 + 3) * 7 + 4;
  model.vp[bad] = -1.0f;
  capture_t c;
  capture_begin(&c);
  assert_int_equal(rtm_model_update_range(&model, &grid), RTM_ERR_INPUT);
  const char *text = capture_end(&c);
  assert_non_null(strstr(text, "(ix 4, iy 3, iz 7)"));
  rtm_model_release(&model);
}

/* model.interface_z: a plane through 205 m at the centre in x dipping 20 degrees; cells whose
 * centre lies below it get vp_below, the others vp (checked cell by cell against the plane's
 * depth at the cell's x). */
static void test_two_layers(void **state) {
  (void)state;
  rtm_config_t *cfg = calloc(1, sizeof *cfg);
  rtm_grid_t grid;
  rtm_model_t model = {0};
  const int n[3] = {21, 5, 40};
  const double spacing[3] = {10.0, 10.0, 10.0};
  assert_non_null(cfg);
  rtm_config_defaults(cfg);
  assert_int_equal(rtm_grid_init(&grid, n, spacing, NULL), RTM_OK);
  assert_int_equal(rtm_config_set(cfg, "model.vp=2000"), RTM_OK);
  assert_int_equal(rtm_config_set(cfg, "model.interface_z=205"), RTM_OK);
  assert_int_equal(rtm_config_set(cfg, "model.interface_dip=20"), RTM_OK);
  assert_int_equal(rtm_config_set(cfg, "model.vp_below=3000"), RTM_OK);
  assert_int_equal(rtm_model_from_constants(cfg, &grid, &model), RTM_OK);
  int below = 0;
  for (int iz = 0; iz < n[2]; ++iz)
    for (int ix = 0; ix < n[0]; ++ix) {
      const double depth = 205.0 + tan(20.0 * 3.14159265358979323846 / 180.0) * (ix - 10) * 10.0;
      const float expected = iz * 10.0 > depth ? 3000.0f : 2000.0f;
      below += expected == 3000.0f;
      for (int iy = 0; iy < n[1]; ++iy)
        assert_true(model.vp[((size_t)iz * n[1] + iy) * n[0] + ix] == expected);
    }
  assert_true(below > 0 && below < n[0] * n[2]);
  assert_true(model.vp_min == 2000.0 && model.vp_max == 3000.0);
  rtm_model_release(&model);
  free(cfg);
}

RTM_TEST_MAIN(cmocka_unit_test(test_model_from_constants), cmocka_unit_test(test_two_layers),
              cmocka_unit_test(test_range_of_a_local_slab))

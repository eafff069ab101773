/* test_stability - dt limit and choice, model range, Ricker wavelet, damping profiles. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rtm_test_capture.h"

#include "rtm_solver.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

/* A grid of n cells with its origin at 0. */
static rtm_grid_t grid_at_origin(const int n[3], const double spacing[3]) {
  rtm_grid_t grid;
  assert_int_equal(rtm_grid_init(&grid, n, spacing, NULL), RTM_OK);
  return grid;
}

/* ---- a homogeneous model on a grid ---- */
typedef struct {
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_config_t cfg;
} setup_t;

static void setup_make(setup_t *s, const double spacing[3], double vp, double epsilon,
                       rtm_equation_t equation) {
  const int n[3] = {6, 5, 4};
  memset(s, 0, sizeof *s);
  s->grid = grid_at_origin(n, spacing);
  const size_t cells = rtm_grid_interior_cells(&s->grid);
  s->model.vp = malloc(cells * sizeof(float));
  assert_non_null(s->model.vp);
  for (size_t i = 0; i < cells; ++i)
    s->model.vp[i] = (float)vp;
  if (equation != RTM_EQUATION_ISO) {
    s->model.epsilon = malloc(cells * sizeof(float));
    s->model.delta = calloc(cells, sizeof(float));
    assert_non_null(s->model.epsilon);
    assert_non_null(s->model.delta);
    for (size_t i = 0; i < cells; ++i)
      s->model.epsilon[i] = (float)(epsilon * (i % 3) / 2);
  }
  assert_int_equal(rtm_model_update_range(&s->model, &s->grid), RTM_OK);
  s->cfg.physics.equation = equation;
  s->cfg.time.dt_s = NAN;
  s->cfg.time.cfl = 0.4;
  /* 6 points per shortest wavelength (at 2.5 f) on the coarsest axis: no warning */
  double h_max = fmax(spacing[0], fmax(spacing[1], spacing[2]));
  s->cfg.source.frequency_hz = vp / (2.5 * 6.0 * h_max);
}

static void setup_release(setup_t *s) {
  rtm_model_release(&s->model);
}

/* ---- stability ---- */

/* For uniform h the limit is v dt / h = 2 / sqrt(3 S), S = 6.5016..., which is
 * sqrt(105/512) exactly. The code sums the coefficient table; a few ulps of the sum and
 * the square root bound the difference (16 DBL_EPSILON). */
static void test_limit_uniform_spacing(void **unused) {
  (void)unused;
  for (int trial = 0; trial < 20; ++trial) {
    const double h = rtm_test_rand_uniform(1.0, 50.0), v = rtm_test_rand_uniform(1000.0, 6000.0);
    const double spacing[3] = {h, h, h};
    const double expected = sqrt(105.0 / 512.0) * h / v;
    assert_true(fabs(rtm_stable_dt(v, spacing) / expected - 1.0) <= 16 * DBL_EPSILON);
  }
}

static void test_limit_unequal_spacing(void **unused) {
  (void)unused;
  const double S = 205.0 / 72.0 + 2.0 * (8.0 / 5.0 + 1.0 / 5.0 + 8.0 / 315.0 + 1.0 / 560.0);
  assert_true(fabs(S - 6.5016) < 1e-4);
  const double spacing[3] = {rtm_test_rand_uniform(5, 20), rtm_test_rand_uniform(5, 20),
                             rtm_test_rand_uniform(5, 20)};
  const double v = rtm_test_rand_uniform(1500, 4500);
  double sum = 0.0;
  for (int a = 0; a < 3; ++a)
    sum += 1.0 / (spacing[a] * spacing[a]);
  const double expected = 2.0 / (v * sqrt(S * sum));
  assert_true(fabs(rtm_stable_dt(v, spacing) / expected - 1.0) <= 16 * DBL_EPSILON);
}

static void test_dt_auto_is_cfl_h_over_v(void **unused) {
  (void)unused;
  for (int trial = 0; trial < 10; ++trial) {
    const double spacing[3] = {rtm_test_rand_uniform(5, 20), rtm_test_rand_uniform(5, 20),
                               rtm_test_rand_uniform(5, 20)};
    setup_t s;
    setup_make(&s, spacing, rtm_test_rand_uniform(1500, 4500), 0.0, RTM_EQUATION_ISO);
    const double h_min = fmin(spacing[0], fmin(spacing[1], spacing[2]));
    s.cfg.time.cfl = rtm_test_rand_uniform(0.05, 0.45);
    double dt = 0.0;
    assert_int_equal(rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt), RTM_OK);
    const double expected = s.cfg.time.cfl * h_min / s.model.vp_max;
    /* two roundings either way */
    assert_true(fabs(dt / expected - 1.0) <= 4 * DBL_EPSILON);
    setup_release(&s);
  }
}

static void test_explicit_dt(void **unused) {
  (void)unused;
  const double h = rtm_test_rand_uniform(5, 20), v = rtm_test_rand_uniform(1500, 4500);
  const double spacing[3] = {h, h, h};
  setup_t s;
  setup_make(&s, spacing, v, 0.0, RTM_EQUATION_ISO);
  const double limit = sqrt(105.0 / 512.0) * h / (double)(float)v;

  s.cfg.time.dt_s = 0.99 * limit; /* accepted as given */
  double dt = 0.0;
  assert_int_equal(rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt), RTM_OK);
  assert_true(dt == s.cfg.time.dt_s);

  s.cfg.time.dt_s = 1.01 * limit;
  capture_t c;
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_ERR_CONFIG);
  assert_non_null(strstr(c.text, "time.dt"));

  /* cfl above the limit 0.4529 */
  s.cfg.time.dt_s = NAN;
  s.cfg.time.cfl = 0.46;
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_ERR_CONFIG);
  assert_non_null(strstr(c.text, "time.cfl"));
  assert_non_null(strstr(c.text, "0.452"));
  s.cfg.time.cfl = 0.45;
  assert_int_equal(rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt), RTM_OK);
  setup_release(&s);
}

/* vti/tti: the speed is vp sqrt(1 + 2 eps_max) (the cross terms do not tighten the limit:
 * stability.c, test_anisotropy.c), so the default cfl 0.4 still works and dt shrinks
 * accordingly. */
static void test_anisotropic_speed(void **unused) {
  (void)unused;
  const double h = rtm_test_rand_uniform(5, 20), v = 2000.0,
               epsilon = rtm_test_rand_uniform(0.05, 0.3);
  const double spacing[3] = {h, h, h};
  setup_t s;
  setup_make(&s, spacing, v, epsilon, RTM_EQUATION_VTI);
  const double eps_max = (double)(float)epsilon;
  assert_true(s.model.epsilon_max == eps_max);
  const double v_stab = v * sqrt(1.0 + 2.0 * eps_max);
  double dt = 0.0;
  assert_int_equal(rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt), RTM_OK);
  assert_true(fabs(dt / (0.4 * h / v_stab) - 1.0) <= 8 * DBL_EPSILON);

  s.cfg.time.dt_s = 1.01 * sqrt(105.0 / 512.0) * h / v_stab;
  assert_int_equal(rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt), RTM_ERR_CONFIG);
  s.cfg.time.dt_s = 0.99 * sqrt(105.0 / 512.0) * h / v_stab;
  assert_int_equal(rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt), RTM_OK);
  setup_release(&s);
}

/* Below 5 points per shortest wavelength (v_min / (2.5 f) / h_max) a warning is printed. */
static void test_sampling_warning(void **unused) {
  (void)unused;
  const double h = 10.0, v = 2000.0;
  const double spacing[3] = {h, 0.5 * h, h};
  setup_t s;
  setup_make(&s, spacing, v, 0.0, RTM_EQUATION_ISO);
  capture_t c;
  double dt;

  s.cfg.source.frequency_hz = v / (2.5 * 5.2 * h); /* 5.2 points */
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_OK);
  assert_null(strstr(c.text, "warning"));

  s.cfg.source.frequency_hz = v / (2.5 * 4.8 * h); /* 4.8 points */
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_OK);
  assert_non_null(strstr(c.text, "warning"));
  assert_non_null(strstr(c.text, "4.8 points per shortest wavelength"));

  /* below 2 points: refused, the noun singular at one point */
  s.cfg.source.frequency_hz = v / (2.5 * 1.0 * h); /* 1 point */
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_ERR_CONFIG);
  assert_non_null(strstr(c.text, "leaves 1 point per shortest wavelength"));
  s.cfg.source.frequency_hz = v / (2.5 * 1.5 * h); /* 1.5 points */
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_ERR_CONFIG);
  assert_non_null(strstr(c.text, "leaves 1.5 points per shortest wavelength"));
  /* just below 2: not said as 2 (rounded, "leaves 2 points ... below 2") */
  s.cfg.source.frequency_hz = v / (2.5 * 1.996 * h); /* 1.996 points */
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_ERR_CONFIG);
  assert_non_null(strstr(c.text, "leaves 1.99 points per shortest wavelength"));
  setup_release(&s);
}

/* ---- time step and wavelet against float32 ---- */

/* dt = auto from a model file (rtm_config_validate cannot know it): a step whose phase
 * advance 2 pi f dt is under sqrt(FLT_EPSILON) = 3.45e-4 rad is refused naming
 * source.frequency (the float32 leapfrog rounds the wave's update away); 10% either side
 * of that floor decides, far from any rounding of dt. */
static void test_frequency_floor(void **unused) {
  (void)unused;
  const double h = rtm_test_rand_uniform(5, 20), v = rtm_test_rand_uniform(1500, 4500);
  const double spacing[3] = {h, h, h};
  setup_t s;
  setup_make(&s, spacing, v, 0.0, RTM_EQUATION_ISO);
  s.cfg.source.delay_s = NAN;
  s.cfg.time.steps = 100;
  const double dt_auto = s.cfg.time.cfl * h / s.model.vp_max;
  const double floor_hz = sqrt(FLT_EPSILON) / (2.0 * 3.14159265358979323846 * dt_auto);
  capture_t c;
  double dt;
  s.cfg.source.frequency_hz = 0.9 * floor_hz;
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_ERR_CONFIG);
  assert_contains(c.text, "source.frequency");
  assert_contains(c.text, "too low");
  s.cfg.source.frequency_hz = 1.1 * floor_hz;
  assert_int_equal(captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt)), RTM_OK);
  setup_release(&s);
}

/* source.delay: the Ricker is below FLT_TRUE_MIN of its peak 3.34 / f from its centre, so a
 * centre further than that outside [0, steps dt] never fires and is refused; 3% inside
 * that reach on either side is accepted. */
static void test_delay_reach(void **unused) {
  (void)unused;
  const double h = 10.0, v = 2000.0;
  const double spacing[3] = {h, h, h};
  setup_t s;
  setup_make(&s, spacing, v, 0.0, RTM_EQUATION_ISO);
  s.cfg.time.steps = (int)rtm_test_rand_uniform(50, 500);
  s.cfg.time.dt_s = 1e-3;
  const double f = s.cfg.source.frequency_hz, run_s = s.cfg.time.steps * 1e-3;
  const double reach_s = sqrt(110.0) / (3.14159265358979323846 * f);
  const double delays[4] = {run_s + 1.03 * reach_s, -1.03 * reach_s, run_s + 0.97 * reach_s,
                            -0.97 * reach_s};
  capture_t c;
  double dt;
  for (int k = 0; k < 4; ++k) {
    s.cfg.source.delay_s = delays[k];
    const int status = captured(&c, rtm_resolve_dt(&s.cfg, &s.model, &s.grid, &dt));
    assert_int_equal(status, k < 2 ? RTM_ERR_CONFIG : RTM_OK);
    if (k < 2) assert_contains(c.text, "source.delay");
  }
  /* the Ricker at that reach is indeed under FLT_TRUE_MIN of its peak, and not 3% before */
  assert_true(fabs(rtm_ricker(reach_s, f, 0.0)) < FLT_TRUE_MIN);
  assert_true(fabs(rtm_ricker(0.97 * reach_s, f, 0.0)) > FLT_TRUE_MIN);
  setup_release(&s);
}

/* rtm_check_deck_dt, before the model is made, refuses what rtm_resolve_dt refuses once the
 * constant model is made, with the same words, and accepts what it accepts: over random
 * grids, velocities and plane interfaces above, across and below the volume (vp_max from
 * the corners equals the made model's, exactly), at dt 0.5% either side of the limit. */
static void test_deck_dt_before_the_model(void **unused) {
  (void)unused;
  for (int trial = 0; trial < 60; ++trial) {
    const int n[3] = {3 + rand() % 10, 2 + rand() % 3, 3 + rand() % 10};
    const double spacing[3] = {rtm_test_rand_uniform(5, 20), rtm_test_rand_uniform(5, 20),
                               rtm_test_rand_uniform(5, 20)};
    const double origin[3] = {rtm_test_rand_uniform(-500, 500), 0.0,
                              rtm_test_rand_uniform(-100, 100)};
    rtm_grid_t grid;
    assert_int_equal(rtm_grid_init(&grid, n, spacing, origin), RTM_OK);
    rtm_config_t cfg;
    rtm_config_defaults(&cfg);
    cfg.physics.equation = trial % 3 ? RTM_EQUATION_ISO : RTM_EQUATION_VTI;
    cfg.model.epsilon = rtm_test_rand_uniform(0.0, 0.3);
    cfg.model.vp_m_s = rtm_test_rand_uniform(1500, 4500);
    cfg.model.vp_below_m_s = rtm_test_rand_uniform(1500, 4500);
    const double depth_m = (n[2] - 1) * spacing[2];
    if (trial % 4) /* from a cell above the volume to one below it */
      cfg.model.interface_z_m = origin[2] + rtm_test_rand_uniform(-0.5, 1.5) * depth_m;
    cfg.model.interface_dip_deg = rtm_test_rand_uniform(-60, 60);
    rtm_model_t model;
    assert_int_equal(rtm_model_from_constants(&cfg, &grid, &model), RTM_OK);
    assert_true(rtm_model_constants_vp_max(&cfg, &grid) == model.vp_max);
    const double v_max =
        model.vp_max *
        (cfg.physics.equation == RTM_EQUATION_ISO ? 1.0 : sqrt(1.0 + 2.0 * model.epsilon_max));
    cfg.source.frequency_hz = model.vp_min / (2.5 * 6.0 * 20.0); /* no sampling warning */
    for (int side = 0; side < 2; ++side) {
      cfg.time.dt_s = rtm_stable_dt(v_max, spacing) * (side ? 1.005 : 0.995);
      capture_t before, after;
      double dt;
      const int early = captured(&before, rtm_check_deck_dt(&cfg, &grid));
      const int late = captured(&after, rtm_resolve_dt(&cfg, &model, &grid, &dt));
      assert_int_equal(early, side ? RTM_ERR_CONFIG : RTM_OK);
      assert_int_equal(late, early);
      if (side) assert_string_equal(before.text, after.text);
      if (side) assert_contains(before.text, "or set time.dt = auto (");
    }
    rtm_model_release(&model);
  }
}

/* ---- model range ---- */
static void test_model_range(void **unused) {
  (void)unused;
  const int n[3] = {7, 6, 5};
  const double spacing[3] = {10, 10, 10};
  const rtm_grid_t grid = grid_at_origin(n, spacing);
  const size_t cells = rtm_grid_interior_cells(&grid);
  rtm_model_t model;
  memset(&model, 0, sizeof model);
  model.vp = malloc(cells * sizeof(float));
  assert_non_null(model.vp);
  float lo = INFINITY, hi = 0.0f;
  for (size_t i = 0; i < cells; ++i) {
    model.vp[i] = (float)rtm_test_rand_uniform(1500, 4500);
    lo = fminf(lo, model.vp[i]);
    hi = fmaxf(hi, model.vp[i]);
  }
  assert_int_equal(rtm_model_update_range(&model, &grid), RTM_OK);
  assert_true(model.vp_min == lo && model.vp_max == hi);
  assert_true(model.epsilon_max == 0.0);

  const float bad[3] = {0.0f, -1500.0f, NAN};
  for (int b = 0; b < 3; ++b) {
    const size_t cell = (size_t)rand() % cells;
    const float keep = model.vp[cell];
    model.vp[cell] = bad[b];
    capture_t c;
    assert_int_equal(captured(&c, rtm_model_update_range(&model, &grid)), RTM_ERR_INPUT);
    char where[64];
    snprintf(where, sizeof where, "(ix %zu, iy %zu, iz %zu)", cell % 7, cell / 7 % 6, cell / 42);
    assert_non_null(strstr(c.text, where));
    model.vp[cell] = keep;
  }
  rtm_model_release(&model);
  assert_null(model.vp);
}

/* ---- Ricker ---- */
static void test_ricker(void **unused) {
  (void)unused;
  const double pi = 3.14159265358979323846;
  const double f = rtm_test_rand_uniform(5, 40), t0 = 1.2 / f;
  assert_true(fabs(rtm_ricker(t0, f, t0) - 1.0) <= DBL_EPSILON);
  /* zeros where pi^2 f^2 tau^2 = 1/2; minima -2 exp(-3/2) where it is 3/2 */
  const double zero = 1.0 / (pi * f * sqrt(2.0)), trough = sqrt(1.5) / (pi * f);
  assert_true(fabs(rtm_ricker(t0 + zero, f, t0)) <= 1e-15);
  assert_true(fabs(rtm_ricker(t0 - zero, f, t0)) <= 1e-15);
  assert_true(fabs(rtm_ricker(t0 + trough, f, t0) + 2.0 * exp(-1.5)) <= 1e-15);
  /* symmetric about t0, up to the rounding of t0 +- tau */
  const double tau = rtm_test_rand_uniform(0, 2.0 / f);
  assert_true(fabs(rtm_ricker(t0 + tau, f, t0) - rtm_ricker(t0 - tau, f, t0)) <= 1e-13);
}

/* ---- damping profiles ---- */
static void test_boundary_profile(void **unused) {
  (void)unused;
  const int n[3] = {60, 47, 52};
  const double spacing[3] = {10.0, 12.0, 8.0};
  const rtm_grid_t grid = grid_at_origin(n, spacing);
  const int W = 20;
  const double R = 1e-3, v = rtm_test_rand_uniform(1500, 4500), dt = 1e-3;
  rtm_boundary_t b;
  assert_int_equal(rtm_boundary_init(&b, &grid, W, R, v, dt), RTM_OK);
  for (int a = 0; a < 3; ++a) {
    const double eta_max = 3.0 * v * log(1.0 / R) / (2.0 * W * spacing[a]);
    assert_true(fabs(b.eta_dt[a][0] / (eta_max * dt) - 1.0) <= FLT_EPSILON);
    double integral = 0.0; /* sum of eta h over one layer */
    for (int i = 0; i < n[a]; ++i) {
      const float e = b.eta_dt[a][i];
      assert_true(e == b.eta_dt[a][n[a] - 1 - i]); /* both faces alike */
      if (i >= W && i < n[a] - W) assert_true(e == 0.0f);
      if (i < W) {
        assert_true(e > 0.0f);
        assert_true(e < b.eta_dt[a][i > 0 ? i - 1 : 0] || i == 0);
        integral += e / dt * spacing[a];
      }
    }
    /* Round trip exp(-2 int eta dx / v) = R for the continuous profile; the cell sum of
     * (d/W)^2, d = 1..W, exceeds W/3 by the factor (W+1)(2W+1)/(2W^2). */
    const double excess = (W + 1.0) * (2.0 * W + 1.0) / (2.0 * W * W);
    assert_true(fabs(2.0 * integral / v / (log(1.0 / R) * excess) - 1.0) <= 1e-6);
  }
  rtm_boundary_release(&b);

  assert_int_equal(rtm_boundary_init(&b, &grid, 0, R, v, dt), RTM_OK);
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < n[a]; ++i)
      assert_true(b.eta_dt[a][i] == 0.0f);
  rtm_boundary_release(&b);
  assert_int_equal(rtm_boundary_init(&b, &grid, -1, R, v, dt), RTM_ERR_CONFIG);
  assert_int_equal(rtm_boundary_init(&b, &grid, W, 0.0, v, dt), RTM_ERR_CONFIG);
}

RTM_TEST_MAIN_SEEDED(cmocka_unit_test(test_limit_uniform_spacing),
                     cmocka_unit_test(test_limit_unequal_spacing),
                     cmocka_unit_test(test_dt_auto_is_cfl_h_over_v),
                     cmocka_unit_test(test_explicit_dt), cmocka_unit_test(test_anisotropic_speed),
                     cmocka_unit_test(test_sampling_warning), cmocka_unit_test(test_model_range),
                     cmocka_unit_test(test_deck_dt_before_the_model),
                     cmocka_unit_test(test_frequency_floor), cmocka_unit_test(test_delay_reach),
                     cmocka_unit_test(test_ricker), cmocka_unit_test(test_boundary_profile))

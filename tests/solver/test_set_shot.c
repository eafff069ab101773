/* test_set_shot - a propagator moved to another shot (rtm_propagator_set_shot) runs that
 * shot bit for bit as a propagator created for it: the same wavelet (scaled with v^2 at the
 * new source, here in a medium whose speed changes from cell to cell), the same receivers
 * (a patch that moves with the shot and loses receivers at the volume's edge), the same
 * traces and final fields, for iso, vti and tti on the cpu backend; and moving back to the
 * first shot gives the first shot's run again; a receivers file is read once. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rtm_propagator.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

enum { STEPS = 50 };

typedef struct {
  rtm_config_t cfg;
  rtm_grid_t grid;
  rtm_model_t model;
} setup_t;

/* 30 x 26 x 22 cells of 10 m, a layer of 4 cells, vp from 1800 to 2760 m/s along x with a
 * random ripple (so that each source position scales its wavelet differently), a patch of
 * 9 x 5 receivers at 40 m depth. vti/tti: constant anisotropy; receivers record p and q. */
static void make_setup(setup_t *s, rtm_equation_t equation) {
  memset(s, 0, sizeof *s);
  rtm_config_t *cfg = &s->cfg;
  rtm_config_defaults(cfg);
  const int n[3] = {30, 26, 22};
  for (int a = 0; a < 3; ++a)
    cfg->grid.n[a] = n[a];
  cfg->time.steps = STEPS;
  cfg->boundary.width_cells = 4;
  cfg->source.frequency_hz = 12.0;
  cfg->physics.equation = equation;
  cfg->receivers.layout = RTM_RECEIVERS_PATCH;
  cfg->receivers.x_count = 9;
  cfg->receivers.x_step_m = 20.0;
  cfg->receivers.y_count = 5;
  cfg->receivers.z_m = 40.0;
  snprintf(cfg->backend.name, sizeof cfg->backend.name, "cpu");
  if (equation != RTM_EQUATION_ISO) {
    cfg->model.epsilon = 0.2;
    cfg->model.delta = 0.1;
    snprintf(cfg->receivers.fields, sizeof cfg->receivers.fields, "p,q");
  }
  if (equation == RTM_EQUATION_TTI) {
    cfg->model.theta_deg = 30.0;
    cfg->model.phi_deg = 20.0;
  }
  assert_int_equal(rtm_grid_init(&s->grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m),
                   RTM_OK);
  assert_int_equal(rtm_model_from_constants(cfg, &s->grid, &s->model), RTM_OK);
  const size_t cells = rtm_grid_interior_cells(&s->grid);
  for (size_t i = 0; i < cells; ++i)
    s->model.vp[i] =
        (float)(1800.0 + 30.0 * (double)(i % (size_t)n[0]) + rtm_test_rand_uniform(0.0, 90.0));
  assert_int_equal(rtm_model_update_range(&s->model, &s->grid), RTM_OK);
}

/* What a shot leaves: the final levels of p (and q) and the traces of each recorded field. */
typedef struct {
  int receivers;
  float *field[2][2]; /* [field][level] */
  float *traces[2];
} shot_result_t;

static void run_shot(rtm_propagator_t *prop, shot_result_t *result) {
  const size_t cells = rtm_grid_interior_cells(&prop->grid);
  const int fields = prop->model->epsilon ? 2 : 1; /* vti/tti have q */
  for (int it = 0; it < prop->steps; ++it)
    assert_int_equal(prop->backend->step(prop->state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  memset(result, 0, sizeof *result);
  result->receivers = prop->receivers.count;
  for (int f = 0; f < fields; ++f) {
    for (int l = 0; l < 2; ++l) {
      result->field[f][l] = malloc(cells * sizeof(float));
      assert_non_null(result->field[f][l]);
      assert_int_equal(prop->backend->read_field(prop->state, (rtm_field_t)f, (rtm_level_t)l,
                                                 result->field[f][l]),
                       RTM_OK);
    }
    if (!(prop->trace_fields & RTM_FIELD_BIT(f))) continue;
    const size_t values = (size_t)prop->receivers.count * ((size_t)prop->steps + 1);
    result->traces[f] = malloc(values * sizeof(float));
    assert_non_null(result->traces[f]);
    assert_int_equal(prop->backend->read_traces(prop->state, (rtm_field_t)f, result->traces[f]),
                     RTM_OK);
  }
}

static void assert_same_shot(const shot_result_t *a, const shot_result_t *b, size_t cells,
                             int steps) {
  assert_int_equal(a->receivers, b->receivers);
  for (int f = 0; f < 2; ++f) {
    for (int l = 0; l < 2; ++l) {
      assert_true(!a->field[f][l] == !b->field[f][l]);
      if (a->field[f][l])
        assert_memory_equal(a->field[f][l], b->field[f][l], cells * sizeof(float));
    }
    assert_true(!a->traces[f] == !b->traces[f]);
    if (a->traces[f])
      assert_memory_equal(a->traces[f], b->traces[f],
                          (size_t)a->receivers * ((size_t)steps + 1) * sizeof(float));
  }
}

static void release_shot(shot_result_t *result) {
  for (int f = 0; f < 2; ++f) {
    for (int l = 0; l < 2; ++l)
      free(result->field[f][l]);
    free(result->traces[f]);
  }
}

/* A propagator created at `source_m` (the config's [source]) runs its shot. */
static void run_fresh(setup_t *s, const double source_m[3], shot_result_t *result, float *wavelet) {
  rtm_propagator_t prop;
  for (int a = 0; a < 3; ++a)
    s->cfg.source.position_m[a] = source_m[a];
  assert_int_equal(rtm_propagator_create(&s->cfg, &s->grid, &s->model, &prop), RTM_OK);
  memcpy(wavelet, prop.wavelets, (STEPS + 1) * sizeof *wavelet);
  run_shot(&prop, result);
  rtm_propagator_destroy(&prop);
}

static void check_equation(rtm_equation_t equation) {
  setup_t s;
  make_setup(&s, equation);
  /* the second shot lies near the x = 0 face: its patch loses receivers there */
  const double first[3] = {150.0, 120.0, 100.0}, second[3] = {55.5, 133.3, 71.0};
  const size_t cells = rtm_grid_interior_cells(&s.grid);
  shot_result_t fresh_first, fresh_second, moved, moved_back;
  float fresh_wavelet[2][STEPS + 1];
  run_fresh(&s, first, &fresh_first, fresh_wavelet[0]);
  run_fresh(&s, second, &fresh_second, fresh_wavelet[1]);
  assert_true(fresh_first.receivers == 45 && fresh_second.receivers < 45);
  /* v^2 at the source differs, and so do the scaled wavelets */
  assert_memory_not_equal(fresh_wavelet[0], fresh_wavelet[1], sizeof fresh_wavelet[0]);

  rtm_propagator_t prop;
  for (int a = 0; a < 3; ++a)
    s.cfg.source.position_m[a] = first[a];
  assert_int_equal(rtm_propagator_create(&s.cfg, &s.grid, &s.model, &prop), RTM_OK);
  shot_result_t created;
  run_shot(&prop, &created);
  assert_same_shot(&created, &fresh_first, cells, STEPS);
  assert_int_equal(rtm_propagator_set_shot(&prop, &s.cfg, second), RTM_OK);
  assert_memory_equal(prop.source_position_m, second, sizeof second);
  assert_memory_equal(prop.wavelets, fresh_wavelet[1], sizeof fresh_wavelet[1]);
  run_shot(&prop, &moved);
  assert_same_shot(&moved, &fresh_second, cells, STEPS);
  assert_int_equal(rtm_propagator_set_shot(&prop, &s.cfg, first), RTM_OK);
  run_shot(&prop, &moved_back);
  assert_same_shot(&moved_back, &fresh_first, cells, STEPS);
  rtm_propagator_destroy(&prop);

  release_shot(&created);
  release_shot(&fresh_first);
  release_shot(&fresh_second);
  release_shot(&moved);
  release_shot(&moved_back);
  rtm_model_release(&s.model);
}

static void test_iso(void **unused) {
  (void)unused;
  check_equation(RTM_EQUATION_ISO);
}

static void test_vti(void **unused) {
  (void)unused;
  check_equation(RTM_EQUATION_VTI);
}

static void test_tti(void **unused) {
  (void)unused;
  check_equation(RTM_EQUATION_TTI);
}

/* receivers.layout = file: the file is read for the first shot and its positions kept for
 * the others, so that a file rewritten during a run (probe R, R2: 400 receivers, then 100)
 * does not change a run's acquisition. */
static void test_receivers_file_read_once(void **unused) {
  (void)unused;
  setup_t s;
  make_setup(&s, RTM_EQUATION_ISO);
  const char *path = "test_set_shot_receivers.txt";
  FILE *file = fopen(path, "w");
  assert_non_null(file);
  fprintf(file, "100 100 40\n120 100 40\n140 100 40\n");
  fclose(file);
  s.cfg.receivers.layout = RTM_RECEIVERS_FILE;
  snprintf(s.cfg.receivers.file, sizeof s.cfg.receivers.file, "%s", path);
  const double first[3] = {150.0, 120.0, 100.0}, second[3] = {55.5, 133.3, 71.0};
  for (int a = 0; a < 3; ++a)
    s.cfg.source.position_m[a] = first[a];
  rtm_propagator_t prop;
  assert_int_equal(rtm_propagator_create(&s.cfg, &s.grid, &s.model, &prop), RTM_OK);
  assert_int_equal(prop.receivers.count, 3);
  file = fopen(path, "w"); /* rewritten between the shots */
  assert_non_null(file);
  fprintf(file, "100 100 40\n");
  fclose(file);
  assert_int_equal(rtm_propagator_set_shot(&prop, &s.cfg, second), RTM_OK);
  assert_int_equal(prop.receivers.count, 3);
  rtm_propagator_destroy(&prop);
  remove(path);
  rtm_model_release(&s.model);
}

/* A shot outside the volume is refused, and the propagator keeps its shot. */
static void test_refused_shot_keeps_the_old_one(void **unused) {
  (void)unused;
  setup_t s;
  make_setup(&s, RTM_EQUATION_ISO);
  rtm_propagator_t prop;
  const double first[3] = {150.0, 120.0, 100.0}, outside[3] = {150.0, 120.0, 5000.0};
  for (int a = 0; a < 3; ++a)
    s.cfg.source.position_m[a] = first[a];
  assert_int_equal(rtm_propagator_create(&s.cfg, &s.grid, &s.model, &prop), RTM_OK);
  const float wavelet0 = prop.wavelets[10];
  assert_int_equal(rtm_propagator_set_shot(&prop, &s.cfg, outside), RTM_ERR_CONFIG);
  assert_memory_equal(prop.source_position_m, first, sizeof first);
  assert_int_equal(prop.receivers.count, 45);
  assert_true(prop.wavelets[10] == wavelet0);
  rtm_propagator_destroy(&prop);
  rtm_model_release(&s.model);
}

RTM_TEST_MAIN_SEEDED(cmocka_unit_test(test_iso), cmocka_unit_test(test_vti),
                     cmocka_unit_test(test_tti),
                     cmocka_unit_test(test_refused_shot_keeps_the_old_one),
                     cmocka_unit_test(test_receivers_file_read_once))

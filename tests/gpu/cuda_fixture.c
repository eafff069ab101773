/* cuda_fixture.c - the GPU kernel tests' shared fixture (cuda_fixture.h): the random
 * configuration, runs through rtm_propagator, and their comparison with the cpu reference. */
#include "cuda_fixture.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "rtm_status.h"
#include "rtm_test_compare.h"

/* The forward steps before the split, backward and write/read checks. */
enum { SPLIT_STEPS = 40 };

/* 45 x 37 x 29 cells: nx and ny are multiples of no tile, so edge tiles are partial. The
 * source sits off the grid at a fresh fractional position away from the layer; the plane of
 * 12 x 8 receivers too, some of them inside the absorbing layer. */
static void base_config(rtm_config_t *c, int steps, rtm_equation_t equation, rtm_test_rng_t *rng) {
  rtm_config_defaults(c);
  c->grid.n[0] = 45;
  c->grid.n[1] = 37;
  c->grid.n[2] = 29;
  c->grid.spacing_m[0] = 10.0;
  c->grid.spacing_m[1] = 12.0;
  c->grid.spacing_m[2] = 8.0;
  for (int a = 0; a < 3; ++a)
    c->grid.origin_m[a] = 100.0 * (a + 1);
  c->time.steps = steps;
  c->time.dt_s = NAN;
  c->time.cfl = 0.4;
  c->physics.equation = equation;
  c->model.file[0] = '\0';
  const double cell[3] = {19.0 + rtm_test_uniform(rng, 0.0, 1.0),
                          15.0 + rtm_test_uniform(rng, 0.0, 1.0),
                          12.0 + rtm_test_uniform(rng, 0.0, 1.0)};
  for (int a = 0; a < 3; ++a)
    c->source.position_m[a] = c->grid.origin_m[a] + cell[a] * c->grid.spacing_m[a];
  c->source.frequency_hz = 10.0;
  c->source.delay_s = NAN;
  c->source.amplitude = 1.0;
  c->receivers.layout = RTM_RECEIVERS_PLANE;
  c->receivers.z_m =
      c->grid.origin_m[2] + (5.0 + rtm_test_uniform(rng, 0.0, 1.0)) * c->grid.spacing_m[2];
  c->receivers.x_first_m =
      c->grid.origin_m[0] + (2.0 + rtm_test_uniform(rng, 0.0, 1.0)) * c->grid.spacing_m[0];
  c->receivers.x_step_m = 3.3 * c->grid.spacing_m[0];
  c->receivers.x_count = 12;
  c->receivers.y_first_m =
      c->grid.origin_m[1] + (1.0 + rtm_test_uniform(rng, 0.0, 1.0)) * c->grid.spacing_m[1];
  c->receivers.y_step_m = 4.1 * c->grid.spacing_m[1];
  c->receivers.y_count = 8;
  c->boundary.width_cells = 6;
  c->boundary.reflection = 1e-3;
  c->backend.device = 0;
  c->memory.require_compression = 0;
}

float cuda_layered_vp(const rtm_grid_t *grid, int ix, int iy, int iz, rtm_test_rng_t *rng) {
  const double v = 1800.0 + 30.0 * iz + (iz > grid->n[2] / 2 ? 600.0 : 0.0) + 8.0 * ix - 5.0 * iy;
  return (float)(v * (1.0 + 0.05 * (2.0 * rtm_test_uniform(rng, 0.0, 1.0) - 1.0)));
}

static float *model_array(size_t cells) {
  return malloc(cells * sizeof(float));
}

static int make_model(cuda_fixture_t *f, cuda_cell_maker_t fill_cell, rtm_test_rng_t *rng) {
  const int nx = f->grid.n[0], ny = f->grid.n[1], nz = f->grid.n[2];
  const size_t cells = (size_t)nx * ny * nz;
  const rtm_equation_t equation = f->cfg.physics.equation;
  rtm_model_t *m = &f->model;
  m->vp = model_array(cells);
  if (!m->vp) return -1;
  if (equation != RTM_EQUATION_ISO) {
    m->epsilon = model_array(cells);
    m->delta = model_array(cells);
    if (!m->epsilon || !m->delta) return -1;
  }
  if (equation == RTM_EQUATION_TTI) {
    m->theta_deg = model_array(cells);
    m->phi_deg = model_array(cells);
    if (!m->theta_deg || !m->phi_deg) return -1;
  }
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix)
        fill_cell(f, ((size_t)iz * ny + iy) * nx + ix, ix, iy, iz, rng);
  return rtm_model_update_range(m, &f->grid) == RTM_OK ? 0 : -1;
}

cuda_fixture_t *cuda_fixture_create(const char *test, rtm_equation_t equation,
                                    cuda_cell_maker_t fill_cell) {
  cuda_fixture_t *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  const char *steps = getenv("RTM3D_TEST_STEPS");
  f->steps = steps ? atoi(steps) : 300;
  if (f->steps < SPLIT_STEPS + 10) f->steps = SPLIT_STEPS + 10; /* the split checks step 41 */
  printf("%s: %d steps\n", test, f->steps);
  rtm_test_rng_t rng = rtm_test_seed(test);
  base_config(&f->cfg, f->steps, equation, &rng);
  int major = 0;
  if (rtm_grid_init(&f->grid, f->cfg.grid.n, f->cfg.grid.spacing_m, f->cfg.grid.origin_m) !=
          RTM_OK ||
      make_model(f, fill_cell, &rng) != 0 ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess) {
    void *state = f;
    cuda_fixture_teardown(&state);
    return NULL;
  }
  f->hopper = major >= 9;
  return f;
}

int cuda_fixture_teardown(void **state) {
  cuda_fixture_t *f = *state;
  if (!f) return 0;
  for (int r = 0; r < CUDA_REFERENCES; ++r)
    cuda_run_free(&f->reference[r]);
  rtm_model_release(&f->model);
  free(f);
  return 0;
}

rtm_config_t cuda_with_backend(const cuda_fixture_t *f, const char *backend, const char *strategy) {
  rtm_config_t cfg = f->cfg;
  snprintf(cfg.backend.name, sizeof cfg.backend.name, "%s", backend);
  snprintf(cfg.memory.strategy, sizeof cfg.memory.strategy, "%s", strategy);
  return cfg;
}

void cuda_set_kernel(rtm_config_t *cfg, const char *halo, int stages, const cuda_shape_t *shape) {
  snprintf(cfg->kernel.halo, sizeof cfg->kernel.halo, "%s", halo);
  cfg->kernel.stages = stages;
  cfg->kernel.block[0] = shape->block[0];
  cfg->kernel.block[1] = shape->block[1];
  cfg->kernel.zblock = shape->zblock;
}

void cuda_check_refused(const cuda_fixture_t *f, const rtm_config_t *cfg) {
  rtm_propagator_t prop;
  assert_int_equal(rtm_propagator_create(cfg, &f->grid, &f->model, &prop), RTM_ERR_CONFIG);
}

void cuda_check_tiles_refused(const cuda_fixture_t *f, const int (*tiles)[2], size_t count) {
  for (size_t i = 0; i < count; ++i) {
    rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
    cfg.kernel.block[0] = tiles[i][0];
    cfg.kernel.block[1] = tiles[i][1];
    cuda_check_refused(f, &cfg);
  }
}

void cuda_run_free(cuda_run_t *run) {
  free(run->p);
  free(run->q);
  free(run->traces);
  free(run->q_traces);
  memset(run, 0, sizeof *run);
}

/* f->steps forward steps of prop, then its fields and traces into *out (cuda_run_free). */
static int step_and_read(const cuda_fixture_t *f, const rtm_config_t *cfg, rtm_propagator_t *prop,
                         cuda_run_t *out) {
  int status = RTM_OK;
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  const int has_q = cfg->physics.equation != RTM_EQUATION_ISO;
  memset(out, 0, sizeof *out);
  for (int it = 0; it < f->steps; ++it)
    RTM_TRY(prop->backend->step(prop->state, it, RTM_REGION_ALL, RTM_FORWARD));
  if (prop->backend->synchronize) RTM_TRY(prop->backend->synchronize(prop->state));
  out->receiver_count = prop->receivers.count;
  const size_t samples = (size_t)prop->receivers.count * (f->steps + 1);
  out->p = malloc(cells * sizeof(float));
  out->q = has_q ? malloc(cells * sizeof(float)) : NULL;
  out->traces = malloc(samples * sizeof(float));
  if (!out->p || (has_q && !out->q) || !out->traces) RTM_FAIL(RTM_ERR_NOMEM, "test: out of memory");
  RTM_TRY(prop->backend->read_field(prop->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, out->p));
  if (has_q)
    RTM_TRY(prop->backend->read_field(prop->state, RTM_FIELD_Q, RTM_LEVEL_CURRENT, out->q));
  RTM_TRY(prop->backend->read_traces(prop->state, RTM_FIELD_P, out->traces));
  if (prop->trace_fields & RTM_FIELD_BIT(RTM_FIELD_Q)) {
    out->q_traces = malloc(samples * sizeof(float));
    if (!out->q_traces) RTM_FAIL(RTM_ERR_NOMEM, "test: out of memory");
    RTM_TRY(prop->backend->read_traces(prop->state, RTM_FIELD_Q, out->q_traces));
  }
  for (int i = 0; i < prop->ledger.count; ++i)
    if (strncmp(prop->ledger.records[i].label, "p ", 2) == 0)
      out->compressed = prop->ledger.records[i].compressed;
  return RTM_OK;
fail:
  cuda_run_free(out);
  return status;
}

int cuda_run(const cuda_fixture_t *f, const rtm_config_t *cfg, const rtm_model_t *model,
             cuda_run_t *out) {
  int status = RTM_OK;
  rtm_propagator_t prop;
  memset(out, 0, sizeof *out);
  RTM_TRY(rtm_propagator_create(cfg, &f->grid, model, &prop));
  RTM_TRY(step_and_read(f, cfg, &prop, out));
fail:
  rtm_propagator_destroy(&prop);
  return status;
}

void cuda_check_set_shot(const cuda_fixture_t *f, const rtm_config_t *cfg) {
  /* a patch of the fixture's 12 x 8 receivers centred on each shot; the second shot sits
   * 10.3 cells from the x = 0 face, so that its patch loses receivers there */
  rtm_config_t patch = *cfg;
  patch.receivers.layout = RTM_RECEIVERS_PATCH;
  patch.receivers.x_first_m = NAN;
  patch.receivers.y_first_m = NAN;
  rtm_config_t second = patch;
  const double cell[3] = {10.3, 21.6, 15.2};
  for (int a = 0; a < 3; ++a)
    second.source.position_m[a] = f->grid.origin_m[a] + cell[a] * f->grid.spacing_m[a];
  cuda_run_t first_run, moved, fresh;
  rtm_propagator_t prop;
  assert_int_equal(rtm_propagator_create(&patch, &f->grid, &f->model, &prop), RTM_OK);
  assert_int_equal(step_and_read(f, &patch, &prop, &first_run), RTM_OK);
  assert_int_equal(rtm_propagator_set_shot(&prop, &patch, second.source.position_m), RTM_OK);
  assert_int_equal(step_and_read(f, &patch, &prop, &moved), RTM_OK);
  rtm_propagator_destroy(&prop);
  assert_int_equal(cuda_run(f, &second, &f->model, &fresh), RTM_OK);
  assert_true(moved.receiver_count < first_run.receiver_count);
  /* bit for bit: a relative L2 error of 0 */
  cuda_compare(f, &moved, &fresh, 0.0, "set_shot: moved against created there");
  cuda_run_free(&first_run);
  cuda_run_free(&moved);
  cuda_run_free(&fresh);
}

void cuda_compare(const cuda_fixture_t *f, const cuda_run_t *got, const cuda_run_t *ref,
                  double tolerance, const char *what) {
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  assert_int_equal(got->receiver_count, ref->receiver_count);
  assert_true((got->q != NULL) == (ref->q != NULL));
  assert_true((got->q_traces != NULL) == (ref->q_traces != NULL));
  const size_t samples = (size_t)ref->receiver_count * (f->steps + 1);
  const double p = rtm_test_relative_l2(got->p, ref->p, cells);
  const double q = ref->q ? rtm_test_relative_l2(got->q, ref->q, cells) : 0.0;
  const double t = rtm_test_relative_l2(got->traces, ref->traces, samples);
  /* q traces: the same recording kernel on q, held to the same bound */
  const double tq =
      ref->q_traces ? rtm_test_relative_l2(got->q_traces, ref->q_traces, samples) : 0.0;
  printf("  %-44s rel L2 p %.2e q %.2e traces p %.2e q %.2e\n", what, p, q, t, tq);
  assert_true(p <= tolerance);
  assert_true(q <= tolerance);
  assert_true(t <= tolerance);
  assert_true(tq <= tolerance);
}

static float *cells_array(const cuda_fixture_t *f) {
  float *a = malloc(rtm_grid_interior_cells(&f->grid) * sizeof *a);
  assert_non_null(a);
  return a;
}

void cuda_step_all_and_split(const cuda_fixture_t *f, const rtm_config_t *cfg,
                             rtm_propagator_t *all, rtm_propagator_t *split) {
  assert_int_equal(rtm_propagator_create(cfg, &f->grid, &f->model, all), RTM_OK);
  assert_int_equal(rtm_propagator_create(cfg, &f->grid, &f->model, split), RTM_OK);
  for (int it = 0; it < SPLIT_STEPS; ++it) {
    assert_int_equal(all->backend->step(all->state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
    assert_int_equal(split->backend->step(split->state, it, RTM_REGION_EDGE_PLANES, RTM_FORWARD),
                     RTM_OK);
    assert_int_equal(split->backend->step(split->state, it, RTM_REGION_INTERIOR, RTM_FORWARD),
                     RTM_OK);
  }
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  float *a = cells_array(f), *b = cells_array(f);
  const int last = cfg->physics.equation == RTM_EQUATION_ISO ? RTM_FIELD_P : RTM_FIELD_Q;
  for (int field = RTM_FIELD_P; field <= last; ++field) {
    assert_int_equal(all->backend->read_field(all->state, (rtm_field_t)field, RTM_LEVEL_CURRENT, a),
                     RTM_OK);
    assert_int_equal(
        split->backend->read_field(split->state, (rtm_field_t)field, RTM_LEVEL_CURRENT, b), RTM_OK);
    assert_memory_equal(a, b, cells * sizeof *a);
  }
  free(a);
  free(b);
}

void cuda_check_backward_undoes_forward(const cuda_fixture_t *f, rtm_propagator_t *prop,
                                        rtm_field_t field) {
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  float *current = cells_array(f), *previous = cells_array(f), *back = cells_array(f);
  const rtm_backend_t *backend = prop->backend;
  /* p[40], p[39] -> forward step 40 -> backward step 40 -> p[40], p[39] */
  assert_int_equal(backend->read_field(prop->state, field, RTM_LEVEL_CURRENT, current), RTM_OK);
  assert_int_equal(backend->read_field(prop->state, field, RTM_LEVEL_PREVIOUS, previous), RTM_OK);
  assert_int_equal(backend->step(prop->state, SPLIT_STEPS, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  assert_int_equal(backend->step(prop->state, SPLIT_STEPS, RTM_REGION_ALL, RTM_BACKWARD), RTM_OK);
  assert_int_equal(backend->read_field(prop->state, field, RTM_LEVEL_CURRENT, back), RTM_OK);
  /* two fp32 updates of O(1) relative rounding each */
  assert_true(rtm_test_relative_l2(back, current, cells) < 1e-5);
  assert_int_equal(backend->read_field(prop->state, field, RTM_LEVEL_PREVIOUS, back), RTM_OK);
  assert_true(rtm_test_relative_l2(back, previous, cells) < 1e-5);
  free(current);
  free(previous);
  free(back);
}

void cuda_check_write_read(const cuda_fixture_t *f, rtm_propagator_t *prop, rtm_field_t field,
                           int modulus, float offset) {
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  float *written = cells_array(f), *read = cells_array(f);
  for (size_t i = 0; i < cells; ++i)
    written[i] = (float)(i % (size_t)modulus) - offset;
  assert_int_equal(prop->backend->write_field(prop->state, field, RTM_LEVEL_PREVIOUS, written),
                   RTM_OK);
  assert_int_equal(prop->backend->read_field(prop->state, field, RTM_LEVEL_PREVIOUS, read), RTM_OK);
  assert_memory_equal(written, read, cells * sizeof *written);
  free(written);
  free(read);
}

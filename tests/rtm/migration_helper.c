/* The survey of migration_helper.h: model, gathers, migration, in one process. */
#include "migration_helper.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rtm_status.h"

void survey_config(survey_t *s, const int n[3], const char *const *settings) {
  static const char *const base[] = {"grid.dx=10",          "grid.dy=10",
                                     "grid.dz=10",          "boundary.width=10",
                                     "source.frequency=20", "shots.layout=grid",
                                     "shots.z=120",         "receivers.layout=plane",
                                     "receivers.z=120",     "receivers.x_step=20",
                                     "receivers.y_step=20", "backend.name=cpu",
                                     "time.dt=0.0014",      NULL};
  char text[128];
  memset(s, 0, sizeof *s);
  rtm_config_defaults(&s->cfg);
  for (int a = 0; a < 3; ++a) {
    snprintf(text, sizeof text, "grid.n%c=%d", "xyz"[a], n[a]);
    assert_int_equal(rtm_config_set(&s->cfg, text), RTM_OK);
  }
  for (const char *const *set = base; *set; ++set)
    assert_int_equal(rtm_config_set(&s->cfg, *set), RTM_OK);
  for (const char *const *set = settings; set && *set; ++set)
    assert_int_equal(rtm_config_set(&s->cfg, *set), RTM_OK);
  assert_int_equal(rtm_config_validate(&s->cfg), RTM_OK);
  assert_int_equal(
      rtm_grid_init(&s->grid, s->cfg.grid.n, s->cfg.grid.spacing_m, s->cfg.grid.origin_m), RTM_OK);
  assert_int_equal(rtm_shots_init(&s->cfg, &s->grid, &s->shots), RTM_OK);
}

/* The config's constant model (vti/tti: its epsilon, delta and axis) with vp from
 * `velocity`. */
void survey_set_model(survey_t *s, survey_velocity_t velocity, const void *context) {
  const int nx = s->grid.n[0], ny = s->grid.n[1], nz = s->grid.n[2];
  rtm_model_release(&s->model);
  assert_int_equal(rtm_model_from_constants(&s->cfg, &s->grid, &s->model), RTM_OK);
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix)
        s->model.vp[((size_t)iz * ny + iy) * nx + ix] = velocity(context, ix, iy, iz);
  assert_int_equal(rtm_model_update_range(&s->model, &s->grid), RTM_OK);
}

void survey_model(survey_t *s, survey_velocity_t velocity, const void *context) {
  rtm_propagator_t prop;
  survey_set_model(s, velocity, context);
  assert_int_equal(rtm_propagator_create(&s->cfg, &s->grid, &s->model, &prop), RTM_OK);
  s->steps = prop.steps;
  s->receiver_count = prop.receivers.count;
  const size_t samples = (size_t)s->steps + 1, shots = (size_t)s->shots.count;
  const size_t count = (size_t)s->receiver_count;
  s->receivers_m = malloc(shots * count * 3 * sizeof(double));
  s->observed = malloc(shots * count * samples * sizeof(float));
  assert_non_null(s->receivers_m);
  assert_non_null(s->observed);
  for (size_t shot = 0; shot < shots; ++shot) {
    assert_int_equal(rtm_propagator_set_shot(&prop, &s->cfg, s->shots.source_m + 3 * shot), RTM_OK);
    assert_int_equal(prop.receivers.count, s->receiver_count); /* a fixed plane */
    memcpy(s->receivers_m + shot * count * 3, prop.receivers.position_m,
           count * 3 * sizeof(double));
    for (int it = 0; it < s->steps; ++it)
      assert_int_equal(prop.backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
    assert_int_equal(
        prop.backend->read_traces(prop.state, RTM_FIELD_P, s->observed + shot * count * samples),
        RTM_OK);
  }
  rtm_propagator_destroy(&prop);
}

void survey_migrate(survey_t *s, survey_velocity_t velocity, const void *context) {
  rtm_migration_t *m = NULL;
  rtm_shot_timing_t timing;
  if (velocity) survey_set_model(s, velocity, context);
  const size_t cells = rtm_grid_interior_cells(&s->grid);
  const size_t per_shot = (size_t)s->receiver_count * ((size_t)s->steps + 1);
  float *observed = malloc(per_shot * sizeof(float)),
        *scratch = malloc(rtm_image_laplacian_scratch_cells(&s->grid) * sizeof(float));
  free(s->image); /* a survey migrated again: the last image goes */
  free(s->illumination);
  s->image = malloc(cells * sizeof(float));
  s->illumination = malloc(cells * sizeof(float));
  assert_true(observed && scratch && s->image && s->illumination);
  assert_int_equal(rtm_migration_create(&s->cfg, &s->grid, &s->model, &m), RTM_OK);
  s->recomputed_steps = 0;
  for (int shot = 0; shot < s->shots.count; ++shot) {
    memcpy(observed, s->observed + shot * per_shot, per_shot * sizeof(float));
    rtm_migration_prepare(m, s->shots.source_m + 3 * (size_t)shot,
                          rtm_migration_mute_velocity(m, s->shots.source_m + 3 * (size_t)shot),
                          s->receivers_m + 3 * (size_t)shot * s->receiver_count, s->receiver_count,
                          observed);
    assert_int_equal(rtm_migration_shot(m, s->shots.source_m + 3 * (size_t)shot,
                                        s->receivers_m + 3 * (size_t)shot * s->receiver_count,
                                        s->receiver_count, observed, NULL, NULL, &timing),
                     RTM_OK);
    s->recomputed_steps += timing.recomputed_steps;
  }
  assert_int_equal(rtm_migration_read(m, s->image, s->illumination), RTM_OK);
  rtm_mem_ledger_t memory;
  assert_int_equal(rtm_migration_memory(m, &memory), RTM_OK);
  s->staging_held = 0;
  for (int r = 0; r < memory.count; ++r)
    s->staging_held |= strcmp(memory.records[r].label, "snapshots staging") == 0;
  rtm_mem_ledger_release(&memory);
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(m);
  if (plan) { /* never cleared: the shots' sum */
    s->gather_plan = *plan;
    free(s->gathers);
    s->gathers = malloc(rtm_gather_plan_cells(plan, s->grid.nz_local) * sizeof(float));
    assert_non_null(s->gathers);
    assert_int_equal(rtm_migration_gathers_read(m, s->gathers), RTM_OK);
  }
  if (s->cfg.rtm.illumination)
    assert_int_equal(rtm_image_compensate(s->grid.mpi, s->image, s->illumination, cells,
                                          s->cfg.rtm.illumination_eps),
                     RTM_OK);
  if (s->cfg.rtm.laplacian)
    assert_int_equal(rtm_image_laplacian(&s->grid, s->cfg.boundary.width_cells, s->image, scratch),
                     RTM_OK);
  rtm_migration_destroy(m);
  free(scratch);
  free(observed);
}

void survey_release(survey_t *s) {
  rtm_shots_release(&s->shots);
  rtm_model_release(&s->model);
  free(s->receivers_m);
  free(s->observed);
  free(s->image);
  free(s->illumination);
  free(s->gathers);
}

int survey_column_peak(const survey_t *s, int ix, int iy, int z_begin, int z_end) {
  int peak = z_begin;
  float largest = -INFINITY;
  for (int iz = z_begin; iz < z_end; ++iz) {
    const float value = survey_image_at(s, ix, iy, iz);
    if (value > largest) {
      largest = value;
      peak = iz;
    }
  }
  return peak;
}

/* The interior box of the grid along each axis: [width, n - width). */
static int inside(const survey_t *s, int ix, int iy, int iz) {
  const int w = s->cfg.boundary.width_cells;
  return ix >= w && ix < s->grid.n[0] - w && iy >= w && iy < s->grid.n[1] - w && iz >= w &&
         iz < s->grid.n[2] - w;
}

double survey_interior_l2(const survey_t *s, const float *a, const float *reference) {
  double error = 0.0, norm = 0.0;
  size_t i = 0;
  for (int iz = 0; iz < s->grid.n[2]; ++iz)
    for (int iy = 0; iy < s->grid.n[1]; ++iy)
      for (int ix = 0; ix < s->grid.n[0]; ++ix, ++i) {
        if (!inside(s, ix, iy, iz)) continue;
        const double d = (double)a[i] - (double)reference[i];
        error += d * d;
        norm += (double)reference[i] * reference[i];
      }
  return norm > 0.0 ? sqrt(error / norm) : (error > 0.0 ? INFINITY : 0.0);
}

typedef struct {
  const survey_t *survey;
  const char *label;
  const float *forward; /* [steps / imaging_step][cells]: S(k imaging_step) */
  int imaging_step, visits;
  double worst;
  size_t non_finite; /* values anywhere, the layer included */
} replay_t;

static int compare_level(void *context, int n, const float *source_p) {
  replay_t *r = context;
  const size_t cells = rtm_grid_interior_cells(&r->survey->grid);
  const double error = survey_interior_l2(r->survey, source_p,
                                          r->forward + (size_t)(n / r->imaging_step - 1) * cells);
  printf("%s: S(%d) rebuilt, relative L2 %.3e inside the non-absorbing interior\n", r->label, n,
         error);
  if (!(error <= r->worst)) r->worst = error; /* NaN sticks */
  for (size_t i = 0; i < cells; ++i)
    r->non_finite += !isfinite(source_p[i]);
  ++r->visits;
  return RTM_OK;
}

double survey_reconstruction_error(const survey_t *s, const char *label) {
  rtm_propagator_t prop;
  rtm_migration_t *m = NULL;
  const size_t cells = rtm_grid_interior_cells(&s->grid);
  const int step = s->cfg.rtm.imaging_step, count = s->cfg.time.steps / step;
  assert_true(step > 0 && count > 0);
  float *forward = malloc((size_t)count * cells * sizeof(float));
  assert_non_null(forward);
  assert_int_equal(rtm_propagator_create(&s->cfg, &s->grid, &s->model, &prop), RTM_OK);
  assert_int_equal(rtm_propagator_set_shot(&prop, &s->cfg, s->shots.source_m), RTM_OK);
  for (int it = 0; it < prop.steps; ++it) {
    assert_int_equal(prop.backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
    if ((it + 1) % step == 0)
      assert_int_equal(prop.backend->read_field(prop.state, RTM_FIELD_P, RTM_LEVEL_CURRENT,
                                                forward + (size_t)((it + 1) / step - 1) * cells),
                       RTM_OK);
  }
  rtm_propagator_destroy(&prop);
  replay_t replay = {s, label, forward, step, 0, 0.0, 0};
  assert_int_equal(rtm_migration_create(&s->cfg, &s->grid, &s->model, &m), RTM_OK);
  assert_int_equal(rtm_migration_replay_source(m, s->shots.source_m, compare_level, &replay),
                   RTM_OK);
  rtm_migration_destroy(m);
  free(forward);
  assert_int_equal(replay.visits, count);
  /* outside the interior S means nothing, but a finite nothing: the layer is off */
  if (replay.non_finite) printf("%s: %zu values not finite\n", label, replay.non_finite);
  assert_int_equal(replay.non_finite, 0);
  return replay.worst;
}

float survey_background(const void *context, int ix, int iy, int iz) {
  (void)context;
  (void)ix;
  (void)iy;
  (void)iz;
  return 2000.0f;
}

float survey_two_layers(const void *context, int ix, int iy, int iz) {
  (void)context;
  (void)ix;
  (void)iy;
  return iz < 30 ? 2000.0f : 2400.0f;
}

static float flat_reflector(const void *context, int ix, int iy, int iz) {
  (void)context;
  (void)ix;
  (void)iy;
  return iz <= 30 ? 2000.0f : 2600.0f;
}

enum { EXTRA_SETTINGS = 8 };

/* survey_config with `base` ([count]) then `settings` (NULL-terminated) on top. */
static void config_with(survey_t *s, const int n[3], const char *const *base, int count,
                        const char *const *settings) {
  const char *all[16 + EXTRA_SETTINGS + 1] = {NULL};
  int extra = 0;
  assert_true(count <= 16);
  memcpy(all, base, (size_t)count * sizeof *base);
  while (settings && settings[extra]) {
    assert_true(extra < EXTRA_SETTINGS);
    all[count + extra] = settings[extra];
    ++extra;
  }
  survey_config(s, n, all);
}

/* The anisotropy of both surveys (ignored by iso, with a warning). */
#define SURVEY_ANISOTROPY "model.epsilon=0.15", "model.delta=0.05", "model.theta=20", "model.phi=30"

double survey_rebuild_error(const char *const *settings, const char *label) {
  static const char *const base[] = {"rtm.reconstruction=boundary", "rtm.imaging_step=50",
                                     "time.steps=250", SURVEY_ANISOTROPY};
  const int n[3] = {40, 40, 40};
  survey_t s;
  config_with(&s, n, base, (int)(sizeof base / sizeof *base), settings);
  survey_set_model(&s, survey_two_layers, NULL);
  const double error = survey_reconstruction_error(&s, label);
  survey_release(&s);
  return error;
}

void survey_flat_modelled(survey_t *s, const char *const *settings) {
  static const char *const base[] = {"shots.x_count=2", "time.steps=300", SURVEY_ANISOTROPY};
  const int n[3] = {48, 44, 48};
  config_with(s, n, base, (int)(sizeof base / sizeof *base), settings);
  survey_model(s, flat_reflector, NULL);
}

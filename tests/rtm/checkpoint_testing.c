/* The checks of checkpoint_testing.h, on the survey of migration_helper.h. */
#include "checkpoint_testing.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "migration_helper.h"
#include "rtm_revolve.h"
#include "rtm_status.h"
#include "rtm_test_compare.h"

enum { NX = 40, NY = 36, NZ = 44, SETTINGS_MAX = 16 };
static const int grid_n[3] = {NX, NY, NZ};

/* A reflector under the sources, so that S carries a reflection as well as the direct wave. */
static float layered(const void *context, int ix, int iy, int iz) {
  (void)context;
  (void)ix;
  (void)iy;
  return iz <= 28 ? 2000.0f : 2600.0f;
}

/* The survey of case c with `shots` shots and rtm.reconstruction = `reconstruction`. */
static void case_survey(const checkpoint_case_t *c, int shots, const char *reconstruction,
                        survey_t *s) {
  char text[8][96];
  const char *settings[SETTINGS_MAX] = {"model.epsilon=0.15", "model.delta=0.05", "model.theta=20",
                                        "model.phi=30"};
  int count = 4;
  snprintf(text[0], sizeof text[0], "backend.name=%s", c->backend);
  snprintf(text[1], sizeof text[1], "physics.equation=%s", c->equation);
  snprintf(text[2], sizeof text[2], "time.steps=%d", c->steps);
  snprintf(text[3], sizeof text[3], "rtm.imaging_step=%d", c->imaging_step);
  snprintf(text[4], sizeof text[4], "rtm.checkpoints=%d", c->checkpoints);
  snprintf(text[5], sizeof text[5], "rtm.reconstruction=%s", reconstruction);
  snprintf(text[6], sizeof text[6], "shots.x_count=%d", shots);
  snprintf(text[7], sizeof text[7], "memory.imaging=%s", c->imaging);
  for (int k = 0; k < 8; ++k)
    if (k < 7 || c->imaging[0]) settings[count++] = text[k];
  settings[count] = NULL;
  survey_config(s, grid_n, settings);
  survey_model(s, layered, NULL);
}

/* S(n) = p at the current level after forward step n - 1, every imaging step n, dense. */
static float *forward_source(const survey_t *s, const double source_m[3], int imaging_step) {
  rtm_propagator_t prop;
  rtm_config_t cfg = s->cfg;
  const size_t cells = rtm_grid_interior_cells(&s->grid);
  cfg.receivers.layout = RTM_RECEIVERS_NONE; /* as the migration's source side */
  float *volumes = malloc((size_t)(s->steps / imaging_step) * cells * sizeof *volumes);
  assert_non_null(volumes);
  assert_int_equal(rtm_propagator_create(&cfg, &s->grid, &s->model, &prop), RTM_OK);
  assert_int_equal(rtm_propagator_set_shot(&prop, &cfg, source_m), RTM_OK);
  for (int it = 0; it < s->steps; ++it) {
    assert_int_equal(prop.backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
    if ((it + 1) % imaging_step != 0) continue;
    float *volume = volumes + (size_t)((it + 1) / imaging_step - 1) * cells;
    assert_int_equal(prop.backend->read_field(prop.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, volume),
                     RTM_OK);
  }
  rtm_propagator_destroy(&prop);
  return volumes;
}

typedef struct {
  const rtm_grid_t *grid;
  const float *reference; /* forward_source's */
  int imaging_step, next; /* the imaging step expected next */
  size_t differing, visited;
  double largest; /* |S| over the visits: the comparison is of a live wavefield */
} replay_check_t;

static int compare_source(void *context, int n, const float *source_p) {
  replay_check_t *r = context;
  const size_t cells = rtm_grid_interior_cells(r->grid);
  assert_int_equal(n, r->next);
  r->next -= r->imaging_step;
  const float *expected = r->reference + (size_t)(n / r->imaging_step - 1) * cells;
  for (size_t i = 0; i < cells; ++i) {
    if (memcmp(&source_p[i], &expected[i], sizeof *source_p) != 0) ++r->differing;
    if (fabs(expected[i]) > r->largest) r->largest = fabs(expected[i]);
  }
  ++r->visited;
  return RTM_OK;
}

void checkpoint_check_source(const checkpoint_case_t *c) {
  survey_t s;
  rtm_migration_t *m = NULL;
  case_survey(c, 1, "checkpoint", &s);
  replay_check_t r = {.grid = &s.grid,
                      .imaging_step = c->imaging_step,
                      .next = c->steps / c->imaging_step * c->imaging_step};
  r.reference = forward_source(&s, s.shots.source_m, c->imaging_step);
  assert_int_equal(rtm_migration_create(&s.cfg, &s.grid, &s.model, &m), RTM_OK);
  assert_int_equal(rtm_migration_replay_source(m, s.shots.source_m, compare_source, &r), RTM_OK);
  printf("%s %s, %d steps, imaging step %d, %d checkpoints: S(n) at %zu imaging steps, %zu "
         "cells differ from the forward pass's (largest |S| %.3g)\n",
         c->backend, c->equation, c->steps, c->imaging_step, c->checkpoints, r.visited, r.differing,
         r.largest);
  assert_int_equal(r.visited, c->steps / c->imaging_step);
  assert_true(r.largest > 0.0);
  assert_int_equal(r.differing, 0);
  rtm_migration_destroy(m);
  free((void *)r.reference);
  survey_release(&s);
}

void checkpoint_check_image(const checkpoint_case_t *c) {
  survey_t s;
  const int shots = 2;
  case_survey(c, shots, "snapshots", &s);
  survey_migrate(&s, NULL, NULL);
  float *image = s.image, *illumination = s.illumination;
  s.image = s.illumination = NULL;
  assert_int_equal(s.recomputed_steps, 0);
  s.cfg.rtm.reconstruction = RTM_RECONSTRUCT_CHECKPOINT;
  survey_migrate(&s, NULL, NULL);
  const size_t cells = rtm_grid_interior_cells(&s.grid);
  const double image_l2 = rtm_test_relative_l2(s.image, image, cells);
  const double illumination_l2 = rtm_test_relative_l2(s.illumination, illumination, cells);
  const int last_point = (c->steps + c->imaging_step - 1) / c->imaging_step;
  const int slots = c->checkpoints > 0 ? c->checkpoints : last_point - 1; /* all fit */
  const long long optimum =
      (long long)shots * c->imaging_step * rtm_revolve_optimal_recomputation(last_point, slots);
  printf("%s %s, %d checkpoints: checkpoint against snapshots, relative L2: image %.3e, "
         "illumination %.3e; %lld steps recomputed in %d shots (optimum %lld, %.2f x the "
         "steps)\n",
         c->backend, c->equation, c->checkpoints, image_l2, illumination_l2, s.recomputed_steps,
         shots, optimum, (double)s.recomputed_steps / ((double)shots * c->steps));
  assert_true(image_l2 <= 1e-3 && illumination_l2 <= 1e-3); /* the bar */
  assert_memory_equal(s.image, image, cells * sizeof *image);
  assert_memory_equal(s.illumination, illumination, cells * sizeof *illumination);
  assert_int_equal(s.recomputed_steps, optimum);
  free(image);
  free(illumination);
  survey_release(&s);
}

/* migration_helper.h - a small survey over a model whose reflectors are known, modelled and
 * migrated in one process: the config (a shot grid, a receiver plane), the observed gathers
 * (the propagator moved from shot to shot, receivers recording p), and the migrated image
 * (rtm_migration with the run's filters). Shared by the image tests and the GPU comparison. */
#ifndef RTM_TEST_MIGRATION_HELPER_H
#define RTM_TEST_MIGRATION_HELPER_H

#include <stddef.h>

#include "rtm_migration.h"
#include "rtm_propagator.h"

/* vp at cell (ix, iy, iz) of the survey's grid */
typedef float (*survey_velocity_t)(const void *context, int ix, int iy, int iz);

typedef struct {
  rtm_config_t cfg;
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_shots_t shots;
  int receiver_count;
  double *receivers_m; /* per shot [shot][receiver_count][3] */
  float *observed;     /* per shot [shot][receiver_count][steps + 1] */
  int steps;
  float *image, *illumination; /* dense, after rtm_migration and the filters */
  /* rtm.offset_lags > 0: the gathers summed over the shots (in float, unfiltered), dense
   * [ncip][nh][nh][nz] as gather_plan lays them out; else NULL */
  float *gathers;
  rtm_gather_plan_t gather_plan;
  long long recomputed_steps;  /* by the last survey_migrate, all shots */
  int staging_held; /* the last survey_migrate's ledger held "snapshots staging" at its end */
} survey_t;

/* The config of a survey on an n[0] x n[1] x n[2] grid of 10 m cells, overridden by the
 * `settings` ("section.key=value", NULL-terminated): absorbing layer 10 cells, shots and
 * receivers at z = 120 m, 20 Hz, dt = 1.4 ms (fixed, so that modelling and migration in
 * different velocities share it; stable up to 3200 m/s). */
void survey_config(survey_t *s, const int n[3], const char *const *settings);
/* The model from `velocity`, then the observed gathers of every shot on cfg's backend. */
void survey_model(survey_t *s, survey_velocity_t velocity, const void *context);
/* Migrates the observed gathers with cfg's backend and filters into s->image, in the
 * migration velocity `velocity` (NULL: the model the data were modelled in). */
void survey_migrate(survey_t *s, survey_velocity_t velocity, const void *context);
void survey_release(survey_t *s);

/* The model from `velocity` alone (no gathers), for tests of the source side. */
void survey_set_model(survey_t *s, survey_velocity_t velocity, const void *context);
/* The relative L2 difference of `a` from `reference` (dense volumes of the grid) over the
 * non-absorbing interior, the box inside boundary.width cells of every face. */
double survey_interior_l2(const survey_t *s, const float *a, const float *reference);
/* S(n) of p as the migration's reconstruction (cfg's rtm.reconstruction and backend) hands
 * it back in the backward pass of the survey's first shot, against S(n) of a forward
 * propagator, at every imaging step n (rtm.imaging_step): the largest survey_interior_l2
 * over them, each printed with `label`. Every value of the volume handed back, the layer's
 * included, must be finite. */
double survey_reconstruction_error(const survey_t *s, const char *label);
/* 2000 m/s everywhere: the image tests' migration velocity, the one above their reflectors. */
float survey_background(const void *context, int ix, int iy, int iz);
/* vp of the reconstruction tests: 2000 m/s over 2400 m/s below cell 30 (a reflector, so that
 * waves come back up). */
float survey_two_layers(const void *context, int ix, int iy, int iz);
/* survey_reconstruction_error of the reconstruction tests' survey: 40^3 cells (a layer of
 * 10), survey_two_layers, rtm.reconstruction = boundary, 250 steps imaged every 50 (the wave
 * runs through the layer and back), for vti and tti epsilon 0.15, delta 0.05, theta 20, phi
 * 30; `settings` (NULL-terminated) on top. */
double survey_rebuild_error(const char *const *settings, const char *label);
/* The reconstructions' image survey (test_migration_gpu's): 48 x 44 x 48 cells, 2 shots
 * along x, 300 steps, a flat reflector (2000 over 2600 m/s below cell 30), the anisotropy
 * of survey_rebuild_error; `settings` on top; modelled (survey_model), ready to migrate. */
void survey_flat_modelled(survey_t *s, const char *const *settings);

/* The image value at (ix, iy, iz). */
static inline float survey_image_at(const survey_t *s, int ix, int iy, int iz) {
  return s->image[((size_t)iz * s->grid.n[1] + iy) * s->grid.n[0] + ix];
}
/* The depth index of the largest image value in column (ix, iy) over [z_begin, z_end): with
 * the phase correction a velocity increase downward images as a positive peak between
 * negative side lobes, so the largest value picks the interface, not a side lobe. */
int survey_column_peak(const survey_t *s, int ix, int iy, int z_begin, int z_end);

#endif

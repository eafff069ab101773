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
  long long recomputed_steps;  /* by the last survey_migrate, all shots */
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

/* The image value at (ix, iy, iz). */
static inline float survey_image_at(const survey_t *s, int ix, int iy, int iz) {
  return s->image[((size_t)iz * s->grid.n[1] + iy) * s->grid.n[0] + ix];
}
/* The depth index of the largest image value in column (ix, iy) over [z_begin, z_end): with
 * the phase correction a velocity increase downward images as a positive peak between
 * negative side lobes, so the largest value picks the interface, not a side lobe. */
int survey_column_peak(const survey_t *s, int ix, int iy, int z_begin, int z_end);

#endif

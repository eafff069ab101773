/* cpu_problem.h - the random heterogeneous problem of the cpu backend's unit tests
 * (test_backend_cpu for iso, test_tti_cpu for vti and tti) and the backend calls they repeat.
 * Include after <cmocka.h>: the helpers assert. Inputs come from rand(), seeded by
 * RTM_TEST_MAIN_SEEDED. */
#ifndef RTM_TEST_CPU_PROBLEM_H
#define RTM_TEST_CPU_PROBLEM_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_memory.h"
#include "rtm_solver.h"

enum { PROBLEM_SOURCES = 2, PROBLEM_RECEIVERS = 3 };

/* A problem on the z-range [z_offset, z_offset + nz_local) of a volume n. */
typedef struct {
  rtm_grid_t grid;
  rtm_model_t model; /* filled by the test */
  rtm_boundary_t boundary;
  rtm_config_t cfg; /* zeroed: the test sets what its equation needs */
  rtm_mem_ledger_t ledger;
  rtm_points_t sources, receivers;
  float *wavelets; /* [PROBLEM_SOURCES][steps], uniform in [-1, 1] */
  double dt;
  int steps;
  size_t cells; /* interior cells of the local grid */
} problem_t;

/* The grid (spacings 10, 12, 9 m; origin -40, 25, 0 m), an empty model and config. */
void problem_grid(problem_t *pb, const int n[3], int z_offset, int nz_local);

/* Once the test has filled the model and the config: dt at 0.9 of the stable step for
 * `speed_max`, 12 steps, a damping layer of `width` cells and `reflection`, the sources and
 * receivers at random positions and the random wavelets. The points stay out of the layer,
 * so that a damped backward step still inverts the forward one where they inject; along z
 * they lie over the local slab when it lies there, so that some taps are owned and some are
 * not. */
void problem_finish(problem_t *pb, double speed_max, int width, double reflection);

void problem_release(problem_t *pb);

/* Uniform in [lo, hi], malloc'd. */
float *problem_random_array(size_t cells, double lo, double hi);

rtm_backend_desc_t problem_desc(problem_t *pb);
/* A cpu backend on the problem, with no sources or receivers yet. */
void *problem_backend_create(problem_t *pb);
/* A cpu backend on the problem whose receivers record `trace_fields`. */
void *problem_backend_make(problem_t *pb, unsigned trace_fields);

float *problem_read_field(void *state, rtm_field_t field, rtm_level_t level, size_t cells);
void problem_write_field(void *state, rtm_field_t field, rtm_level_t level, const float *values);
/* The traces of `field`, [PROBLEM_RECEIVERS][steps + 1], malloc'd. */
float *problem_read_traces(const problem_t *pb, void *state, rtm_field_t field);

/* Dense value, zero outside the local slab (the halos of a rank without neighbours). */
double problem_at(const problem_t *pb, const float *dense, long ix, long iy, long iz);

/* Adds the sources' sample `it` at their taps to a field computed in double, and its size to
 * `magnitude` (the rounding bound). */
void problem_add_sources(const problem_t *pb, int it, double *next, double *magnitude);

/* Steps forward 0..3 then backward 3, 2: `whole` by whole steps, `split` by the edge planes
 * then the interior. Then the fields p up to `last` hold the same levels and traces in both,
 * bit for bit. */
void problem_check_split_equals_whole(const problem_t *pb, void *whole, void *split,
                                      rtm_field_t last);

/* Runs check(n, z_offset, nz_local) on the z-ranges that matter to split steps: the whole
 * volume n (interior planes exist), a middle rank of 12 planes from `middle`, and the last 6
 * planes (nz_local <= 2R: the edge planes are everything). */
void problem_for_split_ranges(void (*check)(const int n[3], int z_offset, int nz_local),
                              const int n[3], int middle);

/* d_max = 3 max(eta dt), the largest damping a cell gets (a corner), asserted below 1: a
 * backward step divides by 1 - d. */
float problem_damping_max(const problem_t *pb);

/* Ledger records named `label` of `bytes` bytes. */
int problem_ledger_count(const problem_t *pb, const char *label, size_t bytes);

#endif

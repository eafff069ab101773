/* tti_helper.h - sets up and drives the cpu backend on a model the test fills (iso, vti or
 * tti) with one Ricker point source scaled as the modelling command does, and receivers;
 * shared by the anisotropic regression tests. */
#ifndef RTM_TEST_TTI_HELPER_H
#define RTM_TEST_TTI_HELPER_H

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_memory.h"
#include "rtm_solver.h"
#include "rtm_test_compare.h" /* rtm_test_relative_l2 */

typedef struct {
  rtm_config_t cfg; /* defaults; the test sets physics.*, time.cfl or time.dt */
  rtm_grid_t grid;
  rtm_model_t model; /* arrays allocated for the equation, filled by the test */
  size_t cells;
  rtm_boundary_t boundary;
  rtm_points_t sources, receivers;
  unsigned trace_fields; /* what the receivers record: p unless the test adds q */
  rtm_mem_ledger_t ledger;
  float *wavelet;
  double dt_s;
  int steps;
  void *state; /* cpu backend */
} tti_run_t;

/* Grid n with uniform spacing h; model arrays for `equation` (vp 2000, the rest 0). */
void tti_run_init(tti_run_t *run, const int n[3], double h_m, rtm_equation_t equation);

typedef struct {
  int x, y, z;
} tti_cell_t;

/* The interior cell of dense index i, which runs over x fastest: the tests fill the model by
 * looping over i. */
tti_cell_t tti_run_cell(const tti_run_t *run, size_t i);

/* Resolves dt from cfg (auto or explicit), builds the damping layer, the source (Ricker of
 * peak frequency f, delay 1.2 / f, scaled by dt^2 vp^2 / h^3 at the source) and receivers,
 * and creates the backend for `steps` steps. Returns the status of the first failure. */
int tti_run_start(tti_run_t *run, const double source_m[3], const double *receiver_m,
                  int receiver_count, double frequency_hz, int steps, int boundary_width,
                  double boundary_reflection);

/* Steps [first, last) forward. */
int tti_run_steps(tti_run_t *run, int first, int last);

/* Traces of a recorded field [receivers][steps + 1], malloc'd. */
float *tti_run_traces(tti_run_t *run, rtm_field_t field);
/* A dense copy of a field at the current level, malloc'd. */
float *tti_run_field(tti_run_t *run, rtm_field_t field);

void tti_run_release(tti_run_t *run);

/* Monotonic wall clock, seconds. */
double tti_now_s(void);

#endif

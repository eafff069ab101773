/* cpu_problem.c - the random heterogeneous problem of the cpu backend's unit tests and the
 * backend calls they repeat (cpu_problem.h). */
#include "cpu_problem.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rtm_status.h"
#include "rtm_test_random.h"

static const double spacing[3] = {10.0, 12.0, 9.0};
static const double origin[3] = {-40.0, 25.0, 0.0};

void problem_grid(problem_t *pb, const int n[3], int z_offset, int nz_local) {
  memset(pb, 0, sizeof *pb);
  rtm_mem_ledger_init(&pb->ledger);
  assert_int_equal(rtm_grid_init(&pb->grid, n, spacing, origin), RTM_OK);
  assert_int_equal(rtm_grid_set_z_range(&pb->grid, z_offset, nz_local), RTM_OK);
  pb->cells = rtm_grid_interior_cells(&pb->grid);
}

void problem_finish(problem_t *pb, double speed_max, int width, double reflection) {
  const int *n = pb->grid.n;
  const int z_offset = pb->grid.z_offset, nz_local = pb->grid.nz_local;
  pb->dt = 0.9 * rtm_stable_dt(speed_max, spacing);
  pb->steps = 12;
  assert_int_equal(
      rtm_boundary_init(&pb->boundary, &pb->grid, width, reflection, pb->model.vp_max, pb->dt),
      RTM_OK);

  double position[3 * (PROBLEM_SOURCES + PROBLEM_RECEIVERS)];
  for (int p = 0; p < PROBLEM_SOURCES + PROBLEM_RECEIVERS; ++p)
    for (int a = 0; a < 3; ++a) {
      double lo = width + 0.0, hi = n[a] - 1.0 - width;
      if (a == 2) {
        lo = fmax(lo, z_offset - 1.0);
        hi = fmin(hi, z_offset + nz_local + 0.0);
      }
      position[3 * p + a] = origin[a] + rtm_test_rand_uniform(lo, hi) * spacing[a];
    }
  assert_int_equal(rtm_points_init(&pb->sources, &pb->grid, position, PROBLEM_SOURCES, "source"),
                   RTM_OK);
  assert_int_equal(rtm_points_init(&pb->receivers, &pb->grid, position + 3 * PROBLEM_SOURCES,
                                   PROBLEM_RECEIVERS, "receiver"),
                   RTM_OK);
  pb->wavelets = problem_random_array((size_t)PROBLEM_SOURCES * pb->steps, -1.0, 1.0);
}

void problem_release(problem_t *pb) {
  free(pb->wavelets);
  rtm_points_release(&pb->receivers);
  rtm_points_release(&pb->sources);
  rtm_boundary_release(&pb->boundary);
  rtm_model_release(&pb->model);
  rtm_mem_ledger_release(&pb->ledger);
}

float *problem_random_array(size_t cells, double lo, double hi) {
  float *a = malloc(cells * sizeof(float));
  assert_non_null(a);
  for (size_t i = 0; i < cells; ++i)
    a[i] = (float)rtm_test_rand_uniform(lo, hi);
  return a;
}

rtm_backend_desc_t problem_desc(problem_t *pb) {
  const rtm_backend_desc_t desc = {.config = &pb->cfg,
                                   .grid = &pb->grid,
                                   .model = &pb->model,
                                   .boundary = &pb->boundary,
                                   .dt_s = pb->dt,
                                   .steps = pb->steps,
                                   .ledger = &pb->ledger};
  return desc;
}

void *problem_backend_create(problem_t *pb) {
  const rtm_backend_desc_t desc = problem_desc(pb);
  void *state = NULL;
  assert_int_equal(rtm_backend_cpu.create(&desc, &state), RTM_OK);
  return state;
}

void *problem_backend_make(problem_t *pb, unsigned trace_fields) {
  void *state = problem_backend_create(pb);
  assert_int_equal(rtm_backend_cpu.set_sources(state, &pb->sources, pb->wavelets, pb->steps),
                   RTM_OK);
  assert_int_equal(rtm_backend_cpu.set_receivers(state, &pb->receivers, trace_fields), RTM_OK);
  return state;
}

float *problem_read_field(void *state, rtm_field_t field, rtm_level_t level, size_t cells) {
  float *f = malloc(cells * sizeof(float));
  assert_non_null(f);
  assert_int_equal(rtm_backend_cpu.read_field(state, field, level, f), RTM_OK);
  return f;
}

void problem_write_field(void *state, rtm_field_t field, rtm_level_t level, const float *values) {
  assert_int_equal(rtm_backend_cpu.write_field(state, field, level, values), RTM_OK);
}

float *problem_read_traces(const problem_t *pb, void *state, rtm_field_t field) {
  float *traces = malloc((size_t)PROBLEM_RECEIVERS * (pb->steps + 1) * sizeof(float));
  assert_non_null(traces);
  assert_int_equal(rtm_backend_cpu.read_traces(state, field, traces), RTM_OK);
  return traces;
}

double problem_at(const problem_t *pb, const float *dense, long ix, long iy, long iz) {
  const rtm_grid_t *g = &pb->grid;
  if (ix < 0 || ix >= g->n[0] || iy < 0 || iy >= g->n[1] || iz < 0 || iz >= g->nz_local) return 0.0;
  return dense[((size_t)iz * g->n[1] + (size_t)iy) * g->n[0] + (size_t)ix];
}

void problem_add_sources(const problem_t *pb, int it, double *next, double *magnitude) {
  for (int s = 0; s < pb->sources.count; ++s)
    for (int t = 0; t < RTM_POINT_TAPS; ++t) {
      const size_t k = (size_t)s * RTM_POINT_TAPS + t;
      const float w = pb->sources.tap_weight[k];
      if (w == 0.0f) continue;
      const size_t i = rtm_grid_dense_index(&pb->grid, pb->sources.tap_index[k]);
      const double add = (double)w * pb->wavelets[(size_t)s * pb->steps + it];
      next[i] += add;
      magnitude[i] += fabs(add);
    }
}

/* Both levels of `field` and its traces are the same in backends `a` and `b`, bit for bit. */
static void assert_same_field(const problem_t *pb, void *a, void *b, rtm_field_t field) {
  for (int level = 0; level < 2; ++level) {
    float *in_a = problem_read_field(a, field, (rtm_level_t)level, pb->cells);
    float *in_b = problem_read_field(b, field, (rtm_level_t)level, pb->cells);
    assert_memory_equal(in_a, in_b, pb->cells * sizeof(float));
    free(in_a);
    free(in_b);
  }
  float *traces_a = problem_read_traces(pb, a, field),
        *traces_b = problem_read_traces(pb, b, field);
  assert_memory_equal(traces_a, traces_b,
                      (size_t)PROBLEM_RECEIVERS * (pb->steps + 1) * sizeof(float));
  free(traces_a);
  free(traces_b);
}

void problem_check_split_equals_whole(const problem_t *pb, void *whole, void *split,
                                      rtm_field_t last) {
  for (int it = 0; it < 6; ++it) {
    const rtm_direction_t dir = it < 4 ? RTM_FORWARD : RTM_BACKWARD;
    const int step = it < 4 ? it : 7 - it; /* forward 0..3, then backward 3, 2 */
    assert_int_equal(rtm_backend_cpu.step(whole, step, RTM_REGION_ALL, dir), RTM_OK);
    assert_int_equal(rtm_backend_cpu.step(split, step, RTM_REGION_EDGE_PLANES, dir), RTM_OK);
    assert_int_equal(rtm_backend_cpu.step(split, step, RTM_REGION_INTERIOR, dir), RTM_OK);
  }
  for (int field = RTM_FIELD_P; field <= (int)last; ++field)
    assert_same_field(pb, whole, split, (rtm_field_t)field);
}

void problem_for_split_ranges(void (*check)(const int n[3], int z_offset, int nz_local),
                              const int n[3], int middle) {
  check(n, 0, n[2]);
  check(n, middle, 12);
  check(n, n[2] - 6, 6);
}

float problem_damping_max(const problem_t *pb) {
  float d_max = 0.0f;
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < pb->grid.n[a]; ++i)
      d_max = fmaxf(d_max, pb->boundary.eta_dt[a][i]);
  d_max *= 3.0f;
  assert_true(d_max < 1.0f);
  return d_max;
}

int problem_ledger_count(const problem_t *pb, const char *label, size_t bytes) {
  int found = 0;
  for (int r = 0; r < pb->ledger.count; ++r)
    found +=
        strcmp(pb->ledger.records[r].label, label) == 0 && pb->ledger.records[r].bytes == bytes;
  return found;
}

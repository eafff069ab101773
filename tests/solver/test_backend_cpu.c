/* test_backend_cpu - the reference backend: one step against the equation computed here
 * in double, forward then backward restores the fields, split steps equal whole steps bit
 * for bit, field round trips, the registry. Random fields and models each run. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "point_sample.h"
#include "rtm_solver.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

enum { SOURCES = 2, RECEIVERS = 3 };

/* A random heterogeneous problem on a grid of the z-range [z_offset, z_offset + nz_local)
 * of a volume n. */
typedef struct {
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_boundary_t boundary;
  rtm_config_t cfg;
  rtm_mem_ledger_t ledger;
  rtm_points_t sources, receivers;
  float *wavelets;
  double dt;
  int steps;
  size_t cells; /* interior cells of the local grid */
} problem_t;

/* width/reflection: damping layer. Sources and receivers stay out of the layer, so that a
 * damped backward step still inverts the forward one where they inject. */
static void problem_make(problem_t *pb, const int n[3], int z_offset, int nz_local, int width,
                         double reflection) {
  memset(pb, 0, sizeof *pb);
  rtm_mem_ledger_init(&pb->ledger);
  const double spacing[3] = {10.0, 12.0, 9.0};
  const double origin[3] = {-40.0, 25.0, 0.0};
  assert_int_equal(rtm_grid_init(&pb->grid, n, spacing, origin), RTM_OK);
  assert_int_equal(rtm_grid_set_z_range(&pb->grid, z_offset, nz_local), RTM_OK);
  pb->cells = rtm_grid_interior_cells(&pb->grid);
  pb->model.vp = malloc(pb->cells * sizeof(float));
  assert_non_null(pb->model.vp);
  for (size_t i = 0; i < pb->cells; ++i)
    pb->model.vp[i] = (float)rtm_test_rand_uniform(1500.0, 3000.0);
  assert_int_equal(rtm_model_update_range(&pb->model, &pb->grid), RTM_OK);
  pb->cfg.physics.equation = RTM_EQUATION_ISO;
  pb->dt = 0.9 * rtm_stable_dt(pb->model.vp_max, spacing);
  pb->steps = 12;
  assert_int_equal(
      rtm_boundary_init(&pb->boundary, &pb->grid, width, reflection, pb->model.vp_max, pb->dt),
      RTM_OK);

  double position[3 * (SOURCES + RECEIVERS)];
  for (int p = 0; p < SOURCES + RECEIVERS; ++p)
    for (int a = 0; a < 3; ++a) {
      /* inside the undamped part of the global volume; z over the local slab when it
       * lies there, so that some taps are owned and some are not */
      double lo = width + 0.0, hi = n[a] - 1.0 - width;
      if (a == 2) {
        lo = fmax(lo, z_offset - 1.0);
        hi = fmin(hi, z_offset + nz_local + 0.0);
      }
      position[3 * p + a] = origin[a] + rtm_test_rand_uniform(lo, hi) * spacing[a];
    }
  assert_int_equal(rtm_points_init(&pb->sources, &pb->grid, position, SOURCES, "source"), RTM_OK);
  assert_int_equal(
      rtm_points_init(&pb->receivers, &pb->grid, position + 3 * SOURCES, RECEIVERS, "receiver"),
      RTM_OK);
  pb->wavelets = malloc((size_t)SOURCES * pb->steps * sizeof(float));
  assert_non_null(pb->wavelets);
  for (int i = 0; i < SOURCES * pb->steps; ++i)
    pb->wavelets[i] = (float)rtm_test_rand_uniform(-1.0, 1.0);
}

static void problem_release(problem_t *pb) {
  free(pb->wavelets);
  rtm_points_release(&pb->receivers);
  rtm_points_release(&pb->sources);
  rtm_boundary_release(&pb->boundary);
  rtm_model_release(&pb->model);
  rtm_mem_ledger_release(&pb->ledger);
}

static void *backend_make(problem_t *pb) {
  const rtm_backend_desc_t desc = {.config = &pb->cfg,
                                   .grid = &pb->grid,
                                   .model = &pb->model,
                                   .boundary = &pb->boundary,
                                   .dt_s = pb->dt,
                                   .steps = pb->steps,
                                   .ledger = &pb->ledger};
  void *state = NULL;
  assert_int_equal(rtm_backend_cpu.create(&desc, &state), RTM_OK);
  assert_int_equal(rtm_backend_cpu.set_sources(state, &pb->sources, pb->wavelets, pb->steps),
                   RTM_OK);
  assert_int_equal(rtm_backend_cpu.set_receivers(state, &pb->receivers, RTM_FIELD_BIT(RTM_FIELD_P)),
                   RTM_OK);
  return state;
}

static float *random_field(size_t cells) {
  float *f = malloc(cells * sizeof(float));
  assert_non_null(f);
  for (size_t i = 0; i < cells; ++i)
    f[i] = (float)rtm_test_rand_uniform(-1.0, 1.0);
  return f;
}

static float *read_level(void *state, rtm_level_t level, size_t cells) {
  float *f = malloc(cells * sizeof(float));
  assert_non_null(f);
  assert_int_equal(rtm_backend_cpu.read_field(state, RTM_FIELD_P, level, f), RTM_OK);
  return f;
}

/* Dense value with zeros outside the local slab (the halos of a rank without neighbours). */
static double at(const problem_t *pb, const float *dense, long ix, long iy, long iz) {
  const rtm_grid_t *g = &pb->grid;
  if (ix < 0 || ix >= g->n[0] || iy < 0 || iy >= g->n[1] || iz < 0 || iz >= g->nz_local) return 0.0;
  return dense[((size_t)iz * g->n[1] + (size_t)iy) * g->n[0] + (size_t)ix];
}

/* One forward step computed here in double from the header's equation, sources included;
 * the magnitude of the terms goes to `magnitude` for the rounding bound. */
static void expected_step(const problem_t *pb, const float *p, const float *pp, int it,
                          double *next, double *magnitude) {
  const rtm_grid_t *g = &pb->grid;
  const long nx = g->n[0], ny = g->n[1], nz = g->nz_local;
  for (long iz = 0; iz < nz; ++iz)
    for (long iy = 0; iy < ny; ++iy)
      for (long ix = 0; ix < nx; ++ix) {
        double lap = 0.0, lap_mag = 0.0;
        const long cell[3] = {ix, iy, iz};
        for (int a = 0; a < 3; ++a) {
          double d2 = rtm_fd2_coeff[0] * at(pb, p, ix, iy, iz);
          double m2 = fabs(d2);
          for (int k = 1; k <= RTM_RADIUS; ++k) {
            long plus[3] = {cell[0], cell[1], cell[2]}, minus[3] = {cell[0], cell[1], cell[2]};
            plus[a] += k;
            minus[a] -= k;
            const double s =
                at(pb, p, plus[0], plus[1], plus[2]) + at(pb, p, minus[0], minus[1], minus[2]);
            d2 += rtm_fd2_coeff[k] * s;
            m2 += fabs(rtm_fd2_coeff[k]) * (fabs(at(pb, p, plus[0], plus[1], plus[2])) +
                                            fabs(at(pb, p, minus[0], minus[1], minus[2])));
          }
          const double inv_h2 = 1.0 / (g->spacing_m[a] * g->spacing_m[a]);
          lap += d2 * inv_h2;
          lap_mag += m2 * inv_h2;
        }
        const double v = at(pb, pb->model.vp, ix, iy, iz);
        const double v2dt2 = v * v * pb->dt * pb->dt;
        const double d = (double)pb->boundary.eta_dt[0][ix] + pb->boundary.eta_dt[1][iy] +
                         pb->boundary.eta_dt[2][iz + g->z_offset];
        const size_t i = ((size_t)iz * ny + (size_t)iy) * nx + (size_t)ix;
        const double pc = at(pb, p, ix, iy, iz), po = at(pb, pp, ix, iy, iz);
        next[i] = (2.0 * pc - (1.0 - d) * po + v2dt2 * lap) / (1.0 + d);
        magnitude[i] = (2.0 * fabs(pc) + fabs(po) + v2dt2 * lap_mag) / (1.0 + d);
      }
  /* sources: sample `it` added to the new level */
  for (int s = 0; s < pb->sources.count; ++s)
    for (int t = 0; t < RTM_POINT_TAPS; ++t) {
      const size_t k = (size_t)s * RTM_POINT_TAPS + t;
      const float w = pb->sources.tap_weight[k];
      if (w == 0.0f) continue;
      const size_t i = rtm_grid_dense_index(g, pb->sources.tap_index[k]);
      const double add = (double)w * pb->wavelets[(size_t)s * pb->steps + it];
      next[i] += add;
      magnitude[i] += fabs(add);
    }
}

/* ---- the step is the equation ---- */
static void check_step_against_equation(const int n[3], int z_offset, int nz_local) {
  problem_t pb;
  problem_make(&pb, n, z_offset, nz_local, 3, 0.3);
  void *state = backend_make(&pb);
  float *p = random_field(pb.cells), *pp = random_field(pb.cells);
  assert_int_equal(rtm_backend_cpu.write_field(state, RTM_FIELD_P, RTM_LEVEL_CURRENT, p), RTM_OK);
  assert_int_equal(rtm_backend_cpu.write_field(state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, pp), RTM_OK);
  const int it = 4;
  double *next = malloc(pb.cells * sizeof(double)), *mag = malloc(pb.cells * sizeof(double));
  assert_non_null(next);
  assert_non_null(mag);
  expected_step(&pb, p, pp, it, next, mag);

  assert_int_equal(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  float *got = read_level(state, RTM_LEVEL_CURRENT, pb.cells);
  float *old = read_level(state, RTM_LEVEL_PREVIOUS, pb.cells);
  assert_memory_equal(old, p, pb.cells * sizeof(float)); /* rotated: previous = p[it] */
  /* Float evaluation: about 30 roundings (u = FLT_EPSILON / 2) on partial sums no larger
   * than the sum of |terms|, v^2 dt^2 rounded to float once: 32 FLT_EPSILON of it. */
  double worst = 0.0;
  for (size_t i = 0; i < pb.cells; ++i) {
    const double error = fabs(got[i] - next[i]), tolerance = 32.0 * FLT_EPSILON * mag[i];
    if (error > tolerance)
      fail_msg("cell %zu: step %.9g, equation %.9g (tolerance %.3g)", i, got[i], next[i],
               tolerance);
    if (error / tolerance > worst) worst = error / tolerance;
  }
  printf("  grid %dx%dx%d, z-range [%d, %d): worst error %.3f of the rounding bound\n", n[0], n[1],
         n[2], z_offset, z_offset + nz_local, worst);

  /* receivers: column it + 1 holds sum w p[it+1] at the taps */
  float *traces = malloc((size_t)RECEIVERS * (pb.steps + 1) * sizeof(float));
  assert_non_null(traces);
  assert_int_equal(rtm_backend_cpu.read_traces(state, RTM_FIELD_P, traces), RTM_OK);
  for (int r = 0; r < RECEIVERS; ++r) {
    double sum_mag;
    const double sum = rtm_test_point_sample(&pb.grid, &pb.receivers, got, r, &sum_mag);
    const float recorded = traces[(size_t)r * (pb.steps + 1) + it + 1];
    assert_true(fabs(recorded - sum) <= 8.0 * FLT_EPSILON * sum_mag);
    assert_true(traces[(size_t)r * (pb.steps + 1) + it + 2] == 0.0f);
  }
  free(traces);
  free(got);
  free(old);
  free(next);
  free(mag);
  free(p);
  free(pp);
  rtm_backend_cpu.destroy(state);
  problem_release(&pb);
}

static void test_step_is_the_equation(void **unused) {
  (void)unused;
  const int n[3] = {19, 14, 17};
  check_step_against_equation(n, 0, n[2]);
  check_step_against_equation(n, 5, 9); /* a middle rank of a z decomposition */
}

/* ---- forward then backward ---- */
static void check_forward_backward(int width, double reflection) {
  const int n[3] = {21, 18, 16};
  problem_t pb;
  problem_make(&pb, n, 0, n[2], width, reflection);
  void *state = backend_make(&pb);
  float *p = random_field(pb.cells), *pp = random_field(pb.cells);
  assert_int_equal(rtm_backend_cpu.write_field(state, RTM_FIELD_P, RTM_LEVEL_CURRENT, p), RTM_OK);
  assert_int_equal(rtm_backend_cpu.write_field(state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, pp), RTM_OK);
  const int it = 3;
  assert_int_equal(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  float *next = read_level(state, RTM_LEVEL_CURRENT, pb.cells);
  assert_int_equal(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_BACKWARD), RTM_OK);
  float *current = read_level(state, RTM_LEVEL_CURRENT, pb.cells);
  float *previous = read_level(state, RTM_LEVEL_PREVIOUS, pb.cells);

  /* p[it] was never overwritten: it comes back bit for bit */
  assert_memory_equal(current, p, pb.cells * sizeof(float));
  float d_max = 0.0f;
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < n[a]; ++i)
      d_max = fmaxf(d_max, pb.boundary.eta_dt[a][i]);
  d_max *= 3.0f;
  assert_true(d_max < 1.0f);
  /* In exact arithmetic p[it-1] returns exactly (the Laplacian of p[it] is recomputed bit
   * for bit). Undamped, four float additions round, each by u = FLT_EPSILON / 2 of a value
   * below 2|p| + |pp| + |p[it+1]| (two more with a source tap): 4 u = 2 FLT_EPSILON, doubled.
   * Damped, four products and divisions join them and the backward division by 1 - d
   * amplifies what came before: 8 FLT_EPSILON / (1 - d_max). */
  const double factor = width == 0 ? 4.0 * FLT_EPSILON : 8.0 * FLT_EPSILON / (1.0 - d_max);
  double worst = 0.0, changed = 0.0;
  for (size_t i = 0; i < pb.cells; ++i) {
    const double tolerance = factor * (2.0 * fabs(p[i]) + fabs(pp[i]) + 2.0 * fabs(next[i]));
    const double error = fabs(previous[i] - pp[i]);
    if (error > tolerance)
      fail_msg("cell %zu: p[it-1] %.9g came back as %.9g (tolerance %.3g)", i, pp[i], previous[i],
               tolerance);
    if (error / tolerance > worst) worst = error / tolerance;
    changed = fmax(changed, fabs(next[i] - pp[i]));
  }
  assert_true(changed > 0.1); /* the step did move the field */
  printf("  width %d (max eta dt %.3f): worst error %.3f of the rounding bound\n", width, d_max,
         worst);
  free(next);
  free(current);
  free(previous);
  free(p);
  free(pp);
  rtm_backend_cpu.destroy(state);
  problem_release(&pb);
}

static void test_forward_then_backward_restores(void **unused) {
  (void)unused;
  check_forward_backward(0, 1e-3);
  check_forward_backward(4, 0.3);
}

/* ---- split steps ---- */
static void check_split(const int n[3], int z_offset, int nz_local) {
  problem_t pb;
  problem_make(&pb, n, z_offset, nz_local, 3, 0.3);
  void *whole = backend_make(&pb), *split = backend_make(&pb);
  float *p = random_field(pb.cells), *pp = random_field(pb.cells);
  void *both[2] = {whole, split};
  for (int b = 0; b < 2; ++b) {
    assert_int_equal(rtm_backend_cpu.write_field(both[b], RTM_FIELD_P, RTM_LEVEL_CURRENT, p),
                     RTM_OK);
    assert_int_equal(rtm_backend_cpu.write_field(both[b], RTM_FIELD_P, RTM_LEVEL_PREVIOUS, pp),
                     RTM_OK);
  }
  for (int it = 0; it < 6; ++it) {
    const rtm_direction_t dir = it < 4 ? RTM_FORWARD : RTM_BACKWARD;
    const int step = it < 4 ? it : 7 - it; /* forward 0..3, then backward 3, 2 */
    assert_int_equal(rtm_backend_cpu.step(whole, step, RTM_REGION_ALL, dir), RTM_OK);
    assert_int_equal(rtm_backend_cpu.step(split, step, RTM_REGION_EDGE_PLANES, dir), RTM_OK);
    assert_int_equal(rtm_backend_cpu.step(split, step, RTM_REGION_INTERIOR, dir), RTM_OK);
  }
  for (int level = 0; level < 2; ++level) {
    float *a = read_level(whole, (rtm_level_t)level, pb.cells);
    float *b = read_level(split, (rtm_level_t)level, pb.cells);
    assert_memory_equal(a, b, pb.cells * sizeof(float));
    free(a);
    free(b);
  }
  const size_t samples = (size_t)RECEIVERS * (pb.steps + 1);
  float *ta = malloc(samples * sizeof(float)), *tb = malloc(samples * sizeof(float));
  assert_non_null(ta);
  assert_non_null(tb);
  assert_int_equal(rtm_backend_cpu.read_traces(whole, RTM_FIELD_P, ta), RTM_OK);
  assert_int_equal(rtm_backend_cpu.read_traces(split, RTM_FIELD_P, tb), RTM_OK);
  assert_memory_equal(ta, tb, samples * sizeof(float));
  free(ta);
  free(tb);
  free(p);
  free(pp);
  rtm_backend_cpu.destroy(whole);
  rtm_backend_cpu.destroy(split);
  problem_release(&pb);
}

static void test_split_equals_all(void **unused) {
  (void)unused;
  const int n[3] = {23, 15, 30};
  check_split(n, 0, n[2]); /* interior planes exist */
  check_split(n, 11, 12);  /* a middle rank */
  check_split(n, 24, 6);   /* nz_local <= 2R: edge planes are everything */
}

/* ---- fields ---- */
static void test_field_round_trip(void **unused) {
  (void)unused;
  const int n[3] = {13, 9, 11};
  problem_t pb;
  problem_make(&pb, n, 0, n[2], 2, 0.1);
  void *state = backend_make(&pb);
  for (int level = 0; level < 2; ++level) {
    float *f = random_field(pb.cells);
    assert_int_equal(rtm_backend_cpu.write_field(state, RTM_FIELD_P, (rtm_level_t)level, f),
                     RTM_OK);
    float *g = read_level(state, (rtm_level_t)level, pb.cells);
    assert_memory_equal(f, g, pb.cells * sizeof(float));
    free(f);
    free(g);
  }
  float *q = random_field(pb.cells);
  assert_int_equal(rtm_backend_cpu.read_field(state, RTM_FIELD_Q, RTM_LEVEL_CURRENT, q),
                   RTM_ERR_UNSUPPORTED);
  assert_int_equal(rtm_backend_cpu.write_field(state, RTM_FIELD_Q, RTM_LEVEL_CURRENT, q),
                   RTM_ERR_UNSUPPORTED);
  free(q);
  /* every field went through the ledger */
  const char *labels[] = {"p.current", "p.previous", "model.vp2dt2"};
  for (int l = 0; l < 3; ++l) {
    int found = 0;
    for (int r = 0; r < pb.ledger.count; ++r)
      found += strcmp(pb.ledger.records[r].label, labels[l]) == 0 &&
               pb.ledger.records[r].bytes == pb.grid.padded_cells * sizeof(float);
    assert_int_equal(found, 1);
  }
  rtm_backend_cpu.destroy(state);
  problem_release(&pb);
}

static void test_registry_and_equations(void **unused) {
  (void)unused;
  const rtm_backend_t *b = NULL;
  assert_int_equal(rtm_backend_select("cpu", &b), RTM_OK);
  assert_ptr_equal(b, &rtm_backend_cpu);
  assert_int_equal(rtm_backend_select("auto", &b), RTM_OK);
  assert_non_null(b);
  assert_int_equal(rtm_backend_select("fpga", &b), RTM_ERR_CONFIG);
  assert_null(b);
  const int cuda = rtm_backend_select("cuda", &b);
  assert_true(cuda == RTM_OK || cuda == RTM_ERR_UNSUPPORTED); /* built and present, or not */
  assert_non_null(strstr(rtm_backend_known_names(), "cpu"));
  assert_int_equal(rtm_backend_cpu.probe(NULL, 0), RTM_OK);

  const int n[3] = {10, 10, 10};
  problem_t pb;
  problem_make(&pb, n, 0, n[2], 0, 1e-3);
  pb.cfg.physics.equation = RTM_EQUATION_VTI;
  const rtm_backend_desc_t desc = {.config = &pb.cfg,
                                   .grid = &pb.grid,
                                   .model = &pb.model,
                                   .boundary = &pb.boundary,
                                   .dt_s = pb.dt,
                                   .steps = pb.steps,
                                   .ledger = &pb.ledger};
  /* vti is served (tests/solver/test_tti_cpu.c), but not without its epsilon and delta */
  void *state = (void *)&pb;
  assert_int_equal(rtm_backend_cpu.create(&desc, &state), RTM_ERR_INTERNAL);
  assert_null(state);
  problem_release(&pb);
}

RTM_TEST_MAIN_SEEDED(cmocka_unit_test(test_step_is_the_equation),
                     cmocka_unit_test(test_forward_then_backward_restores),
                     cmocka_unit_test(test_split_equals_all),
                     cmocka_unit_test(test_field_round_trip),
                     cmocka_unit_test(test_registry_and_equations))

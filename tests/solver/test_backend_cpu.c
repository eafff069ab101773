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

#include "cpu_problem.h"
#include "point_sample.h"
#include "rtm_solver.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

/* A random heterogeneous iso problem (cpu_problem.h): vp uniform in [1500, 3000] m/s. */
static void problem_make(problem_t *pb, const int n[3], int z_offset, int nz_local, int width,
                         double reflection) {
  problem_grid(pb, n, z_offset, nz_local);
  pb->model.vp = problem_random_array(pb->cells, 1500.0, 3000.0);
  assert_int_equal(rtm_model_update_range(&pb->model, &pb->grid), RTM_OK);
  pb->cfg.physics.equation = RTM_EQUATION_ISO;
  problem_finish(pb, pb->model.vp_max, width, reflection);
}

/* A backend whose receivers record p. */
static void *backend_make(problem_t *pb) {
  return problem_backend_make(pb, RTM_FIELD_BIT(RTM_FIELD_P));
}

static float *read_level(void *state, rtm_level_t level, size_t cells) {
  return problem_read_field(state, RTM_FIELD_P, level, cells);
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
          double d2 = rtm_fd2_coeff[0] * problem_at(pb, p, ix, iy, iz);
          double m2 = fabs(d2);
          for (int k = 1; k <= RTM_RADIUS; ++k) {
            long plus[3] = {cell[0], cell[1], cell[2]}, minus[3] = {cell[0], cell[1], cell[2]};
            plus[a] += k;
            minus[a] -= k;
            const double s = problem_at(pb, p, plus[0], plus[1], plus[2]) +
                             problem_at(pb, p, minus[0], minus[1], minus[2]);
            d2 += rtm_fd2_coeff[k] * s;
            m2 += fabs(rtm_fd2_coeff[k]) * (fabs(problem_at(pb, p, plus[0], plus[1], plus[2])) +
                                            fabs(problem_at(pb, p, minus[0], minus[1], minus[2])));
          }
          const double inv_h2 = 1.0 / (g->spacing_m[a] * g->spacing_m[a]);
          lap += d2 * inv_h2;
          lap_mag += m2 * inv_h2;
        }
        const double v = problem_at(pb, pb->model.vp, ix, iy, iz);
        const double v2dt2 = v * v * pb->dt * pb->dt;
        const double d = (double)pb->boundary.eta_dt[0][ix] + pb->boundary.eta_dt[1][iy] +
                         pb->boundary.eta_dt[2][iz + g->z_offset];
        const size_t i = ((size_t)iz * ny + (size_t)iy) * nx + (size_t)ix;
        const double pc = problem_at(pb, p, ix, iy, iz), po = problem_at(pb, pp, ix, iy, iz);
        next[i] = (2.0 * pc - (1.0 - d) * po + v2dt2 * lap) / (1.0 + d);
        magnitude[i] = (2.0 * fabs(pc) + fabs(po) + v2dt2 * lap_mag) / (1.0 + d);
      }
  problem_add_sources(pb, it, next, magnitude); /* sample `it` added to the new level */
}

/* ---- the step is the equation ---- */
static void check_step_against_equation(const int n[3], int z_offset, int nz_local) {
  problem_t pb;
  problem_make(&pb, n, z_offset, nz_local, 3, 0.3);
  void *state = backend_make(&pb);
  float *p = problem_random_array(pb.cells, -1.0, 1.0),
        *pp = problem_random_array(pb.cells, -1.0, 1.0);
  problem_write_field(state, RTM_FIELD_P, RTM_LEVEL_CURRENT, p);
  problem_write_field(state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, pp);
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
  float *traces = problem_read_traces(&pb, state, RTM_FIELD_P);
  for (int r = 0; r < PROBLEM_RECEIVERS; ++r) {
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
  float *p = problem_random_array(pb.cells, -1.0, 1.0),
        *pp = problem_random_array(pb.cells, -1.0, 1.0);
  problem_write_field(state, RTM_FIELD_P, RTM_LEVEL_CURRENT, p);
  problem_write_field(state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, pp);
  const int it = 3;
  assert_int_equal(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  float *next = read_level(state, RTM_LEVEL_CURRENT, pb.cells);
  assert_int_equal(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_BACKWARD), RTM_OK);
  float *current = read_level(state, RTM_LEVEL_CURRENT, pb.cells);
  float *previous = read_level(state, RTM_LEVEL_PREVIOUS, pb.cells);

  /* p[it] was never overwritten: it comes back bit for bit */
  assert_memory_equal(current, p, pb.cells * sizeof(float));
  const float d_max = problem_damping_max(&pb);
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
  float *p = problem_random_array(pb.cells, -1.0, 1.0),
        *pp = problem_random_array(pb.cells, -1.0, 1.0);
  void *both[2] = {whole, split};
  for (int b = 0; b < 2; ++b) {
    problem_write_field(both[b], RTM_FIELD_P, RTM_LEVEL_CURRENT, p);
    problem_write_field(both[b], RTM_FIELD_P, RTM_LEVEL_PREVIOUS, pp);
  }
  problem_check_split_equals_whole(&pb, whole, split, RTM_FIELD_P);
  free(p);
  free(pp);
  rtm_backend_cpu.destroy(whole);
  rtm_backend_cpu.destroy(split);
  problem_release(&pb);
}

static void test_split_equals_all(void **unused) {
  (void)unused;
  const int n[3] = {23, 15, 30};
  problem_for_split_ranges(check_split, n, 11); /* z-ranges [0, 30), [11, 23), [24, 30) */
}

/* ---- fields ---- */
static void test_field_round_trip(void **unused) {
  (void)unused;
  const int n[3] = {13, 9, 11};
  problem_t pb;
  problem_make(&pb, n, 0, n[2], 2, 0.1);
  void *state = backend_make(&pb);
  for (int level = 0; level < 2; ++level) {
    float *f = problem_random_array(pb.cells, -1.0, 1.0);
    problem_write_field(state, RTM_FIELD_P, (rtm_level_t)level, f);
    float *g = read_level(state, (rtm_level_t)level, pb.cells);
    assert_memory_equal(f, g, pb.cells * sizeof(float));
    free(f);
    free(g);
  }
  float *q = problem_random_array(pb.cells, -1.0, 1.0);
  assert_int_equal(rtm_backend_cpu.read_field(state, RTM_FIELD_Q, RTM_LEVEL_CURRENT, q),
                   RTM_ERR_UNSUPPORTED);
  assert_int_equal(rtm_backend_cpu.write_field(state, RTM_FIELD_Q, RTM_LEVEL_CURRENT, q),
                   RTM_ERR_UNSUPPORTED);
  free(q);
  /* every field went through the ledger */
  const char *labels[] = {"p.current", "p.previous", "model.vp2dt2"};
  for (int l = 0; l < 3; ++l)
    assert_int_equal(problem_ledger_count(&pb, labels[l], pb.grid.padded_cells * sizeof(float)), 1);
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
  const rtm_backend_desc_t desc = problem_desc(&pb);
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

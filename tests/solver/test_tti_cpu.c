/* test_tti_cpu - the vti/tti physics of the cpu backend: one step against the equations
 * computed here in double (mixed derivatives as the direct 64-point product stencil, the
 * axis from the angles), forward then backward restores both fields, split steps equal
 * whole steps bit for bit, p and q round trips and the ledger, and receivers that record p
 * and q (receivers.fields = p,q) sampling the level each step wrote. Random heterogeneous
 * models (epsilon, delta, theta, phi varying per cell) and random fields each run. */
#define _POSIX_C_SOURCE 200809L /* fileno, for rtm_test_capture.h */
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
#include "rtm_test_capture.h"
#include "rtm_test_compare.h"
#include "rtm_test_main.h"

static const unsigned p_and_q = RTM_FIELD_BIT(RTM_FIELD_P) | RTM_FIELD_BIT(RTM_FIELD_Q);
static const double degrees = 3.14159265358979323846 / 180.0;

/* A random heterogeneous problem (cpu_problem.h) for `equation`. The parameters need no
 * conditioning: delta <= epsilon - 0.02 and (eps - delta) / sigma <= 0.47 < 1 + 2 delta. */
static void problem_make(problem_t *pb, rtm_equation_t equation, const int n[3], int z_offset,
                         int nz_local, int width, double reflection) {
  problem_grid(pb, n, z_offset, nz_local);
  pb->model.vp = problem_random_array(pb->cells, 1500.0, 3000.0);
  pb->model.epsilon = problem_random_array(pb->cells, 0.05, 0.3);
  pb->model.delta = malloc(pb->cells * sizeof(float));
  assert_non_null(pb->model.delta);
  for (size_t i = 0; i < pb->cells; ++i)
    pb->model.delta[i] = (float)rtm_test_rand_uniform(-0.05, pb->model.epsilon[i] - 0.02);
  if (equation == RTM_EQUATION_TTI) {
    pb->model.theta_deg = problem_random_array(pb->cells, -70.0, 70.0);
    pb->model.phi_deg = problem_random_array(pb->cells, 0.0, 360.0);
  }
  assert_int_equal(rtm_model_update_range(&pb->model, &pb->grid), RTM_OK);
  rtm_config_defaults(&pb->cfg);
  pb->cfg.physics.equation = equation;
  pb->cfg.physics.sigma = 0.75;
  pb->cfg.physics.smooth_angles_cells = 0;
  problem_finish(pb, pb->model.vp_max * sqrt(1.0 + 2.0 * pb->model.epsilon_max), width, reflection);
}

/* Column `column` of the p and q traces against the samples of the fields at `level` (the
 * level the last step wrote, once rotated: current forward, previous backward). The float
 * sum of 8 products rounds each product and each partial sum by at most FLT_EPSILON / 2 of
 * the sum of |terms|: 8 FLT_EPSILON of it is a bound with room, and a trace of the other
 * field, of the other level or in another column is off by the size of the field. */
static void check_recorded(const problem_t *pb, void *state, rtm_level_t level, int column) {
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    float *dense = problem_read_field(state, (rtm_field_t)f, level, pb->cells);
    float *traces = problem_read_traces(pb, state, (rtm_field_t)f);
    for (int r = 0; r < PROBLEM_RECEIVERS; ++r) {
      double magnitude;
      const double want = rtm_test_point_sample(&pb->grid, &pb->receivers, dense, r, &magnitude);
      const float got = traces[(size_t)r * (pb->steps + 1) + (size_t)column];
      if (fabs(got - want) > 8.0 * FLT_EPSILON * magnitude)
        fail_msg("%s trace of receiver %d, column %d: %.9g, the field samples %.9g there",
                 rtm_field_name((rtm_field_t)f), r, column, got, want);
    }
    free(dense);
    free(traces);
  }
}

/* Second derivatives d_ab f (a, b in x, y, z) at a cell in double, and the sum of the
 * magnitudes of their terms. Mixed ones by the direct 64-point product stencil. */
static void derivatives(const problem_t *pb, const float *f, const long cell[3], double d[3][3],
                        double m[3][3]) {
  const double *h = pb->grid.spacing_m;
  for (int a = 0; a < 3; ++a) {
    double sum = rtm_fd2_coeff[0] * problem_at(pb, f, cell[0], cell[1], cell[2]);
    double mag = fabs(sum);
    for (int k = 1; k <= RTM_RADIUS; ++k)
      for (int sign = -1; sign <= 1; sign += 2) {
        long c[3] = {cell[0], cell[1], cell[2]};
        c[a] += sign * k;
        const double v = rtm_fd2_coeff[k] * problem_at(pb, f, c[0], c[1], c[2]);
        sum += v;
        mag += fabs(v);
      }
    d[a][a] = sum / (h[a] * h[a]);
    m[a][a] = mag / (h[a] * h[a]);
    for (int b = a + 1; b < 3; ++b) {
      double mixed = 0.0, mixed_mag = 0.0;
      for (int i = 1; i <= RTM_RADIUS; ++i)
        for (int j = 1; j <= RTM_RADIUS; ++j)
          for (int si = -1; si <= 1; si += 2)
            for (int sj = -1; sj <= 1; sj += 2) {
              long c[3] = {cell[0], cell[1], cell[2]};
              c[a] += si * i;
              c[b] += sj * j;
              const double v = si * sj * rtm_fd1_coeff[i - 1] * rtm_fd1_coeff[j - 1] *
                               problem_at(pb, f, c[0], c[1], c[2]);
              mixed += v;
              mixed_mag += fabs(v);
            }
      d[a][b] = d[b][a] = mixed / (h[a] * h[b]);
      m[a][b] = m[b][a] = mixed_mag / (h[a] * h[b]);
    }
  }
}

/* One forward step of p and q computed in double from the equations of tti_cpu.c with the
 * parameters as given (they need no conditioning), sources included; the magnitudes of the
 * terms go to `mag_*` for the rounding bound. */
static void expected_step(const problem_t *pb, const float *p, const float *pp, const float *q,
                          const float *qp, int it, double *next_p, double *next_q, double *mag_p,
                          double *mag_q) {
  const rtm_grid_t *g = &pb->grid;
  const long nx = g->n[0], ny = g->n[1], nz = g->nz_local;
  const double dt2 = pb->dt * pb->dt, sigma = pb->cfg.physics.sigma;
  for (long iz = 0; iz < nz; ++iz)
    for (long iy = 0; iy < ny; ++iy)
      for (long ix = 0; ix < nx; ++ix) {
        const long cell[3] = {ix, iy, iz};
        const size_t i = ((size_t)iz * ny + (size_t)iy) * nx + (size_t)ix;
        double n[3] = {0.0, 0.0, 1.0};
        if (pb->model.theta_deg) {
          const double th = pb->model.theta_deg[i] * degrees, ph = pb->model.phi_deg[i] * degrees;
          n[0] = sin(th) * cos(ph);
          n[1] = sin(th) * sin(ph);
          n[2] = cos(th);
        }
        double dp[3][3], mp[3][3], dq[3][3], mq[3][3];
        derivatives(pb, p, cell, dp, mp);
        derivatives(pb, q, cell, dq, mq);
        double hz_p = 0.0, hz_q = 0.0, hz_mp = 0.0, hz_mq = 0.0;
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) {
            hz_p += n[a] * n[b] * dp[a][b];
            hz_q += n[a] * n[b] * dq[a][b];
            hz_mp += fabs(n[a] * n[b]) * mp[a][b];
            hz_mq += fabs(n[a] * n[b]) * mq[a][b];
          }
        const double hxy_p = dp[0][0] + dp[1][1] + dp[2][2] - hz_p;
        const double hxy_q = dq[0][0] + dq[1][1] + dq[2][2] - hz_q;
        const double hxy_mp = mp[0][0] + mp[1][1] + mp[2][2] + hz_mp;
        const double hxy_mq = mq[0][0] + mq[1][1] + mq[2][2] + hz_mq;
        const double vp = pb->model.vp[i], eps = pb->model.epsilon[i], del = pb->model.delta[i];
        const double vpz2 = vp * vp * dt2, vpx2 = vpz2 * (1.0 + 2.0 * eps);
        const double vpn2 = vpz2 * (1.0 + 2.0 * del), vsz2 = vpz2 * (eps - del) / sigma;
        const double rhs_p = vpx2 * hxy_p + vpz2 * hz_q + vsz2 * (hz_p - hz_q);
        const double rhs_q = vpn2 * hxy_p + vpz2 * hz_q - vsz2 * (hxy_p - hxy_q);
        const double rhs_mp = vpx2 * hxy_mp + vpz2 * hz_mq + vsz2 * (hz_mp + hz_mq);
        const double rhs_mq = vpn2 * hxy_mp + vpz2 * hz_mq + vsz2 * (hxy_mp + hxy_mq);
        const double d = (double)pb->boundary.eta_dt[0][ix] + pb->boundary.eta_dt[1][iy] +
                         pb->boundary.eta_dt[2][iz + g->z_offset];
        next_p[i] = (2.0 * p[i] - (1.0 - d) * pp[i] + rhs_p) / (1.0 + d);
        next_q[i] = (2.0 * q[i] - (1.0 - d) * qp[i] + rhs_q) / (1.0 + d);
        mag_p[i] = (2.0 * fabs(p[i]) + fabs(pp[i]) + rhs_mp) / (1.0 + d);
        mag_q[i] = (2.0 * fabs(q[i]) + fabs(qp[i]) + rhs_mq) / (1.0 + d);
      }
  problem_add_sources(pb, it, next_p, mag_p); /* into both fields */
  problem_add_sources(pb, it, next_q, mag_q);
}

/* ---- the step is the equation ---- */
static void check_step(rtm_equation_t equation, const int n[3], int z_offset, int nz_local) {
  problem_t pb;
  problem_make(&pb, equation, n, z_offset, nz_local, 3, 0.3);
  void *state = problem_backend_make(&pb, p_and_q);
  const size_t cells = pb.cells;
  float *p = problem_random_array(cells, -1, 1), *pp = problem_random_array(cells, -1, 1);
  float *q = problem_random_array(cells, -1, 1), *qp = problem_random_array(cells, -1, 1);
  problem_write_field(state, RTM_FIELD_P, RTM_LEVEL_CURRENT, p);
  problem_write_field(state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, pp);
  problem_write_field(state, RTM_FIELD_Q, RTM_LEVEL_CURRENT, q);
  problem_write_field(state, RTM_FIELD_Q, RTM_LEVEL_PREVIOUS, qp);
  const int it = 5;
  double *next_p = malloc(cells * sizeof(double)), *next_q = malloc(cells * sizeof(double));
  double *mag_p = malloc(cells * sizeof(double)), *mag_q = malloc(cells * sizeof(double));
  assert_true(next_p && next_q && mag_p && mag_q);
  expected_step(&pb, p, pp, q, qp, it, next_p, next_q, mag_p, mag_q);

  assert_int_equal(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  float *got_p = problem_read_field(state, RTM_FIELD_P, RTM_LEVEL_CURRENT, cells);
  float *got_q = problem_read_field(state, RTM_FIELD_Q, RTM_LEVEL_CURRENT, cells);
  float *old_p = problem_read_field(state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, cells);
  float *old_q = problem_read_field(state, RTM_FIELD_Q, RTM_LEVEL_PREVIOUS, cells);
  assert_memory_equal(old_p, p, cells * sizeof(float)); /* rotated: previous = f[it] */
  assert_memory_equal(old_q, q, cells * sizeof(float));
  /* Float evaluation: each derivative sums up to 9 terms (the mixed ones 8 of 8-term first
   * derivatives), Hz six products, then about 10 more operations, each rounding by u =
   * FLT_EPSILON / 2 a partial sum no larger than the sum of |terms|; the coefficients are
   * rounded to float once. The errors seen stay below 1 FLT_EPSILON of the magnitude;
   * 16 FLT_EPSILON leaves room, and a wrong sign, factor or stencil offset is off by the size
   * of a term, 10^5 times more. */
  double worst = 0.0;
  for (size_t i = 0; i < cells; ++i) {
    const double tol_p = 16.0 * FLT_EPSILON * mag_p[i], tol_q = 16.0 * FLT_EPSILON * mag_q[i];
    const double err_p = fabs(got_p[i] - next_p[i]), err_q = fabs(got_q[i] - next_q[i]);
    if (err_p > tol_p || err_q > tol_q)
      fail_msg("cell %zu: p %.9g vs %.9g (tol %.3g), q %.9g vs %.9g (tol %.3g)", i, got_p[i],
               next_p[i], tol_p, got_q[i], next_q[i], tol_q);
    worst = fmax(worst, fmax(err_p / tol_p, err_q / tol_q));
  }
  printf("  %s grid %dx%dx%d, z-range [%d, %d): worst error %.3f of the rounding bound\n",
         equation == RTM_EQUATION_TTI ? "tti" : "vti", n[0], n[1], n[2], z_offset,
         z_offset + nz_local, worst);

  /* receivers record p and q: column it + 1 holds sum w f[it+1] at the taps */
  check_recorded(&pb, state, RTM_LEVEL_CURRENT, it + 1);
  free(got_p);
  free(got_q);
  free(old_p);
  free(old_q);
  free(next_p);
  free(next_q);
  free(mag_p);
  free(mag_q);
  free(p);
  free(pp);
  free(q);
  free(qp);
  rtm_backend_cpu.destroy(state);
  problem_release(&pb);
}

static void test_step_is_the_equation(void **unused) {
  (void)unused;
  const int n[3] = {17, 14, 15};
  check_step(RTM_EQUATION_TTI, n, 0, n[2]);
  check_step(RTM_EQUATION_TTI, n, 4, 8); /* a middle rank of a z decomposition */
  check_step(RTM_EQUATION_VTI, n, 0, n[2]);
}

/* ---- forward then backward ---- */
static void check_forward_backward(rtm_equation_t equation, int width, double reflection) {
  const int n[3] = {19, 16, 15};
  problem_t pb;
  problem_make(&pb, equation, n, 0, n[2], width, reflection);
  void *state = problem_backend_make(&pb, p_and_q);
  const size_t cells = pb.cells;
  float *now[2], *before[2];
  for (int f = 0; f < 2; ++f) {
    now[f] = problem_random_array(cells, -1, 1);
    before[f] = problem_random_array(cells, -1, 1);
    problem_write_field(state, (rtm_field_t)f, RTM_LEVEL_CURRENT, now[f]);
    problem_write_field(state, (rtm_field_t)f, RTM_LEVEL_PREVIOUS, before[f]);
  }
  const int it = 3;
  assert_int_equal(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  float *next[2];
  for (int f = 0; f < 2; ++f)
    next[f] = problem_read_field(state, (rtm_field_t)f, RTM_LEVEL_CURRENT, cells);
  assert_int_equal(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_BACKWARD), RTM_OK);
  const float d_max = problem_damping_max(&pb);
  /* As for iso (test_backend_cpu.c): the right-hand side of f[it] is recomputed bit for bit,
   * so only the leapfrog's own additions round: 4 FLT_EPSILON of the values involved
   * undamped, 8 FLT_EPSILON / (1 - d_max) damped. */
  const double factor = width == 0 ? 4.0 * FLT_EPSILON : 8.0 * FLT_EPSILON / (1.0 - d_max);
  double worst = 0.0, changed = 0.0;
  for (int f = 0; f < 2; ++f) {
    float *current = problem_read_field(state, (rtm_field_t)f, RTM_LEVEL_CURRENT, cells);
    float *previous = problem_read_field(state, (rtm_field_t)f, RTM_LEVEL_PREVIOUS, cells);
    assert_memory_equal(current, now[f], cells * sizeof(float));
    for (size_t i = 0; i < cells; ++i) {
      const double tolerance =
          factor * (2.0 * fabs(now[f][i]) + fabs(before[f][i]) + 2.0 * fabs(next[f][i]));
      const double error = fabs(previous[i] - before[f][i]);
      if (error > tolerance)
        fail_msg("field %d cell %zu: %.9g came back as %.9g (tolerance %.3g)", f, i, before[f][i],
                 previous[i], tolerance);
      worst = fmax(worst, error / tolerance);
      changed = fmax(changed, fabs(next[f][i] - before[f][i]));
    }
    free(current);
    free(previous);
  }
  assert_true(changed > 0.1); /* the step did move the fields */
  printf("  %s width %d: worst error %.3f of the rounding bound\n",
         equation == RTM_EQUATION_TTI ? "tti" : "vti", width, worst);
  for (int f = 0; f < 2; ++f) {
    free(now[f]);
    free(before[f]);
    free(next[f]);
  }
  rtm_backend_cpu.destroy(state);
  problem_release(&pb);
}

static void test_forward_then_backward_restores(void **unused) {
  (void)unused;
  check_forward_backward(RTM_EQUATION_TTI, 0, 1e-3);
  check_forward_backward(RTM_EQUATION_TTI, 4, 0.3);
  check_forward_backward(RTM_EQUATION_VTI, 4, 0.3);
}

/* ---- split steps ---- */
static void check_split(const int n[3], int z_offset, int nz_local) {
  problem_t pb;
  problem_make(&pb, RTM_EQUATION_TTI, n, z_offset, nz_local, 3, 0.3);
  void *whole = problem_backend_make(&pb, p_and_q), *split = problem_backend_make(&pb, p_and_q);
  void *both[2] = {whole, split};
  for (int f = 0; f < 2; ++f)
    for (int l = 0; l < 2; ++l) {
      float *values = problem_random_array(pb.cells, -1, 1);
      for (int b = 0; b < 2; ++b)
        problem_write_field(both[b], (rtm_field_t)f, (rtm_level_t)l, values);
      free(values);
    }
  problem_check_split_equals_whole(&pb, whole, split, RTM_FIELD_Q);
  rtm_backend_cpu.destroy(whole);
  rtm_backend_cpu.destroy(split);
  problem_release(&pb);
}

static void test_split_equals_all(void **unused) {
  (void)unused;
  const int n[3] = {21, 13, 26};
  problem_for_split_ranges(check_split, n, 9); /* z-ranges [0, 26), [9, 21), [20, 26) */
}

/* ---- fields and ledger ---- */
/* Ledger records of one padded field named `label`. */
static int ledger_has(const problem_t *pb, const char *label) {
  return problem_ledger_count(pb, label, pb->grid.padded_cells * sizeof(float));
}

static void test_fields_and_ledger(void **unused) {
  (void)unused;
  const int n[3] = {12, 9, 10};
  for (int e = 0; e < 2; ++e) {
    const rtm_equation_t equation = e == 0 ? RTM_EQUATION_VTI : RTM_EQUATION_TTI;
    problem_t pb;
    problem_make(&pb, equation, n, 0, n[2], 2, 0.1);
    void *state = problem_backend_make(&pb, p_and_q);
    float *values[2][2];
    for (int f = 0; f < 2; ++f)
      for (int l = 0; l < 2; ++l) {
        values[f][l] = problem_random_array(pb.cells, -1, 1);
        problem_write_field(state, (rtm_field_t)f, (rtm_level_t)l, values[f][l]);
      }
    for (int f = 0; f < 2; ++f)
      for (int l = 0; l < 2; ++l) {
        float *back = problem_read_field(state, (rtm_field_t)f, (rtm_level_t)l, pb.cells);
        assert_memory_equal(back, values[f][l], pb.cells * sizeof(float)); /* four distinct */
        free(back);
        free(values[f][l]);
      }
    const char *always[] = {"p.current",     "p.previous",    "q.current",     "q.previous",
                            "model.vpx2dt2", "model.vpz2dt2", "model.vpn2dt2", "model.vsz2dt2"};
    for (size_t l = 0; l < sizeof always / sizeof always[0]; ++l)
      assert_int_equal(ledger_has(&pb, always[l]), 1);
    /* tti only: the Hz factors and the first-derivative scratch */
    assert_int_equal(ledger_has(&pb, "model.hz_xz"), equation == RTM_EQUATION_TTI);
    assert_int_equal(ledger_has(&pb, "scratch.dy_q"), equation == RTM_EQUATION_TTI);
    rtm_backend_cpu.destroy(state);
    problem_release(&pb);
  }
}

/* ---- receivers.fields ---- */
/* p,q: after every step, forward then backward, the column the step recorded holds the
 * samples of the level it wrote, for p and for q, and the q traces are not the p traces.
 * p alone allocates and records no q: its p traces equal the p,q run's bit for bit and
 * asking it for the q traces is an internal error; iso cannot record q at all. */
static void check_receivers(rtm_equation_t equation) {
  const int n[3] = {16, 13, 14};
  problem_t pb;
  problem_make(&pb, equation, n, 0, n[2], 3, 0.3);
  void *both = problem_backend_make(&pb, p_and_q);
  void *p_only = problem_backend_make(&pb, RTM_FIELD_BIT(RTM_FIELD_P));
  for (int f = 0; f < 2; ++f)
    for (int l = 0; l < 2; ++l) {
      float *values = problem_random_array(pb.cells, -1, 1);
      problem_write_field(both, (rtm_field_t)f, (rtm_level_t)l, values);
      problem_write_field(p_only, (rtm_field_t)f, (rtm_level_t)l, values);
      free(values);
    }
  for (int k = 0; k < 10; ++k) {
    const rtm_direction_t dir = k < 7 ? RTM_FORWARD : RTM_BACKWARD;
    const int it = k < 7 ? k : 13 - k; /* forward 0..6, then backward 6, 5, 4 */
    assert_int_equal(rtm_backend_cpu.step(both, it, RTM_REGION_ALL, dir), RTM_OK);
    assert_int_equal(rtm_backend_cpu.step(p_only, it, RTM_REGION_ALL, dir), RTM_OK);
    if (dir == RTM_FORWARD)
      check_recorded(&pb, both, RTM_LEVEL_CURRENT, it + 1);
    else
      check_recorded(&pb, both, RTM_LEVEL_PREVIOUS, it - 1);
  }
  const size_t samples = (size_t)PROBLEM_RECEIVERS * (pb.steps + 1);
  float *p = problem_read_traces(&pb, both, RTM_FIELD_P);
  float *q = problem_read_traces(&pb, both, RTM_FIELD_Q);
  float *alone = problem_read_traces(&pb, p_only, RTM_FIELD_P);
  const double q_vs_p = rtm_test_relative_l2(q, p, samples);
  printf("  %s: q traces against p traces rel L2 %.3g\n",
         equation == RTM_EQUATION_TTI ? "tti" : "vti", q_vs_p);
  assert_true(q_vs_p > 0.1); /* independent random fields: O(1) apart */
  assert_memory_equal(alone, p, samples * sizeof(float));
  capture_t capture;
  capture_begin(&capture);
  const int status = rtm_backend_cpu.read_traces(p_only, RTM_FIELD_Q, q);
  capture_end(&capture);
  assert_int_equal(status, RTM_ERR_INTERNAL);
  assert_contains(capture.text, "traces of q were not recorded");
  /* traces [receivers][steps + 1] of p for both backends, of q for one */
  const size_t trace_bytes = samples * sizeof(float);
  assert_int_equal(problem_ledger_count(&pb, "traces.p", trace_bytes), 2);
  assert_int_equal(problem_ledger_count(&pb, "traces.q", trace_bytes), 1);
  free(p);
  free(q);
  free(alone);
  rtm_backend_cpu.destroy(both);
  rtm_backend_cpu.destroy(p_only);
  problem_release(&pb);
}

static void test_receivers_record_p_and_q(void **unused) {
  (void)unused;
  check_receivers(RTM_EQUATION_TTI);
  check_receivers(RTM_EQUATION_VTI);

  /* iso has no q: the config refuses receivers.fields = q (test_config_values), and the
   * backend treats the request as the internal error it is */
  const int n[3] = {12, 9, 10};
  problem_t pb;
  problem_make(&pb, RTM_EQUATION_ISO, n, 0, n[2], 2, 0.1);
  void *state = problem_backend_create(&pb);
  capture_t capture;
  capture_begin(&capture);
  const int status = rtm_backend_cpu.set_receivers(state, &pb.receivers, p_and_q);
  capture_end(&capture);
  assert_int_equal(status, RTM_ERR_INTERNAL);
  assert_contains(capture.text, "receivers cannot record q: the iso equation has no q");
  assert_int_equal(rtm_backend_cpu.set_receivers(state, &pb.receivers, RTM_FIELD_BIT(RTM_FIELD_P)),
                   RTM_OK);
  rtm_backend_cpu.destroy(state);
  problem_release(&pb);
}

RTM_TEST_MAIN_SEEDED(cmocka_unit_test(test_step_is_the_equation),
                     cmocka_unit_test(test_forward_then_backward_restores),
                     cmocka_unit_test(test_split_equals_all),
                     cmocka_unit_test(test_fields_and_ledger),
                     cmocka_unit_test(test_receivers_record_p_and_q))

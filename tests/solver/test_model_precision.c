/* test_model_precision - memory.model_precision = fp16 in the cpu reference: the stored
 * coefficients are exactly binary16 values within half an ulp of the fp32 ones; a value past
 * binary16's range is an error naming the key, the coefficient and the cell; and a
 * propagation through a heterogeneous tti (and vti) model differs from fp32 by a small,
 * non-zero amount. The cuda backend reads the same values (tests/gpu/test_cuda_tti.c). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rtm_anisotropy.h"
#include "rtm_half.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"
#include "rtm_test_random.h"
#include "tti_helper.h"

enum { N = 40, STEPS = 160 };
static const double h_m = 10.0, frequency_hz = 15.0;

/* Layered vp with 5% noise, epsilon 0.05-0.35 and delta -0.05-0.2 across the volume with
 * noise (delta > epsilon in some cells: conditioning acts), tilt 0-60 degrees with depth
 * and an azimuth turning across x, with a few degrees of noise. */
static void heterogeneous_model(tti_run_t *r, rtm_test_rng_t *rng) {
  const int *n = r->grid.n;
  for (size_t i = 0; i < r->cells; ++i) {
    const tti_cell_t c = tti_run_cell(r, i);
    const double v = 1800.0 + 30.0 * c.z + (c.z > n[2] / 2 ? 600.0 : 0.0) + 8.0 * c.x;
    r->model.vp[i] = (float)(v * (1.0 + 0.05 * (2.0 * rtm_test_uniform(rng, 0.0, 1.0) - 1.0)));
    r->model.epsilon[i] =
        (float)(0.05 + 0.25 * c.x / (double)n[0] + 0.05 * rtm_test_uniform(rng, 0.0, 1.0));
    r->model.delta[i] =
        (float)(-0.05 + 0.2 * c.y / (double)n[1] + 0.05 * rtm_test_uniform(rng, 0.0, 1.0));
    if (!r->model.theta_deg) continue;
    r->model.theta_deg[i] =
        (float)(60.0 * c.z / (double)n[2] + 4.0 * (rtm_test_uniform(rng, 0.0, 1.0) - 0.5));
    r->model.phi_deg[i] = (float)(-150.0 + 300.0 * c.x / (double)n[0] +
                                  6.0 * (rtm_test_uniform(rng, 0.0, 1.0) - 0.5));
  }
}

/* fp32: the reference's floats; fp16: those rounded to the nearest binary16, i.e. exact
 * binary16 values within half an ulp (2^-11 relative for normals, 2^-25 absolute below). */
static void test_stored_values(void **unused) {
  (void)unused;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  const int n[3] = {12, 10, 9};
  for (int smooth = 0; smooth <= 1; ++smooth) {
    tti_run_t r;
    rtm_anisotropy_t prepared;
    tti_run_init(&r, n, h_m, RTM_EQUATION_TTI);
    heterogeneous_model(&r, &rng);
    r.cfg.physics.smooth_angles_cells = smooth;
    assert_int_equal(rtm_model_update_range(&r.model, &r.grid), RTM_OK);
    assert_int_equal(rtm_anisotropy_prepare(&r.cfg, &r.grid, &r.model, &prepared), RTM_OK);
    const double dt2 = 1.3e-3 * 1.3e-3;
    size_t rounded = 0;
    for (size_t cell = 0; cell < r.cells; ++cell) {
      rtm_fdf_cell_t c32, c16;
      float s32[RTM_FDF_STORED_COUNT], s16[RTM_FDF_STORED_COUNT];
      assert_int_equal(rtm_anisotropy_stored(&prepared, cell, dt2, RTM_PRECISION_FP32, &c32, s32),
                       RTM_OK);
      assert_int_equal(rtm_anisotropy_stored(&prepared, cell, dt2, RTM_PRECISION_FP16, &c16, s16),
                       RTM_OK);
      assert_memory_equal(&c32, &c16, sizeof c32);
      assert_true(s32[RTM_FDF_VPX2DT2] == (float)(c32.vpx2 * dt2));
      assert_true(s32[RTM_FDF_VSZ2DT2] == (float)(c32.vsz2 * dt2));
      assert_true(s32[RTM_FDF_AXIS_Y] == (float)c32.axis[1]);
      for (int k = 0; k < RTM_FDF_STORED_COUNT; ++k) {
        assert_true(rtm_half_round(s16[k]) == s16[k]);
        assert_true(s16[k] == rtm_half_round(s32[k]));
        const double error = fabs((double)s16[k] - s32[k]);
        if (error > fmax(0x1p-11 * fabs(s32[k]), 0x1p-25))
          fail_msg("cell %zu %s: fp32 %a, fp16 %a", cell, rtm_fdf_stored_name[k], s32[k], s16[k]);
        rounded += s16[k] != s32[k];
      }
    }
    assert_true(rounded > r.cells); /* most values need rounding; fp16 is not a no-op */
    rtm_anisotropy_release(&prepared);
    tti_run_release(&r);
  }
}

/* A vti model of h-metre cells at vp (epsilon 0.2) on an n[0] x n[1] x n[2] grid but for
 * the `slow_count` cells slow[] ({z, y, x}) at `slow_vp`, run at dt and wavelet_hz: fp32
 * takes it, fp16 stops creating the backend with `refusal` (naming the value and the first
 * slow cell by index), said once. */
static void expect_fp16_refusal_at(const int n[3], const int (*slow)[3], int slow_count, double h,
                                   float vp, float slow_vp, double dt, double wavelet_hz,
                                   const char *refusal) {
  for (int half = 0; half <= 1; ++half) {
    tti_run_t r;
    tti_run_init(&r, n, h, RTM_EQUATION_VTI);
    for (size_t i = 0; i < r.cells; ++i) {
      r.model.vp[i] = vp;
      r.model.epsilon[i] = 0.2f;
    }
    for (int s = 0; s < slow_count; ++s)
      r.model.vp[((size_t)slow[s][0] * n[1] + slow[s][1]) * n[0] + slow[s][2]] = slow_vp;
    r.cfg.time.dt_s = dt;
    r.cfg.memory.model_precision = half ? RTM_PRECISION_FP16 : RTM_PRECISION_FP32;
    const double source[3] = {4.0 * h, 3.0 * h, 3.0 * h};
    capture_t capture;
    capture_begin(&capture);
    const int status = tti_run_start(&r, source, NULL, 0, wavelet_hz, 4, 0, 1e-3);
    capture_end(&capture);
    if (!half) {
      assert_int_equal(status, RTM_OK);
    } else {
      assert_int_equal(status, RTM_ERR_CONFIG);
      assert_contains(capture.text, refusal);
      assert_contains(capture.text, "use memory.model_precision = fp32");
      const char *second = strstr(strstr(capture.text, "binary16's") + 1, "binary16's");
      assert_null(second); /* said once, however many threads met slow cells */
    }
    tti_run_release(&r);
  }
}

/* The same with one slow cell at [z=1][y=2][x=3] of an 8 x 7 x 6 grid. */
static void expect_fp16_refusal(double h, float vp, float slow_vp, double dt, double wavelet_hz,
                                const char *refusal) {
  static const int n[3] = {8, 7, 6}, slow[1][3] = {{1, 2, 3}};
  expect_fp16_refusal_at(n, slow, 1, h, vp, slow_vp, dt, wavelet_hz, refusal);
}

/* With h = 1000 m and dt = 0.1 s, vpx^2 dt^2 = 56000 m^2 fits (vp 2000, epsilon 0.2); one
 * cell with vp 2200 has 67760 m^2, past 65504 + half an ulp (0.3 Hz: 2.7 points a wavelength
 * on these 1 km cells). */
static void test_overflow_is_an_error(void **unused) {
  (void)unused;
  expect_fp16_refusal(1000.0, 2000.0f, 2200.0f, 0.1, 0.3,
                      "memory.model_precision = fp16: vpx^2 dt^2 (vpx2dt2) = 67760 at "
                      "[z=1][y=2][x=3] is beyond binary16's largest value 65504");
}

/* The bottom of binary16's range alike: v^2 dt^2 below its smallest normal keeps fewer
 * than 11 bits (probe Q, Q1: a vti deck in mm cells ran 16% off, exit 0). With h = 10 cm and
 * dt = 10 us, vp 2000 m/s has v dt = 2 cm (4e-4 m^2, normal); one cell at 500 m/s has 5 mm. */
static void test_underflow_is_an_error(void **unused) {
  (void)unused;
  expect_fp16_refusal(0.1, 2000.0f, 500.0f, 1e-5, 1000.0,
                      "memory.model_precision = fp16: vpx^2 dt^2 (vpx2dt2) = 3.5e-05 at "
                      "[z=1][y=2][x=3] is below binary16's smallest normal value 6.10352e-05");
}

/* Rows longer than the fill's pieces (300 cells: the cpu backend's pieces of 128), slow
 * cells in other rows, planes and pieces, the first by index in a row's second piece: that
 * one is named, once, whichever thread met which. */
static void test_first_refusal_is_named_once(void **unused) {
  (void)unused;
  static const int n[3] = {300, 7, 6};
  static const int slow[4][3] = {{3, 0, 150}, {5, 6, 299}, {1, 2, 200}, {1, 5, 7}};
  expect_fp16_refusal_at(n, slow, 4, 1000.0, 2000.0f, 2200.0f, 0.1, 0.3,
                         "memory.model_precision = fp16: vpx^2 dt^2 (vpx2dt2) = 67760 at "
                         "[z=1][y=2][x=200] is beyond binary16's largest value 65504");
}

/* p and q of a run through the heterogeneous model after STEPS steps. */
static void propagate(rtm_equation_t equation, rtm_precision_t precision, rtm_test_rng_t model_seed,
                      float **p, float **q, size_t *cells) {
  tti_run_t r;
  const int n[3] = {N, N, N};
  rtm_test_rng_t rng = model_seed;
  tti_run_init(&r, n, h_m, equation);
  heterogeneous_model(&r, &rng);
  r.cfg.memory.model_precision = precision;
  const double source[3] = {19.3 * h_m, 20.6 * h_m, 17.8 * h_m};
  assert_int_equal(tti_run_start(&r, source, NULL, 0, frequency_hz, STEPS, 8, 1e-3), RTM_OK);
  assert_int_equal(tti_run_steps(&r, 0, STEPS), RTM_OK);
  *p = tti_run_field(&r, RTM_FIELD_P);
  *q = tti_run_field(&r, RTM_FIELD_Q);
  *cells = r.cells;
  tti_run_release(&r);
}

/* fp16 against fp32 after 160 steps (0.12 s at dt 0.76 ms): the Ricker (15 Hz, t0 0.08 s)
 * has left the source and its peak has crossed ~10 cells, all of it still inside the
 * volume (later the field is the small remainder the absorbing layer leaves, and relative
 * differences of it grow: 7e-4 at 300 steps).
 *
 * What to expect: rounding moves each coefficient by up to 2^-11 (relative), a spread
 * (standard deviation) of about 2e-4; a velocity by half that, 1e-4. Independent roundings
 * add up along a path like a random walk: over L cells a phase error of about
 * k h sigma_v sqrt(L) = 0.8 x 1e-4 x 3 ~ 2.4e-4 (k h at 8 points per wavelength, L = 10).
 * Measured over 18 seeds (the figures are printed): p 0.9e-4 to 3.2e-4, q 1.7e-4 to
 * 7.3e-4, tti and vti alike. Were every rounding in the same direction (the worst case, v off
 * by 2^-12 everywhere) the wave would be delayed by 2^-12 of its travel time, a change of
 * about 2 pi f T 2^-12 = 2.8e-3 (f T = 15 Hz x 0.12 s). The bound 1e-2 is that worst case
 * with a margin; coefficients stored wrongly (a wrong or garbled volume) give O(1). The lower
 * bound 1e-6 shows that fp16 took effect (fp32 against itself differs by exactly 0). */
static void test_fp16_against_fp32(void **unused) {
  (void)unused;
  const rtm_test_rng_t model_seed = rtm_test_seed(__func__);
  static const rtm_equation_t equations[2] = {RTM_EQUATION_TTI, RTM_EQUATION_VTI};
  for (int e = 0; e < 2; ++e) {
    float *p32, *q32, *p16, *q16;
    size_t cells;
    propagate(equations[e], RTM_PRECISION_FP32, model_seed, &p32, &q32, &cells);
    propagate(equations[e], RTM_PRECISION_FP16, model_seed, &p16, &q16, &cells);
    const double dp = rtm_test_relative_l2(p16, p32, cells),
                 dq = rtm_test_relative_l2(q16, q32, cells);
    printf("  %s: fp16 against fp32 after %d steps: rel L2 p %.2e q %.2e\n", e == 0 ? "tti" : "vti",
           STEPS, dp, dq);
    assert_true(dp > 1e-6 && dp < 1e-2);
    assert_true(dq > 1e-6 && dq < 1e-2);
    free(p32);
    free(q32);
    free(p16);
    free(q16);
  }
}

RTM_TEST_MAIN(cmocka_unit_test(test_stored_values), cmocka_unit_test(test_overflow_is_an_error),
              cmocka_unit_test(test_underflow_is_an_error),
              cmocka_unit_test(test_first_refusal_is_named_once),
              cmocka_unit_test(test_fp16_against_fp32))

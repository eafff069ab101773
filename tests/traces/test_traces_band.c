/* The dispersion warp as one banded matrix on the cpu backend (warp_band.c): its product
 * against the exact warp and the whole-trace one, window by window bit for bit as the
 * whole, each window from the raw samples up to its lag only, the pass band's edge from a
 * wavelet, and what it refuses. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rtm_physics.h"
#include "rtm_status.h"
#include "rtm_test_main.h"
#include "rtm_test_random.h"
#include "rtm_traces.h"
#include "traces_test_util.h"

/* The trace: 2001 samples at 2 ms (the 512^3 bench deck at 2000 steps), 10 Hz. */
#define N_SAMPLES 2001
#define DT 0.002
/* The band's product against the exact warp: the low pass's ripple in its pass band and the
 * rows' cut tails leave 1.2e-5 to 2e-5 over random draws (printed); the bound is 1.5x the
 * worst seen. The whole-trace warp runs use (8x) is 6e-5 to 1.2e-4 from it (its cubic
 * interpolation); the band, built from a 16x warp, must also be closer than that. */
#define BAND_TOLERANCE 3e-5

/* The exact warp to float rounding: the whole-trace warp padded 64x, whose cubic
 * interpolation error is 8^4 below the 8x padding's (test_traces_segments' oracle); traces
 * [count][n] in place. */
static void exact_warp(int count, int n, double dt, float *traces) {
  const rtm_traces_output_t o = {
      .length = n, .dt_s = dt, .warp = RTM_TRACES_WARP_INVERSE, .warp_dt_s = dt};
  const rtm_traces_desc_t d = {.backend = "cpu",
                               .pipeline = RTM_TRACES_STREAMS,
                               .n_inputs = count,
                               .input_length = n,
                               .input_dt_s = dt,
                               .fft_length = 64 * n,
                               .outputs = &o,
                               .n_outputs = 1};
  rtm_traces_plan_t *plan = NULL;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  assert_int_equal(rtm_traces_run(plan, traces, traces), RTM_OK);
  rtm_traces_plan_destroy(plan);
}

/* The source wavelet of a run at peak_hz (rtm3d's delay, 1.2 / f), warped forward as
 * time.dispersion_correction = full warps it. */
static void run_wavelet(int n, double dt, double peak_hz, float *wavelet) {
  for (int i = 0; i < n; ++i)
    wavelet[i] = (float)rtm_ricker(i * dt, peak_hz, 1.2 / peak_hz);
  assert_int_equal(rtm_traces_dispersion("cpu", RTM_TRACES_WARP_FORWARD, 1, n, dt, wavelet),
                   RTM_OK);
}

/* Traces like recorded ones [count][n]: each 10 arrivals of the run's wavelet at fresh
 * random times over the first 90% of the trace, amplitudes falling as 1 / time, signs
 * random; recorded by a leapfrog, so warped forward. (An arrival cut by the trace's end has
 * no defined warp: there the band and the whole-trace warp part by 3e-4 over the last 64
 * samples.) */
static void recorded_like(const char *test, int count, int n, double dt, double peak_hz,
                          float *traces) {
  enum { ARRIVALS = 10 };
  rtm_test_rng_t rng = rtm_test_seed(test);
  memset(traces, 0, (size_t)count * n * sizeof *traces);
  for (int k = 0; k < count; ++k)
    for (int a = 0; a < ARRIVALS; ++a) {
      const double delay = rtm_test_uniform(&rng, 0.1, 0.9) * (n - 1) * dt;
      const double amplitude = rtm_test_uniform(&rng, -1.0, 1.0) / delay;
      for (int i = 0; i < n; ++i)
        traces[(size_t)k * n + i] += (float)(amplitude * rtm_ricker(i * dt, peak_hz, delay));
    }
  assert_int_equal(rtm_traces_dispersion("cpu", RTM_TRACES_WARP_FORWARD, count, n, dt, traces),
                   RTM_OK);
}

/* The band of a run of n samples at dt and peak_hz against the exact inverse warp and the
 * whole-trace one, on `count` recorded-like traces; prints the band's shape and the cost a
 * sample. */
static void check_against_whole(const char *what, int n, double dt, double peak_hz) {
  enum { COUNT = 8 };
  const size_t size = (size_t)COUNT * n;
  float *wavelet = malloc((size_t)n * sizeof *wavelet), *raw = malloc(size * sizeof *raw);
  float *whole = malloc(size * sizeof *whole), *banded = malloc(size * sizeof *banded);
  float *exact = malloc(size * sizeof *exact);
  assert_true(wavelet && raw && whole && banded && exact);
  run_wavelet(n, dt, peak_hz, wavelet);
  const double limit_hz = rtm_traces_band_limit_hz(wavelet, n, dt);
  recorded_like(what, COUNT, n, dt, peak_hz, raw);
  memcpy(whole, raw, size * sizeof *raw);
  memcpy(exact, raw, size * sizeof *raw);
  exact_warp(COUNT, n, dt, exact);
  assert_int_equal(rtm_traces_dispersion("cpu", RTM_TRACES_WARP_INVERSE, COUNT, n, dt, whole),
                   RTM_OK);
  rtm_traces_band_t band;
  assert_int_equal(rtm_traces_band_build("cpu", RTM_TRACES_WARP_INVERSE, n, dt, limit_hz, &band),
                   RTM_OK);
  rtm_traces_band_apply(&band, raw, (size_t)n, COUNT, 0, n, banded);
  const double error = tt_rel_l2_f(banded, whole, size),
               band_exact = tt_rel_l2_f(banded, exact, size);
  const double whole_exact = tt_rel_l2_f(whole, exact, size);
  const double mean_width = band.offset[band.groups] / (double)RTM_TRACES_BAND_ROWS / band.groups;
  printf("band, %s: %d samples at %g ms, pass band to %.1f Hz (cut-off %.1f Hz), lag %d, "
         "widest group %d, mean %.0f columns; against the whole-trace warp %.2e; against the "
         "exact warp %.2e (the whole-trace warp %.2e)\n",
         what, n, dt * 1e3, band.limit_hz, band.cutoff_hz, band.lag, band.max_width, mean_width,
         error, band_exact, whole_exact);
  assert_true(band_exact < BAND_TOLERANCE);
  assert_true(band_exact < whole_exact);
  /* the low pass reaches 64 samples ahead, the inverse warp delays: the lag is the low
   * pass's and the cuts', at most what a stream waits for while its band is made */
  assert_true(band.lag >= 0 && band.lag <= RTM_TRACES_BAND_MAX_LAG);
  rtm_traces_band_release(&band);
  free(exact);
  free(banded);
  free(whole);
  free(raw);
  free(wavelet);
}

static void test_against_whole_trace(void **state) {
  (void)state;
  check_against_whole("10 Hz", N_SAMPLES, DT, 10.0);
  check_against_whole("25 Hz", 1200, 0.001, 25.0);
}

/* Window by window (a multiple of the group's rows, the last one short) the product is the
 * whole one bit for bit, and each window computed with the raw samples past its last one
 * plus the lag zeroed (not yet recorded) is the same: the lag is all a stream waits for. */
static void test_windows(void **state) {
  (void)state;
  enum { COUNT = 4, WINDOW = 3 * RTM_TRACES_BAND_ROWS };
  const int n = 700;
  const double dt = 0.002, peak_hz = 15.0;
  static float wavelet[700], raw[COUNT * 700], known[COUNT * 700], whole[COUNT * 700];
  static float window[COUNT * WINDOW];
  run_wavelet(n, dt, peak_hz, wavelet);
  recorded_like("test_traces_band windows", COUNT, n, dt, peak_hz, raw);
  rtm_traces_band_t band;
  assert_int_equal(rtm_traces_band_build("cpu", RTM_TRACES_WARP_INVERSE, n, dt,
                                         rtm_traces_band_limit_hz(wavelet, n, dt), &band),
                   RTM_OK);
  rtm_traces_band_apply(&band, raw, (size_t)n, COUNT, 0, n, whole);
  int windows = 0;
  for (int first = 0; first < n; first += WINDOW, ++windows) {
    const int count = first + WINDOW <= n ? WINDOW : n - first;
    const int recorded = first + count + band.lag; /* raw samples [0, recorded) known */
    for (int r = 0; r < COUNT; ++r)
      for (int i = 0; i < n; ++i)
        known[r * n + i] = i < recorded ? raw[r * n + i] : 0.0f;
    rtm_traces_band_apply(&band, known, (size_t)n, COUNT, first, count, window);
    for (int r = 0; r < COUNT; ++r)
      assert_memory_equal(window + (size_t)r * count, whole + (size_t)r * n + first,
                          (size_t)count * sizeof(float));
  }
  printf("windows: %d windows of %d samples, each from the raw samples to its lag (%d), equal "
         "to the whole product bit for bit\n",
         windows, WINDOW, band.lag);
  rtm_traces_band_release(&band);
}

/* A Ricker's spectrum falls to 1e-5 of its peak at 3.9 times its peak frequency. */
static void test_limit(void **state) {
  (void)state;
  static float wavelet[N_SAMPLES];
  for (int i = 0; i < N_SAMPLES; ++i)
    wavelet[i] = (float)rtm_ricker(i * DT, 10.0, 0.12);
  const double limit_hz = rtm_traces_band_limit_hz(wavelet, N_SAMPLES, DT);
  printf("limit: a 10 Hz Ricker at 2 ms: %.2f Hz\n", limit_hz);
  assert_true(limit_hz > 37.0 && limit_hz < 41.0);
}

/* Longer traces than the n x n matrix takes, and a band reaching the inverse warp's end at
 * 1 / (pi dt), are refused as unsupported (the caller warps whole traces). */
static void test_refusals(void **state) {
  (void)state;
  rtm_traces_band_t band;
  assert_int_equal(rtm_traces_band_build("cpu", RTM_TRACES_WARP_INVERSE,
                                         RTM_TRACES_BAND_MAX_SAMPLES + 1, DT, 30.0, &band),
                   RTM_ERR_UNSUPPORTED);
  assert_int_equal(rtm_traces_band_build("cpu", RTM_TRACES_WARP_INVERSE, 400, DT, 130.0, &band),
                   RTM_ERR_UNSUPPORTED);
  assert_null(band.coef);
}

RTM_TEST_MAIN(cmocka_unit_test(test_against_whole_trace), cmocka_unit_test(test_windows),
              cmocka_unit_test(test_limit), cmocka_unit_test(test_refusals))

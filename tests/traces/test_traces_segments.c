/* The dispersion warp by segments on the cpu backend (FFTW): the warp's time origin
 * (rtm_traces_output_t.warp_origin_s) against a piece of the whole trace's warp, and
 * rtm_traces_dispersion_segments against the whole-trace warp, inverse and forward, for
 * late arrivals and for traces like recorded ones. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rtm_physics.h"
#include "rtm_status.h"
#include "rtm_test_main.h"
#include "rtm_test_random.h"
#include "rtm_traces.h"

/* The long trace of the issue: 2001 samples at 2 ms (4 s), a 20 Hz Ricker, which the warp
 * moves by several percent; 80 Hz (4x the peak) bounds what the segments keep. */
#define N_SAMPLES 2001
#define DT 0.002
#define PEAK_HZ 20.0
#define MAX_HZ 80.0
/* Padding of the oracle, the whole-trace warp without its interpolation error: the cubic's
 * error falls as the 4th power of the spectrum's turn per bin, 8^4 below the 8x padding's
 * 1e-3 at the end of a 4 s trace; what is left is float rounding (1e-7). */
#define ORACLE_PADDING 64
/* The sum of segments against the oracle: float FFTs of a few thousand points round to
 * about 1e-7, the segments' own interpolation (16x padding) to a few 1e-6; 1e-5 is the
 * issue's aim, and a wrong origin, weight or overlap is off by 1e-2 or more. */
#define SEGMENT_TOLERANCE 1e-5

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The warp of `count` inputs [count][n_in] padded `padding` times, its time origin
 * origin_s, the first n_out samples of each output into out [count][n_out]. */
static void plan_warp(rtm_traces_warp_t warp, int count, int n_in, int padding, double origin_s,
                      const float *in, int n_out, float *out) {
  const rtm_traces_output_t o = {
      .length = n_out, .dt_s = DT, .warp = warp, .warp_dt_s = DT, .warp_origin_s = origin_s};
  const rtm_traces_desc_t d = {.backend = "cpu",
                               .pipeline = RTM_TRACES_STREAMS,
                               .n_inputs = count,
                               .input_length = n_in,
                               .input_dt_s = DT,
                               .fft_length = padding * n_in,
                               .outputs = &o,
                               .n_outputs = 1};
  rtm_traces_plan_t *plan = NULL;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  assert_int_equal(rtm_traces_run(plan, in, out), RTM_OK);
  rtm_traces_plan_destroy(plan);
}

/* Relative L2 of a - b over b, on [count][n]. */
static double rel_l2(const float *a, const float *b, size_t n) {
  double e = 0.0, norm = 0.0;
  for (size_t i = 0; i < n; ++i) {
    e += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    norm += (double)b[i] * b[i];
  }
  return sqrt(e / norm);
}

static const char *warp_name(rtm_traces_warp_t warp) {
  return warp == RTM_TRACES_WARP_INVERSE ? "inverse" : "forward";
}

/* A piece [first, first + length) of a trace warped with its first sample's time as the
 * origin is the same piece of the whole trace's warp; without the origin (0) or with its
 * sign turned it is not: the rotation's sign against FFTW's convention, proved. A 20 Hz
 * Ricker at 2 s, well inside the piece and its warp. */
static void check_origin(rtm_traces_warp_t warp) {
  enum { FIRST = 700, LENGTH = 600 };
  static float whole[N_SAMPLES], warped[N_SAMPLES], piece[LENGTH], out[LENGTH];
  for (int i = 0; i < N_SAMPLES; ++i)
    whole[i] = (float)rtm_ricker(i * DT, PEAK_HZ, 2.0);
  memcpy(piece, whole + FIRST, sizeof piece);
  plan_warp(warp, 1, N_SAMPLES, ORACLE_PADDING / 4, 0.0, whole, N_SAMPLES, warped);
  const double origins[3] = {FIRST * DT, 0.0, -FIRST * DT};
  double error[3];
  for (int o = 0; o < 3; ++o) {
    plan_warp(warp, 1, LENGTH, ORACLE_PADDING / 4, origins[o], piece, LENGTH, out);
    error[o] = rel_l2(out, warped + FIRST, LENGTH);
  }
  printf("origin, %s: a piece from %.1f s against the whole trace's warp: %.2e with its "
         "origin, %.2e with 0, %.2e with the sign turned\n",
         warp_name(warp), FIRST * DT, error[0], error[1], error[2]);
  assert_true(error[0] < SEGMENT_TOLERANCE);
  assert_true(error[1] > 0.1);
  assert_true(error[2] > 0.1);
}

static void test_origin(void **state) {
  (void)state;
  check_origin(RTM_TRACES_WARP_INVERSE);
  check_origin(RTM_TRACES_WARP_FORWARD);
}

/* traces [count][N_SAMPLES] by segments of `hop` against the oracle and against
 * rtm_traces_dispersion (8x padding, the whole-trace warp runs use); returns the first. */
static double check_segments(const char *what, rtm_traces_warp_t warp, int count, int hop,
                             const float *traces) {
  const size_t size = (size_t)count * N_SAMPLES;
  float *segmented = malloc(size * sizeof *segmented), *oracle = malloc(size * sizeof *oracle);
  float *whole = malloc(size * sizeof *whole);
  assert_true(segmented && oracle && whole);
  memcpy(segmented, traces, size * sizeof *traces);
  memcpy(whole, traces, size * sizeof *traces);
  plan_warp(warp, count, N_SAMPLES, ORACLE_PADDING, 0.0, traces, N_SAMPLES, oracle);
  double start = seconds_now();
  assert_int_equal(rtm_traces_dispersion("cpu", warp, count, N_SAMPLES, DT, whole), RTM_OK);
  const double whole_s = seconds_now() - start;
  start = seconds_now();
  assert_int_equal(
      rtm_traces_dispersion_segments("cpu", warp, count, N_SAMPLES, DT, hop, MAX_HZ, segmented),
      RTM_OK);
  const double segmented_s = seconds_now() - start;
  rtm_traces_segments_t layout;
  assert_int_equal(rtm_traces_segments_layout(warp, N_SAMPLES, DT, hop, MAX_HZ, &layout), RTM_OK);
  /* FFT work a trace, 2 N log2 N (R2C and C2R) per window: the whole-trace warp's 16384 */
  const double whole_work = 2.0 * 16384 * 14.0;
  const double segment_work = layout.segments * 2.0 * layout.fft_length * log2(layout.fft_length);
  const double error = rel_l2(segmented, oracle, size);
  printf("segments, %s, %s, hop %d: %.2e from the oracle (the whole-trace warp %.2e, "
         "segments against it %.2e); %d windows of %d (back %d, reach %d): FFT work %.2fx, "
         "time %.2fx the whole-trace warp's\n",
         what, warp_name(warp), hop, error, rel_l2(whole, oracle, size),
         rel_l2(segmented, whole, size), layout.segments, layout.fft_length, layout.back,
         layout.reach, segment_work / whole_work, segmented_s / whole_s);
  free(whole);
  free(oracle);
  free(segmented);
  return error;
}

/* Ricker arrivals late in the 4 s trace, where the warp moves them most (by 0.1-0.3 s). */
static void test_late_arrivals(void **state) {
  (void)state;
  static float traces[3 * N_SAMPLES];
  const double delays[3] = {3.3, 3.6, 3.9};
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < N_SAMPLES; ++i)
      traces[k * N_SAMPLES + i] = (float)rtm_ricker(i * DT, PEAK_HZ, delays[k]);
  /* hop 64 (2.6 periods of the peak): 8e-6 inverse; 128: 2e-6; 32: 4e-5 (the windowed
   * pieces' wider spectra reach frequencies the warp moves past a window) */
  const int hops[2] = {64, 128};
  for (int h = 0; h < 2; ++h)
    for (int w = RTM_TRACES_WARP_FORWARD; w <= RTM_TRACES_WARP_INVERSE; ++w)
      assert_true(check_segments("late Rickers", (rtm_traces_warp_t)w, 3, hops[h], traces) <
                  SEGMENT_TOLERANCE);
}

/* Traces like recorded ones [count][N_SAMPLES]: each a sum of 12 Rickers at fresh random times over
 * the whole trace, amplitudes falling as 1 / time (spreading), signs random. */
static void recorded_like(const char *test, int count, float *traces) {
  enum { ARRIVALS = 12 };
  rtm_test_rng_t rng = rtm_test_seed(test);
  memset(traces, 0, (size_t)count * N_SAMPLES * sizeof *traces);
  for (int k = 0; k < count; ++k)
    for (int a = 0; a < ARRIVALS; ++a) {
      const double delay = rtm_test_uniform(&rng, 0.1, 3.95);
      const double amplitude = rtm_test_uniform(&rng, -1.0, 1.0) / delay;
      for (int i = 0; i < N_SAMPLES; ++i)
        traces[k * N_SAMPLES + i] += (float)(amplitude * rtm_ricker(i * DT, PEAK_HZ, delay));
    }
}

static void test_recorded_like(void **state) {
  (void)state;
  enum { COUNT = 6 };
  static float traces[COUNT * N_SAMPLES];
  recorded_like("test_traces_segments", COUNT, traces);
  for (int w = RTM_TRACES_WARP_FORWARD; w <= RTM_TRACES_WARP_INVERSE; ++w)
    assert_true(check_segments("recorded-like", (rtm_traces_warp_t)w, COUNT, 64, traces) <
                SEGMENT_TOLERANCE);
}

/* Streaming: with raw samples [0, known) recorded and later ones not yet (zero), the
 * segments give the samples rtm_traces_segments_final names bit for bit as from the whole
 * record (the same segments, added in the same order); they lag the raw ones by less
 * than 3 hops (2 hops and the guard). */
static void test_final_samples(void **state) {
  (void)state;
  enum { HOP = 64 };
  static float raw[N_SAMPLES], full[N_SAMPLES], partial[N_SAMPLES];
  rtm_traces_segments_t layout;
  assert_int_equal(
      rtm_traces_segments_layout(RTM_TRACES_WARP_INVERSE, N_SAMPLES, DT, HOP, MAX_HZ, &layout),
      RTM_OK);
  recorded_like("test_traces_segments final", 1, raw);
  memcpy(full, raw, sizeof full);
  const int knowns[3] = {700, 1000, 1500};
  for (int c = 0; c < 3; ++c) {
    memcpy(partial, raw, sizeof partial);
    for (int i = knowns[c]; i < N_SAMPLES; ++i)
      partial[i] = 0.0f;
    assert_int_equal(rtm_traces_dispersion_segments("cpu", RTM_TRACES_WARP_INVERSE, 1, N_SAMPLES,
                                                    DT, HOP, MAX_HZ, partial),
                     RTM_OK);
    if (c == 0)
      assert_int_equal(rtm_traces_dispersion_segments("cpu", RTM_TRACES_WARP_INVERSE, 1, N_SAMPLES,
                                                      DT, HOP, MAX_HZ, full),
                       RTM_OK);
    const int final = rtm_traces_segments_final(&layout, N_SAMPLES, knowns[c]);
    int first_change = N_SAMPLES;
    for (int i = N_SAMPLES - 1; i >= 0; --i)
      if (partial[i] != full[i]) first_change = i;
    printf("final: raw [0, %d) known: corrected [0, %d) final, the first to change %d\n", knowns[c],
           final, first_change);
    assert_true(final > knowns[c] - 3 * HOP);
    assert_true(first_change >= final);
  }
  assert_int_equal(rtm_traces_segments_final(&layout, N_SAMPLES, N_SAMPLES), N_SAMPLES);
}

RTM_TEST_MAIN(cmocka_unit_test(test_origin), cmocka_unit_test(test_late_arrivals),
              cmocka_unit_test(test_recorded_like), cmocka_unit_test(test_final_samples))

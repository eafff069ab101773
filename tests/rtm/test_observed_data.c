/* Observed gathers that cannot be brought to the modelling dt: refused as input defects
 * (RTM_ERR_INPUT, exit 2) naming rtm.observed, the shot and what is wrong with the gather,
 * before anything is resampled. The record's end taper: its shape (the last sample zero,
 * half at half its length, the samples before it untouched), its length (rtm.end_taper, or
 * auto's 0.5 / source.frequency, at most half the record), and that the gather brought to
 * the modelling dt carries it. */
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

#include "rtm_config.h"
#include "rtm_migration.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

enum { RECEIVERS = 3, SAMPLES = 41, STEPS = 30 };

static void observed_deck(rtm_config_t *cfg) {
  rtm_config_defaults(cfg);
  cfg->time.steps = STEPS;
  snprintf(cfg->rtm.observed, sizeof cfg->rtm.observed, "obs.h5");
}

/* Status of rtm_observed_at_modelling_dt for shot 2's gather of `samples` samples at
 * gather_dt_s, migrated at dt_s; stderr in *capture. */
static int bring_to_dt(capture_t *capture, int samples, double gather_dt_s, double dt_s) {
  static const float traces[RECEIVERS * SAMPLES] = {0.0f};
  static const double source[3] = {0.0, 0.0, 0.0};
  static const double receivers[RECEIVERS * 3] = {0.0};
  rtm_config_t cfg;
  float *observed = NULL;
  observed_deck(&cfg);
  const rtm_observed_gather_t gather = {2,      RECEIVERS, samples,  gather_dt_s,
                                        traces, source,    receivers};
  int status =
      captured(capture, rtm_observed_at_modelling_dt(&cfg, "cpu", dt_s, &gather, &observed));
  free(observed);
  return status;
}

/* A gather [3][0] says it has no samples (it "lasted -0.001 s" before). */
static void test_empty_gather(void **state) {
  (void)state;
  capture_t capture;
  assert_int_equal(bring_to_dt(&capture, 0, 1e-3, 1e-3), RTM_ERR_INPUT);
  assert_contains(capture.text,
                  "rtm.observed = obs.h5: shot 2's gather has no samples (3 traces of 0 samples)");
}

/* dt = 0.00140001 s against 0.0014 s: no window holds whole samples at both, an input defect
 * named by its shot and its value (before, the trace library's RTM_ERR_UNSUPPORTED, exit 1). */
static void test_unreachable_dt(void **state) {
  (void)state;
  capture_t capture;
  assert_int_equal(bring_to_dt(&capture, SAMPLES, 0.00140001, 0.0014), RTM_ERR_INPUT);
  assert_contains(capture.text, "rtm.observed = obs.h5: shot 2's traces are sampled at dt = "
                                "0.00140001 s");
  assert_contains(capture.text, "cannot be resampled to the modelling dt = 0.0014 s");
  assert_true(strstr(capture.text, "traces: resampling") == NULL); /* one message, ours */
}

/* A ratio of small integers (2 ms to 1 ms) is resampled as before. */
static void test_reachable_dt(void **state) {
  (void)state;
  capture_t capture;
  assert_int_equal(bring_to_dt(&capture, SAMPLES, 2e-3, 1e-3), RTM_OK);
}

/* 2 traces of ones, 11 samples of 1 ms, a taper of 4 ms: samples 7 to 10, 3 to 0 ms before
 * the last, weighed 0.5 - 0.5 cos(pi t / 4 ms); the first 7 stay 1 bit for bit; 0 or a
 * negative length does nothing. */
static void test_end_taper_shape(void **state) {
  (void)state;
  enum { N = 11 };
  const double pi = 3.14159265358979323846;
  float traces[2 * N];
  for (int i = 0; i < 2 * N; ++i)
    traces[i] = 1.0f;
  rtm_end_taper(traces, 2, N, 1e-3, 4e-3);
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < N; ++k) {
      const double before_end = (N - 1 - k) * 1e-3;
      const float want =
          before_end >= 4e-3 ? 1.0f : (float)(0.5 - 0.5 * cos(pi * before_end / 4e-3));
      assert_true(traces[r * N + k] == want);
    }
  assert_true(traces[N - 1] == 0.0f && traces[2 * N - 1] == 0.0f);
  assert_true(traces[N - 3] == 0.5f); /* 2 ms, half the taper, before the end */
  assert_true(traces[N - 5] == 1.0f); /* 4 ms before it: untouched */
  for (int i = 0; i < 2 * N; ++i)
    traces[i] = 1.0f;
  rtm_end_taper(traces, 2, N, 1e-3, 0.0);
  rtm_end_taper(traces, 2, N, 1e-3, -1.0);
  for (int i = 0; i < 2 * N; ++i)
    assert_true(traces[i] == 1.0f);
}

/* auto: 0.5 / source.frequency (15 Hz: 33.3 ms), at most half the record (30 steps of 1 ms:
 * 15 ms); a length set is taken as set. */
static void test_end_taper_length(void **state) {
  (void)state;
  rtm_config_t cfg;
  observed_deck(&cfg);
  cfg.source.frequency_hz = 15.0;
  assert_true(isnan(cfg.rtm.end_taper_s)); /* the default is auto */
  assert_true(fabs(rtm_end_taper_seconds(&cfg, 0.01) - 0.5 / 15.0) <= 1e-15);
  assert_true(fabs(rtm_end_taper_seconds(&cfg, 1e-3) - 0.015) <= 1e-15);
  cfg.rtm.end_taper_s = 0.0;
  assert_true(rtm_end_taper_seconds(&cfg, 0.01) == 0.0);
  cfg.rtm.end_taper_s = 0.2;
  assert_true(rtm_end_taper_seconds(&cfg, 0.01) == 0.2);
}

/* The gather at the modelling dt (no resampling, no warp) ends tapered: a constant gather
 * of STEPS + 1 samples of 1 ms at 100 Hz (5 ms of taper) keeps its first samples and ends
 * at zero. */
static void test_gather_ends_tapered(void **state) {
  (void)state;
  float traces[RECEIVERS * SAMPLES];
  for (int i = 0; i < RECEIVERS * SAMPLES; ++i)
    traces[i] = 2.0f;
  static const double source[3] = {0.0, 0.0, 0.0};
  static const double receivers[RECEIVERS * 3] = {0.0};
  rtm_config_t cfg;
  observed_deck(&cfg);
  cfg.source.frequency_hz = 100.0;
  cfg.time.dispersion_correction = RTM_DISPERSION_NONE;
  const rtm_observed_gather_t gather = {0, RECEIVERS, SAMPLES, 1e-3, traces, source, receivers};
  float *observed = NULL;
  assert_int_equal(rtm_observed_at_modelling_dt(&cfg, "cpu", 1e-3, &gather, &observed), RTM_OK);
  for (int r = 0; r < RECEIVERS; ++r) {
    const float *trace = observed + r * (STEPS + 1);
    assert_true(trace[0] == 2.0f && trace[STEPS - 5] == 2.0f);
    assert_true(trace[STEPS - 4] < 2.0f && trace[STEPS - 4] > 1.0f);
    assert_true(trace[STEPS] == 0.0f);
  }
  free(observed);
}

/* Resampled (0.5 ms to 1 ms) and warped (time.dispersion_correction = full), a gather of
 * (1 - cos(2 pi t / 40 ms)) / 2 (0 with zero slope at its start, 0.854 at 15 ms, 0.5 at its
 * end, 30 ms) ends near zero with the taper and away from it without: the taper is applied
 * on that path too, and the samples before it keep their values to 0.02 (untapered, the
 * warp rings the end's step over this short trace: 0.907 at 15 ms). */
static void test_resampled_warped_gather_ends_tapered(void **state) {
  (void)state;
  enum { RAW = 2 * STEPS + 1 };
  const double pi = 3.14159265358979323846;
  static float traces[RECEIVERS * RAW];
  for (int i = 0; i < RECEIVERS * RAW; ++i)
    traces[i] = (float)(0.5 - 0.5 * cos(2.0 * pi * (i % RAW) * 0.5e-3 / 0.04));
  static const double source[3] = {0.0, 0.0, 0.0};
  static const double receivers[RECEIVERS * 3] = {0.0};
  const rtm_observed_gather_t gather = {0, RECEIVERS, RAW, 0.5e-3, traces, source, receivers};
  for (int tapered = 0; tapered < 2; ++tapered) {
    rtm_config_t cfg;
    observed_deck(&cfg);
    cfg.source.frequency_hz = 100.0; /* 5 ms of taper */
    cfg.time.dispersion_correction = RTM_DISPERSION_FULL;
    cfg.rtm.end_taper_s = tapered ? NAN : 0.0;
    float *observed = NULL;
    assert_int_equal(rtm_observed_at_modelling_dt(&cfg, "cpu", 1e-3, &gather, &observed), RTM_OK);
    for (int r = 0; r < RECEIVERS; ++r) {
      const float *trace = observed + r * (STEPS + 1);
      printf("%s: sample %d %.4f, last %.4f\n", tapered ? "tapered" : "untapered", STEPS / 2,
             trace[STEPS / 2], trace[STEPS]);
      if (tapered) /* untapered, the step at the end rings over the whole short trace */
        assert_true(fabs(trace[STEPS / 2] - (0.5 - 0.5 * cos(2.0 * pi * 0.015 / 0.04))) < 0.02);
      assert_true(tapered ? fabsf(trace[STEPS]) < 0.05f : trace[STEPS] > 0.15f);
    }
    free(observed);
  }
}

RTM_TEST_MAIN(cmocka_unit_test(test_empty_gather), cmocka_unit_test(test_unreachable_dt),
              cmocka_unit_test(test_reachable_dt), cmocka_unit_test(test_end_taper_shape),
              cmocka_unit_test(test_end_taper_length), cmocka_unit_test(test_gather_ends_tapered),
              cmocka_unit_test(test_resampled_warped_gather_ends_tapered))

/* Observed gathers that cannot be brought to the modelling dt: refused as input defects
 * (RTM_ERR_INPUT, exit 2) naming rtm.observed, the shot and what is wrong with the gather,
 * before anything is resampled. */
#define _POSIX_C_SOURCE 200809L
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

RTM_TEST_MAIN(cmocka_unit_test(test_empty_gather), cmocka_unit_test(test_unreachable_dt),
              cmocka_unit_test(test_reachable_dt))

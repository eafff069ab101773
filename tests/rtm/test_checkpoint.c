/* rtm.reconstruction = checkpoint on the cpu backend (checkpoint_testing.h): S(n) recomputed
 * from 3 checkpoints equals the forward pass's bit for bit at every imaging step, iso and tti
 * (tti with steps not a multiple of the imaging step, whose last point is not an imaging
 * step); the migrated image equals the snapshots one bit for bit with 4 checkpoints and with
 * as many as fit, with the optimal recomputation; the preflight refuses checkpoints that do
 * not fit, naming rtm.checkpoints. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "checkpoint_testing.h"
#include "migration_helper.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

static void test_source_iso(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cpu", "iso", "", 150, 3, 3};
  checkpoint_check_source(&c);
}

static void test_source_tti(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cpu", "tti", "", 151, 3, 3};
  checkpoint_check_source(&c);
}

static void test_image_iso(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cpu", "iso", "", 301, 4, 4};
  checkpoint_check_image(&c);
}

static void test_image_tti_as_many_as_fit(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cpu", "tti", "", 200, 5, 0};
  checkpoint_check_image(&c);
}

/* The migration's preflight, before anything is allocated, with the constant model's range
 * only (dt is fixed by the survey): a million checkpoints of 1.2 MB, or one of a 4000^3
 * grid (0.5 TB), do not fit in host memory. */
static void expect_refusal(const int n[3], const char *const *settings, const char *advice) {
  survey_t s;
  capture_t capture;
  rtm_migration_t *m = NULL;
  survey_config(&s, n, settings);
  s.model.vp_min = s.model.vp_max = 2000.0;
  assert_int_equal(captured(&capture, rtm_migration_create(&s.cfg, &s.grid, &s.model, &m)),
                   RTM_ERR_NOMEM);
  assert_null(m);
  assert_contains(capture.text, "rtm.reconstruction = checkpoint needs");
  assert_contains(capture.text, advice);
  assert_contains(capture.text, "memory.imaging");
  survey_release(&s);
}

static void test_preflight_refuses(void **state) {
  (void)state;
  const int small[3] = {40, 36, 44}, huge[3] = {4000, 4000, 4000};
  /* (no time-dispersion warp: it refuses so long a trace before this preflight) */
  const char *const many[] = {"rtm.reconstruction=checkpoint", "rtm.checkpoints=1000000",
                              "time.steps=100000000", "rtm.imaging_step=1",
                              "time.dispersion_correction=none", NULL};
  const char *const one[] = {"rtm.reconstruction=checkpoint", "rtm.checkpoints=0", "time.steps=100",
                             "rtm.imaging_step=1", NULL};
  expect_refusal(small, many, "lower rtm.checkpoints (now 1000000;");
  expect_refusal(huge, one, "not one checkpoint");
}

RTM_TEST_MAIN(cmocka_unit_test(test_source_iso), cmocka_unit_test(test_source_tti),
              cmocka_unit_test(test_image_iso), cmocka_unit_test(test_image_tti_as_many_as_fit),
              cmocka_unit_test(test_preflight_refuses))

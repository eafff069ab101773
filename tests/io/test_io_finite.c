/* Values the readers refuse: a saved sum with a NaN or Inf
 * (rtm_io_check_finite, for migrate's resume state) named by file, dataset and (z, y, x) in
 * the whole volume, whichever rows a rank read; an observed gather with a NaN, an Inf or a
 * sample beyond RTM_IO_SAMPLE_LIMIT refused by rtm_io_read_shot, naming file, shot, receiver
 * and sample, while one just inside the bound reads back bit for bit. */
#include "rtm_test_io.h"

#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "rtm_io.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

#define OUT_DIR "test_io_finite.d"
#define SUMS_PATH OUT_DIR "/sums.h5"
#define SHOTS_PATH OUT_DIR "/shots.h5"

enum { NX = 7, NY = 5, NZ = 9, RECEIVERS = 6, SAMPLES = 13 };

static int setup(void **state) {
  (void)state;
  return system("rm -rf " OUT_DIR " && mkdir -p " OUT_DIR) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return system("rm -rf " OUT_DIR) == 0 ? 0 : -1;
}

static void fill(rtm_test_rng_t *rng, float *values, size_t count) {
  for (size_t i = 0; i < count; ++i)
    values[i] = (float)rtm_test_uniform(rng, -2.0, 2.0);
}

static void write_volume(const float *image) {
  const rtm_io_volume_t volume = {.n = {NX, NY, NZ},
                                  .spacing_m = {10.0, 10.0, 10.0},
                                  .origin_m = {0.0, 0.0, 0.0},
                                  .z_offset = 0,
                                  .nz_local = NZ};
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(SUMS_PATH, &volume, NULL, &output), RTM_OK);
  assert_int_equal(rtm_output_write_volume(output, "/image", image), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
}

/* Rows [first, first + count) of /image read as a rank reads its slab, then checked. */
static int check_rows(size_t first, size_t count) {
  rtm_dataset_t rows = {0};
  assert_int_equal(rtm_io_read_dataset_rows(SUMS_PATH, "/image", first, count, &rows), RTM_OK);
  const int status = rtm_io_check_finite(SUMS_PATH, "/image", &rows, first);
  rtm_dataset_release(&rows);
  return status;
}

/* A NaN, then an Inf, at a drawn cell: refused by every slab that holds it, with the cell's
 * index in the whole volume; the slabs above and below it pass. */
static void test_saved_sums(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_io_finite");
  static float image[NZ * NY * NX];
  fill(&rng, image, sizeof image / sizeof image[0]);
  write_volume(image);
  assert_int_equal(check_rows(0, NZ), RTM_OK);
  const size_t z = 2 + (size_t)rtm_test_uniform(&rng, 0.0, NZ - 4.0); /* 2 .. NZ - 3 */
  const size_t y = (size_t)rtm_test_uniform(&rng, 0.0, NY - 1.0);
  const size_t x = (size_t)rtm_test_uniform(&rng, 0.0, NX - 1.0);
  const float bad[2] = {NAN, -INFINITY};
  const char *const shown[2] = {"nan", "-inf"};
  for (int b = 0; b < 2; ++b) {
    image[(z * NY + y) * NX + x] = bad[b];
    write_volume(image);
    char needle[160];
    snprintf(needle, sizeof needle,
             SUMS_PATH ": dataset /image holds %s at [%zu][%zu][%zu] (z, y, x), the first of 1 "
                       "non-finite value:",
             shown[b], z, y, x);
    assert_call_refused(check_rows(0, NZ), RTM_ERR_INPUT, needle);
    assert_call_refused(check_rows(z - 1, 2), RTM_ERR_INPUT, needle); /* z in the second row */
    assert_call_refused(check_rows(z, NZ - z), RTM_ERR_INPUT, needle);
    assert_int_equal(check_rows(0, z), RTM_OK);
    assert_int_equal(check_rows(z + 1, NZ - z - 1), RTM_OK);
  }
  /* a second one after it: the first is named, both are counted */
  image[(z * NY + y) * NX + x] = NAN;
  image[(NZ - 1) * NY * NX + 1] = INFINITY;
  write_volume(image);
  assert_call_refused(check_rows(0, NZ), RTM_ERR_INPUT, "the first of 2 non-finite values");
}

static void write_shot(const float *traces, const double *receivers) {
  const rtm_io_volume_t volume = {.n = {NX, NY, NZ},
                                  .spacing_m = {10.0, 10.0, 10.0},
                                  .origin_m = {0.0, 0.0, 0.0},
                                  .z_offset = 0,
                                  .nz_local = NZ};
  const double source[3] = {30.0, 20.0, 10.0};
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(SHOTS_PATH, &volume, NULL, &output), RTM_OK);
  for (int k = 0; k < 2; ++k) /* shot 1 is the one under test, shot 0 the same */
    assert_int_equal(
        rtm_output_write_shot(output, k, source, "p", traces, RECEIVERS, SAMPLES, 2e-3, receivers),
        RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
}

/* Observed gathers: a sample just inside RTM_IO_SAMPLE_LIMIT reads back as written; NaN, Inf,
 * 3e38 and one just beyond the bound are refused with their place. */
static void test_observed_samples(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_io_finite observed");
  static float traces[RECEIVERS * SAMPLES];
  double receivers[RECEIVERS * 3];
  fill(&rng, traces, sizeof traces / sizeof traces[0]);
  for (int i = 0; i < RECEIVERS * 3; ++i)
    receivers[i] = rtm_test_uniform(&rng, 0.0, 60.0);
  const int r = (int)rtm_test_uniform(&rng, 0.0, RECEIVERS - 1.0);
  const int s = (int)rtm_test_uniform(&rng, 0.0, SAMPLES - 1.0);
  float *sample = &traces[r * SAMPLES + s];
  rtm_io_gather_t gather;

  *sample = -0.99e20f; /* the largest magnitude a recording may hold, near enough */
  write_shot(traces, receivers);
  assert_int_equal(rtm_io_read_shot(SHOTS_PATH, 1, "p", &gather), RTM_OK);
  assert_memory_equal(gather.traces, traces, sizeof traces);
  rtm_io_gather_release(&gather);

  const float bad[4] = {NAN, INFINITY, 3e38f, -1.01e20f};
  const char *const shown[4] = {"nan", "inf", "3e+38", "-1.01e+20"};
  for (int b = 0; b < 4; ++b) {
    *sample = bad[b];
    write_shot(traces, receivers);
    char needle[200];
    snprintf(needle, sizeof needle,
             "run file " SHOTS_PATH ": shot 1 (/shots/1/traces/p), receiver %d, sample %d (from "
             "0) is %s, the first of 1 such sample:",
             r, s, shown[b]);
    assert_call_refused(rtm_io_read_shot(SHOTS_PATH, 1, "p", &gather), RTM_ERR_INPUT, needle);
    assert_null(gather.traces);
  }
}

/* The scan itself: the first bad index and the count, finiteness alone with limit 0. */
static void test_find_bad_values(void **state) {
  (void)state;
  const float values[6] = {1.0f, -3e30f, 2.0f, NAN, 0.0f, 5e20f};
  size_t first = 0;
  assert_int_equal(rtm_io_find_bad_values(values, 6, 0.0, &first), 1);
  assert_int_equal(first, 3);
  assert_int_equal(rtm_io_find_bad_values(values, 6, RTM_IO_SAMPLE_LIMIT, &first), 3);
  assert_int_equal(first, 1);
  assert_int_equal(rtm_io_find_bad_values(values, 3, 1e31, &first), 0);
  assert_int_equal(first, 3);
}

/* A volume's scan runs on the threads: the count over all of them, the first bad index the
 * lowest, whichever thread met it (the later ones in the array met first by others). */
static void test_find_bad_values_volume(void **state) {
  (void)state;
  const size_t count = (size_t)1 << 24; /* the size from which the scan is parallel */
  float *values = calloc(count, sizeof *values);
  assert_non_null(values);
  const size_t bad[3] = {count - 1, count / 2 + 7, count / 3 + 1};
  for (int k = 0; k < 3; ++k)
    values[bad[k]] = k == 1 ? INFINITY : NAN;
  size_t first = 0;
  assert_int_equal(rtm_io_find_bad_values(values, count, 0.0, &first), 3);
  assert_int_equal(first, count / 3 + 1);
  values[count / 3 + 1] = 0.0f;
  values[count / 2 + 7] = 0.0f;
  values[count - 1] = 0.0f;
  assert_int_equal(rtm_io_find_bad_values(values, count, 0.0, &first), 0);
  assert_int_equal(first, count);
  free(values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_find_bad_values),
      cmocka_unit_test(test_find_bad_values_volume),
      cmocka_unit_test(test_saved_sums),
      cmocka_unit_test(test_observed_samples),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

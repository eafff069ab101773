/* test_segy - SEG-Y through segyio (io/segy.c): the gathers of a many-shot run file and of
 * a single-shot one exported and read back as migrate reads observed data (rtm_io_read_shot
 * on a .sgy name): samples bit for bit, positions to the millimetre, the interval; one file
 * a shot; the refusals (an interval SEG-Y cannot hold, coordinates past its integers, a
 * missing shot) with no file left behind; a file rewritten between reads indexed anew. The gathers
 * follow formulas (segy_formula.h) so that a second reader, segyio's Python module
 * (segy_second_reader.sh), checks the same file (kept as test_segy.d/formula.sgy) without this
 * program. Exit 77 when the build has no segyio. */
#include "rtm_test_io.h"

#include <fcntl.h> /* AT_FDCWD */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <sys/stat.h> /* utimensat */

#include "rtm_io.h"
#include "rtm_status.h"
#include "rtm_test_main.h"
#include "segy_formula.h"

#define OUT_DIR "test_segy.d"
#define MANY_H5 OUT_DIR "/formula.h5"
#define MANY_SEGY OUT_DIR "/formula.sgy"

static const rtm_io_volume_t volume = {.n = {4, 4, 4},
                                       .spacing_m = {10.0, 10.0, 10.0},
                                       .origin_m = {0.0, 0.0, 0.0},
                                       .z_offset = 0,
                                       .nz_local = 4};

/* The formula gathers of every shot into a many-shot run file at `path`, at interval dt. */
static void write_formula_file(const char *path, double dt) {
  rtm_output_t *output = NULL;
  float traces[SEGY_FORMULA_MAX_RECEIVERS * SEGY_FORMULA_SAMPLES];
  double receivers[SEGY_FORMULA_MAX_RECEIVERS][3];
  assert_int_equal(rtm_output_create(path, &volume, NULL, &output), RTM_OK);
  for (int k = 0; k < SEGY_FORMULA_SHOTS; ++k) {
    double source[3];
    segy_formula_source(k, source);
    const int count = segy_formula_receivers(k);
    for (int r = 0; r < count; ++r) {
      segy_formula_receiver(k, r, receivers[r]);
      for (int s = 0; s < SEGY_FORMULA_SAMPLES; ++s)
        traces[r * SEGY_FORMULA_SAMPLES + s] = segy_formula_sample(k, r, s);
    }
    assert_int_equal(rtm_output_write_shot(output, k, source, "p", traces, count,
                                           SEGY_FORMULA_SAMPLES, dt, &receivers[0][0]),
                     RTM_OK);
  }
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
}

/* Shot k of `path` (SEG-Y, or the run file) equals the formula's shot `formula_shot`. */
static void assert_formula_shot(const char *path, int k, int formula_shot) {
  rtm_io_gather_t g;
  assert_int_equal(rtm_io_read_shot(path, k, "p", &g), RTM_OK);
  double source[3], receiver[3];
  segy_formula_source(formula_shot, source);
  for (int a = 0; a < 3; ++a)
    assert_true(fabs(g.source_m[a] - source[a]) <= 0.5e-3);
  assert_int_equal(g.count, segy_formula_receivers(formula_shot));
  assert_int_equal(g.samples, SEGY_FORMULA_SAMPLES);
  assert_true(fabs(g.dt_s - SEGY_FORMULA_DT_US * 1e-6) < 1e-12);
  for (int r = 0; r < g.count; ++r) {
    segy_formula_receiver(formula_shot, r, receiver);
    for (int a = 0; a < 3; ++a)
      assert_true(fabs(g.receivers_m[3 * r + a] - receiver[a]) <= 0.5e-3);
    for (int s = 0; s < SEGY_FORMULA_SAMPLES; ++s)
      assert_true(g.traces[(size_t)r * SEGY_FORMULA_SAMPLES + s] ==
                  segy_formula_sample(formula_shot, r, s));
  }
  /* the headers alone (migrate's check of a survey before its first step): the same */
  rtm_io_gather_t h;
  assert_int_equal(rtm_io_read_shot_geometry(path, k, "p", &h), RTM_OK);
  assert_null(h.traces);
  assert_int_equal(h.count, g.count);
  assert_int_equal(h.samples, g.samples);
  assert_memory_equal(&h.dt_s, &g.dt_s, sizeof h.dt_s);
  assert_memory_equal(h.source_m, g.source_m, sizeof h.source_m);
  assert_memory_equal(h.receivers_m, g.receivers_m, (size_t)g.count * 3 * sizeof(double));
  rtm_io_gather_release(&h);
  rtm_io_gather_release(&g);
}

static int exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

static void test_round_trip(void **state) {
  (void)state;
  write_formula_file(MANY_H5, SEGY_FORMULA_DT_US * 1e-6);
  assert_int_equal(rtm_segy_export(MANY_H5, "p", MANY_SEGY, 0, 1), RTM_OK);
  assert_true(rtm_segy_path(MANY_SEGY));
  int count = 0;
  assert_int_equal(rtm_io_shot_count(MANY_SEGY, &count), RTM_OK);
  assert_int_equal(count, SEGY_FORMULA_SHOTS);
  for (int k = 0; k < SEGY_FORMULA_SHOTS; ++k) {
    assert_formula_shot(MANY_SEGY, k, k);
    assert_formula_shot(MANY_H5, k, k); /* and the run file it came from */
  }
}

/* --per-shot: one file a shot, named after the one asked for, and no other. */
static void test_per_shot(void **state) {
  (void)state;
  write_formula_file(MANY_H5, SEGY_FORMULA_DT_US * 1e-6); /* not test_round_trip's */
  assert_int_equal(rtm_segy_export(MANY_H5, "p", OUT_DIR "/each.segy", 1, 1), RTM_OK);
  for (int k = 0; k < SEGY_FORMULA_SHOTS; ++k) {
    char path[96];
    snprintf(path, sizeof path, OUT_DIR "/each_shot%d.segy", k);
    int count = 0;
    assert_int_equal(rtm_io_shot_count(path, &count), RTM_OK);
    assert_int_equal(count, 1);
    assert_formula_shot(path, 0, k);
  }
  char past[96];
  snprintf(past, sizeof past, OUT_DIR "/each_shot%d.segy", SEGY_FORMULA_SHOTS);
  assert_false(exists(OUT_DIR "/each.segy"));
  assert_false(exists(past));
}

/* A single-shot run file (rtm3d model's /traces) is shot 1 of its SEG-Y file. */
static void test_single_shot(void **state) {
  (void)state;
  float traces[SEGY_FORMULA_MAX_RECEIVERS * SEGY_FORMULA_SAMPLES];
  double receivers[SEGY_FORMULA_MAX_RECEIVERS][3], source[3];
  const int count = segy_formula_receivers(1);
  segy_formula_source(1, source);
  for (int r = 0; r < count; ++r) {
    segy_formula_receiver(1, r, receivers[r]);
    for (int s = 0; s < SEGY_FORMULA_SAMPLES; ++s)
      traces[r * SEGY_FORMULA_SAMPLES + s] = segy_formula_sample(1, r, s);
  }
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(OUT_DIR "/single.h5", &volume, NULL, &output), RTM_OK);
  assert_int_equal(rtm_output_write_traces(output, "p", traces, count, SEGY_FORMULA_SAMPLES,
                                           SEGY_FORMULA_DT_US * 1e-6, &receivers[0][0]),
                   RTM_OK);
  assert_int_equal(rtm_output_write_source(output, source), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  assert_int_equal(rtm_segy_export(OUT_DIR "/single.h5", "p", OUT_DIR "/single.sgy", 0, 1), RTM_OK);
  assert_formula_shot(OUT_DIR "/single.sgy", 0, 1);
}

static void test_refusals(void **state) {
  (void)state;
  /* 1690.31 us: not whole microseconds; nothing written */
  write_formula_file(OUT_DIR "/odd_dt.h5", 1690.31e-6);
  assert_call_refused(rtm_segy_export(OUT_DIR "/odd_dt.h5", "p", OUT_DIR "/odd.sgy", 0, 1),
                      RTM_ERR_INPUT, "is not a whole number of microseconds");
  assert_false(exists(OUT_DIR "/odd.sgy"));
  /* a source 3000 km away does not fit the headers' millimetres */
  rtm_output_t *output = NULL;
  const float trace[SEGY_FORMULA_SAMPLES] = {0};
  const double far[3] = {3e6, 0.0, 0.0}, near[3] = {1.0, 2.0, 3.0};
  assert_int_equal(rtm_output_create(OUT_DIR "/far.h5", &volume, NULL, &output), RTM_OK);
  assert_int_equal(
      rtm_output_write_shot(output, 0, far, "p", trace, 1, SEGY_FORMULA_SAMPLES, 2e-3, near),
      RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  assert_call_refused(rtm_segy_export(OUT_DIR "/far.h5", "p", OUT_DIR "/far.sgy", 0, 1),
                      RTM_ERR_INPUT, "source x = 3e+06 m does not fit");
  assert_false(exists(OUT_DIR "/far.sgy"));
  /* a shot the file does not hold, and a file that is not there */
  rtm_io_gather_t g;
  assert_call_refused(rtm_io_read_shot(MANY_SEGY, SEGY_FORMULA_SHOTS, "p", &g), RTM_ERR_INPUT,
                      "holds 2 shots");
  assert_call_refused(rtm_io_read_shot(OUT_DIR "/missing.sgy", 0, "p", &g), RTM_ERR_INPUT,
                      "cannot open the SEG-Y file");
}

/* Each trace of the SEG-Y file at `path` (the formula file exported: 240-byte headers,
 * SEGY_FORMULA_SAMPLES floats) given field record (bytes 9-12) `records[k]` where k is its
 * shot in the formula, or `records[0]` for every trace when `one` is set. */
static void set_field_records(const char *path, const unsigned char records[], int one) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  const long trace_bytes = 240 + 4L * SEGY_FORMULA_SAMPLES;
  long trace = 0;
  for (int k = 0; k < SEGY_FORMULA_SHOTS; ++k)
    for (int r = 0; r < segy_formula_receivers(k); ++r, ++trace) {
      const unsigned char record[4] = {0, 0, 0, records[one ? 0 : k]};
      assert_int_equal(fseek(f, 3600 + trace * trace_bytes + 8, SEEK_SET), 0);
      assert_int_equal(fwrite(record, 1, 4, f), 4);
    }
  assert_int_equal(fclose(f), 0);
}

/* The shots of a file are indexed once and kept (migrate reads every shot's headers, then
 * each shot): a file rewritten at the same name, the same size and trace count, is indexed
 * anew. Every trace's field record (bytes 9-12) set to one value: one shot, not the
 * index kept of the file before, whose traces name two sources. */
static void test_rewritten_file_indexed_anew(void **state) {
  (void)state;
  const char *path = OUT_DIR "/rewritten.sgy";
  write_formula_file(MANY_H5, SEGY_FORMULA_DT_US * 1e-6);
  assert_int_equal(rtm_segy_export(MANY_H5, "p", path, 0, 1), RTM_OK);
  int count = 0;
  assert_int_equal(rtm_io_shot_count(path, &count), RTM_OK);
  assert_int_equal(count, SEGY_FORMULA_SHOTS);
  assert_formula_shot(path, 1, 1);
  set_field_records(path, (const unsigned char[]){7}, 1);
  /* a time of its own: the rewrite may fall in the clock tick of the export's writes */
  const struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
  assert_int_equal(rtm_io_shot_count(path, &count), RTM_OK);
  assert_int_equal(count, 1);
  /* its one shot's traces name two sources: refused, naming the new record */
  rtm_io_gather_t g;
  assert_call_refused(rtm_io_read_shot_geometry(path, 0, "p", &g), RTM_ERR_INPUT,
                      "of shot 0 (field record 7) has its source at");
}

/* Shots are the distinct field records in the order of their first traces, whatever their
 * values: the formula file's two shots recorded as 9 and then 4 read as shots 0 and 1 (an
 * index sorted by record would swap them). */
static void test_shots_in_file_order(void **state) {
  (void)state;
  const char *path = OUT_DIR "/descending.sgy";
  write_formula_file(MANY_H5, SEGY_FORMULA_DT_US * 1e-6);
  assert_int_equal(rtm_segy_export(MANY_H5, "p", path, 0, 1), RTM_OK);
  set_field_records(path, (const unsigned char[]){9, 4}, 0);
  for (int k = 0; k < SEGY_FORMULA_SHOTS; ++k)
    assert_formula_shot(path, k, k);
}

static int setup(void **state) {
  (void)state;
  if (!rtm_segy_available()) {
    printf("test_segy: this build has no segyio, skipped\n");
    exit(77);
  }
  return system("rm -rf " OUT_DIR " && mkdir -p " OUT_DIR) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trip),
                                     cmocka_unit_test(test_per_shot),
                                     cmocka_unit_test(test_single_shot),
                                     cmocka_unit_test(test_refusals),
                                     cmocka_unit_test(test_rewritten_file_indexed_anew),
                                     cmocka_unit_test(test_shots_in_file_order)};
  /* test_segy.d/formula.sgy stays for segy_second_reader.sh */
  return cmocka_run_group_tests(tests, setup, NULL);
}

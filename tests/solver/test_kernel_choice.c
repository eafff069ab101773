/* test_kernel_choice - kernel.* = auto without a GPU: the size classes, the table's choice
 * for keys it names and keys it does not (older GPUs, vti, fp16, other sizes), and the tune
 * cache: where it lives, a round trip, sections kept and replaced, a damaged entry ignored
 * with a warning naming file and line, a new cache the disk refuses not put in place,
 * explicit keys over both. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rtm_test_capture.h"

#include "rtm_kernel_choice.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

static rtm_kernel_key_t key_of(int cc, rtm_equation_t equation, rtm_precision_t precision,
                               int size_class) {
  rtm_kernel_key_t key;
  memset(&key, 0, sizeof key);
  snprintf(key.gpu, sizeof key.gpu, "Test GPU 80GB");
  key.cc = cc;
  key.driver = 13000;
  key.equation = equation;
  key.precision = precision;
  key.size_class = size_class;
  return key;
}

static void test_size_classes(void **state) {
  (void)state;
  const int cubes[][3] = {{512, 512, 512}, {256, 256, 256}, {320, 320, 320},   {400, 400, 400},
                          {160, 160, 120}, {8, 8, 8},       {4096, 4096, 4096}};
  const int want[] = {512, 256, 256, 512, 128, 64, 2048};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
    assert_int_equal(rtm_kernel_size_class(cubes[i]), want[i]);
}

static void test_shape_text_round_trip(void **state) {
  (void)state;
  rtm_kernel_shape_t shape = {"tma", 3, {64, 4}, 64}, back;
  char text[64];
  rtm_kernel_shape_text(&shape, text, sizeof text);
  assert_string_equal(text, "tma 3 64x4 64");
  assert_true(rtm_kernel_shape_parse(text, &back));
  assert_memory_equal(&shape, &back, sizeof shape);
  const char *bad[] = {"warp 3 64x4 64",
                       "tma 9 64x4 64",
                       "tma 3 0x4 64",
                       "tma 3 64x4 -1",
                       "tma 3 64x4",
                       "tma 3 64x4 64 extra",
                       ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
    assert_false(rtm_kernel_shape_parse(bad[i], &back));
}

/* The table's row for a key, and its why. */
static rtm_kernel_shape_t table_choice(int cc, rtm_equation_t equation, rtm_precision_t precision,
                                       int size_class, char *why, size_t size) {
  const rtm_kernel_key_t key = key_of(cc, equation, precision, size_class);
  rtm_kernel_shape_t shape;
  rtm_kernel_table_lookup(&key, &shape, why, size);
  char text[64];
  rtm_kernel_shape_text(&shape, text, sizeof text);
  printf("sm_%d %s %s %d^3: %s <- %s\n", cc, rtm_equation_name(equation),
         rtm_precision_name(precision), size_class, text, why);
  return shape;
}

static void test_table(void **state) {
  (void)state;
  char why[1024];
  rtm_kernel_shape_t s, again;
  assert_true(rtm_kernel_table_rows() >= 4);
  /* Hopper and later: the sm_90 rows, for any size and precision */
  for (int size = 128; size <= 1024; size *= 2) {
    s = table_choice(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, size, why, sizeof why);
    assert_non_null(strstr(why, "table row sm_90+ iso fp32"));
    s = table_choice(100, RTM_EQUATION_TTI, RTM_PRECISION_FP16, size, why, sizeof why);
    assert_non_null(strstr(why, "table row sm_90+ tti"));
  }
  /* vti takes its own rows where the table has them (sm_90), else tti's (before Hopper) */
  s = table_choice(90, RTM_EQUATION_VTI, RTM_PRECISION_FP32, 512, why, sizeof why);
  assert_non_null(strstr(why, "sm_90+ vti fp32"));
  s = table_choice(80, RTM_EQUATION_VTI, RTM_PRECISION_FP32, 512, why, sizeof why);
  assert_non_null(strstr(why, "sm_0+ tti fp32"));
  /* before Hopper: no tma, from the rows for any GPU */
  const rtm_equation_t equations[] = {RTM_EQUATION_ISO, RTM_EQUATION_VTI, RTM_EQUATION_TTI};
  for (int e = 0; e < 3; ++e) {
    s = table_choice(80, equations[e], RTM_PRECISION_FP32, 256, why, sizeof why);
    assert_string_not_equal(s.halo, "tma");
    assert_non_null(strstr(why, "table row sm_0+"));
  }
  /* a key a row names exactly gets that row: the one chosen for 512^3 names 512^3 */
  s = table_choice(90, RTM_EQUATION_TTI, RTM_PRECISION_FP32, 512, why, sizeof why);
  assert_non_null(strstr(why, "tti fp32 512^3"));
  /* every choice is a shape the cache would accept */
  char text[64];
  rtm_kernel_shape_text(&s, text, sizeof text);
  assert_true(rtm_kernel_shape_parse(text, &again));
  /* a row for one kind of GPU serves that kind where it ties with the row for any GPU of its
   * compute capability, and no other GPU; it does not outrank a row of a nearer size */
  rtm_kernel_key_t h200 = key_of(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 512);
  snprintf(h200.gpu, sizeof h200.gpu, "NVIDIA H200");
  rtm_kernel_table_lookup(&h200, &s, why, sizeof why);
  assert_non_null(strstr(why, "table row sm_90+ H200 iso fp32 512^3"));
  rtm_kernel_shape_text(&s, text, sizeof text);
  assert_string_equal(text, "tma 4 128x16 32");
  s = table_choice(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 512, why, sizeof why);
  assert_null(strstr(why, "H200"));
  assert_int_equal(s.stages, 3);
  h200.size_class = 2048; /* as near as the row for any GPU: this GPU's */
  rtm_kernel_table_lookup(&h200, &s, why, sizeof why);
  assert_non_null(strstr(why, "table row sm_90+ H200 iso fp32 512^3"));
  h200.size_class = 256;
  rtm_kernel_table_lookup(&h200, &s, why, sizeof why);
  assert_non_null(strstr(why, "table row sm_90+ iso fp32 256^3"));
  /* a name that holds the row's as part of a word is another GPU */
  rtm_kernel_key_t gh200 = key_of(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 512);
  snprintf(gh200.gpu, sizeof gh200.gpu, "NVIDIA GH200 480GB");
  rtm_kernel_table_lookup(&gh200, &s, why, sizeof why);
  assert_null(strstr(why, "H200"));
  snprintf(gh200.gpu, sizeof gh200.gpu, "NVIDIA H200 NVL");
  rtm_kernel_table_lookup(&gh200, &s, why, sizeof why);
  assert_non_null(strstr(why, "H200 iso"));
}

static void test_cache_path(void **state) {
  (void)state;
  char path[4096];
  setenv("HOME", "/home/someone", 1);
  unsetenv("XDG_CACHE_HOME");
  unsetenv("RTM3D_CACHE_DIR");
  assert_true(rtm_kernel_cache_path(path, sizeof path));
  assert_string_equal(path, "/home/someone/.cache/rtm3d/kernels.ini");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  assert_true(rtm_kernel_cache_path(path, sizeof path));
  assert_string_equal(path, "/xdg/rtm3d/kernels.ini");
  setenv("RTM3D_CACHE_DIR", "/mine", 1);
  assert_true(rtm_kernel_cache_path(path, sizeof path));
  assert_string_equal(path, "/mine/kernels.ini");
  unsetenv("RTM3D_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  assert_false(rtm_kernel_cache_path(path, sizeof path));
}

/* A fresh cache path inside a temporary folder (two levels that do not exist yet). */
static void temp_cache(char *dir, size_t dir_size, char *path, size_t size) {
  snprintf(dir, dir_size, "/tmp/rtm3d_kernel_cache_XXXXXX");
  assert_non_null(mkdtemp(dir));
  snprintf(path, size, "%s/a/b/kernels.ini", dir);
}

static void remove_cache(const char *dir, const char *path) {
  char sub[4200];
  remove(path);
  snprintf(sub, sizeof sub, "%s.lock", path);
  remove(sub);
  snprintf(sub, sizeof sub, "%s/a/b", dir);
  rmdir(sub);
  snprintf(sub, sizeof sub, "%s/a", dir);
  rmdir(sub);
  rmdir(dir);
}

/* How many lines of `path` equal `line`. */
static int lines_equal(const char *path, const char *line) {
  char buffer[1024];
  int count = 0;
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  while (fgets(buffer, sizeof buffer, f)) {
    buffer[strcspn(buffer, "\n")] = '\0';
    count += strcmp(buffer, line) == 0;
  }
  fclose(f);
  return count;
}

static void test_cache_round_trip(void **state) {
  (void)state;
  char dir[64], path[4096], why[1024], section[600], text[512];
  temp_cache(dir, sizeof dir, path, sizeof path);
  const rtm_kernel_key_t iso = key_of(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 256);
  const rtm_kernel_key_t tti = key_of(90, RTM_EQUATION_TTI, RTM_PRECISION_FP16, 256);
  const rtm_kernel_shape_t a = {"tma", 3, {128, 8}, 32}, b = {"ldgsts", 2, {32, 16}, 0},
                           c = {"sync", 2, {64, 4}, 16};
  rtm_kernel_shape_t got;
  assert_false(rtm_kernel_cache_lookup(path, &iso, &got, why, sizeof why)); /* no file */
  assert_false(rtm_kernel_cache_lookup(NULL, &iso, &got, why, sizeof why));
  assert_int_equal(rtm_kernel_cache_store(path, &iso, &a, 161776.4), RTM_OK);
  assert_true(rtm_kernel_cache_lookup(path, &iso, &got, why, sizeof why));
  assert_memory_equal(&got, &a, sizeof got);
  assert_non_null(strstr(why, "tune cache "));
  assert_non_null(strstr(why, "161776 MCells/s"));
  assert_false(rtm_kernel_cache_lookup(path, &tti, &got, why, sizeof why)); /* not stored */
  /* a second key beside the first, then the first replaced: one section each */
  assert_int_equal(rtm_kernel_cache_store(path, &tti, &b, 40000.0), RTM_OK);
  assert_int_equal(rtm_kernel_cache_store(path, &iso, &c, 150000.0), RTM_OK);
  assert_true(rtm_kernel_cache_lookup(path, &iso, &got, NULL, 0));
  assert_memory_equal(&got, &c, sizeof got);
  assert_true(rtm_kernel_cache_lookup(path, &tti, &got, NULL, 0));
  assert_memory_equal(&got, &b, sizeof got);
  rtm_kernel_key_text(&iso, text, sizeof text);
  assert_string_equal(text, "Test GPU 80GB | sm_90 | driver 13.0 | iso | fp32 | 256^3");
  snprintf(section, sizeof section, "[%s]", text);
  assert_int_equal(lines_equal(path, section), 1);
  assert_int_equal(lines_equal(path, "kernel = sync 2 64x4 16"), 1);
  /* another driver or GPU is another key */
  rtm_kernel_key_t other = iso;
  other.driver = 12080;
  assert_false(rtm_kernel_cache_lookup(path, &other, &got, NULL, 0));
  remove_cache(dir, path);
}

/* Processes tuning at once (several GPUs of a node, each its own key) each keep their
 * entry: WRITERS children store ROUNDS entries each, every one of another size class, at
 * the same time; afterwards every entry is there. Without a lock around the read, rewrite
 * and rename, one writer's rename drops what another wrote meanwhile. */
static void test_cache_concurrent_writers(void **state) {
  (void)state;
  enum { WRITERS = 8, ROUNDS = 12 };
  char dir[64], path[4096];
  temp_cache(dir, sizeof dir, path, sizeof path);
  const rtm_kernel_shape_t a = {"tma", 3, {128, 8}, 32};
  pid_t children[WRITERS];
  for (int w = 0; w < WRITERS; ++w) {
    children[w] = fork();
    assert_true(children[w] >= 0);
    if (children[w] == 0) {
      int failed = 0;
      for (int r = 0; r < ROUNDS; ++r) {
        rtm_kernel_key_t key = key_of(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 256);
        key.size_class = 1000 * (w + 1) + r; /* a key of its own */
        failed |= rtm_kernel_cache_store(path, &key, &a, 1.0) != RTM_OK;
      }
      _exit(failed);
    }
  }
  for (int w = 0; w < WRITERS; ++w) {
    int code = -1;
    assert_int_equal(waitpid(children[w], &code, 0), children[w]);
    assert_true(WIFEXITED(code) && WEXITSTATUS(code) == 0);
  }
  int missing = 0;
  for (int w = 0; w < WRITERS; ++w)
    for (int r = 0; r < ROUNDS; ++r) {
      rtm_kernel_key_t key = key_of(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 256);
      key.size_class = 1000 * (w + 1) + r;
      rtm_kernel_shape_t got;
      missing += !rtm_kernel_cache_lookup(path, &key, &got, NULL, 0);
    }
  if (missing) fail_msg("%d of %d entries stored at once were lost", missing, WRITERS * ROUNDS);
  remove_cache(dir, path);
}

static void test_cache_damaged(void **state) {
  (void)state;
  char dir[64], path[4096], text[512];
  temp_cache(dir, sizeof dir, path, sizeof path);
  const rtm_kernel_key_t iso = key_of(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 512);
  const rtm_kernel_shape_t a = {"tma", 3, {128, 8}, 32};
  rtm_kernel_shape_t got;
  assert_int_equal(rtm_kernel_cache_store(path, &iso, &a, 1.0), RTM_OK);
  /* the shape line of the section spoilt by hand */
  rtm_kernel_key_text(&iso, text, sizeof text);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "# a comment\n[%s]\nkernel = tma three 128x8 32\nmcells = 1\n", text);
  fclose(f);
  capture_t capture;
  capture_begin(&capture);
  assert_false(rtm_kernel_cache_lookup(path, &iso, &got, NULL, 0));
  const char *said = capture_end(&capture);
  char expected[4200];
  snprintf(expected, sizeof expected, "%s:3: not a kernel shape", path);
  assert_non_null(strstr(said, expected));
  /* rtm3d tune writes over it */
  assert_int_equal(rtm_kernel_cache_store(path, &iso, &a, 2.0), RTM_OK);
  assert_true(rtm_kernel_cache_lookup(path, &iso, &got, NULL, 0));
  assert_int_equal(lines_equal(path, "# a comment"), 1);
  remove_cache(dir, path);
}

/* A cache whose new content the disk refuses (fdatasync fails: the ctest entry
 * test_kernel_choice_sync runs this case under the full-disk preload with
 * RTM3D_TEST_FAIL_SYNC=.tmp, the writer's file aside) is not replaced: the store fails
 * naming the cache, the earlier file is as it was, and nothing is left aside. Skipped
 * without the preload's setting. */
static void test_cache_sync_failure(void **state) {
  (void)state;
  if (!getenv("RTM3D_TEST_FAIL_SYNC")) skip();
  char dir[64], path[4096], text[512], before[1024], after[1024];
  temp_cache(dir, sizeof dir, path, sizeof path);
  const rtm_kernel_key_t iso = key_of(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 512);
  const rtm_kernel_shape_t a = {"tma", 3, {128, 8}, 32};
  rtm_kernel_key_text(&iso, text, sizeof text);
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/a", dir);
  assert_int_equal(mkdir(sub, 0755), 0);
  snprintf(sub, sizeof sub, "%s/a/b", dir);
  assert_int_equal(mkdir(sub, 0755), 0);
  FILE *f = fopen(path, "w"); /* the earlier cache, written here: every store fails */
  assert_non_null(f);
  fprintf(f, "[%s]\nkernel = sync 2 32x8 0\nmcells = 1\n", text);
  fclose(f);
  f = fopen(path, "r");
  assert_non_null(f);
  const size_t had = fread(before, 1, sizeof before, f);
  fclose(f);
  capture_t capture;
  capture_begin(&capture);
  const int status = rtm_kernel_cache_store(path, &iso, &a, 2.0);
  const char *said = capture_end(&capture);
  assert_int_equal(status, RTM_ERR_IO);
  char expected[4200];
  snprintf(expected, sizeof expected, "tune cache %s: cannot put", path);
  assert_non_null(strstr(said, expected));
  assert_non_null(strstr(said, "the cache is as it was"));
  f = fopen(path, "r");
  assert_non_null(f);
  const size_t has = fread(after, 1, sizeof after, f);
  fclose(f);
  assert_int_equal(has, had);
  assert_memory_equal(after, before, had);
  char aside[4200];
  snprintf(aside, sizeof aside, "%s.%ld.tmp", path, (long)getpid());
  assert_int_not_equal(access(aside, F_OK), 0);
  remove_cache(dir, path);
}

static void test_choose(void **state) {
  (void)state;
  char dir[64], path[4096], why[1024];
  temp_cache(dir, sizeof dir, path, sizeof path);
  rtm_config_t cfg;
  rtm_config_defaults(&cfg);
  cfg.physics.equation = RTM_EQUATION_ISO;
  const rtm_kernel_key_t key = key_of(90, RTM_EQUATION_ISO, RTM_PRECISION_FP32, 512);
  const rtm_kernel_shape_t cached = {"ldgsts", 3, {64, 8}, 16};
  rtm_kernel_shape_t got, table;
  rtm_kernel_table_lookup(&key, &table, NULL, 0);
  /* the defaults are auto: the table without a cache, the cache once it has the key */
  rtm_kernel_choose(&cfg, &key, path, &got, why, sizeof why);
  assert_memory_equal(&got, &table, sizeof got);
  assert_non_null(strstr(why, "table row"));
  assert_int_equal(rtm_kernel_cache_store(path, &key, &cached, 1.0), RTM_OK);
  rtm_kernel_choose(&cfg, &key, path, &got, why, sizeof why);
  assert_memory_equal(&got, &cached, sizeof got);
  assert_non_null(strstr(why, "tune cache"));
  /* an explicit key wins; the others still come from the cache */
  snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "sync");
  cfg.kernel.zblock = 0;
  rtm_kernel_choose(&cfg, &key, path, &got, why, sizeof why);
  assert_string_equal(got.halo, "sync");
  assert_int_equal(got.zblock, 0);
  assert_int_equal(got.stages, cached.stages);
  assert_int_equal(got.block[0], cached.block[0]);
  /* a winner's 4 stages (the iso tma kernel's alone) under another halo set explicitly:
   * the most that halo has, 3, not a refusal of the key left auto */
  const rtm_kernel_shape_t four = {"tma", 4, {128, 16}, 32};
  assert_int_equal(rtm_kernel_cache_store(path, &key, &four, 1.0), RTM_OK);
  snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "ldgsts");
  rtm_kernel_choose(&cfg, &key, path, &got, why, sizeof why);
  assert_string_equal(got.halo, "ldgsts");
  assert_int_equal(got.stages, 3);
  snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "tma");
  rtm_kernel_choose(&cfg, &key, path, &got, why, sizeof why);
  assert_int_equal(got.stages, 4);
  /* all explicit: "explicit" */
  cfg.kernel.stages = 2;
  cfg.kernel.block[0] = 32;
  cfg.kernel.block[1] = 16;
  rtm_kernel_choose(&cfg, &key, path, &got, why, sizeof why);
  assert_string_equal(why, "explicit");
  assert_int_equal(got.block[1], 16);
  remove_cache(dir, path);
}

RTM_TEST_MAIN(cmocka_unit_test(test_size_classes), cmocka_unit_test(test_shape_text_round_trip),
              cmocka_unit_test(test_table), cmocka_unit_test(test_cache_path),
              cmocka_unit_test(test_cache_round_trip),
              cmocka_unit_test(test_cache_concurrent_writers), cmocka_unit_test(test_cache_damaged),
              cmocka_unit_test(test_cache_sync_failure), cmocka_unit_test(test_choose))

#define _POSIX_C_SOURCE 200809L
/* `rtm3d model` with many shots, driven as a user runs it: a grid of 3 shots on the cpu
 * backend, whose patch of receivers moves with each shot and loses receivers at the
 * volume's edge, and whose gathers are resampled to output.trace_dt. Each shot's gather in
 * the many-shot file equals, bit for bit, the gather of a single-shot run at that source
 * (the propagator moved with rtm_propagator_set_shot runs as a fresh one); the file has the
 * many-shot layout (shot_count, /shots/<k>/source, receivers, traces/p; no /traces) and the
 * report the shot count and per-shot times. Shot files and a 1 x 1 grid write the same
 * layout; snapshots with many shots, and a shot outside the volume, are refused before
 * anything is written. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "rtm_io.h"
#include "rtm_status.h"
#include "rtm_test_io.h"
#include "rtm_test_main.h"

#define DIR "test_cli_shots.d"

/* The quickstart deck shrunk: 48 x 44 x 36 cells of 10 m, 150 steps of 2 ms written at
 * 4 ms, a patch of 15 x 3 receivers 20 m and 10 m apart at 100 m depth. */
static const char *const common =
    "--quiet --set backend.name=cpu --set grid.nx=48 --set grid.ny=44 --set grid.nz=36 "
    "--set boundary.width=6 --set time.steps=150 --set time.dt=0.002 --set output.trace_dt=0.004 "
    "--set snapshots.every=0 --set source.x=auto --set source.y=auto --set source.z=auto "
    "--set receivers.layout=patch --set receivers.x_first=auto --set receivers.x_step=20 "
    "--set receivers.x_count=15 --set receivers.y_first=auto --set receivers.y_step=10 "
    "--set receivers.y_count=3 --set receivers.z=100 --set output.dir=" DIR;

/* Runs `rtm3d model DECK common extra`; returns the exit status, stderr in DIR/err.txt. */
static int run_model(const char *extra) {
  char command[8192];
  snprintf(command, sizeof command, "%s model %s %s %s 2> " DIR "/err.txt", rtm_test_rtm3d,
           rtm_test_deck, common, extra);
  const int status = system(command);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char *text = calloc(65536, 1);
  assert_non_null(text);
  text[fread(text, 1, 65535, f)] = '\0';
  fclose(f);
  return text;
}

static void assert_err_contains(const char *needle) {
  char *text = read_text(DIR "/err.txt");
  if (!contains(text, needle)) fail_msg("expected \"%s\" in stderr:\n%s", needle, text);
  free(text);
}

static void assert_same_gather(const rtm_io_gather_t *a, const rtm_io_gather_t *b) {
  assert_memory_equal(a->source_m, b->source_m, sizeof a->source_m);
  assert_int_equal(a->count, b->count);
  assert_int_equal(a->samples, b->samples);
  assert_true(a->dt_s == b->dt_s);
  assert_memory_equal(a->receivers_m, b->receivers_m, (size_t)a->count * 3 * sizeof(double));
  assert_memory_equal(a->traces, b->traces, (size_t)a->count * (size_t)a->samples * sizeof(float));
}

/* The names validate would compare: /shots/<k>/traces/p for each shot, nothing else. */
static void assert_many_shot_listing(const char *path, int shots) {
  char **names = NULL;
  int count = 0;
  assert_int_equal(rtm_io_list_datasets(path, &names, &count), 0);
  assert_int_equal(count, shots);
  for (int k = 0; k < count; ++k) {
    char expected[64];
    snprintf(expected, sizeof expected, "/shots/%d/traces/p", k);
    assert_string_equal(names[k], expected);
    free(names[k]);
  }
  free(names);
}

static void test_shots_equal_single_shot_runs(void **state) {
  (void)state;
  /* shots at x = 40, 190 and 340 m, y = 200 m, z = 60 m: the first and last patches reach
   * past the volume's x faces (0 and 470 m) */
  assert_int_equal(run_model("--set shots.layout=grid --set shots.x_first=40 "
                             "--set shots.x_step=150 --set shots.x_count=3 --set shots.y_first=200 "
                             "--set shots.z=60 --set output.name=many"),
                   0);
  int shots = 0;
  assert_int_equal(rtm_io_shot_count(DIR "/many.h5", &shots), 0);
  assert_int_equal(shots, 3);
  assert_many_shot_listing(DIR "/many.h5", 3);
  int rank = 0;
  size_t dims[4];
  assert_int_equal(rtm_io_dataset_shape(DIR "/many.h5", "/traces/p", &rank, dims), RTM_ERR_INPUT);

  const int expected_receivers[3] = {3 * 10, 3 * 15, 3 * 14}; /* x from 0 m; to 460 m */
  for (int k = 0; k < shots; ++k) {
    rtm_io_gather_t many, single;
    assert_int_equal(rtm_io_read_shot(DIR "/many.h5", k, "p", &many), 0);
    assert_int_equal(many.count, expected_receivers[k]);
    assert_int_equal(many.samples, 76); /* 0.3 s at 4 ms */
    assert_true(many.source_m[0] == 40.0 + 150.0 * k && many.source_m[1] == 200.0 &&
                many.source_m[2] == 60.0);
    char extra[512];
    snprintf(extra, sizeof extra,
             "--set source.x=%.17g --set source.y=%.17g --set source.z=%.17g "
             "--set output.name=single%d",
             many.source_m[0], many.source_m[1], many.source_m[2], k);
    assert_int_equal(run_model(extra), 0);
    char single_path[64];
    snprintf(single_path, sizeof single_path, DIR "/single%d.h5", k);
    assert_int_equal(rtm_io_read_shot(single_path, 0, "p", &single), 0);
    assert_same_gather(&many, &single);
    rtm_io_gather_release(&many);
    rtm_io_gather_release(&single);
  }

  char *report = read_text(DIR "/many.json");
  if (!contains(report, "\"shots\": {\"count\": 3, \"set_shot_s\": [") ||
      !contains(report, "\"propagate_s\": [") || !contains(report, "\"write_s\": ["))
    fail_msg("no shots in the report:\n%s", report);
  free(report);
  report = read_text(DIR "/single0.json");
  assert_false(contains(report, "\"shots\""));
  free(report);
}

/* shots.layout = file, and a grid of one shot: the many-shot layout all the same. */
static void test_file_and_one_shot_grid(void **state) {
  (void)state;
  FILE *f = fopen(DIR "/shots.txt", "w");
  assert_non_null(f);
  fputs("# x y z (m)\n100 120 80\n\n300.5 250 90  # second\n", f);
  fclose(f);
  assert_int_equal(run_model("--set shots.layout=file --set shots.file=" DIR "/shots.txt "
                             "--set output.name=file"),
                   0);
  int shots = 0;
  assert_int_equal(rtm_io_shot_count(DIR "/file.h5", &shots), 0);
  assert_int_equal(shots, 2);
  rtm_io_gather_t gather;
  assert_int_equal(rtm_io_read_shot(DIR "/file.h5", 1, "p", &gather), 0);
  assert_true(gather.source_m[0] == 300.5 && gather.source_m[1] == 250.0 &&
              gather.source_m[2] == 90.0);
  rtm_io_gather_release(&gather);

  assert_int_equal(run_model("--set shots.layout=grid --set output.name=one"), 0);
  assert_int_equal(rtm_io_shot_count(DIR "/one.h5", &shots), 0);
  assert_int_equal(shots, 1);
  assert_many_shot_listing(DIR "/one.h5", 1);
}

/* Refusals before anything is written: snapshots with many shots (exit 2, the keys named),
 * a shot of a file outside the volume (exit 2, file:line). */
static void test_refusals(void **state) {
  (void)state;
  assert_int_equal(run_model("--set shots.layout=grid --set shots.x_count=2 "
                             "--set snapshots.every=50 --set output.name=refused"),
                   2);
  assert_err_contains("snapshots.every = 50 with shots.layout = grid: runs of many shots write no "
                      "snapshots");
  assert_false(file_exists(DIR "/refused.h5"));
  assert_false(file_exists(DIR "/refused.h5.partial"));

  FILE *f = fopen(DIR "/outside.txt", "w");
  assert_non_null(f);
  fputs("100 120 80\n100 120 900\n", f);
  fclose(f);
  assert_int_equal(run_model("--set shots.layout=file --set shots.file=" DIR "/outside.txt "
                             "--set output.name=refused"),
                   2);
  assert_err_contains(DIR "/outside.txt:2: shot (100, 120, 900) m lies outside the volume");
  assert_false(file_exists(DIR "/refused.h5"));
  assert_false(file_exists(DIR "/refused.h5.partial"));
}

static int make_dir(void **state) {
  (void)state;
  return system("rm -rf " DIR " && mkdir -p " DIR) == 0 ? 0 : -1;
}

static int remove_dir(void **state) {
  (void)state;
  return system("rm -rf " DIR) == 0 ? 0 : -1;
}

RTM_TEST_MAIN_CLI("test_cli_shots", 1,
                  cmocka_unit_test_setup(test_shots_equal_single_shot_runs, make_dir),
                  cmocka_unit_test_setup(test_file_and_one_shot_grid, make_dir),
                  cmocka_unit_test_setup_teardown(test_refusals, make_dir, remove_dir))

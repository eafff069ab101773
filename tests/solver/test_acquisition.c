/* test_acquisition - the shots and receivers of the config (acquisition.c): a grid of shots
 * with its autos, shot files and their errors (file:line), shots outside the volume refused,
 * the patch of receivers that moves with its shot (offsets, autos, receivers outside the
 * volume left out with one warning), and the plane layout as it was. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_points.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

#define SHOT_FILE "test_acquisition_shots.txt"

/* What every test starts from: 40 x 36 x 30 cells of 10 m from the origin (0, 0, 0) m,
 * absorbing layer 6 cells, so that the non-absorbing interior spans [60, 330] x [60, 290] x
 * [60, 230] m; the shots and the capture of stderr the test may use. */
typedef struct {
  rtm_config_t cfg;
  rtm_grid_t grid;
  rtm_shots_t shots;
  capture_t capture;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  if (!f) return -1;
  rtm_config_defaults(&f->cfg);
  f->cfg.grid.n[0] = 40;
  f->cfg.grid.n[1] = 36;
  f->cfg.grid.n[2] = 30;
  f->cfg.boundary.width_cells = 6;
  *state = f;
  return rtm_grid_init(&f->grid, f->cfg.grid.n, f->cfg.grid.spacing_m, f->cfg.grid.origin_m);
}

static int teardown(void **state) {
  fixture_t *f = *state;
  rtm_shots_release(&f->shots);
  free(f);
  remove(SHOT_FILE);
  return 0;
}

static void assert_position(const double *got, double x, double y, double z) {
  if (got[0] != x || got[1] != y || got[2] != z)
    fail_msg("position (%.17g, %.17g, %.17g), expected (%.17g, %.17g, %.17g)", got[0], got[1],
             got[2], x, y, z);
}

static int occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *at = strstr(text, needle); at; at = strstr(at + 1, needle))
    ++n;
  return n;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* layout = single: the one shot is the [source] position, autos at the centre */
static void test_single_shot_is_the_source(void **state) {
  fixture_t *f = *state;
  f->cfg.source.position_m[0] = 123.5;
  assert_int_equal(rtm_shots_init(&f->cfg, &f->grid, &f->shots), RTM_OK);
  assert_int_equal(f->shots.count, 1);
  double source_m[3];
  rtm_source_position(&f->cfg, &f->grid, source_m);
  assert_position(f->shots.source_m, source_m[0], source_m[1], source_m[2]);
  assert_position(f->shots.source_m, 123.5, 175.0, 145.0);
  rtm_shots_release(&f->shots);
  assert_null(f->shots.source_m);
}

/* Both autos: one shot in the middle of each of count equal parts of the interior (x: 270
 * m in 3 parts of 90 m; y: 230 m in 2 of 115 m); z auto = source.z. x runs fastest. */
static void test_grid_autos(void **state) {
  fixture_t *f = *state;
  f->cfg.shots.layout = RTM_SHOTS_GRID;
  f->cfg.shots.x_count = 3;
  f->cfg.shots.y_count = 2;
  f->cfg.source.position_m[2] = 40.0;
  assert_int_equal(rtm_shots_init(&f->cfg, &f->grid, &f->shots), RTM_OK);
  assert_int_equal(f->shots.count, 6);
  const double x[3] = {105.0, 195.0, 285.0}, y[2] = {117.5, 232.5};
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i)
      assert_position(f->shots.source_m + 3 * (j * 3 + i), x[i], y[j], 40.0);
  rtm_shots_release(&f->shots);

  /* one shot along an axis: the interior's centre; an explicit step centres the row */
  f->cfg.shots.x_count = 1;
  f->cfg.shots.y_count = 3;
  f->cfg.shots.y_step_m = 20.0;
  f->cfg.shots.z_m = 70.0;
  assert_int_equal(rtm_shots_init(&f->cfg, &f->grid, &f->shots), RTM_OK);
  assert_int_equal(f->shots.count, 3);
  for (int j = 0; j < 3; ++j)
    assert_position(f->shots.source_m + 3 * j, 195.0, 155.0 + 20.0 * j, 70.0);
  rtm_shots_release(&f->shots);
}

/* Explicit first and step place shot i at first + i step; the first is not centred. */
static void test_grid_explicit(void **state) {
  fixture_t *f = *state;
  f->cfg.shots.layout = RTM_SHOTS_GRID;
  f->cfg.shots.x_first_m = 12.5;
  f->cfg.shots.x_step_m = 33.0;
  f->cfg.shots.x_count = 4;
  f->cfg.shots.y_first_m = 0.0;
  f->cfg.shots.z_m = 290.0; /* the last cell */
  assert_int_equal(rtm_shots_init(&f->cfg, &f->grid, &f->shots), RTM_OK);
  assert_int_equal(f->shots.count, 4);
  for (int i = 0; i < 4; ++i)
    assert_position(f->shots.source_m + 3 * i, 12.5 + i * 33.0, 0.0, 290.0);
  rtm_shots_release(&f->shots);
}

/* A shot outside the volume is refused with its number and position, whether the keys or
 * their autos put it there; nothing is left allocated. */
static void test_grid_outside_refused(void **state) {
  fixture_t *f = *state;
  f->cfg.shots.layout = RTM_SHOTS_GRID;
  f->cfg.shots.x_step_m = 100.0; /* centred: 4 shots span 300 m around 195 m, from 45 to 345 m */
  f->cfg.shots.x_count = 4;
  f->cfg.shots.y_count = 2;
  f->cfg.shots.y_first_m = 100.0; /* y step auto = 115 m: 100 and 215 m */
  assert_int_equal(captured(&f->capture, rtm_shots_init(&f->cfg, &f->grid, &f->shots)), RTM_OK);
  rtm_shots_release(&f->shots);
  f->cfg.shots.x_step_m = 150.0; /* from -30 to 420 m: shot 0 is out first */
  assert_int_equal(captured(&f->capture, rtm_shots_init(&f->cfg, &f->grid, &f->shots)),
                   RTM_ERR_CONFIG);
  assert_contains(f->capture.text, "shots.layout = grid: shot 0 (x 0, y 0) at (-30, 100, 145) m "
                                   "lies outside the volume, [0, 390] x [0, 350] x [0, 290] m");
  assert_int_equal(f->shots.count, 0);
  assert_null(f->shots.source_m);
  f->cfg.shots.x_step_m = 50.0;
  f->cfg.shots.y_first_m = 300.0; /* 300 and 415 m: shot 4 is the first of row y 1 */
  assert_int_equal(captured(&f->capture, rtm_shots_init(&f->cfg, &f->grid, &f->shots)),
                   RTM_ERR_CONFIG);
  assert_contains(f->capture.text, "shot 4 (x 0, y 1) at (120, 415, 145) m lies outside");
}

/* A shot file: comments, blank lines and spaces are skipped; positions kept in order and
 * to the last digit. */
static void test_shot_file(void **state) {
  fixture_t *f = *state;
  f->cfg.shots.layout = RTM_SHOTS_FILE;
  snprintf(f->cfg.shots.file, sizeof f->cfg.shots.file, SHOT_FILE);
  /* a UTF-8 BOM first, as editors on Windows write it (decks accept one too) */
  write_text(SHOT_FILE,
             "\xEF\xBB\xBF  100 200 30   # the first\n# x y z\n\n0.1 0.2 0.3\n\t\n390 350 290\n");
  assert_int_equal(rtm_shots_init(&f->cfg, &f->grid, &f->shots), RTM_OK);
  assert_int_equal(f->shots.count, 3);
  assert_position(f->shots.source_m, 100.0, 200.0, 30.0);
  assert_position(f->shots.source_m + 3, 0.1, 0.2, 0.3);
  assert_position(f->shots.source_m + 6, 390.0, 350.0, 290.0);
}

/* Errors of a shot file name it and the line: bad text, a shot outside the volume, no shot
 * at all, a file that cannot be read. */
static void test_shot_file_errors(void **state) {
  fixture_t *f = *state;
  f->cfg.shots.layout = RTM_SHOTS_FILE;
  snprintf(f->cfg.shots.file, sizeof f->cfg.shots.file, SHOT_FILE);
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"10 10 10\n# two numbers\n10 20\n",
       SHOT_FILE ":3: expected three numbers 'x y z' in metres: found 2 values"},
      {"10 10 10 40\n", SHOT_FILE ":1: expected three numbers 'x y z' in metres: '40' follows z"},
      /* the cause named: the value, and what is wrong with it */
      {"10 10 nan\n",
       SHOT_FILE ":1: expected three numbers 'x y z' in metres: z = nan is not finite"},
      {"10 -inf 10\n", ":1: expected three numbers 'x y z' in metres: y = -inf is not finite"},
      {"1e400 10 10\n", ":1: expected three numbers 'x y z' in metres: x = 1e400 is out of range"},
      {"10 10 10 ; c\n",
       ":1: expected three numbers 'x y z' in metres: ';' starts no comment here: "
       "comments begin with '#'"},
      {"10 10 10 // c\n", ":1: expected three numbers 'x y z' in metres: '//' starts no comment"},
      {"10 ten 10\n", ":1: expected three numbers 'x y z' in metres: y = 'ten' is not a number"},
      {"10 0x10 10\n", ":1: expected three numbers 'x y z' in metres: y = '0x10' is not a number"},
      {"10 10 10\n\n400 10 10\n",
       SHOT_FILE ":3: shot (400, 10, 10) m lies outside the volume, [0, 390] x [0, 350] x [0, "
                 "290] m"},
      {"# nothing\n\n", "shots.file = '" SHOT_FILE "' lists no shot"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    write_text(SHOT_FILE, cases[c].text);
    assert_int_equal(captured(&f->capture, rtm_shots_init(&f->cfg, &f->grid, &f->shots)),
                     RTM_ERR_INPUT);
    assert_contains(f->capture.text, cases[c].message);
    assert_int_equal(f->shots.count, 0);
    assert_null(f->shots.source_m);
  }
  remove(SHOT_FILE);
  assert_int_equal(captured(&f->capture, rtm_shots_init(&f->cfg, &f->grid, &f->shots)),
                   RTM_ERR_INPUT);
  assert_contains(f->capture.text, "shots.file = '" SHOT_FILE "': No such file");
}

/* Patch positions: source + offset + i step, depth receivers.z (auto: the shot's). */
static void test_patch_offsets(void **state) {
  fixture_t *f = *state;
  f->cfg.receivers.layout = RTM_RECEIVERS_PATCH;
  f->cfg.receivers.x_first_m = -20.0;
  f->cfg.receivers.x_step_m = 15.0;
  f->cfg.receivers.x_count = 4;
  f->cfg.receivers.y_first_m = 5.0;
  f->cfg.receivers.y_step_m = 7.5;
  f->cfg.receivers.y_count = 2;
  const double shot[3] = {150.0, 100.0, 95.0};
  double *position = NULL;
  int count = 0;
  assert_int_equal(rtm_receiver_positions(&f->cfg, &f->grid, shot, &position, &count), RTM_OK);
  assert_int_equal(count, 8);
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 4; ++i)
      assert_position(position + 3 * (j * 4 + i), shot[0] + (-20.0 + i * 15.0),
                      shot[1] + (5.0 + j * 7.5), 95.0);
  free(position);
  f->cfg.receivers.z_m = 30.0;
  assert_int_equal(rtm_receiver_positions(&f->cfg, &f->grid, shot, &position, &count), RTM_OK);
  assert_int_equal(count, 8);
  for (int r = 0; r < count; ++r)
    assert_true(position[3 * r + 2] == 30.0);
  free(position);
}

/* Patch autos: step = the spacing, count = as many as a plane holds in the non-absorbing
 * interior (28 x 24), centred on the shot (a shot at the interior's centre on a node sees
 * exactly the plane's receivers). */
static void test_patch_autos(void **state) {
  fixture_t *f = *state;
  const double shot[3] = {195.0, 175.0, 100.0};
  double *patch = NULL, *plane = NULL;
  int patch_count = 0, plane_count = 0;
  f->cfg.receivers.layout = RTM_RECEIVERS_PATCH;
  assert_int_equal(rtm_receiver_positions(&f->cfg, &f->grid, shot, &patch, &patch_count), RTM_OK);
  f->cfg.receivers.layout = RTM_RECEIVERS_PLANE;
  assert_int_equal(rtm_receiver_positions(&f->cfg, &f->grid, shot, &plane, &plane_count), RTM_OK);
  assert_int_equal(patch_count, 28 * 24);
  assert_int_equal(plane_count, 28 * 24);
  for (int r = 0; r < patch_count; ++r)
    for (int a = 0; a < 3; ++a)
      assert_true(fabs(patch[3 * r + a] - plane[3 * r + a]) < 1e-9);
  assert_position(patch, 60.0, 60.0, 100.0);
  free(patch);
  free(plane);
}

/* Receivers of the patch outside the volume are left out, with one warning counting them;
 * a patch with none inside is an error naming the shot. */
static void test_patch_drops_outside(void **state) {
  fixture_t *f = *state;
  f->cfg.receivers.layout = RTM_RECEIVERS_PATCH;
  f->cfg.receivers.x_count = 11; /* offsets -50 .. 50 m */
  f->cfg.receivers.y_count = 3;  /* offsets -10 .. 10 m */
  const double near_edge[3] = {20.0, 345.0, 50.0};
  double *position = NULL;
  int count = 0;
  assert_int_equal(captured(&f->capture, rtm_receiver_positions(&f->cfg, &f->grid, near_edge,
                                                                &position, &count)),
                   RTM_OK);
  /* x: -30 .. 70 m keeps 8 of 11 (0 .. 70 m); y: 335, 345, 355 m keeps 2 of 3 */
  assert_int_equal(count, 16);
  assert_contains(f->capture.text, "warning: receivers.layout = patch: 17 of the 33 receivers "
                                   "around the shot at (20, 345, 50) m lie outside the volume");
  assert_int_equal(occurrences(f->capture.text, "warning"), 1);
  for (int r = 0; r < count; ++r) {
    assert_true(position[3 * r] >= 0.0 && position[3 * r] <= 70.0);
    assert_true(position[3 * r + 1] == 335.0 || position[3 * r + 1] == 345.0);
  }
  assert_position(position, 0.0, 335.0, 50.0);
  free(position);

  f->cfg.receivers.x_first_m = 500.0;
  position = NULL;
  assert_int_equal(captured(&f->capture, rtm_receiver_positions(&f->cfg, &f->grid, near_edge,
                                                                &position, &count)),
                   RTM_ERR_CONFIG);
  assert_contains(f->capture.text, "receivers.layout = patch: none of the 33 receivers around the "
                                   "shot at (20, 345, 50) m lies inside the volume");
  assert_null(position);
}

/* A patch is checked around every shot of the run, never around a stand-in at the volume's
 * centre (a probe: shots near an edge whose patches reach inward were refused, the message
 * naming a shot at the centre that was none of the run's): the propagator is made ready and
 * weighed at the run's shot whose patch keeps the most receivers, and a shot whose patch
 * lies wholly outside is refused by rtm_shots_init, named by its index and place. */
static void test_patch_at_every_shot(void **state) {
  fixture_t *f = *state;
  f->cfg.shots.layout = RTM_SHOTS_GRID;
  f->cfg.shots.x_first_m = 20.0;
  f->cfg.shots.x_step_m = 10.0;
  f->cfg.shots.x_count = 2;
  f->cfg.shots.y_first_m = 100.0;
  f->cfg.shots.y_count = 1;
  f->cfg.shots.z_m = 50.0;
  f->cfg.receivers.layout = RTM_RECEIVERS_PATCH;
  f->cfg.receivers.x_first_m = 350.0; /* 370 .. 390 m and 380 .. 400 m: inside at both shots */
  f->cfg.receivers.x_step_m = 10.0;
  f->cfg.receivers.x_count = 3;
  f->cfg.receivers.y_first_m = 0.0;
  f->cfg.receivers.y_count = 1;
  double at[3];
  assert_int_equal(captured(&f->capture, rtm_sizing_shot_position(&f->cfg, &f->grid, at)), RTM_OK);
  assert_position(at, 20.0, 100.0, 50.0); /* all 3 kept; 2 at the second shot */
  assert_int_equal(captured(&f->capture, rtm_shots_init(&f->cfg, &f->grid, &f->shots)), RTM_OK);
  assert_int_equal(f->shots.count, 2);
  rtm_shots_release(&f->shots);
  f->cfg.receivers.x_first_m = -40.0; /* -20 .. 0 m keeps 1; -10 .. 10 m keeps 2 */
  assert_int_equal(captured(&f->capture, rtm_sizing_shot_position(&f->cfg, &f->grid, at)), RTM_OK);
  assert_position(at, 30.0, 100.0, 50.0);

  f->cfg.receivers.x_first_m = 365.0; /* 385 .. 405 m at shot 0; 395 .. 415 m at shot 1 */
  assert_int_equal(captured(&f->capture, rtm_shots_init(&f->cfg, &f->grid, &f->shots)),
                   RTM_ERR_CONFIG);
  assert_contains(f->capture.text, "receivers.layout = patch: none of the receivers around shot 1 "
                                   "at (30, 100, 50) m lies inside the volume");
  assert_int_equal(f->shots.count, 0);
}

/* The plane layout as before the patch: autos from the inner edge of the layer, the
 * depth of the source; the receivers file read in order, each receiver inside the volume
 * (checked at its line, as shots.file's shots are). */
static void test_plane_and_file(void **state) {
  fixture_t *f = *state;
  const double shot[3] = {101.0, 99.0, 77.0};
  double *position = NULL;
  int count = 0;
  f->cfg.receivers.x_first_m = 75.0;
  f->cfg.receivers.x_step_m = 20.0;
  assert_int_equal(rtm_receiver_positions(&f->cfg, &f->grid, shot, &position, &count), RTM_OK);
  /* x: 75 .. 315 m (13 receivers, the last below the inner edge at 330 m); y: 60 .. 290 m */
  assert_int_equal(count, 13 * 24);
  assert_position(position, 75.0, 60.0, 77.0);
  assert_position(position + 3 * (13 * 24 - 1), 75.0 + 12 * 20.0, 60.0 + 23 * 10.0, 77.0);
  free(position);
  position = NULL;
  /* a step so fine that the count leaves int's range: refused saying how many, not "no
   * receiver fits" (the count was converted to int past its range) */
  f->cfg.receivers.x_step_m = 1e-300;
  assert_int_equal(
      captured(&f->capture, rtm_receiver_positions(&f->cfg, &f->grid, shot, &position, &count)),
      RTM_ERR_CONFIG);
  assert_contains(f->capture.text, "receivers.x_step = 1e-300 m puts");
  assert_contains(f->capture.text, "more than 1e8");
  assert_null(position);
  f->cfg.receivers.x_step_m = 20.0;

  f->cfg.receivers.layout = RTM_RECEIVERS_FILE;
  snprintf(f->cfg.receivers.file, sizeof f->cfg.receivers.file, SHOT_FILE);
  write_text(SHOT_FILE, "1 2 3\n5 0 0\n");
  assert_int_equal(rtm_receiver_positions(&f->cfg, &f->grid, shot, &position, &count), RTM_OK);
  assert_int_equal(count, 2);
  assert_position(position + 3, 5.0, 0.0, 0.0);
  free(position);
  position = NULL;
  /* one outside the volume is named by file:line, as a shot is (it was "receiver 1: x =
   * -5000 m lies outside the grid", later and without the file) */
  write_text(SHOT_FILE, "1 2 3\n-5000 0 0\n");
  assert_int_equal(
      captured(&f->capture, rtm_receiver_positions(&f->cfg, &f->grid, shot, &position, &count)),
      RTM_ERR_INPUT);
  assert_contains(f->capture.text,
                  SHOT_FILE ":2: receiver (-5000, 0, 0) m lies outside the volume");
  assert_null(position);
  remove(SHOT_FILE);
}

#define FIXED(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

RTM_TEST_MAIN(FIXED(test_single_shot_is_the_source), FIXED(test_grid_autos),
              FIXED(test_grid_explicit), FIXED(test_grid_outside_refused), FIXED(test_shot_file),
              FIXED(test_shot_file_errors), FIXED(test_patch_offsets), FIXED(test_patch_autos),
              FIXED(test_patch_drops_outside), FIXED(test_patch_at_every_shot),
              FIXED(test_plane_and_file))

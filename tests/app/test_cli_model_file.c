#define _POSIX_C_SOURCE 200809L
/* `rtm3d model` with model.file: the app reads the file through io and hands its arrays to
 * the solver (app/solver_io.c). The file wins over the [model] constants: dt = auto must
 * come from the file's fastest speed (cfl h_min / vp_max; tti: vp_max sqrt(1 + 2 eps_max)),
 * to 1e-12 relative (the report prints 15 digits), where the constant model.vp = 1000
 * would give a dt 1.5 to 4.5 times longer. A velocity of 0, or of 1e30 m/s, in the file is
 * refused before the run with the file, the key whose range it breaks and the cell named,
 * exit 2, and no output file left behind. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "rtm_test_io.h"
#include "rtm_test_main.h"
#include "rtm_io.h"

#define DIR "test_cli_model_file.d"
enum { NX = 30, NY = 26, NZ = 22 };

static const size_t cells = (size_t)NX * NY * NZ;

/* Runs `rtm3d model` on the deck shrunk to the model's grid; returns the exit status and
 * leaves stderr in DIR/err.txt. */
static int run_model(const char *model_path, const char *equation) {
  char command[4096];
  snprintf(command, sizeof command,
           "%s model %s --quiet --set backend.name=cpu --set grid.nx=%d --set grid.ny=%d "
           "--set grid.nz=%d --set source.x=auto --set source.y=auto --set source.z=auto "
           "--set receivers.layout=none --set boundary.width=4 --set time.steps=10 "
           "--set snapshots.every=0 --set model.vp=1000 --set physics.equation=%s "
           "--set model.file=%s --set output.dir=" DIR " --set output.name=run --force 2> " DIR
           "/err.txt",
           rtm_test_rtm3d, rtm_test_deck, NX, NY, NZ, equation, model_path);
  const int status = system(command);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* dt_s from the run report DIR/run.json. */
static double report_dt(void) {
  FILE *f = fopen(DIR "/run.json", "r");
  assert_non_null(f);
  char text[16384];
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  const char *key = strstr(text, "\"dt_s\": ");
  assert_non_null(key);
  return strtod(key + strlen("\"dt_s\": "), NULL);
}

static void write_model(const char *path, float *const values[RTM_IO_PARAMETERS]) {
  const rtm_io_volume_t volume = {
      .n = {NX, NY, NZ}, .spacing_m = {10.0, 10.0, 10.0}, .z_offset = 0, .nz_local = NZ};
  assert_int_equal(rtm_io_write_model(path, &volume, (const float *const *)values), 0);
}

static float *constant_array(float value) {
  float *a = malloc(cells * sizeof *a);
  assert_non_null(a);
  for (size_t i = 0; i < cells; ++i)
    a[i] = value;
  return a;
}

static void test_file_wins_over_constants(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_file_wins_over_constants");
  float *model[RTM_IO_PARAMETERS] = {constant_array(0.0f)};
  double vp_max = 0.0;
  for (size_t i = 0; i < cells; ++i) {
    model[RTM_IO_VP][i] = (float)rtm_test_uniform(&rng, 1500.0, 4500.0);
    vp_max = fmax(vp_max, model[RTM_IO_VP][i]);
  }
  write_model(DIR "/iso.h5", model);
  assert_int_equal(run_model(DIR "/iso.h5", "iso"), 0);
  const double cfl = 0.4, h = 10.0; /* the quickstart deck's cfl, the grid's spacing */
  assert_true(fabs(report_dt() / (cfl * h / vp_max) - 1.0) < 1e-12);

  /* tti: the anisotropic parameters come from the file as well */
  model[RTM_IO_EPSILON] = constant_array(0.2f);
  model[RTM_IO_DELTA] = constant_array(0.1f);
  model[RTM_IO_THETA] = constant_array(30.0f);
  model[RTM_IO_PHI] = constant_array(20.0f);
  write_model(DIR "/tti.h5", model);
  assert_int_equal(run_model(DIR "/tti.h5", "tti"), 0);
  const double v_fast = vp_max * sqrt(1.0 + 2.0 * (double)0.2f);
  assert_true(fabs(report_dt() / (cfl * h / v_fast) - 1.0) < 1e-12);
  rtm_io_model_release(model);
}

static void test_bad_velocity_names_the_file(void **state) {
  (void)state;
  float *model[RTM_IO_PARAMETERS] = {constant_array(2000.0f)};
  const size_t cell = (5 * (size_t)NY + 7) * NX + 3; /* ix 3, iy 7, iz 5 */
  model[RTM_IO_VP][cell] = 0.0f;
  write_model(DIR "/zero.h5", model);
  remove(DIR "/run.h5");
  assert_int_equal(run_model(DIR "/zero.h5", "iso"), 2);
  FILE *f = fopen(DIR "/err.txt", "r");
  assert_non_null(f);
  char text[4096];
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  if (!contains(text, "outside (0, 20000] (the range of model.vp), the first 0 at [z=5][y=7][x=3]"))
    printf("%s\n", text);
  assert_true(contains(text, "model file " DIR "/zero.h5: dataset /vp has 1 value outside "
                             "(0, 20000] (the range of model.vp), the first 0 at [z=5][y=7][x=3]"));
  assert_false(file_exists(DIR "/run.h5"));
  assert_false(file_exists(DIR "/run.h5.partial"));
  /* one cell at 1e30 m/s ran before (dt 4e-30 s, all-zero traces): refused the same way */
  model[RTM_IO_VP][cell] = 1e30f;
  write_model(DIR "/fast.h5", model);
  assert_int_equal(run_model(DIR "/fast.h5", "iso"), 2);
  f = fopen(DIR "/err.txt", "r");
  assert_non_null(f);
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  assert_true(contains(text, "the first 1e+30 at [z=5][y=7][x=3]"));
  assert_false(file_exists(DIR "/run.h5"));
  rtm_io_model_release(model);
}

/* DIR holds the model files and the runs; test_bad_velocity_names_the_file clears it. */
static int make_dir(void **state) {
  (void)state;
  return system("mkdir -p " DIR) == 0 ? 0 : -1;
}

static int remove_dir(void **state) {
  (void)state;
  return system("rm -rf " DIR) == 0 ? 0 : -1;
}

RTM_TEST_MAIN_CLI("test_cli_model_file", 1,
                  cmocka_unit_test_setup(test_file_wins_over_constants, make_dir),
                  cmocka_unit_test_setup_teardown(test_bad_velocity_names_the_file, make_dir,
                                                  remove_dir))

/* HDF5 models: round trip (bit-equal, whole volume and a local z-range), and every input
 * error the reader must name: shape, missing dataset, corrupt or truncated file, spacing,
 * non-finite values. (Constant models: tests/solver/test_model_parameters.c; model.file
 * through `rtm3d model`: tests/app/test_cli_model_file.c.) */
#include "rtm_test_io.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <hdf5.h>

#include "rtm_io.h"
#include "rtm_status.h"

#define MODEL_PATH "test_io_model.h5"

typedef struct {
  rtm_test_rng_t rng;
  rtm_io_volume_t volume; /* 13 x 9 x 11: odd sizes catch x/z mix-ups */
  float *model[RTM_IO_PARAMETERS];
} fixture_t;

static size_t volume_cells(const rtm_io_volume_t *volume) {
  return (size_t)volume->n[0] * volume->n[1] * volume->nz_local;
}

static float *random_array(rtm_test_rng_t *rng, size_t count, double lo, double hi) {
  float *a = malloc(count * sizeof *a);
  assert_non_null(a);
  for (size_t i = 0; i < count; ++i)
    a[i] = (float)rtm_test_uniform(rng, lo, hi);
  return a;
}

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  f->volume = (rtm_io_volume_t){.n = {13, 9, 11},
                                .spacing_m = {10.0, 12.5, 7.5},
                                .origin_m = {100.0, -50.0, 0.0},
                                .z_offset = 0,
                                .nz_local = 11};
  f->rng = rtm_test_seed("test_io_model");
  size_t cells = volume_cells(&f->volume);
  f->model[RTM_IO_VP] = random_array(&f->rng, cells, 1500.0, 4500.0);
  f->model[RTM_IO_EPSILON] = random_array(&f->rng, cells, 0.0, 0.3);
  f->model[RTM_IO_DELTA] = random_array(&f->rng, cells, -0.1, 0.1);
  f->model[RTM_IO_THETA] = random_array(&f->rng, cells, 0.0, 90.0);
  f->model[RTM_IO_PHI] = random_array(&f->rng, cells, -180.0, 180.0);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  rtm_io_model_release(f->model);
  free(f);
  remove(MODEL_PATH);
  return 0;
}

/* Runs rtm_io_read_model with stderr captured; returns the status, *text what it printed. */
static int read_capturing(const char *path, const rtm_io_volume_t *volume, rtm_equation_t equation,
                          float *model[RTM_IO_PARAMETERS], char **text) {
  capture_t c;
  capture_begin(&c, 2);
  int status = rtm_io_read_model(path, volume, equation, model);
  *text = capture_end(&c);
  return status;
}

static void assert_failed_cleanly(float *const model[RTM_IO_PARAMETERS]) {
  for (int i = 0; i < RTM_IO_PARAMETERS; ++i)
    assert_null(model[i]);
}

static int write_model(const char *path, const rtm_io_volume_t *volume,
                       float *const model[RTM_IO_PARAMETERS]) {
  return rtm_io_write_model(path, volume, (const float *const *)model);
}

static void test_round_trip_bit_equal(void **state) {
  fixture_t *f = *state;
  float *back[RTM_IO_PARAMETERS] = {0};
  const size_t cells = volume_cells(&f->volume);
  assert_int_equal(write_model(MODEL_PATH, &f->volume, f->model), RTM_OK);
  assert_false(file_exists(MODEL_PATH ".partial"));
  assert_int_equal(rtm_io_read_model(MODEL_PATH, &f->volume, RTM_EQUATION_TTI, back), RTM_OK);
  /* float32 stored as float32: exactly the same bits */
  assert_memory_equal(back[RTM_IO_VP], f->model[RTM_IO_VP], cells * sizeof(float));
  assert_memory_equal(back[RTM_IO_EPSILON], f->model[RTM_IO_EPSILON], cells * sizeof(float));
  assert_memory_equal(back[RTM_IO_DELTA], f->model[RTM_IO_DELTA], cells * sizeof(float));
  assert_memory_equal(back[RTM_IO_THETA], f->model[RTM_IO_THETA], cells * sizeof(float));
  assert_memory_equal(back[RTM_IO_PHI], f->model[RTM_IO_PHI], cells * sizeof(float));
  rtm_io_model_release(back);
}

static void test_local_z_range_hyperslab(void **state) {
  fixture_t *f = *state;
  float *back[RTM_IO_PARAMETERS] = {0};
  rtm_io_volume_t local = f->volume;
  const size_t plane = (size_t)f->volume.n[0] * (size_t)f->volume.n[1];
  assert_int_equal(write_model(MODEL_PATH, &f->volume, f->model), RTM_OK);
  local.z_offset = 3;
  local.nz_local = 5;
  assert_int_equal(rtm_io_read_model(MODEL_PATH, &local, RTM_EQUATION_VTI, back), RTM_OK);
  assert_memory_equal(back[RTM_IO_VP], f->model[RTM_IO_VP] + 3 * plane, 5 * plane * sizeof(float));
  assert_memory_equal(back[RTM_IO_DELTA], f->model[RTM_IO_DELTA] + 3 * plane,
                      5 * plane * sizeof(float));
  assert_null(back[RTM_IO_THETA]); /* vti reads only what it needs */
  assert_null(back[RTM_IO_PHI]);
  rtm_io_model_release(back);
}

static void test_wrong_shape(void **state) {
  fixture_t *f = *state;
  float *back[RTM_IO_PARAMETERS] = {0};
  rtm_io_volume_t other = f->volume;
  char *text = NULL;
  assert_int_equal(write_model(MODEL_PATH, &f->volume, f->model), RTM_OK);
  other.n[2] = other.nz_local = 12;
  assert_int_equal(read_capturing(MODEL_PATH, &other, RTM_EQUATION_ISO, back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "/vp"));
  assert_true(contains(text, "[11][9][13]")); /* what the file has, [nz][ny][nx] */
  assert_true(contains(text, "[12][9][13]")); /* what the grid needs */
  assert_failed_cleanly(back);
  free(text);
}

static void test_missing_dataset(void **state) {
  fixture_t *f = *state;
  float *iso[RTM_IO_PARAMETERS] = {f->model[RTM_IO_VP]}, *back[RTM_IO_PARAMETERS] = {0};
  char *text = NULL;
  assert_int_equal(write_model(MODEL_PATH, &f->volume, iso), RTM_OK);
  assert_int_equal(read_capturing(MODEL_PATH, &f->volume, RTM_EQUATION_VTI, back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "/epsilon"));
  assert_failed_cleanly(back);
  free(text);
}

static void test_corrupt_and_missing_files(void **state) {
  fixture_t *f = *state;
  float *back[RTM_IO_PARAMETERS] = {0};
  char *text = NULL;
  /* garbage bytes under an .h5 name */
  FILE *garbage = fopen(MODEL_PATH, "wb");
  assert_non_null(garbage);
  for (int i = 0; i < 4096; ++i)
    fputc((int)(rtm_test_uniform(&f->rng, 0.0, 1.0) * 256.0), garbage);
  fclose(garbage);
  assert_int_equal(read_capturing(MODEL_PATH, &f->volume, RTM_EQUATION_ISO, back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "not an HDF5 file"));
  assert_failed_cleanly(back);
  free(text);

  /* a real model cut in half: the signature survives, the data does not */
  assert_int_equal(write_model(MODEL_PATH, &f->volume, f->model), RTM_OK);
  struct stat info;
  assert_int_equal(stat(MODEL_PATH, &info), 0);
  assert_int_equal(truncate(MODEL_PATH, info.st_size / 2), 0);
  assert_int_equal(read_capturing(MODEL_PATH, &f->volume, RTM_EQUATION_TTI, back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_failed_cleanly(back);
  free(text);

  remove(MODEL_PATH);
  assert_int_equal(read_capturing(MODEL_PATH, &f->volume, RTM_EQUATION_ISO, back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  free(text);
}

static void test_spacing_mismatch(void **state) {
  fixture_t *f = *state;
  float *back[RTM_IO_PARAMETERS] = {0};
  rtm_io_volume_t other = f->volume;
  char *text = NULL;
  assert_int_equal(write_model(MODEL_PATH, &f->volume, f->model), RTM_OK);
  /* 1e-8 relative is rounding (e.g. metres through text): accepted */
  other.spacing_m[1] = f->volume.spacing_m[1] * (1.0 + 1e-8);
  assert_int_equal(read_capturing(MODEL_PATH, &other, RTM_EQUATION_ISO, back, &text), RTM_OK);
  rtm_io_model_release(back);
  free(text);
  /* 1e-4 relative is a different grid: refused, both values named */
  other.spacing_m[1] = 12.5 * (1.0 + 1e-4);
  assert_int_equal(read_capturing(MODEL_PATH, &other, RTM_EQUATION_ISO, back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "spacing"));
  assert_true(contains(text, "12.5,"));    /* the file's dy */
  assert_true(contains(text, "12.50125")); /* the config's dy */
  assert_failed_cleanly(back);
  free(text);

  /* no spacing attribute at all */
  hid_t file = H5Fopen(MODEL_PATH, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(file >= 0);
  assert_true(H5Adelete(file, "spacing") >= 0);
  H5Fclose(file);
  assert_int_equal(read_capturing(MODEL_PATH, &f->volume, RTM_EQUATION_ISO, back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, "spacing"));
  assert_true(contains(text, MODEL_PATH));
  free(text);
}

static void test_non_finite_value(void **state) {
  fixture_t *f = *state;
  float *back[RTM_IO_PARAMETERS] = {0};
  char *text = NULL;
  const size_t nx = 13, ny = 9;
  /* cell x = 4, y = 7, z = 6 */
  const size_t cell = (6 * ny + 7) * nx + 4;
  float saved = f->model[RTM_IO_DELTA][cell];
  f->model[RTM_IO_DELTA][cell] = NAN;
  assert_int_equal(write_model(MODEL_PATH, &f->volume, f->model), RTM_OK);
  f->model[RTM_IO_DELTA][cell] = saved;
  assert_int_equal(read_capturing(MODEL_PATH, &f->volume, RTM_EQUATION_VTI, back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "/delta"));
  assert_true(contains(text, "[z=6][y=7][x=4]"));
  assert_failed_cleanly(back);
  free(text);
  /* iso does not read delta, so the same file is fine for it */
  assert_int_equal(read_capturing(MODEL_PATH, &f->volume, RTM_EQUATION_ISO, back, &text), RTM_OK);
  rtm_io_model_release(back);
  free(text);
}

/* A model written by another tool in float64: HDF5 converts it, values round to float. */
static void test_float64_model_is_converted(void **state) {
  fixture_t *f = *state;
  float *back[RTM_IO_PARAMETERS] = {0};
  const size_t cells = volume_cells(&f->volume);
  double *vp = malloc(cells * sizeof *vp);
  for (size_t i = 0; i < cells; ++i)
    vp[i] = rtm_test_uniform(&f->rng, 1500.0, 4500.0);
  hid_t file = H5Fcreate(MODEL_PATH, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[3] = {11, 9, 13}, three = 3;
  hid_t space = H5Screate_simple(3, dims, NULL), attr_space = H5Screate_simple(1, &three, NULL);
  hid_t dataset =
      H5Dcreate2(file, "vp", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, vp) >= 0);
  hid_t attr = H5Acreate2(file, "spacing", H5T_IEEE_F64LE, attr_space, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(H5Awrite(attr, H5T_NATIVE_DOUBLE, f->volume.spacing_m) >= 0);
  H5Aclose(attr);
  H5Dclose(dataset);
  H5Sclose(attr_space);
  H5Sclose(space);
  H5Fclose(file);
  assert_int_equal(rtm_io_read_model(MODEL_PATH, &f->volume, RTM_EQUATION_ISO, back), RTM_OK);
  for (size_t i = 0; i < cells; ++i)
    assert_true(back[RTM_IO_VP][i] == (float)vp[i]);
  rtm_io_model_release(back);
  free(vp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip_bit_equal, setup, teardown),
      cmocka_unit_test_setup_teardown(test_local_z_range_hyperslab, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wrong_shape, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_dataset, setup, teardown),
      cmocka_unit_test_setup_teardown(test_corrupt_and_missing_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_spacing_mismatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_non_finite_value, setup, teardown),
      cmocka_unit_test_setup_teardown(test_float64_model_is_converted, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

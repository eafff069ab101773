/* HDF5 models: round trip (bit-equal, whole volume and a local z-range), constants from the
 * config, and every input error the reader must name: shape, missing dataset, corrupt or
 * truncated file, spacing, non-finite values. */
#include "io_test_util.h"

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
  rtm_grid_t grid; /* 13 x 9 x 11: odd sizes catch x/z mix-ups */
  rtm_model_t model;
} fixture_t;

static float *random_array(rtm_test_rng_t *rng, size_t count, double lo, double hi) {
  float *a = malloc(count * sizeof *a);
  assert_non_null(a);
  for (size_t i = 0; i < count; ++i)
    a[i] = (float)rtm_test_uniform(rng, lo, hi);
  return a;
}

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  const int n[3] = {13, 9, 11};
  const double spacing[3] = {10.0, 12.5, 7.5}, origin[3] = {100.0, -50.0, 0.0};
  f->rng = rtm_test_seed("test_io_model");
  if (rtm_grid_init(&f->grid, n, spacing, origin) != RTM_OK) return -1;
  size_t cells = rtm_grid_interior_cells(&f->grid);
  f->model.vp = random_array(&f->rng, cells, 1500.0, 4500.0);
  f->model.epsilon = random_array(&f->rng, cells, 0.0, 0.3);
  f->model.delta = random_array(&f->rng, cells, -0.1, 0.1);
  f->model.theta_deg = random_array(&f->rng, cells, 0.0, 90.0);
  f->model.phi_deg = random_array(&f->rng, cells, -180.0, 180.0);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  rtm_model_release(&f->model);
  free(f);
  remove(MODEL_PATH);
  return 0;
}

/* Runs rtm_io_read_model with stderr captured; returns the status, *text what it printed. */
static int read_capturing(const char *path, const rtm_grid_t *grid, rtm_equation_t equation,
                          rtm_model_t *model, char **text) {
  capture_t c;
  capture_begin(&c, 2);
  int status = rtm_io_read_model(path, grid, equation, model);
  *text = capture_end(&c);
  return status;
}

static void assert_failed_cleanly(const rtm_model_t *model) {
  assert_null(model->vp);
  assert_null(model->epsilon);
  assert_null(model->delta);
  assert_null(model->theta_deg);
  assert_null(model->phi_deg);
}

static void test_round_trip_bit_equal(void **state) {
  fixture_t *f = *state;
  rtm_model_t back = {0};
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  assert_int_equal(rtm_io_write_model(MODEL_PATH, &f->grid, &f->model), RTM_OK);
  assert_false(file_exists(MODEL_PATH ".partial"));
  assert_int_equal(rtm_io_read_model(MODEL_PATH, &f->grid, RTM_EQUATION_TTI, &back), RTM_OK);
  /* float32 stored as float32: exactly the same bits */
  assert_memory_equal(back.vp, f->model.vp, cells * sizeof(float));
  assert_memory_equal(back.epsilon, f->model.epsilon, cells * sizeof(float));
  assert_memory_equal(back.delta, f->model.delta, cells * sizeof(float));
  assert_memory_equal(back.theta_deg, f->model.theta_deg, cells * sizeof(float));
  assert_memory_equal(back.phi_deg, f->model.phi_deg, cells * sizeof(float));
  rtm_model_release(&back);
}

static void test_local_z_range_hyperslab(void **state) {
  fixture_t *f = *state;
  rtm_model_t back = {0};
  rtm_grid_t local = f->grid;
  const size_t plane = (size_t)f->grid.n[0] * (size_t)f->grid.n[1];
  assert_int_equal(rtm_io_write_model(MODEL_PATH, &f->grid, &f->model), RTM_OK);
  assert_int_equal(rtm_grid_set_z_range(&local, 3, 5), RTM_OK);
  assert_int_equal(rtm_io_read_model(MODEL_PATH, &local, RTM_EQUATION_VTI, &back), RTM_OK);
  assert_memory_equal(back.vp, f->model.vp + 3 * plane, 5 * plane * sizeof(float));
  assert_memory_equal(back.delta, f->model.delta + 3 * plane, 5 * plane * sizeof(float));
  assert_null(back.theta_deg); /* vti reads only what it needs */
  assert_null(back.phi_deg);
  /* the range is of the slab just read, so it must match the slab exactly */
  double vp_max = 0.0;
  for (size_t i = 0; i < 5 * plane; ++i)
    if (f->model.vp[3 * plane + i] > vp_max) vp_max = f->model.vp[3 * plane + i];
  assert_true(back.vp_max == vp_max);
  rtm_model_release(&back);
}

static void test_wrong_shape(void **state) {
  fixture_t *f = *state;
  rtm_model_t back = {0};
  rtm_grid_t other;
  char *text = NULL;
  const int n[3] = {13, 9, 12};
  assert_int_equal(rtm_io_write_model(MODEL_PATH, &f->grid, &f->model), RTM_OK);
  assert_int_equal(rtm_grid_init(&other, n, f->grid.spacing_m, f->grid.origin_m), RTM_OK);
  assert_int_equal(read_capturing(MODEL_PATH, &other, RTM_EQUATION_ISO, &back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "/vp"));
  assert_true(contains(text, "[11][9][13]")); /* what the file has, [nz][ny][nx] */
  assert_true(contains(text, "[12][9][13]")); /* what the grid needs */
  assert_failed_cleanly(&back);
  free(text);
}

static void test_missing_dataset(void **state) {
  fixture_t *f = *state;
  rtm_model_t iso = {.vp = f->model.vp}, back = {0};
  char *text = NULL;
  assert_int_equal(rtm_io_write_model(MODEL_PATH, &f->grid, &iso), RTM_OK);
  assert_int_equal(read_capturing(MODEL_PATH, &f->grid, RTM_EQUATION_VTI, &back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "/epsilon"));
  assert_failed_cleanly(&back);
  free(text);
}

static void test_corrupt_and_missing_files(void **state) {
  fixture_t *f = *state;
  rtm_model_t back = {0};
  char *text = NULL;
  /* garbage bytes under an .h5 name */
  FILE *garbage = fopen(MODEL_PATH, "wb");
  assert_non_null(garbage);
  for (int i = 0; i < 4096; ++i)
    fputc((int)(rtm_test_uniform(&f->rng, 0.0, 1.0) * 256.0), garbage);
  fclose(garbage);
  assert_int_equal(read_capturing(MODEL_PATH, &f->grid, RTM_EQUATION_ISO, &back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "not an HDF5 file"));
  assert_failed_cleanly(&back);
  free(text);

  /* a real model cut in half: the signature survives, the data does not */
  assert_int_equal(rtm_io_write_model(MODEL_PATH, &f->grid, &f->model), RTM_OK);
  struct stat info;
  assert_int_equal(stat(MODEL_PATH, &info), 0);
  assert_int_equal(truncate(MODEL_PATH, info.st_size / 2), 0);
  assert_int_equal(read_capturing(MODEL_PATH, &f->grid, RTM_EQUATION_TTI, &back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_failed_cleanly(&back);
  free(text);

  remove(MODEL_PATH);
  assert_int_equal(read_capturing(MODEL_PATH, &f->grid, RTM_EQUATION_ISO, &back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  free(text);
}

static void test_spacing_mismatch(void **state) {
  fixture_t *f = *state;
  rtm_model_t back = {0};
  rtm_grid_t other = f->grid;
  char *text = NULL;
  assert_int_equal(rtm_io_write_model(MODEL_PATH, &f->grid, &f->model), RTM_OK);
  /* 1e-8 relative is rounding (e.g. metres through text): accepted */
  other.spacing_m[1] = f->grid.spacing_m[1] * (1.0 + 1e-8);
  assert_int_equal(read_capturing(MODEL_PATH, &other, RTM_EQUATION_ISO, &back, &text), RTM_OK);
  rtm_model_release(&back);
  free(text);
  /* 1e-4 relative is a different grid: refused, both values named */
  other.spacing_m[1] = 12.5 * (1.0 + 1e-4);
  assert_int_equal(read_capturing(MODEL_PATH, &other, RTM_EQUATION_ISO, &back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "spacing"));
  assert_true(contains(text, "12.5,"));    /* the file's dy */
  assert_true(contains(text, "12.50125")); /* the config's dy */
  assert_failed_cleanly(&back);
  free(text);

  /* no spacing attribute at all */
  hid_t file = H5Fopen(MODEL_PATH, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(file >= 0);
  assert_true(H5Adelete(file, "spacing") >= 0);
  H5Fclose(file);
  assert_int_equal(read_capturing(MODEL_PATH, &f->grid, RTM_EQUATION_ISO, &back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, "spacing"));
  assert_true(contains(text, MODEL_PATH));
  free(text);
}

static void test_non_finite_value(void **state) {
  fixture_t *f = *state;
  rtm_model_t back = {0};
  char *text = NULL;
  const size_t nx = 13, ny = 9;
  /* cell x = 4, y = 7, z = 6 */
  const size_t cell = (6 * ny + 7) * nx + 4;
  float saved = f->model.delta[cell];
  f->model.delta[cell] = NAN;
  assert_int_equal(rtm_io_write_model(MODEL_PATH, &f->grid, &f->model), RTM_OK);
  f->model.delta[cell] = saved;
  assert_int_equal(read_capturing(MODEL_PATH, &f->grid, RTM_EQUATION_VTI, &back, &text),
                   RTM_ERR_INPUT);
  assert_true(contains(text, MODEL_PATH));
  assert_true(contains(text, "/delta"));
  assert_true(contains(text, "[z=6][y=7][x=4]"));
  assert_failed_cleanly(&back);
  free(text);
  /* iso does not read delta, so the same file is fine for it */
  assert_int_equal(read_capturing(MODEL_PATH, &f->grid, RTM_EQUATION_ISO, &back, &text), RTM_OK);
  rtm_model_release(&back);
  free(text);
}

/* A model written by another tool in float64: HDF5 converts it, values round to float. */
static void test_float64_model_is_converted(void **state) {
  fixture_t *f = *state;
  rtm_model_t back = {0};
  const size_t cells = rtm_grid_interior_cells(&f->grid);
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
  assert_true(H5Awrite(attr, H5T_NATIVE_DOUBLE, f->grid.spacing_m) >= 0);
  H5Aclose(attr);
  H5Dclose(dataset);
  H5Sclose(attr_space);
  H5Sclose(space);
  H5Fclose(file);
  assert_int_equal(rtm_io_read_model(MODEL_PATH, &f->grid, RTM_EQUATION_ISO, &back), RTM_OK);
  for (size_t i = 0; i < cells; ++i)
    assert_true(back.vp[i] == (float)vp[i]);
  rtm_model_release(&back);
  free(vp);
}

static void test_load_model_from_config(void **state) {
  fixture_t *f = *state;
  rtm_config_t *cfg = calloc(1, sizeof *cfg);
  rtm_model_t model = {0};
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  assert_non_null(cfg);
  cfg->physics.equation = RTM_EQUATION_VTI;
  cfg->model.vp_m_s = rtm_test_uniform(&f->rng, 1500.0, 4000.0);
  cfg->model.epsilon = rtm_test_uniform(&f->rng, 0.05, 0.3);
  cfg->model.delta = rtm_test_uniform(&f->rng, 0.01, 0.05);
  cfg->model.theta_deg = 30.0;
  cfg->model.phi_deg = 45.0;
  assert_int_equal(rtm_io_load_model(cfg, &f->grid, &model), RTM_OK);
  assert_null(model.theta_deg);
  for (size_t i = 0; i < cells; ++i) {
    assert_true(model.vp[i] == (float)cfg->model.vp_m_s);
    assert_true(model.epsilon[i] == (float)cfg->model.epsilon);
    assert_true(model.delta[i] == (float)cfg->model.delta);
  }
  assert_true(model.vp_max == (double)(float)cfg->model.vp_m_s);
  rtm_model_release(&model);

  /* with model.file the file wins over the constants */
  assert_int_equal(rtm_io_write_model(MODEL_PATH, &f->grid, &f->model), RTM_OK);
  snprintf(cfg->model.file, sizeof cfg->model.file, "%s", MODEL_PATH);
  assert_int_equal(rtm_io_load_model(cfg, &f->grid, &model), RTM_OK);
  assert_memory_equal(model.vp, f->model.vp, cells * sizeof(float));
  rtm_model_release(&model);
  free(cfg);
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
      cmocka_unit_test_setup_teardown(test_load_model_from_config, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

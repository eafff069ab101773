/* Shot gathers in run files (shot_gathers.c): the many-shot layout written with
 * rtm_output_write_shot and read back bit for bit with rtm_io_read_shot; a single-shot file
 * (/traces with its source attribute) read as shot 0; missing shots, fields and sources,
 * and shapes that disagree, named with the file and the dataset; the listing that
 * `rtm3d validate` compares; volumes at any path, each rank's planes at its z-offset. */
#include "rtm_test_io.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <hdf5.h>

#include "rtm_io.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

#define OUT_DIR "test_io_shots.d"
#define MANY_PATH OUT_DIR "/many.h5"
#define SINGLE_PATH OUT_DIR "/single.h5"
#define BAD_PATH OUT_DIR "/bad.h5"

enum { SHOTS = 3, MAX_RECEIVERS = 6, SAMPLES = 11, NX = 5, NY = 4, NZ = 6 };

/* Shot k has k + 4 receivers; shot 1 records p only, the others p and q. */
typedef struct {
  rtm_test_rng_t rng;
  rtm_io_volume_t volume;
  double source[SHOTS][3];
  double receivers[SHOTS][MAX_RECEIVERS][3];
  float traces[SHOTS][2][MAX_RECEIVERS * SAMPLES];
} fixture_t;

static const double dt_s = 2.5e-3;
static const char *const field_names[2] = {"p", "q"};

static int receivers_of(int shot) {
  return shot + 4;
}

static int fields_of(int shot) {
  return shot == 1 ? 1 : 2;
}

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  f->rng = rtm_test_seed("test_io_shots");
  f->volume = (rtm_io_volume_t){.n = {NX, NY, NZ},
                                .spacing_m = {10.0, 10.0, 10.0},
                                .origin_m = {0.0, 0.0, 0.0},
                                .z_offset = 0,
                                .nz_local = NZ};
  for (int k = 0; k < SHOTS; ++k) {
    for (int a = 0; a < 3; ++a)
      f->source[k][a] = rtm_test_uniform(&f->rng, 0.0, 50.0);
    for (int r = 0; r < MAX_RECEIVERS; ++r)
      for (int a = 0; a < 3; ++a)
        f->receivers[k][r][a] = rtm_test_uniform(&f->rng, 0.0, 50.0);
    for (int field = 0; field < 2; ++field)
      for (int i = 0; i < MAX_RECEIVERS * SAMPLES; ++i)
        f->traces[k][field][i] = (float)rtm_test_uniform(&f->rng, -1.0, 1.0);
  }
  *state = f;
  return system("mkdir -p " OUT_DIR) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  free(*state);
  return system("rm -rf " OUT_DIR) == 0 ? 0 : -1;
}

static void write_many(const fixture_t *f) {
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(MANY_PATH, &f->volume, NULL, &output), RTM_OK);
  /* out of order: the shot number, not the call order, places a shot */
  const int order[SHOTS] = {2, 0, 1};
  for (int i = 0; i < SHOTS; ++i) {
    const int k = order[i];
    for (int field = 0; field < fields_of(k); ++field)
      assert_int_equal(rtm_output_write_shot(output, k, f->source[k], field_names[field],
                                             f->traces[k][field], receivers_of(k), SAMPLES, dt_s,
                                             &f->receivers[k][0][0]),
                       RTM_OK);
  }
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
}

static void assert_gather(const fixture_t *f, const rtm_io_gather_t *g, int shot, int field) {
  assert_memory_equal(g->source_m, f->source[shot], sizeof f->source[shot]);
  assert_int_equal(g->count, receivers_of(shot));
  assert_int_equal(g->samples, SAMPLES);
  assert_true(g->dt_s == dt_s);
  assert_memory_equal(g->receivers_m, f->receivers[shot], (size_t)g->count * 3 * sizeof(double));
  assert_memory_equal(g->traces, f->traces[shot][field],
                      (size_t)g->count * SAMPLES * sizeof(float));
}

/* rtm_io_read_shot_geometry gives what rtm_io_read_shot gives, bit for bit, but the samples. */
static void assert_geometry_alike(const char *path, int shot, const char *field,
                                  const rtm_io_gather_t *whole) {
  rtm_io_gather_t g;
  assert_int_equal(rtm_io_read_shot_geometry(path, shot, field, &g), RTM_OK);
  assert_null(g.traces);
  assert_int_equal(g.count, whole->count);
  assert_int_equal(g.samples, whole->samples);
  assert_memory_equal(&g.dt_s, &whole->dt_s, sizeof g.dt_s);
  assert_memory_equal(g.source_m, whole->source_m, sizeof g.source_m);
  assert_memory_equal(g.receivers_m, whole->receivers_m, (size_t)g.count * 3 * sizeof(double));
  rtm_io_gather_release(&g);
}

static void test_many_shot_round_trip(void **state) {
  fixture_t *f = *state;
  write_many(f);
  int count = 0;
  assert_int_equal(rtm_io_shot_count(MANY_PATH, &count), RTM_OK);
  assert_int_equal(count, SHOTS);
  for (int k = 0; k < SHOTS; ++k)
    for (int field = 0; field < fields_of(k); ++field) {
      rtm_io_gather_t gather;
      assert_int_equal(rtm_io_read_shot(MANY_PATH, k, field_names[field], &gather), RTM_OK);
      assert_gather(f, &gather, k, field);
      assert_geometry_alike(MANY_PATH, k, field_names[field], &gather);
      rtm_io_gather_release(&gather);
      assert_null(gather.traces);
    }

  /* what validate compares: each shot's gathers, in shot order, not sources or receivers */
  char **names = NULL;
  int name_count = 0;
  assert_int_equal(rtm_io_list_datasets(MANY_PATH, &names, &name_count), RTM_OK);
  const char *const expected[] = {"/shots/0/traces/p", "/shots/0/traces/q", "/shots/1/traces/p",
                                  "/shots/2/traces/p", "/shots/2/traces/q"};
  assert_int_equal(name_count, 5);
  for (int i = 0; i < name_count; ++i) {
    assert_string_equal(names[i], expected[i]);
    free(names[i]);
  }
  free(names);

  /* the layout as any HDF5 reader sees it; shot_count a scalar, which h5py reads as a
   * number (range(f.attrs["shot_count"]) works; a 1-element array raised TypeError) */
  hid_t file = H5Fopen(MANY_PATH, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(file >= 0);
  int shot_count = 0;
  hid_t attr = H5Aopen(file, "shot_count", H5P_DEFAULT);
  assert_true(attr >= 0 && H5Aread(attr, H5T_NATIVE_INT, &shot_count) >= 0);
  hid_t attr_space = H5Aget_space(attr);
  assert_int_equal(H5Sget_simple_extent_type(attr_space), H5S_SCALAR);
  H5Sclose(attr_space);
  H5Aclose(attr);
  assert_int_equal(shot_count, SHOTS);
  hid_t receivers = H5Dopen2(file, "/shots/2/receivers", H5P_DEFAULT);
  assert_true(receivers >= 0);
  char units[8] = "";
  hid_t units_attr = H5Aopen(receivers, "units", H5P_DEFAULT);
  hid_t type = H5Aget_type(units_attr);
  assert_true(H5Tget_size(type) <= sizeof units);
  assert_true(H5Aread(units_attr, type, units) >= 0);
  assert_string_equal(units, "m");
  H5Tclose(type);
  H5Aclose(units_attr);
  H5Dclose(receivers);
  H5Fclose(file);
}

/* Files written before shot_count became a scalar hold it as a 1-element array: they read
 * the same, counted, listed and read shot by shot. */
static void test_shot_count_array(void **state) {
  fixture_t *f = *state;
  write_many(f);
  hid_t file = H5Fopen(MANY_PATH, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(file >= 0);
  assert_true(H5Adelete(file, "shot_count") >= 0);
  const int shots = SHOTS;
  hsize_t one[1] = {1};
  hid_t space = H5Screate_simple(1, one, NULL);
  hid_t attr = H5Acreate2(file, "shot_count", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(attr >= 0 && H5Awrite(attr, H5T_NATIVE_INT, &shots) >= 0);
  H5Aclose(attr);
  H5Sclose(space);
  H5Fclose(file);

  int count = 0;
  assert_int_equal(rtm_io_shot_count(MANY_PATH, &count), RTM_OK);
  assert_int_equal(count, SHOTS);
  rtm_io_gather_t gather;
  assert_int_equal(rtm_io_read_shot(MANY_PATH, SHOTS - 1, "q", &gather), RTM_OK);
  assert_gather(f, &gather, SHOTS - 1, 1);
  rtm_io_gather_release(&gather);
  char **names = NULL;
  int name_count = 0;
  assert_int_equal(rtm_io_list_datasets(MANY_PATH, &names, &name_count), RTM_OK);
  assert_int_equal(name_count, 5);
  for (int i = 0; i < name_count; ++i)
    free(names[i]);
  free(names);
}

static void test_many_shot_errors(void **state) {
  fixture_t *f = *state;
  write_many(f);
  rtm_io_gather_t gather;
  assert_call_refused(rtm_io_read_shot(MANY_PATH, 3, "p", &gather), RTM_ERR_INPUT,
                      "run file " MANY_PATH " holds 3 shots: there is no shot 3 (/shots/3)");
  assert_null(gather.traces);
  assert_call_refused(rtm_io_read_shot(MANY_PATH, -1, "p", &gather), RTM_ERR_INPUT,
                      "there is no shot -1");
  assert_call_refused(rtm_io_read_shot(MANY_PATH, 1, "q", &gather), RTM_ERR_INPUT,
                      "run file " MANY_PATH " has no dataset /shots/1/traces/q");
  assert_null(gather.traces);
  assert_null(gather.receivers_m);
  assert_call_refused(rtm_io_read_shot(OUT_DIR "/missing.h5", 0, "p", &gather), RTM_ERR_INPUT,
                      OUT_DIR "/missing.h5");

  /* a shot's fields share its source and receivers: a second field that disagrees is a bug */
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(BAD_PATH, &f->volume, NULL, &output), RTM_OK);
  assert_int_equal(rtm_output_write_shot(output, 0, f->source[0], "p", f->traces[0][0], 4, SAMPLES,
                                         dt_s, &f->receivers[0][0][0]),
                   RTM_OK);
  assert_call_refused(rtm_output_write_shot(output, 0, f->source[1], "q", f->traces[0][1], 4,
                                            SAMPLES, dt_s, &f->receivers[0][0][0]),
                      RTM_ERR_INTERNAL, "/shots/0/source is (");
  assert_call_refused(rtm_output_write_shot(output, 0, f->source[0], "q", f->traces[0][1], 5,
                                            SAMPLES, dt_s, &f->receivers[0][0][0]),
                      RTM_ERR_INTERNAL, "/shots/0/receivers holds 4 receivers, a trace set has 5");
  assert_call_refused(rtm_output_write_shot(output, 0, f->source[0], "receivers", f->traces[0][1],
                                            4, SAMPLES, dt_s, &f->receivers[0][0][0]),
                      RTM_ERR_INTERNAL,
                      "/shots/0/traces/receivers: 'receivers' names the receiver positions");
  assert_int_equal(rtm_output_close(output, 0), RTM_OK);
}

/* Receivers [n][3] that disagree with the traces [m][nt] (a file written by another tool). */
static void test_shapes_that_disagree(void **state) {
  (void)state;
  hid_t file = H5Fcreate(BAD_PATH, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(file >= 0);
  const int one = 1;
  hsize_t scalar[1] = {1}, source_dims[1] = {3}, receiver_dims[2] = {2, 3}, trace_dims[2] = {3, 5};
  hid_t space = H5Screate_simple(1, scalar, NULL);
  hid_t attr = H5Acreate2(file, "shot_count", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_INT, &one);
  H5Aclose(attr);
  H5Sclose(space);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const double zeros[9] = {0};
  const float trace_zeros[15] = {0};
  const struct {
    const char *name;
    int rank;
    hsize_t *dims;
    hid_t type;
    const void *data;
  } datasets[] = {{"/shots/0/source", 1, source_dims, H5T_NATIVE_DOUBLE, zeros},
                  {"/shots/0/receivers", 2, receiver_dims, H5T_NATIVE_DOUBLE, zeros},
                  {"/shots/0/traces/p", 2, trace_dims, H5T_NATIVE_FLOAT, trace_zeros}};
  for (int i = 0; i < 3; ++i) {
    space = H5Screate_simple(datasets[i].rank, datasets[i].dims, NULL);
    hid_t dataset =
        H5Dcreate2(file, datasets[i].name, datasets[i].type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(dataset >= 0);
    H5Dwrite(dataset, datasets[i].type, H5S_ALL, H5S_ALL, H5P_DEFAULT, datasets[i].data);
    if (i == 2) {
      const double dt = 1e-3;
      hid_t dt_space = H5Screate_simple(1, scalar, NULL);
      hid_t dt_attr =
          H5Acreate2(dataset, "dt", H5T_NATIVE_DOUBLE, dt_space, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(dt_attr, H5T_NATIVE_DOUBLE, &dt);
      H5Aclose(dt_attr);
      H5Sclose(dt_space);
    }
    H5Dclose(dataset);
    H5Sclose(space);
  }
  H5Pclose(lcpl);
  H5Fclose(file);
  rtm_io_gather_t gather;
  assert_call_refused(rtm_io_read_shot(BAD_PATH, 0, "p", &gather), RTM_ERR_INPUT,
                      "run file " BAD_PATH ": /shots/0/receivers is [2][3], but /shots/0/traces/p "
                      "holds 3 traces: expected [3][3] positions");
  assert_null(gather.traces);
}

/* rtm3d model's single-shot layout: /traces/<field>, /traces/receivers, /traces attribute
 * source; read as shot 0 of 1. Without the attribute the file holds no shot to read. */
static void test_single_shot_file(void **state) {
  fixture_t *f = *state;
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(SINGLE_PATH, &f->volume, NULL, &output), RTM_OK);
  for (int field = 0; field < 2; ++field)
    assert_int_equal(rtm_output_write_traces(output, field_names[field], f->traces[0][field], 4,
                                             SAMPLES, dt_s, &f->receivers[0][0][0]),
                     RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  int count = -1;
  assert_call_refused(rtm_io_shot_count(SINGLE_PATH, &count), RTM_ERR_INPUT,
                      "run file " SINGLE_PATH " holds no shot gathers");
  assert_int_equal(count, 0);

  assert_int_equal(rtm_output_create(SINGLE_PATH, &f->volume, NULL, &output), RTM_OK);
  for (int field = 0; field < 2; ++field)
    assert_int_equal(rtm_output_write_traces(output, field_names[field], f->traces[0][field], 4,
                                             SAMPLES, dt_s, &f->receivers[0][0][0]),
                     RTM_OK);
  assert_int_equal(rtm_output_write_source(output, f->source[0]), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  assert_int_equal(rtm_io_shot_count(SINGLE_PATH, &count), RTM_OK);
  assert_int_equal(count, 1);
  for (int field = 0; field < 2; ++field) {
    rtm_io_gather_t gather;
    assert_int_equal(rtm_io_read_shot(SINGLE_PATH, 0, field_names[field], &gather), RTM_OK);
    assert_gather(f, &gather, 0, field);
    rtm_io_gather_release(&gather);
  }
  rtm_io_gather_t gather;
  assert_call_refused(rtm_io_read_shot(SINGLE_PATH, 1, "p", &gather), RTM_ERR_INPUT,
                      "holds 1 shot: there is no shot 1 (a single-shot file holds shot 0 alone)");
  assert_call_refused(rtm_io_read_shot(SINGLE_PATH, 0, "vp", &gather), RTM_ERR_INPUT,
                      "run file " SINGLE_PATH " has no dataset /traces/vp");
}

/* Volumes at absolute paths, groups created on the way; a rank writes its planes at its
 * z-offset, and planes no rank wrote read NaN. */
static void test_volumes(void **state) {
  fixture_t *f = *state;
  const size_t cells = (size_t)NX * NY * NZ, plane = (size_t)NX * NY;
  float *image = malloc(cells * sizeof *image);
  assert_non_null(image);
  for (size_t i = 0; i < cells; ++i)
    image[i] = (float)rtm_test_uniform(&f->rng, -1.0, 1.0);
  rtm_io_volume_t slab = f->volume;
  slab.z_offset = 2;
  slab.nz_local = 3;
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(MANY_PATH, &slab, NULL, &output), RTM_OK);
  assert_int_equal(rtm_output_write_volume(output, "/image", image + 2 * plane), RTM_OK);
  assert_int_equal(rtm_output_write_volume(output, "/shots/7/image", image + 2 * plane), RTM_OK);
  /* a second write of the same path: the next rank's planes (here the same ones again) */
  assert_int_equal(rtm_output_write_volume(output, "/image", image + 2 * plane), RTM_OK);
  assert_call_refused(rtm_output_write_volume(output, "image", image), RTM_ERR_INTERNAL,
                      "expected an absolute path");
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  const char *const names[2] = {"/image", "/shots/7/image"};
  for (int i = 0; i < 2; ++i) {
    rtm_dataset_t d = {0};
    assert_int_equal(rtm_io_read_dataset(MANY_PATH, names[i], &d), RTM_OK);
    assert_int_equal(d.rank, 3);
    assert_int_equal(d.dims[0], NZ);
    assert_int_equal(d.dims[1], NY);
    assert_int_equal(d.dims[2], NX);
    for (size_t c = 0; c < cells; ++c) {
      const size_t z = c / plane;
      if (z >= 2 && z < 5)
        assert_true(d.data[c] == image[c]);
      else
        assert_true(isnan(d.data[c]));
    }
    rtm_dataset_release(&d);
  }
  free(image);
}

RTM_TEST_MAIN(cmocka_unit_test_setup_teardown(test_many_shot_round_trip, setup, teardown),
              cmocka_unit_test_setup_teardown(test_shot_count_array, setup, teardown),
              cmocka_unit_test_setup_teardown(test_many_shot_errors, setup, teardown),
              cmocka_unit_test_setup_teardown(test_shapes_that_disagree, setup, teardown),
              cmocka_unit_test_setup_teardown(test_single_shot_file, setup, teardown),
              cmocka_unit_test_setup_teardown(test_volumes, setup, teardown))

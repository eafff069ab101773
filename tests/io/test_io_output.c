/* Run output files (snapshots, traces, attributes, PATH.partial until a successful close)
 * and the JSON run report (valid JSON, every key, escaping). */
#include "rtm_test_io.h"

#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <hdf5.h>

#include "rtm_io.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

#define OUT_DIR "test_io_output.d"
#define RUN_PATH OUT_DIR "/nested/run.h5"

enum { NX = 10, NY = 7, NZ = 6, SNAPSHOTS = 3, RECEIVERS = 5, SAMPLES = 17 };

typedef struct {
  rtm_test_rng_t rng;
  rtm_io_volume_t volume;
  float *snapshots; /* [SNAPSHOTS][NZ][NY][NX] */
  float *traces;    /* [RECEIVERS][SAMPLES] */
  double receivers[RECEIVERS][3];
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  const int n[3] = {NX, NY, NZ};
  const double spacing[3] = {5.0, 6.0, 7.0}, origin[3] = {-20.0, 0.0, 15.0};
  f->rng = rtm_test_seed("test_io_output");
  f->volume = (rtm_io_volume_t){.n = {n[0], n[1], n[2]},
                                .spacing_m = {spacing[0], spacing[1], spacing[2]},
                                .origin_m = {origin[0], origin[1], origin[2]},
                                .z_offset = 0,
                                .nz_local = n[2]};
  f->snapshots = malloc(sizeof(float) * SNAPSHOTS * NZ * NY * NX);
  f->traces = malloc(sizeof(float) * RECEIVERS * SAMPLES);
  for (size_t i = 0; i < (size_t)SNAPSHOTS * NZ * NY * NX; ++i)
    f->snapshots[i] = (float)rtm_test_uniform(&f->rng, -1.0, 1.0);
  for (size_t i = 0; i < (size_t)RECEIVERS * SAMPLES; ++i)
    f->traces[i] = (float)rtm_test_uniform(&f->rng, -1e-3, 1e-3);
  for (int r = 0; r < RECEIVERS; ++r)
    for (int a = 0; a < 3; ++a)
      f->receivers[r][a] = rtm_test_uniform(&f->rng, 0.0, 30.0);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  free(f->snapshots);
  free(f->traces);
  free(f);
  remove(RUN_PATH);
  remove(RUN_PATH ".partial");
  remove(OUT_DIR "/report.json");
  remove(OUT_DIR "/nested");
  remove(OUT_DIR);
  return 0;
}

static char *read_string_attr(hid_t object, const char *name) {
  hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
  assert_true(attr >= 0);
  hid_t type = H5Aget_type(attr);
  size_t size = H5Tget_size(type);
  char *text = calloc(size + 1, 1);
  assert_true(H5Aread(attr, type, text) >= 0);
  H5Tclose(type);
  H5Aclose(attr);
  return text;
}

static void read_attr(hid_t object, const char *name, hid_t memory_type, void *values) {
  hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
  assert_true(attr >= 0);
  assert_true(H5Aread(attr, memory_type, values) >= 0);
  H5Aclose(attr);
}

static const double dt_s = 1.25e-3;

static void write_run(fixture_t *f, const rtm_run_info_t *info, int success) {
  rtm_output_t *output = NULL;
  const size_t volume = (size_t)NZ * NY * NX;
  assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, info, &output), RTM_OK);
  assert_true(file_exists(RUN_PATH ".partial"));
  assert_int_equal(rtm_output_snapshots_begin(output, "p", SNAPSHOTS), RTM_OK);
  /* out of order on purpose: the index, not the call order, places a snapshot */
  for (int k = SNAPSHOTS - 1; k >= 0; --k)
    assert_int_equal(rtm_output_write_snapshot(output, "p", k, 10 * (k + 1), 10 * (k + 1) * dt_s,
                                               f->snapshots + (size_t)k * volume),
                     RTM_OK);
  assert_int_equal(rtm_output_write_traces(output, "p", f->traces, RECEIVERS, SAMPLES, dt_s,
                                           &f->receivers[0][0]),
                   RTM_OK);
  assert_int_equal(rtm_output_close(output, success), RTM_OK);
  assert_false(file_exists(RUN_PATH ".partial"));
}

static void test_output_round_trip(void **state) {
  fixture_t *f = *state;
  const rtm_run_info_t info = {
      "0.1.0",        "abc123def456",         "cpu",
      "host \"x86\"", "[grid]\nn = 10 7 6\n", "rtm3d model 'my deck.ini' --force"};
  const size_t volume = (size_t)NZ * NY * NX;
  remove(RUN_PATH);
  write_run(f, &info, 1);
  assert_true(file_exists(RUN_PATH));

  rtm_dataset_t d = {0};
  assert_int_equal(rtm_io_read_dataset(RUN_PATH, "/snapshots/p", &d), RTM_OK);
  assert_int_equal(d.rank, 4);
  assert_int_equal(d.dims[0], SNAPSHOTS);
  assert_int_equal(d.dims[1], NZ);
  assert_int_equal(d.dims[2], NY);
  assert_int_equal(d.dims[3], NX);
  assert_memory_equal(d.data, f->snapshots, SNAPSHOTS * volume * sizeof(float));
  rtm_dataset_release(&d);
  assert_int_equal(rtm_io_read_dataset_entry(RUN_PATH, "/snapshots/p", 1, &d), RTM_OK);
  assert_int_equal(d.rank, 3);
  assert_memory_equal(d.data, f->snapshots + volume, volume * sizeof(float));
  rtm_dataset_release(&d);
  assert_int_equal(rtm_io_read_dataset(RUN_PATH, "traces/p", &d), RTM_OK);
  assert_int_equal(d.rank, 2);
  assert_int_equal(d.dims[0], RECEIVERS);
  assert_int_equal(d.dims[1], SAMPLES);
  assert_memory_equal(d.data, f->traces, sizeof(float) * RECEIVERS * SAMPLES);
  rtm_dataset_release(&d);

  hid_t file = H5Fopen(RUN_PATH, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(file >= 0);
  const char *keys[] = {"version", "git_revision", "backend", "device", "config", "command_line"};
  const char *values[] = {info.version, info.git_revision, info.backend,
                          info.device,  info.config_text,  info.command_line};
  for (int i = 0; i < 6; ++i) {
    char *text = read_string_attr(file, keys[i]);
    assert_string_equal(text, values[i]);
    free(text);
  }
  /* provenance: the layout's version, when (UTC, ISO 8601) and where it was written */
  int format = 0;
  read_attr(file, "format_version", H5T_NATIVE_INT, &format);
  assert_int_equal(format, 1);
  char *created = read_string_attr(file, "created"), *host = read_string_attr(file, "host");
  assert_int_equal(strlen(created), 20);
  assert_true(created[4] == '-' && created[10] == 'T' && created[19] == 'Z');
  assert_true(strlen(host) > 0);
  free(created);
  free(host);
  int n[3];
  double spacing[3], origin[3];
  read_attr(file, "n", H5T_NATIVE_INT, n);
  read_attr(file, "spacing", H5T_NATIVE_DOUBLE, spacing);
  read_attr(file, "origin", H5T_NATIVE_DOUBLE, origin);
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(n[a], f->volume.n[a]);
    assert_true(spacing[a] == f->volume.spacing_m[a]);
    assert_true(origin[a] == f->volume.origin_m[a]);
  }
  hid_t snapshots = H5Dopen2(file, "/snapshots/p", H5P_DEFAULT);
  int steps[SNAPSHOTS];
  double times[SNAPSHOTS];
  read_attr(snapshots, "steps", H5T_NATIVE_INT, steps);
  read_attr(snapshots, "times", H5T_NATIVE_DOUBLE, times);
  for (int k = 0; k < SNAPSHOTS; ++k) {
    assert_int_equal(steps[k], 10 * (k + 1));
    assert_true(times[k] == 10 * (k + 1) * dt_s);
  }
  H5Dclose(snapshots);
  hid_t traces = H5Dopen2(file, "/traces/p", H5P_DEFAULT);
  double dt_back = 0.0;
  read_attr(traces, "dt", H5T_NATIVE_DOUBLE, &dt_back);
  assert_true(dt_back == dt_s);
  H5Dclose(traces);
  double receivers[RECEIVERS][3];
  hid_t positions = H5Dopen2(file, "/traces/receivers", H5P_DEFAULT);
  assert_true(H5Dread(positions, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, receivers) >= 0);
  assert_memory_equal(receivers, f->receivers, sizeof receivers);
  H5Dclose(positions);
  H5Fclose(file);

  char **names = NULL;
  int count = 0;
  assert_int_equal(rtm_io_list_datasets(RUN_PATH, &names, &count), RTM_OK);
  assert_int_equal(count, 2); /* /traces/receivers is positions, not data */
  assert_string_equal(names[0], "/snapshots/p");
  assert_string_equal(names[1], "/traces/p");
  for (int i = 0; i < count; ++i)
    free(names[i]);
  free(names);
}

static void test_failed_run_leaves_no_file(void **state) {
  fixture_t *f = *state;
  const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "text", NULL};
  remove(RUN_PATH);
  write_run(f, &info, 0);
  assert_false(file_exists(RUN_PATH));
  /* a failed rerun must not clobber the finished file of an earlier run */
  write_run(f, &info, 1);
  struct stat before, after;
  assert_int_equal(stat(RUN_PATH, &before), 0);
  const float written = f->snapshots[0];
  f->snapshots[0] += 1.0f;
  write_run(f, &info, 0);
  assert_int_equal(stat(RUN_PATH, &after), 0);
  assert_int_equal(before.st_ino, after.st_ino);
  rtm_dataset_t d = {0};
  assert_int_equal(rtm_io_read_dataset_entry(RUN_PATH, "/snapshots/p", 0, &d), RTM_OK);
  assert_true(d.data[0] == written);
  rtm_dataset_release(&d);
}

static int fill_time_of(hid_t file, const char *name);

/* One writer of whole snapshots: their chunks are not filled with NaN first, so a series
 * with a snapshot never written must not finish (it would read back as the disk's bytes):
 * refused, no file; written whole, the values as written. */
static rtm_output_t *whole_series(const fixture_t *f) {
  static const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "text", NULL};
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, &info, &output), RTM_OK);
  rtm_output_expect_whole(output);
  assert_int_equal(rtm_output_snapshots_begin(output, "p", 2), RTM_OK);
  return output;
}

static void test_unwritten_snapshot_refused(void **state) {
  const fixture_t *f = *state;
  const size_t volume = (size_t)NZ * NY * NX;
  remove(RUN_PATH);
  rtm_output_t *output = whole_series(f);
  assert_int_equal(rtm_output_write_snapshot(output, "p", 1, 7, 7 * dt_s, f->snapshots), RTM_OK);
  assert_int_not_equal(rtm_output_close(output, 1), RTM_OK);
  assert_false(file_exists(RUN_PATH));
  assert_false(file_exists(RUN_PATH ".partial"));

  output = whole_series(f);
  for (int k = 0; k < 2; ++k)
    assert_int_equal(rtm_output_write_snapshot(output, "p", k, 3 + 4 * k, (3 + 4 * k) * dt_s,
                                               f->snapshots + k * volume),
                     RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  rtm_dataset_t d = {0};
  assert_int_equal(rtm_io_read_dataset(RUN_PATH, "/snapshots/p", &d), RTM_OK);
  assert_memory_equal(d.data, f->snapshots, 2 * volume * sizeof(float));
  rtm_dataset_release(&d);
  hid_t file = H5Fopen(RUN_PATH, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_int_equal(fill_time_of(file, "/snapshots/p"), H5D_FILL_TIME_NEVER);
  H5Fclose(file);
}

/* A volume written in parts by its one writer (a migration's image behind its filter):
 * parts of 2, 1 and 3 planes out of order give the whole volume, made without a NaN fill
 * (which HDF5 would write over it first); parts that miss a plane are refused at the finish,
 * no file left; a part over planes already written is refused before it writes; a second
 * volume in parts, or one under several writers, is refused. */
static rtm_output_t *whole_output(const fixture_t *f) {
  static const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "text", NULL};
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, &info, &output), RTM_OK);
  rtm_output_expect_whole(output);
  return output;
}

static void write_part(rtm_output_t *output, const float *volume, int z_begin, int nz) {
  assert_int_equal(rtm_output_set_planes(output, z_begin, nz), RTM_OK);
  assert_int_equal(rtm_output_write_volume(output, "/image", volume + (size_t)z_begin * NY * NX),
                   RTM_OK);
}

/* The status of an output call, with what it said on stderr containing `needle`. */
static int said(int status, capture_t *c, const char *needle) {
  char *text = capture_end(c);
  assert_true(contains(text, needle));
  free(text);
  return status;
}

static void test_volume_in_parts(void **state) {
  const fixture_t *f = *state;
  const size_t volume = (size_t)NZ * NY * NX;
  capture_t c;
  remove(RUN_PATH);
  rtm_output_t *output = whole_output(f);
  assert_int_equal(rtm_output_volume_in_parts(output, "/image"), RTM_OK);
  write_part(output, f->snapshots, 3, 3);
  write_part(output, f->snapshots, 0, 2);
  capture_begin(&c, 2);
  assert_int_equal(said(rtm_output_close(output, 1), &c, "plane 2 of /image was never written"),
                   RTM_ERR_INTERNAL);
  assert_false(file_exists(RUN_PATH));
  assert_false(file_exists(RUN_PATH ".partial"));

  output = whole_output(f);
  assert_int_equal(rtm_output_volume_in_parts(output, "/image"), RTM_OK);
  write_part(output, f->snapshots, 0, 3);
  assert_int_equal(rtm_output_set_planes(output, 2, 3), RTM_OK);
  capture_begin(&c, 2);
  assert_int_equal(said(rtm_output_write_volume(output, "/image", f->snapshots + 2 * NY * NX), &c,
                        "plane 2 of /image written twice"),
                   RTM_ERR_INTERNAL);
  write_part(output, f->snapshots, 3, 2); /* the refused part unwritten: plane 5 never is */
  capture_begin(&c, 2);
  assert_int_equal(said(rtm_output_close(output, 1), &c, "plane 5 of /image was never written"),
                   RTM_ERR_INTERNAL);
  assert_false(file_exists(RUN_PATH));

  output = whole_output(f);
  assert_int_equal(rtm_output_volume_in_parts(output, "/image"), RTM_OK);
  capture_begin(&c, 2);
  assert_int_equal(said(rtm_output_volume_in_parts(output, "/other"), &c, "no other volume"),
                   RTM_ERR_INTERNAL);
  write_part(output, f->snapshots, 3, 3);
  write_part(output, f->snapshots, 2, 1);
  write_part(output, f->snapshots, 0, 2);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  rtm_dataset_t d = {0};
  assert_int_equal(rtm_io_read_dataset(RUN_PATH, "/image", &d), RTM_OK);
  assert_memory_equal(d.data, f->snapshots, volume * sizeof(float));
  rtm_dataset_release(&d);
  hid_t file = H5Fopen(RUN_PATH, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_int_equal(fill_time_of(file, "/image"), H5D_FILL_TIME_NEVER);
  H5Fclose(file);

  static const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "text", NULL};
  remove(RUN_PATH);
  assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, &info, &output), RTM_OK);
  capture_begin(&c, 2);
  assert_int_equal(said(rtm_output_volume_in_parts(output, "/image"), &c, "one writer"),
                   RTM_ERR_INTERNAL);
  assert_int_equal(rtm_output_close(output, 0), RTM_OK);
}

/* /traces/p written window by window while a run goes (rtm3d model on a GPU): out of order
 * and with a short last window (5 samples of 6; 1 of 8, as a full receiver plane's 2001
 * samples in windows of 80: a chunk written whole, its columns past the extent padding),
 * the same dataset and attributes a whole write gives. */
static void test_traces_in_windows(void **state) {
  fixture_t *f = *state;
  const int windows_of[] = {6, 8};
  for (int k = 0; k < 2; ++k) {
    const int window = windows_of[k];
    assert_true(SAMPLES % window != 0);
    rtm_output_t *output = NULL;
    assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, NULL, &output), RTM_OK);
    assert_int_equal(
        rtm_output_traces_begin(output, "p", RECEIVERS, SAMPLES, window, dt_s, &f->receivers[0][0]),
        RTM_OK);
    float block[RECEIVERS * 8];
    const int windows = (SAMPLES + window - 1) / window;
    for (int w = windows - 1; w >= 0; --w) {
      const int first = w * window, count = first + window <= SAMPLES ? window : SAMPLES - first;
      for (int r = 0; r < RECEIVERS; ++r)
        for (int s = 0; s < count; ++s)
          block[r * count + s] = f->traces[r * SAMPLES + first + s];
      assert_int_equal(rtm_output_traces_window(output, "p", block, RECEIVERS, first, count),
                       RTM_OK);
    }
    assert_int_equal(rtm_output_close(output, 1), RTM_OK);
    rtm_dataset_t d = {0};
    assert_int_equal(rtm_io_read_dataset(RUN_PATH, "/traces/p", &d), RTM_OK);
    assert_int_equal(d.dims[0], RECEIVERS);
    assert_int_equal(d.dims[1], SAMPLES);
    assert_memory_equal(d.data, f->traces, sizeof(float) * RECEIVERS * SAMPLES);
    rtm_dataset_release(&d);
    rtm_io_axes_t axes;
    assert_int_equal(rtm_io_read_axes(RUN_PATH, "/traces/p", -1, &axes), RTM_OK);
    assert_true(axes.has_dt && axes.dt_s == dt_s);
  }
}

/* A link planted at the partial name (here to /dev/full) is never written through: the run
 * file replaces the link, the file it pointed at is untouched. (A disk that fills during a
 * run, its cause named and nothing left, is tests/robustness/output_integrity.sh's, on a
 * small tmpfs.) */
static void test_partial_link_not_followed(void **state) {
  fixture_t *f = *state;
  if (!file_exists("/dev/full")) skip();
  remove(RUN_PATH);
  remove(RUN_PATH ".partial");
  assert_int_equal(symlink("/dev/full", RUN_PATH ".partial"), 0);
  rtm_output_t *output = NULL;
  assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, NULL, &output), RTM_OK);
  assert_int_equal(rtm_output_snapshots_begin(output, "p", SNAPSHOTS), RTM_OK);
  assert_int_equal(rtm_output_write_snapshot(output, "p", 0, 10, 10 * dt_s, f->snapshots), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  struct stat info;
  assert_int_equal(lstat(RUN_PATH, &info), 0);
  assert_true(S_ISREG(info.st_mode)); /* the run's own file, not the link */
  assert_int_equal(stat("/dev/full", &info), 0);
  assert_true(S_ISCHR(info.st_mode));
}

static void test_local_z_range_and_unwritten(void **state) {
  fixture_t *f = *state;
  rtm_io_volume_t local = f->volume;
  rtm_output_t *output = NULL;
  const size_t plane = (size_t)NY * NX;
  /* a large config text: beyond the 64 KiB of compact attribute storage */
  char *config = malloc(100001);
  for (int i = 0; i < 100000; ++i)
    config[i] = (char)('a' + i % 26);
  config[100000] = '\0';
  const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", config, NULL};
  local.z_offset = 2; /* planes 2 .. 4 of this rank */
  local.nz_local = 3;
  assert_int_equal(rtm_output_create(RUN_PATH, &local, &info, &output), RTM_OK);
  assert_int_equal(rtm_output_snapshots_begin(output, "p", 2), RTM_OK);
  assert_int_equal(rtm_output_write_snapshot(output, "p", 1, 7, 7 * dt_s, f->snapshots), RTM_OK);
  /* another slab written for its rank (rtm_mpi_write_slabs): planes 5 .. 5 of snapshot 0;
   * a range past the volume refused */
  assert_int_equal(rtm_output_set_planes(output, 5, 1), RTM_OK);
  assert_int_equal(rtm_output_write_snapshot(output, "p", 0, 3, 3 * dt_s, f->snapshots), RTM_OK);
  assert_int_not_equal(rtm_output_set_planes(output, NZ - 1, 2), RTM_OK);
  assert_int_not_equal(rtm_output_set_planes(output, -1, 1), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);

  rtm_dataset_t d = {0};
  assert_int_equal(rtm_io_read_dataset(RUN_PATH, "/snapshots/p", &d), RTM_OK);
  assert_int_equal(d.dims[1], NZ); /* the global volume, this rank's planes in place */
  const float *second = d.data + (size_t)NZ * plane;
  assert_memory_equal(second + 2 * plane, f->snapshots, 3 * plane * sizeof(float));
  assert_true(isnan(second[0]));         /* plane 0 belongs to another rank */
  assert_true(isnan(second[5 * plane])); /* so does plane 5 */
  assert_true(isnan(d.data[0]));         /* snapshot 0's plane 0 was never written */
  assert_memory_equal(d.data + 5 * plane, f->snapshots, plane * sizeof(float)); /* its plane 5 */
  rtm_dataset_release(&d);

  hid_t file = H5Fopen(RUN_PATH, H5F_ACC_RDONLY, H5P_DEFAULT);
  char *text = read_string_attr(file, "config");
  assert_int_equal(strlen(text), 100000);
  free(text);
  hid_t snapshots = H5Dopen2(file, "/snapshots/p", H5P_DEFAULT);
  int steps[2];
  read_attr(snapshots, "steps", H5T_NATIVE_INT, steps);
  assert_int_equal(steps[0], 3);
  assert_int_equal(steps[1], 7);
  H5Dclose(snapshots);
  H5Fclose(file);
  free(config);
}

/* Writes `values` over the whole dataset `name` of the partial file, through a handle of its
 * own, as the ranks' collective write does while rank 0's output has let go of it. */
static void write_aside(const char *name, const float *values) {
  hid_t file = H5Fopen(RUN_PATH ".partial", H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(file >= 0);
  hid_t dataset = H5Dopen2(file, name, H5P_DEFAULT);
  assert_true(dataset >= 0);
  assert_true(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0);
  H5Dclose(dataset);
  H5Fclose(file);
}

static int fill_time_of(hid_t file, const char *name) {
  hid_t dataset = H5Dopen2(file, name, H5P_DEFAULT), dcpl = H5Dget_create_plist(dataset);
  H5D_fill_time_t when = H5D_FILL_TIME_ERROR;
  H5Pget_fill_time(dcpl, &when);
  H5Pclose(dcpl);
  H5Dclose(dataset);
  return (int)when;
}

/* rtm_output_release_for_* / rtm_output_reacquire (the collective write's handover), with
 * serial HDF5: what is written aside while released is in the file, the output writes on
 * after taking it back (a snapshot's step, a volume, a window of streamed traces), and
 * undeclared targets are refused. rtm_output_expect_collective: datasets without a fill. */
static void test_release_and_reacquire(void **state) {
  fixture_t *f = *state;
  rtm_output_t *output = NULL;
  const size_t volume = (size_t)NZ * NY * NX;
  const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "[grid]", NULL};
  assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, &info, &output), RTM_OK);
  assert_int_equal(rtm_output_snapshots_begin(output, "p", 2), RTM_OK);
  assert_int_equal(rtm_output_traces_begin(output, "p", RECEIVERS, SAMPLES, 4, dt_s, NULL), RTM_OK);
  assert_int_equal(rtm_output_write_snapshot(output, "p", 0, 3, 3 * dt_s, f->snapshots), RTM_OK);
  assert_int_not_equal(rtm_output_release_for_snapshot(output, "q", 0), RTM_OK); /* undeclared */
  assert_int_not_equal(rtm_output_release_for_snapshot(output, "p", 2),
                       RTM_OK);                                                 /* past its count */
  assert_int_not_equal(rtm_output_release_for_volume(output, "image"), RTM_OK); /* not a path */

  assert_int_equal(rtm_output_release_for_snapshot(output, "p", 1), RTM_OK);
  float *series = malloc(2 * volume * sizeof *series); /* the dataset whole: entry 0 again */
  memcpy(series, f->snapshots, 2 * volume * sizeof *series);
  write_aside("/snapshots/p", series);
  assert_int_equal(rtm_output_reacquire(output, "p", 1, 9, 9 * dt_s), RTM_OK);

  assert_int_equal(rtm_output_release_for_volume(output, "/shots/0/image"), RTM_OK);
  write_aside("/shots/0/image", f->snapshots + volume);
  assert_int_equal(rtm_output_reacquire(output, NULL, 0, 0, 0.0), RTM_OK);
  assert_int_equal(rtm_output_write_volume(output, "/image", f->snapshots), RTM_OK);
  float window[RECEIVERS * 4];
  for (int r = 0; r < RECEIVERS; ++r)
    memcpy(window + r * 4, f->traces + (size_t)r * SAMPLES, 4 * sizeof *window);
  assert_int_equal(rtm_output_traces_window(output, "p", window, RECEIVERS, 0, 4), RTM_OK);
  rtm_output_expect_collective(output); /* the next datasets: no fill written */
  assert_int_equal(rtm_output_snapshots_begin(output, "q", 1), RTM_OK);
  assert_int_equal(rtm_output_write_snapshot(output, "q", 0, 5, 5 * dt_s, f->snapshots), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);

  rtm_dataset_t d = {0};
  assert_int_equal(rtm_io_read_dataset(RUN_PATH, "/snapshots/p", &d), RTM_OK);
  assert_memory_equal(d.data, series, 2 * volume * sizeof *series);
  rtm_dataset_release(&d);
  assert_int_equal(rtm_io_read_dataset(RUN_PATH, "/shots/0/image", &d), RTM_OK);
  assert_memory_equal(d.data, f->snapshots + volume, volume * sizeof(float));
  rtm_dataset_release(&d);
  assert_int_equal(rtm_io_read_dataset(RUN_PATH, "/image", &d), RTM_OK);
  assert_memory_equal(d.data, f->snapshots, volume * sizeof(float));
  rtm_dataset_release(&d);
  hid_t file = H5Fopen(RUN_PATH, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t snapshots = H5Dopen2(file, "/snapshots/p", H5P_DEFAULT);
  int steps[2];
  read_attr(snapshots, "steps", H5T_NATIVE_INT, steps);
  assert_int_equal(steps[0], 3);
  assert_int_equal(steps[1], 9); /* recorded by the reacquire */
  H5Dclose(snapshots);
  assert_int_equal(fill_time_of(file, "/snapshots/p"), H5D_FILL_TIME_IFSET);
  assert_int_equal(fill_time_of(file, "/snapshots/q"), H5D_FILL_TIME_NEVER);
  H5Fclose(file);
  free(series);
}

static void test_create_error_names_path(void **state) {
  fixture_t *f = *state;
  rtm_output_t *output = NULL;
  capture_t c;
  /* a regular file where the parent directory should be */
  FILE *blocker = fopen(OUT_DIR "/blocker", "w");
  if (!blocker) {
    mkdir(OUT_DIR, 0777);
    blocker = fopen(OUT_DIR "/blocker", "w");
  }
  assert_non_null(blocker);
  fclose(blocker);
  capture_begin(&c, 2);
  int status = rtm_output_create(OUT_DIR "/blocker/run.h5", &f->volume, NULL, &output);
  char *text = capture_end(&c);
  /* a path the user chose that cannot become a folder: a setting to fix (exit 2) */
  assert_int_equal(status, RTM_ERR_CONFIG);
  assert_null(output);
  assert_true(contains(text, OUT_DIR "/blocker"));
  free(text);
  remove(OUT_DIR "/blocker");
}

/* ---- a strict JSON syntax check: RFC 8259 grammar, no extensions ---- */
typedef struct {
  const char *p;
} json_cursor_t;

static void json_space(json_cursor_t *j) {
  while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')
    ++j->p;
}

static int json_value(json_cursor_t *j);

static int json_string_ok(json_cursor_t *j) {
  if (*j->p != '"') return 0;
  for (++j->p; *j->p != '"'; ++j->p) {
    if ((unsigned char)*j->p < 0x20) return 0;
    if (*j->p == '\\') {
      ++j->p;
      if (*j->p == 'u') {
        for (int i = 1; i <= 4; ++i)
          if (!isxdigit((unsigned char)j->p[i])) return 0;
        j->p += 4;
      } else if (!strchr("\"\\/bfnrt", *j->p) || !*j->p) {
        return 0;
      }
    }
  }
  ++j->p;
  return 1;
}

static int json_number_ok(json_cursor_t *j) {
  const char *p = j->p;
  if (*p == '-') ++p;
  if (*p == '0')
    ++p;
  else if (isdigit((unsigned char)*p))
    while (isdigit((unsigned char)*p))
      ++p;
  else
    return 0;
  if (*p == '.') {
    ++p;
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p))
      ++p;
  }
  if (*p == 'e' || *p == 'E') {
    ++p;
    if (*p == '+' || *p == '-') ++p;
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p))
      ++p;
  }
  j->p = p;
  return 1;
}

static int json_members(json_cursor_t *j, char close, int keyed) {
  ++j->p;
  json_space(j);
  if (*j->p == close) {
    ++j->p;
    return 1;
  }
  for (;;) {
    json_space(j);
    if (keyed) {
      if (!json_string_ok(j)) return 0;
      json_space(j);
      if (*j->p++ != ':') return 0;
    }
    if (!json_value(j)) return 0;
    json_space(j);
    if (*j->p == close) {
      ++j->p;
      return 1;
    }
    if (*j->p++ != ',') return 0;
  }
}

static int json_value(json_cursor_t *j) {
  json_space(j);
  switch (*j->p) {
  case '{': return json_members(j, '}', 1);
  case '[': return json_members(j, ']', 0);
  case '"': return json_string_ok(j);
  case 't': return strncmp(j->p, "true", 4) == 0 ? (j->p += 4, 1) : 0;
  case 'f': return strncmp(j->p, "false", 5) == 0 ? (j->p += 5, 1) : 0;
  case 'n': return strncmp(j->p, "null", 4) == 0 ? (j->p += 4, 1) : 0;
  default: return json_number_ok(j);
  }
}

static int json_valid(const char *text) {
  json_cursor_t j = {text};
  if (!json_value(&j)) return 0;
  json_space(&j);
  return *j.p == '\0';
}

static void test_json_checker_can_fail(void **state) {
  (void)state;
  assert_true(json_valid("{\"a\": [1, -2.5e3, true, null, \"x\\n\"], \"b\": {}}"));
  assert_false(json_valid("{\"a\": 1,}"));
  assert_false(json_valid("{\"a\": nan}"));
  assert_false(json_valid("{\"a\": \"tab\there\"}"));
  assert_false(json_valid("{\"a\": [1}"));
}

static char *read_file(const char *path) {
  FILE *file = fopen(path, "rb");
  assert_non_null(file);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  text[fread(text, 1, (size_t)size, file)] = '\0';
  fclose(file);
  return text;
}

static void test_report_json(void **state) {
  fixture_t *f = *state;
  const char *path = OUT_DIR "/report.json";
  const rtm_report_allocation_t allocations[2] = {
      {"wavefield \"p\"\n", "host", 1024, 2048, 0},
      {"model\\vp", "vmm-compressed", 2048, 4096, 1},
  };
  rtm_timing_t timings[2] = {{"setup", rtm_test_uniform(&f->rng, 0.1, 1.0)},
                             {"propagate", rtm_test_uniform(&f->rng, 1.0, 9.0)}};
  const rtm_run_info_t info = {
      "0.1.0", "abc123", "cuda", "NVIDIA H100\t80GB", "[grid]\n", "rtm3d model deck.ini"};
  rtm_report_t report = {.command = "model",
                         .info = &info,
                         .volume = &f->volume,
                         .steps = 500,
                         .dt_s = NAN, /* not finite: must come out as null */
                         .model_precision = "fp16",
                         .timings = timings,
                         .timing_count = 2,
                         .mcells_per_s = 1234.5,
                         .allocations = allocations,
                         .allocation_count = 2,
                         .allocation_total_bytes = 3072,
                         .output_path = "out/run.h5"};
  assert_int_equal(rtm_report_write_json(path, &report), RTM_OK);
  assert_false(file_exists(OUT_DIR "/report.json.partial"));
  char *text = read_file(path);
  assert_true(json_valid(text));
  const char *expected[] = {"\"format_version\": 1",
                            "\"created\": \"20",
                            "\"host\": \"",
                            "\"command_line\": \"rtm3d model deck.ini\"",
                            "\"command\": \"model\"",
                            "\"version\": \"0.1.0\"",
                            "\"git_revision\": \"abc123\"",
                            "\"backend\": \"cuda\"",
                            "\"device\": \"NVIDIA H100\\t80GB\"",
                            "\"n\": [10, 7, 6]",
                            "\"spacing_m\": [5, 6, 7]",
                            "\"origin_m\": [-20, 0, 15]",
                            "\"steps\": 500",
                            "\"dt_s\": null",
                            "\"model_precision\": \"fp16\"",
                            "\"timings_s\": {\"setup\": ",
                            "\"propagate\": ",
                            "\"mcells_per_s\": 1234.5",
                            "\"label\": \"wavefield \\\"p\\\"\\n\"",
                            "\"label\": \"model\\\\vp\"",
                            "\"strategy\": \"vmm-compressed\"",
                            "\"bytes\": 2048",
                            "\"reserved_bytes\": 4096",
                            "\"compressed\": true",
                            "\"compressed\": false",
                            "\"memory_total_bytes\": 3072",
                            "\"output_path\": \"out/run.h5\""};
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; ++i) {
    if (!contains(text, expected[i])) fprintf(stderr, "missing %s in\n%s\n", expected[i], text);
    assert_true(contains(text, expected[i]));
  }
  assert_false(contains(text, "\"shots\"")); /* a single-shot run's report has none */
  free(text);

  /* a run of many shots: the count and each named series, one value per shot */
  const double propagate_s[2] = {1.5, 2.25}, write_s[2] = {0.125, NAN};
  const rtm_report_shot_values_t shot_values[2] = {{"propagate_s", propagate_s},
                                                   {"write_s", write_s}};
  report.shot_count = 2;
  report.shot_values = shot_values;
  report.shot_value_count = 2;
  assert_int_equal(rtm_report_write_json(path, &report), RTM_OK);
  text = read_file(path);
  assert_true(json_valid(text));
  if (!contains(text, "\"shots\": {\"count\": 2, \"propagate_s\": [1.5, 2.25], \"write_s\": "
                      "[0.125, null]},\n"))
    fail_msg("no shots line in\n%s", text);
  free(text);
}

#define XMF_PATH OUT_DIR "/nested/run.xmf"

/* The dimensions of the <DataItem ...> tag that ends at `end` (its '>'), in `dims`. */
static int item_dims(const char *text, const char *end, hsize_t dims[4]) {
  const char *tag = end;
  while (tag > text && strncmp(tag, "<DataItem", 9) != 0)
    --tag;
  const char *at = strstr(tag, "Dimensions=\"");
  assert_true(at && at < end);
  at += strlen("Dimensions=\"");
  int count = 0;
  while (*at != '"' && count < 4) {
    char *next = NULL;
    dims[count++] = (hsize_t)strtoull(at, &next, 10);
    at = next;
  }
  return count;
}

/* The XDMF sidecar: every HDF data item it names exists in the run file with the shape it
 * states, the mesh has the volume's origin and spacing (z, y, x), each snapshot is a time
 * step; none for a failed run or a run of traces alone. */
static void test_xdmf_sidecar(void **state) {
  fixture_t *f = *state;
  const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "text", NULL};
  const size_t volume = (size_t)NZ * NY * NX;
  rtm_output_t *output = NULL;
  remove(XMF_PATH);
  write_run(f, &info, 0); /* failed: no sidecar */
  assert_false(file_exists(XMF_PATH));
  assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, &info, &output), RTM_OK);
  assert_int_equal(rtm_output_snapshots_begin(output, "p", SNAPSHOTS), RTM_OK);
  for (int k = 0; k < SNAPSHOTS; ++k)
    assert_int_equal(rtm_output_write_snapshot(output, "p", k, 10 * (k + 1), 10 * (k + 1) * dt_s,
                                               f->snapshots + (size_t)k * volume),
                     RTM_OK);
  assert_int_equal(rtm_output_write_volume(output, "/image", f->snapshots), RTM_OK);
  assert_int_equal(rtm_output_write_volume(output, "/shots/1/image", f->snapshots), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  char *text = read_file(XMF_PATH);
  assert_non_null(text);
  assert_non_null(strstr(text, "TopologyType=\"3DCoRectMesh\" Dimensions=\"6 7 10\""));
  assert_non_null(strstr(text, "Format=\"XML\">15 0 -20</DataItem>")); /* origin z y x */
  assert_non_null(strstr(text, "Format=\"XML\">7 6 5</DataItem>"));    /* spacing z y x */
  for (int k = 0; k < SNAPSHOTS; ++k) {
    char step[64], slab[128];
    snprintf(step, sizeof step, "<Time Value=\"%.9g\"/>", 10 * (k + 1) * dt_s);
    if (!strstr(text, step)) fail_msg("no '%s' in\n%s", step, text);
    /* the step's slab of the series: start k, count 1 x nz x ny x nx */
    snprintf(slab, sizeof slab, "Format=\"XML\">%d 0 0 0 1 1 1 1 1 6 7 10</DataItem>", k);
    if (!strstr(text, slab)) fail_msg("no '%s' in\n%s", slab, text);
  }
  hid_t file = H5Fopen(RUN_PATH, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(file >= 0);
  int items = 0;
  for (const char *at = strstr(text, "Format=\"HDF\">"); at;
       at = strstr(at + 1, "Format=\"HDF\">")) {
    const char *end = strchr(at, '>'), *close = strchr(end, '<');
    hsize_t stated[4], found[4];
    const int rank = item_dims(text, end, stated);
    char reference[256];
    snprintf(reference, sizeof reference, "%.*s", (int)(close - end - 1), end + 1);
    assert_true(strncmp(reference, "run.h5:", 7) == 0); /* by file name: the pair moves */
    hid_t dataset = H5Dopen2(file, reference + 7, H5P_DEFAULT);
    if (dataset < 0) fail_msg("the sidecar names %s, which run.h5 lacks", reference);
    hid_t space = H5Dget_space(dataset);
    assert_int_equal(H5Sget_simple_extent_ndims(space), rank);
    H5Sget_simple_extent_dims(space, found, NULL);
    for (int d = 0; d < rank; ++d)
      if (found[d] != stated[d])
        fail_msg("%s: dimension %d is %llu, the sidecar says %llu", reference, d,
                 (unsigned long long)found[d], (unsigned long long)stated[d]);
    H5Sclose(space);
    H5Dclose(dataset);
    ++items;
  }
  H5Fclose(file);
  assert_int_equal(items, SNAPSHOTS + 2); /* a slab of the series a step, two volumes */
  free(text);
  /* traces alone: no volume to show, and no stale sidecar left */
  assert_int_equal(rtm_output_create(RUN_PATH, &f->volume, &info, &output), RTM_OK);
  assert_int_equal(rtm_output_write_traces(output, "p", f->traces, RECEIVERS, SAMPLES, dt_s,
                                           &f->receivers[0][0]),
                   RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  assert_false(file_exists(XMF_PATH));
}

/* An empty series (0 snapshots, written by another tool): reading an entry says so, with no
 * wrapped-around range. */
static void test_empty_series(void **unused) {
  (void)unused;
  const char *path = OUT_DIR "/empty.h5";
  mkdir(OUT_DIR, 0777);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(file >= 0);
  const hsize_t dims[4] = {0, 3, 4, 5};
  hid_t space = H5Screate_simple(4, dims, NULL);
  hid_t dataset =
      H5Dcreate2(file, "p", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(dataset >= 0);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Fclose(file);
  rtm_dataset_t d = {0};
  capture_t c;
  capture_begin(&c, 2);
  const int status = rtm_io_read_dataset_entry(path, "/p", 0, &d);
  char *text = capture_end(&c);
  assert_int_equal(status, RTM_ERR_INPUT);
  if (!contains(text, "/p holds no entries (its first dimension is 0)") ||
      contains(text, "18446744073709551615"))
    fail_msg("the message for an empty series: %s", text);
  free(text);
  remove(path);
}

int main(void) {
  rtm_io_startup(); /* before any HDF5 call, as rtm3d does */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_output_round_trip, setup, teardown),
      cmocka_unit_test(test_empty_series),
      cmocka_unit_test_setup_teardown(test_xdmf_sidecar, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failed_run_leaves_no_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_partial_link_not_followed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_traces_in_windows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_local_z_range_and_unwritten, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unwritten_snapshot_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_volume_in_parts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_release_and_reacquire, setup, teardown),
      cmocka_unit_test_setup_teardown(test_create_error_names_path, setup, teardown),
      cmocka_unit_test(test_json_checker_can_fail),
      cmocka_unit_test_setup_teardown(test_report_json, setup, teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

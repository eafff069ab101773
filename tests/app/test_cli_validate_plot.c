/* rtm3d validate and rtm3d plot, run as a user runs them (the binary is the test's first
 * argument): pass on identical files, fail on a 1e-3 relative perturbation, NaN and shape
 * mismatches, exit 2 on unreadable files and bad usage; plot writes the slice (by its index
 * or its place in metres), gather and default name it promises, titles them with the plane's
 * place and the shot's, draws a model over its whole range, and refuses ranges. */
#include "rtm_test_io.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <hdf5.h>

#include "rtm_test_png.h"
#include "rtm_test_main.h"
#include "rtm_io.h"
#include "rtm_status.h"

#define DIR "test_cli_validate_plot.d"
#define REF_PATH DIR "/ref.h5"
#define RUN_PATH DIR "/run.h5"

enum { NX = 9, NY = 8, NZ = 6, SNAPSHOTS = 3, RECEIVERS = 4, SAMPLES = 21 };

typedef struct {
  rtm_test_rng_t rng;
  rtm_io_volume_t volume;
  float *snapshots; /* [SNAPSHOTS][NZ][NY][NX] */
  float *traces;    /* [RECEIVERS][SAMPLES] */
  float *image;     /* [NZ][NY][NX] */
  double receivers[RECEIVERS][3];
} fixture_t;

static const size_t volume = (size_t)NZ * NY * NX;

static void write_image(const char *path, const char *name, const float *image,
                        const size_t *dims) {
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(file >= 0);
  hsize_t h5_dims[3] = {dims[0], dims[1], dims[2]};
  hid_t space = H5Screate_simple(3, h5_dims, NULL);
  hid_t dataset =
      H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(dataset >= 0);
  assert_true(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, image) >= 0);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Fclose(file);
}

/* A run file like `rtm3d model` writes, plus an /image volume. */
static void write_file(const fixture_t *f, const char *path, const float *snapshots,
                       const float *traces, const float *image) {
  rtm_output_t *output = NULL;
  const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "[grid]\n", NULL};
  assert_int_equal(rtm_output_create(path, &f->volume, &info, &output), RTM_OK);
  assert_int_equal(rtm_output_snapshots_begin(output, "p", SNAPSHOTS), RTM_OK);
  for (int k = 0; k < SNAPSHOTS; ++k)
    assert_int_equal(rtm_output_write_snapshot(output, "p", k, k + 1, (k + 1) * 1e-3,
                                               snapshots + (size_t)k * volume),
                     RTM_OK);
  assert_int_equal(
      rtm_output_write_traces(output, "p", traces, RECEIVERS, SAMPLES, 1e-3, &f->receivers[0][0]),
      RTM_OK);
  const double source_m[3] = {15.0, 25.0, 5.0};
  assert_int_equal(rtm_output_write_source(output, source_m), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  const size_t dims[3] = {NZ, NY, NX};
  write_image(path, "/image", image, dims);
}

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  const int n[3] = {NX, NY, NZ};
  const double spacing[3] = {10.0, 10.0, 10.0};
  f->rng = rtm_test_seed("test_cli_validate_plot");
  f->volume = (rtm_io_volume_t){.n = {n[0], n[1], n[2]},
                                .spacing_m = {spacing[0], spacing[1], spacing[2]},
                                .z_offset = 0,
                                .nz_local = n[2]};
  f->snapshots = malloc(sizeof(float) * SNAPSHOTS * volume);
  f->traces = malloc(sizeof(float) * RECEIVERS * SAMPLES);
  f->image = malloc(sizeof(float) * volume);
  for (size_t i = 0; i < SNAPSHOTS * volume; ++i)
    f->snapshots[i] = (float)rtm_test_uniform(&f->rng, -1.0, 1.0);
  for (size_t i = 0; i < (size_t)RECEIVERS * SAMPLES; ++i)
    f->traces[i] = (float)rtm_test_uniform(&f->rng, -1.0, 1.0);
  for (size_t i = 0; i < volume; ++i)
    f->image[i] = (float)rtm_test_uniform(&f->rng, 0.5, 2.0);
  for (int r = 0; r < RECEIVERS; ++r)
    for (int a = 0; a < 3; ++a)
      f->receivers[r][a] = 10.0 * r + a;
  write_file(f, REF_PATH, f->snapshots, f->traces, f->image);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  free(f->snapshots);
  free(f->traces);
  free(f->image);
  free(f);
  const char *files[] = {REF_PATH,
                         RUN_PATH,
                         DIR "/garbage.h5",
                         DIR "/out.png",
                         DIR "/ref.snapshots_p.k2.z3.png",
                         DIR "/ref.traces_p.png",
                         DIR "/ref.image.y2.png",
                         DIR "/vp.png",
                         DIR "/gathers.h5",
                         DIR "/gathers.png",
                         DIR "/gathers.gathers_offset.png",
                         DIR "/flat.h5"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i)
    remove(files[i]);
  remove(DIR);
  return 0;
}

typedef struct {
  int exit_code;
  char *out, *err;
} command_result_t;

/* Runs `rtm3d ARGS...` (args[0] is the subcommand) with its stdout and stderr captured. */
static command_result_t run_rtm3d(const char *const *args) {
  char *argv[32] = {"rtm3d"};
  int argc = 1;
  for (; args[argc - 1] && argc < 31; ++argc)
    argv[argc] = (char *)args[argc - 1];
  argv[argc] = NULL;
  command_result_t r;
  capture_t out, err;
  capture_begin(&err, 2);
  capture_begin(&out, 1);
  const pid_t child = fork();
  if (child == 0) {
    execv(rtm_test_rtm3d, argv);
    _exit(127);
  }
  int wait_status = 0;
  const int waited = child > 0 && waitpid(child, &wait_status, 0) == child;
  r.out = capture_end(&out);
  r.err = capture_end(&err);
  assert_true(waited);
  assert_true(WIFEXITED(wait_status)); /* a crash is never an answer */
  r.exit_code = WEXITSTATUS(wait_status);
  return r;
}

static void release(command_result_t *r) {
  free(r->out);
  free(r->err);
}

static void test_identical_files_pass(void **state) {
  fixture_t *f = *state;
  write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
  const char *args[] = {"validate", RUN_PATH, REF_PATH, NULL};
  command_result_t r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 0);
  assert_true(contains(r.out, "/snapshots/p[0]"));
  assert_true(contains(r.out, "/snapshots/p[2]"));
  assert_true(contains(r.out, "/traces/p"));
  assert_true(contains(r.out, "/image"));
  assert_false(contains(r.out, "receivers"));
  assert_true(contains(r.out, "5 of 5 comparisons pass"));
  assert_false(contains(r.out, "FAIL"));
  release(&r);
}

static void test_perturbation_fails(void **state) {
  fixture_t *f = *state;
  /* snapshot 1 scaled by 1 + 1e-3: relative L2 error exactly 1e-3 (to float rounding),
   * a hundred times the default rtol of 1e-5 */
  float *perturbed = malloc(sizeof(float) * SNAPSHOTS * volume);
  memcpy(perturbed, f->snapshots, sizeof(float) * SNAPSHOTS * volume);
  for (size_t i = volume; i < 2 * volume; ++i)
    perturbed[i] *= 1.001f;
  write_file(f, RUN_PATH, perturbed, f->traces, f->image);

  const char *args[] = {"validate", RUN_PATH, REF_PATH, NULL};
  command_result_t r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 1);
  const char *row = strstr(r.out, "/snapshots/p[1]");
  assert_non_null(row);
  const char *end = strchr(row, '\n');
  assert_non_null(strstr(row, "FAIL"));
  assert_true(strstr(row, "FAIL") < end);
  /* the printed relative error is the perturbation, 1e-3; 1e-6 allows for 1.001f being
   * 1.00100005 and the float rounding of each perturbed value (~6e-8 relative) */
  double rel_error = 0.0, max_error = 0.0;
  assert_int_equal(sscanf(row, "%*s %*s %lf %lf", &rel_error, &max_error), 2);
  assert_true(fabs(rel_error - 1e-3) < 1e-6);
  assert_true(max_error > 0.0 && max_error <= 1.001e-3); /* |values| < 1 */
  assert_true(contains(r.out, "4 of 5 comparisons pass"));
  release(&r);

  /* a tolerance above the perturbation passes it; --atol below its max error fails it */
  const char *loose[] = {"validate", RUN_PATH, REF_PATH, "--rtol", "2e-3", NULL};
  r = run_rtm3d(loose);
  assert_int_equal(r.exit_code, 0);
  release(&r);
  const char *strict[] = {"validate", RUN_PATH, REF_PATH, "--rtol=2e-3", "--atol", "1e-6", NULL};
  r = run_rtm3d(strict);
  assert_int_equal(r.exit_code, 1);
  release(&r);
  /* only the traces: the perturbed snapshot is not compared */
  const char *some[] = {"validate", RUN_PATH, REF_PATH, "--datasets", "traces/p,/image", NULL};
  r = run_rtm3d(some);
  assert_int_equal(r.exit_code, 0);
  assert_false(contains(r.out, "/snapshots"));
  assert_true(contains(r.out, "2 of 2 comparisons pass"));
  release(&r);
  /* a name the reference lacks: said once, exit 2, before any row */
  const char *nope[] = {"validate", RUN_PATH, REF_PATH, "--datasets", "/nope", NULL};
  r = run_rtm3d(nope);
  assert_int_equal(r.exit_code, 2);
  const char *said = strstr(r.err, "--datasets names /nope, which reference");
  assert_non_null(said);
  assert_null(strstr(said + 1, "--datasets names /nope"));
  assert_false(contains(r.out, "grid (where)"));
  release(&r);
  /* an option given twice is refused, not the last taken */
  const char *twice[] = {"validate", RUN_PATH, REF_PATH, "--rtol", "1e-3", "--rtol=1e-2", NULL};
  r = run_rtm3d(twice);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, "--rtol is given twice"));
  release(&r);
  /* a group: said once, exit 2, before any row (it failed as HDF5 errors, a false grid row
   * and no verdict) */
  const char *group[] = {"validate", RUN_PATH, REF_PATH, "--datasets", "/traces/p,/snapshots",
                         NULL};
  r = run_rtm3d(group);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, "--datasets names /snapshots, which in reference"));
  assert_false(contains(r.err, "HDF5"));
  assert_false(contains(r.out, "grid (where)"));
  release(&r);
  free(perturbed);
}

/* validate RUN_PATH REF_PATH with its defaults, which exits `want`. */
static command_result_t validate_default(int want) {
  const char *args[] = {"validate", RUN_PATH, REF_PATH, NULL};
  command_result_t r = run_rtm3d(args);
  assert_int_equal(r.exit_code, want);
  return r;
}

/* A migration with rtm.shot_images writes /shots/<k>/image beside /image: a run whose second
 * shot image differs fails without --datasets (probe Q, Q3: "2 of 2 comparisons pass"). */
static void test_shot_images_compared(void **state) {
  fixture_t *f = *state;
  const size_t dims[3] = {NZ, NY, NX};
  float *doubled = malloc(sizeof(float) * volume);
  for (size_t i = 0; i < volume; ++i)
    doubled[i] = 2.0f * f->image[i];
  write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
  const char *paths[2] = {RUN_PATH, REF_PATH};
  for (int k = 0; k < 2; ++k) {
    hid_t file = H5Fopen(paths[k], H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(file >= 0);
    const char *groups[] = {"/shots", "/shots/0", "/shots/1"};
    for (int g = 0; g < 3; ++g) {
      hid_t made = H5Gcreate2(file, groups[g], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      assert_true(made >= 0);
      H5Gclose(made);
    }
    H5Fclose(file);
    write_image(paths[k], "/shots/0/image", f->image, dims);
    write_image(paths[k], "/shots/1/image", k == 0 ? doubled : f->image, dims);
  }
  command_result_t r = validate_default(1);
  assert_true(contains(r.out, "/shots/0/image"));
  const char *row = strstr(r.out, "/shots/1/image");
  assert_non_null(row);
  assert_true(strstr(row, "FAIL") < strchr(row, '\n'));
  assert_true(contains(r.out, "6 of 7 comparisons pass"));
  release(&r);
  free(doubled);
}

/* /traces/receivers of `path` rewritten with `receivers`. */
static void write_receivers(const char *path, const double receivers[RECEIVERS][3]) {
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t dataset = H5Dopen2(file, "/traces/receivers", H5P_DEFAULT);
  assert_true(dataset >= 0 &&
              H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, receivers) >= 0);
  H5Dclose(dataset);
  H5Fclose(file);
}

/* The root attribute `origin` of `path` rewritten with `origin`. */
static void write_origin(const char *path, const double origin[3]) {
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(file >= 0);
  hid_t attribute = H5Aopen(file, "origin", H5P_DEFAULT);
  assert_true(attribute >= 0 && H5Awrite(attribute, H5T_NATIVE_DOUBLE, origin) >= 0);
  H5Aclose(attribute);
  H5Fclose(file);
}

/* Where the datasets lie is compared too (probe S, S5: a survey 1000 m away passed on its
 * values): a run whose grid origin and receivers moved fails, a row each. */
static void test_geometry_compared(void **state) {
  fixture_t *f = *state;
  write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
  const double origin[3] = {1000.0, 1000.0, 0.0};
  write_origin(RUN_PATH, origin);
  double receivers[RECEIVERS][3];
  memcpy(receivers, f->receivers, sizeof receivers);
  receivers[2][0] += 1000.0;
  write_receivers(RUN_PATH, receivers);
  command_result_t r = validate_default(1);
  assert_true(contains(r.out, "(where)"));
  assert_true(contains(r.out, "grid origin (1000, 1000, 0) m in run, (0, 0, 0) m in reference"));
  assert_true(contains(r.out, "its receivers (/traces/receivers) differ"));
  release(&r);
}

/* Far from the origin the same holds: positions agree to a micrometre, the receivers
 * (float in the file) to two of their ulps, not to a millionth of the coordinate, under
 * which a probe's survey 4 m north at northing 5000 km passed. The same positions there
 * pass. */
static void test_geometry_far_from_origin(void **state) {
  fixture_t *f = *state;
  double origin[3] = {500000.0, 5000000.0, 0.0}, receivers[RECEIVERS][3];
  memcpy(receivers, f->receivers, sizeof receivers);
  for (int r = 0; r < RECEIVERS; ++r)
    receivers[r][1] += origin[1];
  write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
  const char *paths[2] = {RUN_PATH, REF_PATH};
  for (int k = 0; k < 2; ++k) {
    write_origin(paths[k], origin);
    write_receivers(paths[k], receivers);
  }
  command_result_t r = validate_default(0);
  release(&r);
  origin[1] += 4.0;
  for (int i = 0; i < RECEIVERS; ++i)
    receivers[i][1] += 4.0;
  write_origin(RUN_PATH, origin);
  write_receivers(RUN_PATH, receivers);
  r = validate_default(1);
  assert_true(contains(
      r.out, "grid origin (500000, 5000004, 0) m in run, (500000, 5000000, 0) m in reference"));
  assert_true(contains(r.out, "its receivers (/traces/receivers) differ"));
  release(&r);
}

/* The attribute `name` of `object` in `path` replaced by `count` doubles (0: removed). */
static void set_attribute(const char *path, const char *object, const char *name,
                          const double *values, hsize_t count) {
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(file >= 0);
  if (H5Aexists_by_name(file, object, name, H5P_DEFAULT) > 0)
    assert_true(H5Adelete_by_name(file, object, name, H5P_DEFAULT) >= 0);
  if (count > 0) {
    hid_t space = H5Screate_simple(1, &count, NULL);
    hid_t attribute = H5Acreate_by_name(file, object, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                        H5P_DEFAULT, H5P_DEFAULT);
    assert_true(attribute >= 0 && H5Awrite(attribute, H5T_NATIVE_DOUBLE, values) >= 0);
    H5Aclose(attribute);
    H5Sclose(space);
  }
  H5Fclose(file);
}

/* A damaged position, sample interval or grid fails, on either side, and a position or an
 * interval on one side only fails (probe W, W2: an Inf source, a receiver Inf in the
 * reference, a deleted receiver table, a doubled or missing dt and a NaN spacing passed). */
static void test_damaged_geometry_fails(void **state) {
  fixture_t *f = *state;
  static const struct {
    int reference; /* damage the reference, not the run */
    const char *object, *attribute;
    double values[3];
    hsize_t count;
    const char *said;
  } cases[] = {
      {0, "/traces", "source", {INFINITY, 25.0, 5.0}, 3, "the source in the run cannot be read"},
      {1, "/traces/p", "dt", {2e-3}, 1, "samples every 0.001 s in run, 0.002 s in reference"},
      {0, "/traces/p", "dt", {0.0}, 0, "a sample interval (attribute dt) in the reference only"},
      {0, "/", "spacing", {NAN, NAN, NAN}, 3, "the grid of the run cannot be read"},
      {1, "/traces", "source", {0.0}, 0, "a source in the run only"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
    write_file(f, REF_PATH, f->snapshots, f->traces, f->image);
    set_attribute(cases[c].reference ? REF_PATH : RUN_PATH, cases[c].object, cases[c].attribute,
                  cases[c].values, cases[c].count);
    command_result_t r = validate_default(1);
    if (!contains(r.out, cases[c].said)) printf("expected \"%s\" in:\n%s\n", cases[c].said, r.out);
    assert_true(contains(r.out, cases[c].said));
    release(&r);
  }
  /* a receiver at Inf in the reference; the receiver table gone from the reference */
  write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
  double receivers[RECEIVERS][3];
  memcpy(receivers, f->receivers, sizeof receivers);
  receivers[1][0] = INFINITY;
  write_receivers(REF_PATH, receivers);
  command_result_t r = validate_default(1);
  assert_true(
      contains(r.out, "its receivers (/traces/receivers) differ: a position that is not finite"));
  release(&r);
  hid_t file = H5Fopen(REF_PATH, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(H5Ldelete(file, "/traces/receivers", H5P_DEFAULT) >= 0);
  H5Fclose(file);
  r = validate_default(1);
  assert_true(contains(r.out, "receivers (/traces/receivers) in the run only"));
  release(&r);
}

/* A dataset only the run holds fails too (probe T, T4: a run of 3 shots passed against a
 * reference of 2), but not when --datasets chose what to compare. */
static void test_run_only_dataset_fails(void **state) {
  fixture_t *f = *state;
  const size_t dims[3] = {NZ, NY, NX};
  write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
  write_image(RUN_PATH, "/extra", f->image, dims);
  command_result_t r = validate_default(1);
  assert_true(contains(r.out, "/extra"));
  assert_true(contains(r.out, "in run, missing in"));
  assert_true(contains(r.out, "5 of 6 comparisons pass"));
  release(&r);
  const char *chosen[] = {"validate", RUN_PATH, REF_PATH, "--datasets", "/image", NULL};
  r = run_rtm3d(chosen);
  assert_int_equal(r.exit_code, 0);
  release(&r);
}

static void test_nan_shape_and_zero_reference(void **state) {
  fixture_t *f = *state;
  float *traces = malloc(sizeof(float) * RECEIVERS * SAMPLES);
  memcpy(traces, f->traces, sizeof(float) * RECEIVERS * SAMPLES);
  traces[7] = NAN;
  write_file(f, RUN_PATH, f->snapshots, traces, f->image);
  const char *args[] = {"validate", RUN_PATH, REF_PATH, NULL};
  command_result_t r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 1);
  assert_true(contains(r.out, "1 non-finite"));
  release(&r);

  /* /image with another shape in the run */
  write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
  hid_t file = H5Fopen(RUN_PATH, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(file, "/image", H5P_DEFAULT);
  H5Fclose(file);
  const size_t dims[3] = {NZ, NY, NX - 1};
  write_image(RUN_PATH, "/image", f->image, dims);
  r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 1);
  assert_true(contains(r.out, "shape 6x8x8 in run, 6x8x9 in reference"));
  release(&r);

  /* a reference of zeros: the error is the absolute norm, and says so */
  memset(traces, 0, sizeof(float) * RECEIVERS * SAMPLES);
  write_file(f, REF_PATH, f->snapshots, traces, f->image);
  write_file(f, RUN_PATH, f->snapshots, traces, f->image);
  r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 0);
  assert_true(contains(r.out, "absolute"));
  release(&r);
  /* every value NaN against a reference that is not zero: the non-finite count, and no
   * word of a zero reference (probe R, R4) */
  for (size_t i = 0; i < (size_t)RECEIVERS * SAMPLES; ++i)
    traces[i] = NAN;
  write_file(f, REF_PATH, f->snapshots, f->traces, f->image);
  write_file(f, RUN_PATH, f->snapshots, traces, f->image);
  r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 1);
  assert_true(contains(r.out, "non-finite values"));
  assert_false(contains(r.out, "reference is all zero"));
  release(&r);
  free(traces);
}

static void test_usage_and_unreadable_files(void **state) {
  (void)state;
  FILE *garbage = fopen(DIR "/garbage.h5", "wb");
  fputs("this is not HDF5 at all, just text in a file with an .h5 name\n", garbage);
  fclose(garbage);
  const char *bad_run[] = {"validate", DIR "/garbage.h5", REF_PATH, NULL};
  command_result_t r = run_rtm3d(bad_run);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, DIR "/garbage.h5"));
  release(&r);
  const char *missing_ref[] = {"validate", REF_PATH, DIR "/missing.h5", NULL};
  r = run_rtm3d(missing_ref);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, DIR "/missing.h5"));
  release(&r);
  const char *one_file[] = {"validate", REF_PATH, NULL};
  r = run_rtm3d(one_file);
  assert_int_equal(r.exit_code, 2);
  release(&r);
  const char *bad_rtol[] = {"validate", REF_PATH, REF_PATH, "--rtol", "tight", NULL};
  r = run_rtm3d(bad_rtol);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, "--rtol"));
  release(&r);
  const char *help[] = {"validate", "--help", NULL};
  r = run_rtm3d(help);
  assert_int_equal(r.exit_code, 0);
  assert_true(contains(r.out, "usage: rtm3d validate"));
  release(&r);
}

static void test_plot_snapshot_slice_and_default_name(void **state) {
  fixture_t *f = *state;
  /* snapshot 2, plane z = 3: a positive and a negative cell where we can find them */
  float *snapshots = f->snapshots;
  float *plane = snapshots + 2 * volume + 3 * (size_t)NY * NX;
  for (size_t i = 0; i < (size_t)NY * NX; ++i)
    plane[i] = 0.0f;
  plane[1 * NX + 2] = 5.0f;  /* y = 1, x = 2 */
  plane[6 * NX + 7] = -5.0f; /* y = 6, x = 7 */
  write_file(f, REF_PATH, snapshots, f->traces, f->image);
  const char *args[] = {"plot", REF_PATH, "snapshots/p", "--clip", "100", "--raw", NULL};
  command_result_t r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 0);
  release(&r);
  test_png_t image;
  assert_int_equal(test_png_read(DIR "/ref.snapshots_p.k2.z3.png", &image), 0);
  assert_int_equal(image.width, NX);
  assert_int_equal(image.height, NY);
  assert_true(test_png_is(&image, 2, 1, 255, 0, 0));
  assert_true(test_png_is(&image, 7, 6, 0, 0, 255));
  assert_true(test_png_is(&image, 0, 0, 255, 255, 255));
  /* the plane by its place in metres and its index (10 m cells from 0) */
  assert_string_equal(image.title, REF_PATH " /snapshots/p[2], z = 30 m (index 3), clip \xb1"
                                            "5");
  free(image.rgb);

  const char *section[] = {"plot", REF_PATH, "/image", "--slice", "y=2", "--raw", NULL};
  r = run_rtm3d(section);
  assert_int_equal(r.exit_code, 0);
  release(&r);
  assert_int_equal(test_png_read(DIR "/ref.image.y2.png", &image), 0);
  assert_int_equal(image.width, NX); /* x across, depth down */
  assert_int_equal(image.height, NZ);
  assert_true(contains(image.title, REF_PATH " /image, y = 20 m (index 2), clip"));
  unsigned char *by_index = image.rgb;

  /* the same plane in metres: y=20m is index 2, the same picture; y=24m lies between planes,
   * the nearest (y = 20 m) is shown and said */
  const char *in_metres[2] = {"y=20m", "y=24m"};
  for (int k = 0; k < 2; ++k) {
    const char *by_metres[] = {"plot",  REF_PATH, "/image",       "--slice", in_metres[k],
                               "--raw", "-o",     DIR "/out.png", NULL};
    r = run_rtm3d(by_metres);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(contains(r.err, "y = 24 m lies between two planes: the nearest shown, "
                                     "y = 20 m (index 2)"),
                     k == 1);
    release(&r);
    test_png_t placed;
    assert_int_equal(test_png_read(DIR "/out.png", &placed), 0);
    assert_true(contains(placed.title, REF_PATH " /image, y = 20 m (index 2), clip"));
    assert_int_equal(placed.width, NX);
    assert_int_equal(placed.height, NZ);
    assert_memory_equal(placed.rgb, by_index, (size_t)NX * NZ * 3);
    free(placed.rgb);
  }
  free(by_index);

  const char *x_section[] = {"plot", REF_PATH, "/snapshots/p", "--index", "0", "--slice",
                             "x=4",  "-o",     DIR "/out.png", "--raw",   NULL};
  r = run_rtm3d(x_section);
  assert_int_equal(r.exit_code, 0);
  release(&r);
  assert_int_equal(test_png_read(DIR "/out.png", &image), 0);
  assert_int_equal(image.width, NY);
  assert_int_equal(image.height, NZ);
  free(image.rgb);
}

static void test_plot_gather_time_downward(void **state) {
  fixture_t *f = *state;
  float *traces = calloc((size_t)RECEIVERS * SAMPLES, sizeof *traces);
  traces[1 * SAMPLES + 5] = 3.0f;   /* receiver 1, sample 5 */
  traces[3 * SAMPLES + 17] = -3.0f; /* receiver 3, sample 17 */
  write_file(f, REF_PATH, f->snapshots, traces, f->image);
  const char *args[] = {"plot", REF_PATH, "/traces/p", "--raw", NULL};
  command_result_t r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 0);
  release(&r);
  test_png_t image;
  assert_int_equal(test_png_read(DIR "/ref.traces_p.png", &image), 0);
  assert_int_equal(image.width, RECEIVERS);
  assert_int_equal(image.height, SAMPLES);
  assert_true(test_png_is(&image, 1, 5, 255, 0, 0));
  assert_true(test_png_is(&image, 3, 17, 0, 0, 255));
  assert_true(test_png_is(&image, 0, 0, 255, 255, 255));
  /* the title names the shot (attribute source of /traces) */
  assert_true(contains(image.title, REF_PATH " /traces/p, shot at (15, 25, 5) m, clip"));
  free(image.rgb);
  free(traces);
}

/* Dark pixels (all channels below 100) in column x between rows y0 and y1. */
static int dark_run(const test_png_t *image, int x, int y0, int y1) {
  int dark = 0;
  for (int y = y0; y < y1; ++y) {
    const unsigned char *c = test_png_pixel(image, x, y);
    dark += c[0] < 100 && c[1] < 100 && c[2] < 100;
  }
  return dark;
}

/* Distinct colours (coarsely) down column x. */
static int colours_down(const test_png_t *image, int x) {
  unsigned char seen[4096] = {0};
  int distinct = 0;
  for (int y = 0; y < image->height; ++y) {
    const unsigned char *c = test_png_pixel(image, x, y);
    const int key = (c[0] >> 4) << 8 | (c[1] >> 4) << 4 | (c[2] >> 4);
    distinct += !seen[key];
    seen[key] = 1;
  }
  return distinct;
}

/* The figures of PLplot builds: the size asked for; the axes' numbers and names (text left
 * of and below the plot box); a colour bar (a column in the right fifth with many
 * colours); a title (text above the box: the cells' colours are never dark); the slice's colours
 * where the data put them (red and blue in the box); the gather, the panel and an SVG written too.
 */
static void test_plot_figures(void **state) {
  fixture_t *f = *state;
  if (!rtm_figure_available()) {
    printf("test_plot_figures: no PLplot in this build, skipped\n");
    return;
  }
  write_file(f, REF_PATH, f->snapshots, f->traces, f->image);
  const char *args[] = {"plot",   REF_PATH,  "/snapshots/p", "--slice",         "y=2",
                        "--size", "800x600", "-o",           DIR "/figure.png", NULL};
  command_result_t r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 0);
  assert_true(contains(r.out, "800 x 600 pixels"));
  release(&r);
  test_png_t image;
  assert_int_equal(test_png_read(DIR "/figure.png", &image), 0);
  assert_int_equal(image.width, 800);
  assert_int_equal(image.height, 600);
  int y_axis = 0, x_axis = 0; /* tick labels and axis names: text left of and below the box */
  for (int x = 0; x < image.width / 8; ++x)
    y_axis += dark_run(&image, x, image.height * 15 / 100, image.height * 85 / 100);
  for (int x = 0; x < image.width * 3 / 4; ++x)
    x_axis += dark_run(&image, x, image.height * 84 / 100, image.height * 97 / 100);
  assert_true(y_axis > 100 && x_axis > 100);
  int bar = 0;
  for (int x = image.width * 4 / 5; x < image.width; ++x)
    if (colours_down(&image, x) >= 20) bar = 1;
  assert_true(bar);
  int title = 0; /* text above the box, between the y axis and the colour bar */
  for (int x = image.width * 15 / 100; x < image.width * 80 / 100; ++x)
    title += dark_run(&image, x, 0, image.height * 3 / 10);
  assert_true(title > 50);
  int red = 0, blue = 0;
  for (int y = 0; y < image.height; ++y)
    for (int x = image.width / 8; x < image.width * 3 / 4; ++x) {
      const unsigned char *c = test_png_pixel(&image, x, y);
      red += c[0] > 150 && c[1] < 120 && c[2] < 120;
      blue += c[2] > 150 && c[0] < 120 && c[1] < 120;
    }
  assert_true(red > 100 && blue > 100);
  free(image.rgb);

  const char *gather[] = {"plot", REF_PATH, "/traces/p",       "--gain",
                          "agc",  "-o",     DIR "/gather.png", NULL};
  r = run_rtm3d(gather);
  assert_int_equal(r.exit_code, 0);
  release(&r);
  assert_int_equal(test_png_read(DIR "/gather.png", &image), 0);
  assert_int_equal(image.width, 1000);
  free(image.rgb);
  const char *panel[] = {"plot",  REF_PATH, "/snapshots/p",   "--panel", "--at",
                         "1,2,3", "-o",     DIR "/panel.svg", NULL};
  r = run_rtm3d(panel);
  assert_int_equal(r.exit_code, 0);
  release(&r);
  FILE *svg = fopen(DIR "/panel.svg", "r");
  assert_non_null(svg);
  char head[256] = "";
  assert_true(fread(head, 1, sizeof head - 1, svg) > 0);
  fclose(svg);
  assert_true(contains(head, "<svg"));
  /* run/scaling.sh's CSV: a line a run; a CSV without its columns refused naming the line */
  FILE *csv = fopen(DIR "/scaling.csv", "w");
  assert_non_null(csv);
  fputs("run,mode,ranks,nz,propagate_s,mcells_per_s,efficiency\n"
        "a,strong,1,64,1.0,10,1.0000\na,strong,2,64,0.55,18,0.9091\n"
        "b,weak,1,64,1.0,10,1.0000\nb,weak,2,128,1.05,19,0.9524\n",
        csv);
  fclose(csv);
  const char *scaling[] = {
      "plot", "--scaling", DIR "/scaling.csv", "-o", DIR "/scaling.png", "--size", "640x480", NULL};
  r = run_rtm3d(scaling);
  assert_int_equal(r.exit_code, 0);
  release(&r);
  assert_int_equal(test_png_read(DIR "/scaling.png", &image), 0);
  assert_int_equal(image.width, 640);
  assert_int_equal(image.height, 480);
  free(image.rgb);
  csv = fopen(DIR "/bad.csv", "w");
  assert_non_null(csv);
  fputs("run,ranks\na,1\n", csv);
  fclose(csv);
  const char *bad[] = {"plot", "--scaling", DIR "/bad.csv", NULL};
  r = run_rtm3d(bad);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, "bad.csv:1: needs the columns mode, ranks and efficiency"));
  release(&r);
  const char *twice[] = {"plot",       "--scaling", DIR "/scaling.csv", "-o",
                         DIR "/a.png", "-o",        DIR "/b.png",       NULL};
  r = run_rtm3d(twice);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, "plot --scaling: -o is given twice: give it once"));
  release(&r);
  /* a model's colours span its range: one fast cell in the slice's 72 is the top of the bar;
   * a percentile clip (--clip 95) would leave it out */
  float *vp = malloc(volume * sizeof *vp);
  for (size_t i = 0; i < volume; ++i)
    vp[i] = 2600.0f;
  vp[volume / 2] = 3500.0f; /* z = 3, y = 0, x = 0 */
  const size_t dims[3] = {NZ, NY, NX};
  write_image(REF_PATH, "/vp", vp, dims);
  free(vp);
  const char *model[] = {"plot", REF_PATH, "/vp", "--slice", "z=3", "-o", DIR "/vp.png", NULL};
  r = run_rtm3d(model);
  assert_int_equal(r.exit_code, 0);
  assert_true(contains(r.out, "colours 2600 to 3500 velocity (m/s)"));
  release(&r);
  const char *clipped[] = {"plot",   REF_PATH, "/vp", "--slice",     "z=3",
                           "--clip", "95",     "-o",  DIR "/vp.png", NULL};
  r = run_rtm3d(clipped);
  assert_int_equal(r.exit_code, 0);
  assert_true(contains(r.out, "colours 2600 to 2603 velocity (m/s)"));
  release(&r);
  const char *wiggle_volume[] = {"plot", REF_PATH, "/image", "--wiggle", NULL};
  r = run_rtm3d(wiggle_volume);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, "--wiggle applies to gathers"));
  release(&r);
}

/* `rtm3d ARGS` exits 0 saying `said` and writes the PNG `png`, read into *image. */
static void plotted(const char *const *args, const char *said, const char *png, test_png_t *image) {
  command_result_t r = run_rtm3d(args);
  assert_int_equal(r.exit_code, 0);
  assert_true(contains(r.out, said));
  release(&r);
  assert_int_equal(test_png_read(png, image), 0);
}

/* /gathers/offset as panels, a CIP each, depth down against hx at hy = 0: the plain PNG puts
 * CIP k's 2L + 1 columns after k blank-separated panels, a spike where the file has it (and
 * none from hy != 0); the figure is drawn under its default name; options of other
 * datasets and a CIP out of range are refused. */
static void test_plot_offset_gathers(void **state) {
  (void)state;
  enum { CIPS = 3, LAGS = 2, NH = 2 * LAGS + 1 };
  float *values = calloc((size_t)CIPS * NH * NH * NZ, sizeof *values);
  assert_non_null(values);
#define AT(c, hy, hx, z) values[(((size_t)(c)*NH + (hy) + LAGS) * NH + (hx) + LAGS) * NZ + (z)]
  AT(1, 0, 1, 4) = 3.0f;   /* CIP 1, hx = +1, depth 4 */
  AT(2, 0, -2, 1) = -3.0f; /* CIP 2, hx = -2, depth 1 */
  AT(0, 1, 0, 2) = 5.0f;   /* hy = 1: not shown */
#undef AT
  const double cip_x[CIPS] = {10.0, 40.0, 70.0}, cip_y[CIPS] = {20.0, 20.0, 20.0};
  const rtm_io_offset_gathers_t gathers = {CIPS,         LAGS, NZ,  cip_x, cip_y,
                                           {10.0, 10.0}, 10.0, 0.0, {3, 3}};
  rtm_output_t *output = NULL;
  const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "[grid]\n", NULL};
  const rtm_io_volume_t grid = {.n = {NX, NY, NZ}, .spacing_m = {10.0, 10.0, 10.0}, .nz_local = NZ};
  assert_int_equal(rtm_output_create(DIR "/gathers.h5", &grid, &info, &output), RTM_OK);
  assert_int_equal(rtm_output_write_offset_gathers(output, &gathers, values), RTM_OK);
  float angle[CIPS * 4 * NZ] = {0};
  angle[(1 * 4 + 2) * NZ + 3] = 2.0f; /* CIP 1, the third of 4 angles, depth 3 */
  const rtm_io_angle_gathers_t angles = {CIPS, 4, NZ, 60.0, 10.0, 0.0, 1};
  assert_int_equal(rtm_output_write_angle_gathers(output, &angles, angle), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  free(values);

  const char *raw[] = {
      "plot", DIR "/gathers.h5", "/gathers/offset", "--raw", "-o", DIR "/gathers.png", NULL};
  test_png_t image;
  plotted(raw, "3 CIPs of 2 lags each side", DIR "/gathers.png", &image);
  assert_int_equal(image.width, CIPS * (NH + 1) - 1);
  assert_int_equal(image.height, NZ);
  assert_true(test_png_is(&image, 1 * (NH + 1) + LAGS + 1, 4, 255, 0, 0));
  assert_true(test_png_is(&image, 2 * (NH + 1) + LAGS - 2, 1, 0, 0, 255));
  assert_true(test_png_is(&image, LAGS, 2, 255, 255, 255)); /* CIP 0's hy = 1 spike */
  free(image.rgb);

  /* the angle gathers alike: 4 columns a CIP */
  const char *angle_raw[] = {
      "plot", DIR "/gathers.h5", "/gathers/angle", "--raw", "-o", DIR "/gathers.png", NULL};
  plotted(angle_raw, "3 CIPs of 4 angles", DIR "/gathers.png", &image);
  assert_int_equal(image.width, CIPS * 5 - 1);
  assert_true(test_png_is(&image, 1 * 5 + 2, 3, 255, 0, 0));
  free(image.rgb);
  /* --index K: CIP K alone, for the angle gathers too (probe P, P1: refused as a series') */
  const char *angle_one[] = {"plot",
                             DIR "/gathers.h5",
                             "/gathers/angle",
                             "--index",
                             "1",
                             "--raw",
                             "-o",
                             DIR "/gathers.png",
                             NULL};
  plotted(angle_one, "1 CIP of 4 angles)", DIR "/gathers.png", &image);
  assert_int_equal(image.width, 4);
  assert_true(test_png_is(&image, 2, 3, 255, 0, 0));
  free(image.rgb);
  if (rtm_figure_available()) {
    const char *figure[] = {"plot", DIR "/gathers.h5", "/gathers/offset", NULL};
    plotted(figure, "gathers.gathers_offset.png (3 CIPs", DIR "/gathers.gathers_offset.png",
            &image);
    free(image.rgb);
  }
  command_result_t r;
  static const struct {
    const char *args[8], *said;
  } refused[] = {
      {{"plot", DIR "/gathers.h5", "/gathers/offset", "--index", "3", NULL}, "0..2"},
      {{"plot", DIR "/gathers.h5", "/gathers/offset", "--wiggle", NULL},
       "--wiggle does not apply to /gathers/offset"},
      {{"plot", DIR "/gathers.h5", "/gathers/offset", "--slice", "z=1", NULL},
       "--slice does not apply"},
      /* a second value would have won silently (probe of 2026-11-29) */
      {{"plot", DIR "/gathers.h5", "/gathers/offset", "--index", "1", "--index", "2", NULL},
       "plot: --index is given twice ('1', then '2'): give it once"},
  };
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; ++k) {
    r = run_rtm3d(refused[k].args);
    assert_int_equal(r.exit_code, 2);
    assert_true(contains(r.err, refused[k].said));
    release(&r);
  }
  /* angles up to 0 degrees (all of them 0): refused, saying what an angle panel needs */
  const rtm_io_angle_gathers_t flat = {CIPS, 4, NZ, 0.0, 10.0, 0.0, 1};
  assert_int_equal(rtm_output_create(DIR "/flat.h5", &grid, &info, &output), RTM_OK);
  assert_int_equal(rtm_output_write_angle_gathers(output, &flat, angle), RTM_OK);
  assert_int_equal(rtm_output_close(output, 1), RTM_OK);
  const char *flat_plot[] = {
      "plot", DIR "/flat.h5", "/gathers/angle", "--raw", "-o", DIR "/flat.png", NULL};
  r = run_rtm3d(flat_plot);
  assert_int_equal(r.exit_code, 2);
  assert_true(contains(r.err, "holds 4 angles to 0 degrees (attribute angle_max_deg): an angle "
                              "panel needs 1 to 100000 angles up to a largest angle between 0 "
                              "and 90 degrees"));
  release(&r);
  assert_int_equal(access(DIR "/flat.png", F_OK), -1);
  /* a lag axis of spacing 0, or a CIP at NaN: refused naming them (they drew blank panels
   * titled "nan m", exit 0) */
  values = calloc((size_t)CIPS * NH * NH * NZ, sizeof *values);
  assert_non_null(values);
  const double nan_x[CIPS] = {10.0, NAN, 70.0};
  const rtm_io_offset_gathers_t damaged[2] = {
      {CIPS, LAGS, NZ, cip_x, cip_y, {0.0, 10.0}, 10.0, 0.0, {3, 3}},
      {CIPS, LAGS, NZ, nan_x, cip_y, {10.0, 10.0}, 10.0, 0.0, {3, 3}}};
  const char *said[2] = {"has lag_spacing_m = 0, 10: a lag axis needs finite spacings > 0",
                         "/gathers/cip_x_m[1] = nan: a CIP's position must be finite"};
  for (int k = 0; k < 2; ++k) {
    assert_int_equal(rtm_output_create(DIR "/damaged.h5", &grid, &info, &output), RTM_OK);
    assert_int_equal(rtm_output_write_offset_gathers(output, &damaged[k], values), RTM_OK);
    assert_int_equal(rtm_output_close(output, 1), RTM_OK);
    const char *damaged_plot[] = {
        "plot", DIR "/damaged.h5", "/gathers/offset", "--raw", "-o", DIR "/damaged.png", NULL};
    r = run_rtm3d(damaged_plot);
    assert_int_equal(r.exit_code, 2);
    assert_true(contains(r.err, said[k]));
    release(&r);
    assert_int_equal(access(DIR "/damaged.png", F_OK), -1);
    remove(DIR "/damaged.h5");
  }
  free(values);
}

/* Two files damaged alike are no twins (a probe: each passed against itself, which plot
 * refuses): a NaN time, one time for three snapshots, a step that is no whole number, a
 * panel's angle past 90 degrees, each a failed row on both sides. */
static void test_damaged_alike_fails(void **state) {
  fixture_t *f = *state;
  write_file(f, RUN_PATH, f->snapshots, f->traces, f->image);
  const double nan_time[SNAPSHOTS] = {NAN, 2e-3, 3e-3}, one_time[1] = {1e-3},
               half_step[SNAPSHOTS] = {1.0, 2.5, 3.0};
  const struct {
    const char *name;
    const double *values;
    hsize_t count;
    const char *said;
  } damage[] = {{"times", nan_time, SNAPSHOTS, "times in the run: [0] = nan, not a finite time"},
                {"times", one_time, 1, "times in the run holds 1 value for 3 snapshots"},
                {"steps", half_step, SNAPSHOTS, "steps in the reference: [1] = 2.5, not a step"}};
  const char *paths[2] = {RUN_PATH, REF_PATH};
  for (size_t k = 0; k < sizeof damage / sizeof damage[0]; ++k) {
    for (int side = 0; side < 2; ++side)
      set_attribute(paths[side], "/snapshots/p", damage[k].name, damage[k].values, damage[k].count);
    command_result_t r = validate_default(1);
    assert_true(contains(r.out, damage[k].said));
    release(&r);
    write_file(f, RUN_PATH, f->snapshots, f->traces, f->image); /* both whole again */
    write_file(f, REF_PATH, f->snapshots, f->traces, f->image);
  }
  enum { CIPS = 2 };
  float angle[CIPS * 4 * NZ] = {0};
  const rtm_io_angle_gathers_t angles = {CIPS, 4, NZ, 60.0, 10.0, 0.0, 1};
  const rtm_run_info_t info = {"0.1.0", "rev", "cpu", "host", "[grid]\n", NULL};
  const double past_90[1] = {95.0};
  for (int side = 0; side < 2; ++side) {
    rtm_output_t *output = NULL;
    assert_int_equal(rtm_output_create(paths[side], &f->volume, &info, &output), RTM_OK);
    assert_int_equal(rtm_output_write_angle_gathers(output, &angles, angle), RTM_OK);
    assert_int_equal(rtm_output_close(output, 1), RTM_OK);
    set_attribute(paths[side], "/gathers/angle", "angle_max_deg", past_90, 1);
  }
  const char *gathers[] = {"validate", RUN_PATH, REF_PATH, "--datasets", "/gathers/angle", NULL};
  command_result_t r = run_rtm3d(gathers);
  assert_int_equal(r.exit_code, 1);
  assert_true(contains(r.out, "its axes in the run are damaged"));
  assert_true(contains(r.out, "its axes in the reference are damaged"));
  release(&r);
  write_file(f, REF_PATH, f->snapshots, f->traces, f->image);
}

static void test_plot_refuses_out_of_range(void **state) {
  (void)state;
  /* each refused with exit 2, its message naming what was asked and what there is */
  static const struct {
    const char *args[8], *said[2];
  } refused[] = {
      {{"plot", REF_PATH, "/snapshots/p", "--index", "5", NULL}, {"--index 5", "0..2"}},
      {{"plot", REF_PATH, "/image", "--slice", "z=99", NULL},
       {"z=99", "z = 0..5, a cell index; a place in metres is written z=99m"}},
      /* in metres: half a cell past the last plane (50 m) is outside */
      {{"plot", REF_PATH, "/image", "--slice", "z=55m", NULL},
       {"--slice z=55m is outside /image: z = 0 .. 50 m (index 0..5", NULL}},
      {{"plot", REF_PATH, "/image", "--slice", "z=m", NULL},
       {"--slice needs x=N, y=N or z=N, a cell index, or x=Dm", NULL}},
      /* the hint lists what is there */
      {{"plot", REF_PATH, "/snapshots/q", NULL}, {"/snapshots/q", "/snapshots/p"}},
      {{"plot", REF_PATH, "/traces/p", "--slice", "z=1", NULL},
       {"--slice applies to volumes", NULL}},
      /* options that would be ignored (a probe: both drew, exit 0) */
      {{"plot", REF_PATH, "/snapshots/p", "--at", "1,2,3", NULL}, {"--at picks the cell", NULL}},
      {{"plot", REF_PATH, "/image", "--raw", "--size", "400x300", NULL},
       {"--size does not apply with --raw", NULL}},
  };
  command_result_t r;
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; ++k) {
    r = run_rtm3d(refused[k].args);
    assert_int_equal(r.exit_code, 2);
    for (int j = 0; j < 2; ++j)
      if (refused[k].said[j]) assert_true(contains(r.err, refused[k].said[j]));
    release(&r);
  }
  const char *help[] = {"plot", "--help", NULL};
  r = run_rtm3d(help);
  assert_int_equal(r.exit_code, 0);
  assert_true(contains(r.out, "usage: rtm3d plot"));
  assert_true(contains(r.out, "--slice a=Dm"));
  release(&r);
}

RTM_TEST_MAIN_CLI("test_cli_validate_plot", 0,
                  cmocka_unit_test_setup_teardown(test_identical_files_pass, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_perturbation_fails, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_shot_images_compared, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_geometry_compared, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_geometry_far_from_origin, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_damaged_alike_fails, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_damaged_geometry_fails, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_run_only_dataset_fails, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_nan_shape_and_zero_reference, setup,
                                                  teardown),
                  cmocka_unit_test_setup_teardown(test_usage_and_unreadable_files, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_plot_snapshot_slice_and_default_name, setup,
                                                  teardown),
                  cmocka_unit_test_setup_teardown(test_plot_gather_time_downward, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_plot_figures, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_plot_offset_gathers, setup, teardown),
                  cmocka_unit_test_setup_teardown(test_plot_refuses_out_of_range, setup, teardown))

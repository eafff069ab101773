#define _POSIX_C_SOURCE 200809L
/* TTI across z-slabs under mpirun (cpu backend): a model file whose tilt varies from cell to
 * cell (theta 10..50 degrees with x and z, phi 0..90 with y), smoothed by
 * physics.smooth_angles = 3, modelled on 1, 2 and 3 ranks (40 x 36 x 37 cells: slabs of
 * 19/18 and 13/12/12 planes, the smoothing box reaching 3 planes into the neighbour's
 * slab), p and q snapshots and traces equal to the one-rank run's value for value; the
 * smoothing reaching past a neighbour's whole slab (13 cells on 3 ranks of 12 or 13) is
 * refused before any step (exit 2, naming physics.smooth_angles and grid.nz) with no
 * output left; and a model file broken in the last rank's slab only ends the whole job,
 * the failing rank named. The launcher is $RTM3D_MPIEXEC (ctest sets it). */
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
#include "rtm_test_main.h"

#define DIR "test_mpi_tti.d"
enum { NX = 40, NY = 36, NZ = 37 };
static const size_t cells = (size_t)NX * NY * NZ;

static void write_tilted_model(void) {
  float *values[RTM_IO_PARAMETERS];
  for (int p = 0; p < RTM_IO_PARAMETERS; ++p) {
    values[p] = malloc(cells * sizeof(float));
    assert_non_null(values[p]);
  }
  for (int iz = 0, i = 0; iz < NZ; ++iz)
    for (int iy = 0; iy < NY; ++iy)
      for (int ix = 0; ix < NX; ++ix, ++i) {
        values[RTM_IO_VP][i] = 2000.0f + 10.0f * (float)iz;
        values[RTM_IO_EPSILON][i] = 0.2f;
        values[RTM_IO_DELTA][i] = 0.1f;
        values[RTM_IO_THETA][i] =
            (float)(30.0 + 20.0 * sin(0.3 * ix) * cos(0.25 * iz)); /* changes every plane */
        values[RTM_IO_PHI][i] = (float)(90.0 * iy / (NY - 1));
      }
  const rtm_io_volume_t volume = {
      .n = {NX, NY, NZ}, .spacing_m = {10.0, 10.0, 10.0}, .z_offset = 0, .nz_local = NZ};
  assert_int_equal(rtm_io_write_model(DIR "/tilted.h5", &volume, (const float *const *)values), 0);
  for (int p = 0; p < RTM_IO_PARAMETERS; ++p)
    free(values[p]);
}

/* `rtm3d model` on `ranks` ranks; its exit status, stderr in DIR/err.txt. */
static int run_model(int ranks, const char *name, const char *extra) {
  const char *mpiexec = getenv("RTM3D_MPIEXEC");
  assert_non_null(mpiexec);
  char command[4096];
  snprintf(command, sizeof command,
           "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s --oversubscribe -np %d "
           "%s model %s --quiet --set backend.name=cpu --set grid.nx=%d --set grid.ny=%d "
           "--set grid.nz=%d --set physics.equation=tti --set model.file=" DIR "/tilted.h5 "
           "--set physics.smooth_angles=3 --set boundary.width=8 --set time.steps=90 "
           "--set snapshots.every=45 --set snapshots.fields=p,q --set source.x=auto "
           "--set source.y=auto --set source.z=183 --set receivers.x_first=auto "
           "--set receivers.y_first=auto --set receivers.z=121 --set receivers.fields=p,q "
           "--set output.dir=" DIR " --set output.name=%s --force %s 2> " DIR "/err.txt",
           mpiexec, ranks, rtm_test_rtm3d, rtm_test_deck, NX, NY, NZ, name, extra);
  const int status = system(command);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* Every value of `dataset` equal in the two files (== on floats). */
static void assert_same(const char *run, const char *reference, const char *dataset) {
  rtm_dataset_t a = {0}, b = {0};
  assert_int_equal(rtm_io_read_dataset(run, dataset, &a), 0);
  assert_int_equal(rtm_io_read_dataset(reference, dataset, &b), 0);
  size_t count = 1;
  assert_int_equal(a.rank, b.rank);
  for (int d = 0; d < a.rank; ++d) {
    assert_int_equal(a.dims[d], b.dims[d]);
    count *= a.dims[d];
  }
  size_t differ = 0;
  for (size_t i = 0; i < count; ++i)
    differ += a.data[i] != b.data[i];
  printf("%s %s: %zu of %zu values differ\n", run, dataset, differ, count);
  assert_int_equal(differ, 0);
  rtm_dataset_release(&a);
  rtm_dataset_release(&b);
}

static void test_tilted_tti_on_slabs(void **state) {
  (void)state;
  assert_int_equal(system("mkdir -p " DIR), 0);
  write_tilted_model();
  assert_int_equal(run_model(1, "one", ""), 0);
  static const char *const datasets[] = {"/snapshots/p", "/snapshots/q", "/traces/p", "/traces/q"};
  for (int ranks = 2; ranks <= 3; ++ranks) {
    char name[16], path[64];
    snprintf(name, sizeof name, "ranks%d", ranks);
    assert_int_equal(run_model(ranks, name, ""), 0);
    snprintf(path, sizeof path, DIR "/%s.h5", name);
    for (size_t d = 0; d < sizeof datasets / sizeof datasets[0]; ++d)
      assert_same(path, DIR "/one.h5", datasets[d]);
  }
}

static void test_reach_past_a_slab_refused(void **state) {
  (void)state;
  remove(DIR "/bad.h5");
  assert_int_equal(run_model(3, "bad", "--set physics.smooth_angles=13"), 2);
  FILE *f = fopen(DIR "/err.txt", "r");
  assert_non_null(f);
  char text[8192];
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  if (!strstr(text, "physics.smooth_angles = 13 reaches past the neighbouring slab of 12"))
    printf("stderr: %s\n", text);
  assert_non_null(
      strstr(text, "physics.smooth_angles = 13 reaches past the neighbouring slab of 12"));
  assert_non_null(strstr(text, "grid.nz = 37 over 3 ranks"));
  f = fopen(DIR "/bad.h5", "r");
  if (f) fclose(f);
  assert_null(f);
}

/* A failure on one rank only: a model file whose vp is not a number in one cell of the last
 * slab. That rank refuses its slab, naming itself and the cell, and takes the job down
 * (the others wait in a collective); mpirun ends non-zero within the test's time, no
 * output is left. */
static void test_one_rank_failing_ends_the_job(void **state) {
  (void)state;
  rtm_dataset_t vp = {0};
  float *values[RTM_IO_PARAMETERS] = {0};
  static const char *const names[RTM_IO_PARAMETERS] = {"/vp", "/epsilon", "/delta", "/theta",
                                                       "/phi"};
  for (int p = 0; p < RTM_IO_PARAMETERS; ++p) {
    assert_int_equal(rtm_io_read_dataset(DIR "/tilted.h5", names[p], &vp), 0);
    values[p] = vp.data; /* taken over */
    vp.data = NULL;
  }
  values[RTM_IO_VP][(size_t)(NZ - 2) * NX * NY + 5] = NAN; /* z = 35: the last rank's */
  const rtm_io_volume_t volume = {
      .n = {NX, NY, NZ}, .spacing_m = {10.0, 10.0, 10.0}, .z_offset = 0, .nz_local = NZ};
  assert_int_equal(rtm_io_write_model(DIR "/broken.h5", &volume, (const float *const *)values), 0);
  for (int p = 0; p < RTM_IO_PARAMETERS; ++p)
    free(values[p]);
  remove(DIR "/bad.h5");
  const int code = run_model(2, "bad", "--set model.file=" DIR "/broken.h5");
  FILE *f = fopen(DIR "/err.txt", "r");
  assert_non_null(f);
  char text[16384];
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  printf("exit %d, stderr:\n%s\n", code, text);
  assert_true(code != 0);
  assert_non_null(strstr(text, "[rank 1 of 2]"));
  assert_non_null(strstr(text, "broken.h5"));
  f = fopen(DIR "/bad.h5", "r");
  if (f) fclose(f);
  assert_null(f);
}

RTM_TEST_MAIN_CLI("test_mpi_tti", 1, cmocka_unit_test(test_tilted_tti_on_slabs),
                  cmocka_unit_test(test_reach_past_a_slab_refused),
                  cmocka_unit_test(test_one_rank_failing_ends_the_job))

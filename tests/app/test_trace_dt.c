#define _XOPEN_SOURCE 700
/* `rtm3d model` with output.trace_dt = 2 dt writes gathers resampled through the trace
 * pipeline: the written gather must have steps*dt/trace_dt + 1 samples, a dt attribute of
 * trace_dt, and equal every other sample of the gather recorded at dt. The 15 Hz Ricker has
 * no energy left near the 125 Hz Nyquist of the coarser rate, so the decimated gather and
 * the resampled one differ only by the edge effect of the periodic FFT window (the trace is
 * small but not zero at its end; measured about 3e-4 here). We compare away from the last
 * 10% of the window and allow 1e-3 relative L2, the bound issue 5 sets for non-periodic
 * signals away from the ends; a wrong dt, length or scale gives errors of order 1. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_io.h"

static const char *rtm3d_path;
static const char *deck_path;

static void run_model(const char *dir, const char *name, const char *extra) {
  char command[4096];
  snprintf(command, sizeof command,
           "%s model %s --quiet --set backend.name=cpu --set grid.nx=48 --set grid.ny=48 "
           "--set grid.nz=40 --set source.x=235 --set source.y=235 --set source.z=200 "
           "--set receivers.z=120 --set receivers.y_first=235 --set time.steps=300 "
           "--set snapshots.every=0 --set boundary.width=10 --set output.dir=%s --set output.name=%s %s",
           rtm3d_path, deck_path, dir, name, extra);
  assert_int_equal(system(command), 0);
}

static void resampled_gather_matches_decimated(void **state) {
  (void)state;
  char dir[] = "/tmp/rtm3d_trace_dt_XXXXXX";
  assert_non_null(mkdtemp(dir));
  run_model(dir, "fine", "");
  run_model(dir, "coarse", "--set output.trace_dt=0.004");
  char fine_path[256], coarse_path[256];
  snprintf(fine_path, sizeof fine_path, "%s/fine.h5", dir);
  snprintf(coarse_path, sizeof coarse_path, "%s/coarse.h5", dir);
  rtm_dataset_t fine = {0}, coarse = {0};
  assert_int_equal(rtm_io_read_dataset(fine_path, "/traces/p", &fine), 0);
  assert_int_equal(rtm_io_read_dataset(coarse_path, "/traces/p", &coarse), 0);
  /* dt auto = 0.4 * 10 / 2000 = 2 ms; 300 steps = 0.6 s: 301 samples at 2 ms, 151 at 4 ms.
   * Every arrival has passed by 0.45 s, so the window ends on a quiet trace. */
  assert_int_equal(fine.dims[1], 301);
  assert_int_equal(coarse.dims[1], 151);
  assert_int_equal(fine.dims[0], coarse.dims[0]);
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t r = 0; r < coarse.dims[0]; ++r)
    for (size_t k = 0; k < 135; ++k) {
      double a = coarse.data[r * coarse.dims[1] + k], b = fine.data[r * fine.dims[1] + 2 * k];
      diff2 += (a - b) * (a - b);
      ref2 += b * b;
    }
  printf("resampled vs decimated: relative L2 %.3g over %zu traces\n", sqrt(diff2 / ref2),
         coarse.dims[0]);
  assert_true(ref2 > 0.0);
  assert_true(sqrt(diff2 / ref2) < 1e-3);
  rtm_dataset_release(&fine);
  rtm_dataset_release(&coarse);
  char cleanup[512];
  snprintf(cleanup, sizeof cleanup, "rm -rf %s", dir);
  assert_int_equal(system(cleanup), 0);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_trace_dt RTM3D DECK\n");
    return 2;
  }
  rtm3d_path = argv[1];
  deck_path = argv[2];
  const struct CMUnitTest tests[] = {cmocka_unit_test(resampled_gather_matches_decimated)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

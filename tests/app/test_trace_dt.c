#define _XOPEN_SOURCE 700
/* `rtm3d model` with output.trace_dt = 2 dt writes gathers resampled through the trace
 * pipeline: the written gather must have steps*dt/trace_dt + 1 samples, a dt attribute of
 * trace_dt, and equal every other sample of the gather recorded at dt. The 15 Hz Ricker has
 * no energy left near the 125 Hz Nyquist of the coarser rate, so the decimated gather and
 * the resampled one differ only by the edge effect of the periodic FFT window (the trace is
 * small but not zero at its end; measured about 3e-4 here). We compare away from the last
 * 10% of the window and allow 1e-3 relative L2, the bound set for non-periodic
 * signals away from the ends; a wrong dt, length or scale gives errors of order 1. The same
 * holds for /traces/q of a vti run with receivers.fields = p,q: q goes through the pipeline
 * as p does. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_test_main.h"

#include "rtm_io.h"

static void run_model(const char *dir, const char *name, const char *extra) {
  char command[4096];
  snprintf(
      command, sizeof command,
      "%s model %s --quiet --set backend.name=cpu --set grid.nx=48 --set grid.ny=48 "
      "--set grid.nz=40 --set source.x=235 --set source.y=235 --set source.z=200 "
      "--set receivers.z=120 --set receivers.y_first=235 --set time.steps=300 "
      "--set snapshots.every=0 --set boundary.width=10 --set output.dir=%s --set output.name=%s %s",
      rtm_test_rtm3d, rtm_test_deck, dir, name, extra);
  assert_int_equal(system(command), 0);
}

/* /traces/<field> of the coarse run (at 2 dt) against every other sample of the fine run's,
 * which holds `samples`; the last 10% of the coarse window is left out. */
static void check_resampled(const char *dir, const char *field, size_t samples) {
  char fine_path[256], coarse_path[256], dataset[64];
  snprintf(fine_path, sizeof fine_path, "%s/fine.h5", dir);
  snprintf(coarse_path, sizeof coarse_path, "%s/coarse.h5", dir);
  snprintf(dataset, sizeof dataset, "/traces/%s", field);
  rtm_dataset_t fine = {0}, coarse = {0};
  assert_int_equal(rtm_io_read_dataset(fine_path, dataset, &fine), 0);
  assert_int_equal(rtm_io_read_dataset(coarse_path, dataset, &coarse), 0);
  const size_t coarse_samples = (samples - 1) / 2 + 1, compared = coarse_samples * 9 / 10;
  assert_int_equal(fine.dims[1], samples);
  assert_int_equal(coarse.dims[1], coarse_samples);
  assert_int_equal(fine.dims[0], coarse.dims[0]);
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t r = 0; r < coarse.dims[0]; ++r)
    for (size_t k = 0; k < compared; ++k) {
      double a = coarse.data[r * coarse.dims[1] + k], b = fine.data[r * fine.dims[1] + 2 * k];
      diff2 += (a - b) * (a - b);
      ref2 += b * b;
    }
  printf("%s: resampled vs decimated: relative L2 %.3g over %zu traces\n", dataset,
         sqrt(diff2 / ref2), coarse.dims[0]);
  assert_true(ref2 > 0.0);
  assert_true(sqrt(diff2 / ref2) < 1e-3);
  rtm_dataset_release(&fine);
  rtm_dataset_release(&coarse);
}

static void remove_dir(const char *dir) {
  char cleanup[512];
  snprintf(cleanup, sizeof cleanup, "rm -rf %s", dir);
  assert_int_equal(system(cleanup), 0);
}

static void resampled_gather_matches_decimated(void **state) {
  (void)state;
  char dir[] = "/tmp/rtm3d_trace_dt_XXXXXX";
  assert_non_null(mkdtemp(dir));
  run_model(dir, "fine", "");
  run_model(dir, "coarse", "--set output.trace_dt=0.004");
  /* dt auto = 0.4 * 10 / 2000 = 2 ms; 300 steps = 0.6 s: 301 samples at 2 ms, 151 at 4 ms.
   * Every arrival has passed by 0.45 s, so the window ends on a quiet trace. */
  check_resampled(dir, "p", 301);
  remove_dir(dir);
}

/* vti with p and q recorded: both gathers resampled alike, and q is not p. vpx = 2000
 * sqrt(1.4) = 2366 m/s is stable below 1.9 ms at 10 m, so dt = 1.5 ms and trace_dt = 3 ms;
 * 400 steps = 0.6 s again: 401 samples, 201 resampled. */
static void resampled_q_gather_matches_decimated(void **state) {
  (void)state;
  char dir[] = "/tmp/rtm3d_trace_dt_XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *vti = "--set physics.equation=vti --set model.epsilon=0.2 --set model.delta=0.1 "
                    "--set receivers.fields=p,q --set time.dt=0.0015 --set time.steps=400";
  char coarse[512];
  snprintf(coarse, sizeof coarse, "%s --set output.trace_dt=0.003", vti);
  run_model(dir, "fine", vti);
  run_model(dir, "coarse", coarse);
  check_resampled(dir, "p", 401);
  check_resampled(dir, "q", 401);
  char fine_path[256];
  snprintf(fine_path, sizeof fine_path, "%s/fine.h5", dir);
  rtm_dataset_t p = {0}, q = {0};
  assert_int_equal(rtm_io_read_dataset(fine_path, "/traces/p", &p), 0);
  assert_int_equal(rtm_io_read_dataset(fine_path, "/traces/q", &q), 0);
  assert_int_equal(q.dims[0], p.dims[0]);
  assert_int_equal(q.dims[1], p.dims[1]);
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < p.dims[0] * p.dims[1]; ++i) {
    diff2 += ((double)q.data[i] - p.data[i]) * ((double)q.data[i] - p.data[i]);
    ref2 += (double)p.data[i] * p.data[i];
  }
  printf("/traces/q against /traces/p: relative L2 %.3g\n", sqrt(diff2 / ref2));
  /* epsilon - delta = 0.1 gives q its own amplitude (vpn != vpx, vsz > 0): far above the
   * 1e-3 of the resampling, which a q gather that were a copy of p would pass */
  assert_true(sqrt(diff2 / ref2) > 1e-2);
  rtm_dataset_release(&p);
  rtm_dataset_release(&q);
  remove_dir(dir);
}

RTM_TEST_MAIN_CLI("test_trace_dt", 1, cmocka_unit_test(resampled_gather_matches_decimated),
                  cmocka_unit_test(resampled_q_gather_matches_decimated))

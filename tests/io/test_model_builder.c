#define _POSIX_C_SOURCE 200809L /* fileno */
/* rtm_model_build (rtm3d makemodel): each element where its description puts it, and the
 * refusals naming file:line and key. Grid 40 x 30 x 50 nodes of 10 m (origin 0). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rtm_model_builder.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

enum { NX = 40, NY = 30, NZ = 50 };
static const double h = 10.0;
static const rtm_io_volume_t volume = {
    .n = {NX, NY, NZ}, .spacing_m = {10.0, 10.0, 10.0}, .z_offset = 0, .nz_local = NZ};

static float at(float *const values[], int k, int ix, int iy, int iz) {
  return values[k][((size_t)iz * NY + (size_t)iy) * NX + (size_t)ix];
}

/* The background's gradient, and a layer dipping 12 degrees toward azimuth 30: in every
 * column the interface (halfway between the last node above and the first below) lies
 * within half a cell of the plane, vp below it = V + G (depth below the plane), its
 * anisotropy there and the background's above. */
static void test_background_and_dipping_layer(void **unused) {
  (void)unused;
  const char *text = "background vp=1800 gradient=0.5 epsilon=0.02\n"
                     "# the layer\n"
                     "layer depth=250 dip=12 azimuth=30 vp=2600 gradient=0.2 epsilon=0.1 "
                     "theta=25\n";
  float *v[RTM_IO_PARAMETERS] = {NULL};
  assert_int_equal(rtm_model_build(text, "test", &volume, v), RTM_OK);
  const double pi = 3.14159265358979323846, slope = tan(12.0 * pi / 180.0);
  const double xc = 0.5 * (NX - 1) * h, yc = 0.5 * (NY - 1) * h;
  double worst = 0.0;
  for (int iy = 0; iy < NY; ++iy)
    for (int ix = 0; ix < NX; ++ix) {
      const double plane =
          250.0 + slope * ((ix * h - xc) * cos(pi / 6) + (iy * h - yc) * sin(pi / 6));
      int first = -1;
      for (int iz = 0; iz < NZ && first < 0; ++iz)
        if (at(v, RTM_IO_EPSILON, ix, iy, iz) > 0.05f) first = iz;
      assert_true(first > 0);
      const double interface = (first - 0.5) * h;
      worst = fmax(worst, fabs(interface - plane));
      /* above: the background's gradient; below: the layer's from the plane */
      assert_float_equal(at(v, RTM_IO_VP, ix, iy, first - 1), 1800.0 + 0.5 * (first - 1) * h, 1e-3);
      assert_float_equal(at(v, RTM_IO_VP, ix, iy, first), 2600.0 + 0.2 * (first * h - plane), 1e-2);
      assert_float_equal(at(v, RTM_IO_THETA, ix, iy, first), 25.0, 0.0);
      assert_float_equal(at(v, RTM_IO_THETA, ix, iy, first - 1), 0.0, 0.0);
    }
  printf("dipping layer: the interface within %.3f m of the plane (half a cell: %.1f m)\n", worst,
         0.5 * h);
  assert_true(worst <= 0.5 * h);
  rtm_io_model_release(v);
}

/* A box's nodes and no other, a diffractor's sphere (and the nearest node of one smaller
 * than a cell), a Gaussian anomaly's peak and fall-off. */
static void test_box_diffractor_anomaly(void **unused) {
  (void)unused;
  const char *text = "background vp=2000\n"
                     "box x=100,200 y=50,120 z=300,340 vp=3000 delta=0.07\n"
                     "diffractor x=300 y=150 z=100 radius=15 vp=4000\n"
                     "diffractor x=53 y=47 z=444 radius=1 vp=4500\n"
                     "anomaly x=200 y=150 z=200 sigma=30 dvp=-400\n";
  float *v[RTM_IO_PARAMETERS] = {NULL};
  assert_int_equal(rtm_model_build(text, "test", &volume, v), RTM_OK);
  for (int iz = 28; iz <= 36; ++iz)
    for (int iy = 3; iy <= 14; ++iy)
      for (int ix = 8; ix <= 22; ++ix) {
        const int inside = ix >= 10 && ix <= 20 && iy >= 5 && iy <= 12 && iz >= 30 && iz <= 34;
        assert_float_equal(at(v, RTM_IO_DELTA, ix, iy, iz), inside ? 0.07 : 0.0, 1e-7);
      }
  /* (the anomaly, applied last, adds its far tail: 0.006 m/s at the first diffractor) */
  assert_float_equal(at(v, RTM_IO_VP, 30, 15, 10), 4000.0, 0.01); /* the centre */
  assert_float_equal(at(v, RTM_IO_VP, 31, 15, 10), 4000.0, 0.01); /* 10 m away */
  assert_float_equal(at(v, RTM_IO_VP, 31, 16, 10), 4000.0, 0.01); /* 14.1 m */
  assert_float_equal(at(v, RTM_IO_VP, 32, 15, 10), 2000.0, 0.01); /* 20 m: outside */
  assert_float_equal(at(v, RTM_IO_VP, 5, 5, 44), 4500.0, 0.01);   /* the nearest node */
  assert_float_equal(at(v, RTM_IO_VP, 20, 15, 20), 1600.0, 1e-3); /* the anomaly's peak */
  assert_float_equal(at(v, RTM_IO_VP, 23, 15, 20), 2000.0 - 400.0 * exp(-0.5), 1e-2);
  rtm_io_model_release(v);
}

static void refused(const char *text, const char *message) {
  float *v[RTM_IO_PARAMETERS] = {NULL};
  capture_t c;
  capture_begin(&c);
  const int status = rtm_model_build(text, "desc.model", &volume, v);
  const char *said = capture_end(&c);
  assert_int_equal(status, RTM_ERR_INPUT);
  if (!strstr(said, message)) fail_msg("expected '%s' in: %s", message, said);
  for (int k = 0; k < RTM_IO_PARAMETERS; ++k)
    assert_null(v[k]);
}

static void test_refusals(void **unused) {
  (void)unused;
  refused("layer depth=10 vp=2000\n", "desc.model:1: layer before the background");
  refused("background vp=2000\nlayer vp=2500\n", "desc.model:2: layer needs depth=");
  refused("background vp=2000\nlayer depth=100 vp=2500 dipp=3\n",
          "desc.model:2: layer has no key 'dipp'");
  refused("background vp=2000\n\nblob x=1\n", "desc.model:3: unknown element 'blob'");
  refused("background vp=-5\n", "desc.model:1: background vp = -5 is outside");
  refused("background vp=2000\nbox x=1,2 y=3 z=4,5\n", "desc.model:2: box y = '3': expected 2");
  refused("background vp=0x7d0\n", "desc.model:1: background vp = '0x7d0': expected 1 number");
  refused("foo vp=1\n", "desc.model:1: unknown element 'foo' (known: background, layer");
  refused("background vp=2000\nanomaly x=0 y=0 z=0 sigma=10 dvp=-5000\n",
          "at [z=0][y=0][x=0]: the gradients and anomalies take it outside (0, 20000] m/s");
  /* the value as written, not rounded onto the bound's side (a probe: "dip = 90") */
  refused("background vp=2000\nlayer depth=100 vp=2500 dip=89.9999999\n",
          "desc.model:2: layer dip = 89.9999999 is outside [-80, 80]");
  refused("background vp=2000 gradient=50\n", "take it outside (0, 20000] m/s");
  refused("background vp=2000 vp=2100\n", "desc.model:1: background gives vp twice");
  refused("# nothing\n", "desc.model: no background");
  /* a box that sets nothing (probe S, S4: in km by mistake, or without a property) */
  refused("background vp=2000\nbox x=0.05,0.1 y=0,0.05 z=0,0.05 vp=3000\n",
          "desc.model:2: box x 0.05..0.1, y 0..0.05, z 0..0.05 m holds no node of the grid");
  refused("background vp=2000\nbox x=0,100 y=0,100 z=0,100\n",
          "desc.model:2: box sets no property");
}

RTM_TEST_MAIN(cmocka_unit_test(test_background_and_dipping_layer),
              cmocka_unit_test(test_box_diffractor_anomaly), cmocka_unit_test(test_refusals))

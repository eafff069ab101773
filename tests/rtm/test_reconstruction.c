/* rtm.reconstruction = boundary on the cpu backend (reconstruction_boundary.c).
 *
 *   rebuilt against stored   S(n) of p as the backward pass rebuilds it, at the 5 imaging
 *                            steps of 250 (every 50), against the forward propagator's S(n):
 *                            within 1e-4 relative L2 inside the non-absorbing interior (the
 *                            issue's bar; float rounding of the reverse leapfrog, some 1e-6),
 *                            iso, vti and tti, on 40^3 cells of 10 m with a layer of 10 and a
 *                            shot in the core; iso also with the shot's taps in the shell
 *                            (z = 120 m: cell 12, the shell is cells 10 .. 13) and in the
 *                            layer (z = 60 m), which the backward step's injection must not
 *                            disturb. The wave runs through the layer and back by step 250.
 *   images                   the survey of test_migration_gpu (a flat reflector under two
 *                            shots) migrated with boundary and with snapshots (fp32): within
 *                            1e-3 relative L2 inside the interior (the bar), iso and
 *                            tti; both zero outside it (rtm_migration_read).
 *   store                    the ledger's "boundary shell": shell cells x fields x
 *                            (steps - 2) x 4 bytes.
 *   refusals                 a grid whose interior holds no core inside the shell, a cpu
 *                            store in other than host memory, and a store that cannot fit
 *                            (the preflight), each naming the keys.
 *   lit between passes       with fp32 snapshots a shot's illumination is whole before its
 *                            backward pass (rtm_migration_on_lit); boundary never says so. */
#define _POSIX_C_SOURCE 200809L /* fileno, dup2: rtm_test_capture.h */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "migration_helper.h"
#include "rtm_imaging.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

/* The rebuilt S(n) of survey_rebuild_error's survey with these two settings. */
static double rebuild_error(const char *equation, const char *shot_z, const char *label) {
  const char *const settings[] = {equation, shot_z, NULL};
  return survey_rebuild_error(settings, label);
}

static void test_rebuilt_iso(void **state) {
  (void)state;
  const double core = rebuild_error("physics.equation=iso", "shots.z=200", "iso, shot in the core");
  const double shell =
      rebuild_error("physics.equation=iso", "shots.z=120", "iso, shot in the shell");
  const double layer =
      rebuild_error("physics.equation=iso", "shots.z=60", "iso, shot in the layer");
  printf("iso: worst relative L2 %.3e (core), %.3e (shell), %.3e (layer)\n", core, shell, layer);
  assert_true(core <= 1e-4);
  assert_true(shell <= 1e-4);
  assert_true(layer <= 1e-4);
}

static void test_rebuilt_vti(void **state) {
  (void)state;
  const double error = rebuild_error("physics.equation=vti", "shots.z=200", "vti");
  printf("vti: worst relative L2 %.3e\n", error);
  assert_true(error <= 1e-4);
}

static void test_rebuilt_tti(void **state) {
  (void)state;
  const double error = rebuild_error("physics.equation=tti", "shots.z=200", "tti");
  printf("tti: worst relative L2 %.3e\n", error);
  assert_true(error <= 1e-4);
}

enum { NX = 48, NY = 44, NZ = 48 }; /* survey_flat_modelled's grid */

/* 1 when every cell outside the interior box is zero. */
static int zero_outside(const survey_t *s, const float *volume) {
  const int w = s->cfg.boundary.width_cells;
  size_t i = 0;
  for (int iz = 0; iz < NZ; ++iz)
    for (int iy = 0; iy < NY; ++iy)
      for (int ix = 0; ix < NX; ++ix, ++i) {
        const int inside =
            ix >= w && ix < NX - w && iy >= w && iy < NY - w && iz >= w && iz < NZ - w;
        if (!inside && volume[i] != 0.0f) return 0;
      }
  return 1;
}

static void compare_images(const char *equation) {
  const char *const settings[] = {equation, NULL};
  survey_t s;
  survey_flat_modelled(&s, settings);
  s.cfg.rtm.reconstruction = RTM_RECONSTRUCT_SNAPSHOTS;
  survey_migrate(&s, NULL, NULL);
  float *snapshots_image = s.image, *snapshots_illumination = s.illumination;
  s.image = s.illumination = NULL; /* kept: the next survey_migrate frees the survey's */
  s.cfg.rtm.reconstruction = RTM_RECONSTRUCT_BOUNDARY;
  survey_migrate(&s, NULL, NULL);
  const double image = survey_interior_l2(&s, s.image, snapshots_image);
  const double illumination = survey_interior_l2(&s, s.illumination, snapshots_illumination);
  printf("%s: boundary against snapshots inside the interior, relative L2: image %.3e, "
         "illumination %.3e\n",
         equation, image, illumination);
  assert_true(image <= 1e-3);
  assert_true(illumination <= 1e-3);
  assert_true(zero_outside(&s, s.illumination) && zero_outside(&s, snapshots_illumination));
  free(snapshots_image);
  free(snapshots_illumination);
  survey_release(&s);
}

static void test_images_iso(void **state) {
  (void)state;
  compare_images("physics.equation=iso");
}

static void test_images_tti(void **state) {
  (void)state;
  compare_images("physics.equation=tti");
}

/* rtm_migration_create's status for a survey of these settings, its messages in capture. */
static int create_with(const int n[3], const char *const *settings, capture_t *capture) {
  survey_t s;
  rtm_migration_t *m = NULL;
  survey_config(&s, n, settings);
  survey_set_model(&s, survey_two_layers, NULL);
  const int status = captured(capture, rtm_migration_create(&s.cfg, &s.grid, &s.model, &m));
  rtm_migration_destroy(m);
  survey_release(&s);
  return status;
}

static void test_refusals(void **state) {
  (void)state;
  static capture_t capture;
  /* 28 - 2 x 10 = 8 undamped cells along y: all shell, no core */
  const int narrow[3] = {40, 28, 40};
  const char *const boundary[] = {"rtm.reconstruction=boundary", "time.steps=20", NULL};
  assert_int_equal(create_with(narrow, boundary, &capture), RTM_ERR_CONFIG);
  assert_contains(capture.text, "grid.ny = 28 with boundary.width = 10 leaves 8");
  const int n[3] = {40, 40, 40};
  const char *const pinned[] = {"rtm.reconstruction=boundary", "time.steps=20",
                                "memory.imaging=pinned", NULL};
  assert_int_equal(create_with(n, pinned, &capture), RTM_ERR_CONFIG);
  assert_contains(capture.text, "memory.imaging (or memory.strategy) = pinned");
  /* 10^8 steps of a 25 kB shell: refused by the preflight before anything is allocated (no
   * time-dispersion warp: it refuses so long a trace first) */
  const char *const long_run[] = {"rtm.reconstruction=boundary", "time.steps=100000000",
                                  "time.dispersion_correction=none", NULL};
  assert_int_equal(create_with(n, long_run, &capture), RTM_ERR_NOMEM);
  assert_contains(capture.text, "rtm.reconstruction = boundary needs 2.51e+03 GB");
  assert_contains(capture.text, "run fewer time.steps (now 100000000)");
}

/* rtm.reconstruction = auto's choice for these settings ("" when refused; snapshots stored
 * otherwise than in fp32 as "snapshots/fp16", "snapshots/zfp6" with zfp's rate): the status, the
 * messages in capture. */
static int choose_beside(const int n[3], const char *const *settings, size_t host_bytes,
                         capture_t *capture, char chosen[32]) {
  survey_t s;
  rtm_migration_t *m = NULL;
  survey_config(&s, n, settings);
  survey_set_model(&s, survey_two_layers, NULL);
  const int status =
      captured(capture, rtm_migration_create_beside(&s.cfg, &s.grid, &s.model, host_bytes,
                                                    "the caller's arrays", &m));
  const rtm_precision_t precision = m ? rtm_migration_snapshot_precision(m) : RTM_PRECISION_FP32;
  const int stored = m && strcmp(rtm_migration_reconstruction(m), "snapshots") == 0 &&
                     precision != RTM_PRECISION_FP32;
  char rate[16] = ""; /* zfp: the rate its store was made at, "/zfp4" */
  if (stored && precision == RTM_PRECISION_ZFP)
    snprintf(rate, sizeof rate, "%d", rtm_migration_snapshot_rate(m));
  snprintf(chosen, 32, "%s%s%s%s", m ? rtm_migration_reconstruction(m) : "", stored ? "/" : "",
           stored ? rtm_precision_name(precision) : "", rate);
  printf("%-22s -> %s (status %d)\n", settings[2], chosen, status);
  rtm_migration_destroy(m);
  survey_release(&s);
  return status;
}

static int choose_with(const int n[3], const char *const *settings, capture_t *capture,
                       char chosen[32]) {
  return choose_beside(n, settings, 0, capture, chosen);
}

/* choose_beside with test_auto's settings, 400 steps imaged every step, under
 * memory.limit_gb = limit and one more setting (or NULL); zfp's coding weighed at half a step
 * a snapshot (2.5 propagations a shot), so that memory alone decides between the ways. */
static int choose_limited(const int n[3], const char *limit, const char *more, size_t host_bytes,
                          capture_t *capture, char chosen[32]) {
  char limit_gb[48];
  snprintf(limit_gb, sizeof limit_gb, "memory.limit_gb=%s", limit);
  const char *settings[] = {
      "time.steps=400", "rtm.imaging_step=1", limit_gb, "rtm.snapshot_codec_steps=0.5", more, NULL};
  return choose_beside(n, settings, host_bytes, capture, chosen);
}

/* What the caller keeps in host memory beside a store there counts (the cpu backend: every
 * store is in host memory): test_auto's 20 MB hold boundary with the propagators (13.4 MB),
 * not with 10 MB of the caller's beside them, and auto passes on to checkpoint, saying why,
 * whose "as many as fit" leaves them their room;
 * boundary asked for by name under 12 MB is refused, naming them. */
static void test_auto_counts_the_callers_host_arrays(void **state) {
  (void)state;
  static capture_t capture;
  char chosen[32];
  const int n[3] = {40, 40, 40};
  assert_int_equal(choose_limited(n, "0.02", NULL, 10000000, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "checkpoint");
  assert_contains(capture.text, "boundary needs 0.0234 GB with the propagators and the caller's "
                                "arrays, 0.02 GB allowed");
  /* checkpoint's "as many as fit" in 90% of the 10 MB left beside them: 7 of 1.18 MB */
  assert_contains(capture.text, "7 checkpoints of 0.00118 GB");
  assert_int_equal(
      choose_limited(n, "0.012", "rtm.reconstruction=boundary", 10000000, &capture, chosen),
      RTM_ERR_NOMEM);
  assert_contains(capture.text, "(with the image, beside the caller's arrays) in host memory");
}

/* auto takes the fastest that fits with the propagators (and the gathers), as
 * memory.limit_gb shrinks what is free. 40^3 iso cells, 400 steps imaged every step: snapshots hold
 * 400 x 256 kB = 102 MB in fp32, 51 MB in fp16, 19 MB in zfp at 6 bits a value (1000 blocks of
 * 48 B a snapshot; both with a 256 kB staging volume), 13 MB at 4 and 9.6 MB at 3 (auto's lower
 * rates, from rtm.snapshot_rate's default), boundary 398 x 6272 x 4 B = 10 MB,
 * checkpoint at least one state of 2 x 48^3 x 4 B (some 0.9 MB, padded); the image 0.5 MB and the
 * propagators some 2.2 MB (both sides' two levels and the medium they share, 48^3 x 4 B each) come
 * beside each. */
static void test_auto(void **state) {
  (void)state;
  static capture_t capture;
  char chosen[32];
  const int n[3] = {40, 40, 40};
  assert_int_equal(choose_limited(n, "0", NULL, 0, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "snapshots");
  assert_int_equal(choose_limited(n, "0.1", NULL, 0, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "snapshots/fp16");
  assert_contains(capture.text,
                  "rtm.reconstruction = auto: snapshots (fp16) (snapshots (fp32) needs 0.106 GB");
  assert_int_equal(choose_limited(n, "0.05", NULL, 0, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "snapshots/zfp6");
  assert_contains(capture.text, "rtm.reconstruction = auto: snapshots (zfp at 6 bits a value) "
                                "(snapshots (fp32) needs 0.106 GB");
  assert_contains(capture.text, "snapshots (fp16) needs 0.0549 GB");
  assert_int_equal(choose_limited(n, "0.02", NULL, 0, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "snapshots/zfp4");
  assert_contains(capture.text, "rtm.reconstruction = auto: snapshots (zfp at 4 bits a value) ");
  assert_contains(capture.text, "snapshots (zfp at 6 bits a value) needs 0.0229 GB");
  /* a rate set away from the default is the only one zfp is tried at */
  assert_int_equal(choose_limited(n, "0.02", "rtm.snapshot_rate=7", 0, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "boundary");
  assert_contains(capture.text, "snapshots (zfp at 7 bits a value) needs");
  assert_true(strstr(capture.text, "at 4 bits") == NULL);
  /* 12 MB hold boundary's store and the image but not the propagators beside them: auto
   * passes on to checkpoint, where boundary asked for by name passes the preflight */
  assert_int_equal(choose_limited(n, "0.012", NULL, 0, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "checkpoint");
  assert_contains(capture.text, "boundary needs 0.0134 GB with the propagators, 0.012 GB allowed");
  assert_int_equal(choose_limited(n, "0.012", "rtm.reconstruction=boundary", 0, &capture, chosen),
                   RTM_OK);
  assert_string_equal(chosen, "boundary");
  assert_int_equal(choose_limited(n, "0.002", NULL, 0, &capture, chosen), RTM_ERR_NOMEM);
  assert_contains(capture.text, "rtm.reconstruction = auto: none fits");
  assert_contains(capture.text, "rtm.reconstruction = checkpoint needs");
  assert_contains(capture.text, "allowed (memory.limit_gb)");
  /* a grid of 40 x 28 x 40: 11 MB hold zfp at 3 bits (10.5 MB with the propagators), not at
   * 4 (11.7 MB) */
  const int narrow[3] = {40, 28, 40};
  assert_int_equal(choose_limited(narrow, "0.011", NULL, 0, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "snapshots/zfp3");
  assert_contains(capture.text, "rtm.reconstruction = auto: snapshots (zfp at 3 bits a value) ");
  assert_contains(capture.text, "snapshots (zfp at 4 bits a value) needs");
  /* there no core lies inside the shell along y: boundary cannot serve, checkpoint is next
   * (12 MB: no snapshots fit, zfp's neither at 7 bits a value, set away from the default:
   * the only rate auto tries) */
  assert_int_equal(choose_limited(narrow, "0.012", "rtm.snapshot_rate=7", 0, &capture, chosen),
                   RTM_OK);
  assert_string_equal(chosen, "checkpoint");
  assert_contains(capture.text, "boundary: boundary.width = 10 leaves 20 x 8 x 20");
  /* subsurface-offset gathers of 7 lags each way at every line of the 20 x 20 interior: 400
   * CIPs x 15 x 15 lags x 40 planes, 14.4 MB a volume, four on the host beside the fields
   * (57.6 MB): at 100 MB fp16 snapshots (54.9 MB with the propagators) no longer fit beside
   * them, zfp's 22.9 MB do */
  const char *gathers_100mb[] = {"time.steps=400",      "rtm.imaging_step=1",
                                 "memory.limit_gb=0.1", "rtm.snapshot_codec_steps=0.5",
                                 "rtm.offset_lags=7",   "rtm.cip_x_step=1",
                                 "rtm.cip_y_step=1",    NULL};
  assert_int_equal(choose_with(n, gathers_100mb, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "snapshots/zfp6");
  assert_contains(capture.text, "snapshots (fp16) needs 0.113 GB with the propagators and the "
                                "gathers, 0.1 GB allowed");
  /* at 40 MB the gathers alone do not fit: refused before auto weighs anything, the limit
   * named as such */
  const char *gathers_40mb[] = {"time.steps=400",
                                "rtm.imaging_step=1",
                                "memory.limit_gb=0.04",
                                "rtm.offset_lags=7",
                                "rtm.cip_x_step=1",
                                "rtm.cip_y_step=1",
                                NULL};
  assert_int_equal(choose_with(n, gathers_40mb, &capture, chosen), RTM_ERR_NOMEM);
  assert_contains(capture.text, "needs 0.0576 GB of host memory for the gathers (4 volumes of "
                                "15 x 15 lags x 40 planes a CIP), where 0.04 GB are allowed "
                                "(memory.limit_gb)");
  /* at 60 MB the gathers' 57.6 MB fit, no store beside them (checkpoint: 4.6 MB with the
   * propagators): the refusal names the gathers and their keys */
  const char *gathers_60mb[] = {"time.steps=400",
                                "rtm.imaging_step=1",
                                "memory.limit_gb=0.06",
                                "rtm.offset_lags=7",
                                "rtm.cip_x_step=1",
                                "rtm.cip_y_step=1",
                                NULL};
  assert_int_equal(choose_with(n, gathers_60mb, &capture, chosen), RTM_ERR_NOMEM);
  assert_contains(capture.text, "rtm.reconstruction = auto: none fits");
  assert_contains(capture.text, "fewer rtm.offset_lags, or larger rtm.cip_x_step");
  assert_contains(capture.text, "(with the image, beside the propagators and the gathers)");
}

/* choose_with test_auto's 40^3 iso cells and 400 steps at an imaging step, under a limit, the
 * codec weighed at rtm.snapshot_codec_steps (NULL: auto's figure). */
static int choose_weighed(const char *imaging_step, const char *limit_gb, const char *codec,
                          capture_t *capture, char chosen[32]) {
  const int n[3] = {40, 40, 40};
  const char *settings[] = {"time.steps=400", imaging_step, limit_gb, codec, NULL};
  return choose_with(n, settings, capture, chosen);
}

/* Where more than one way fits, auto weighs zfp by its time: 2 propagations a shot and its
 * coding of every snapshot (rtm.snapshot_codec_steps, or the figure measured for the backend
 * and the equation), against boundary's 3; the log says what each would take. test_auto's
 * 40^3 iso cells and 400 steps: imaged every 3rd step, fp16's 133 snapshots (20.8 MB with the
 * propagators) do not fit in 15 MB, zfp's at 6 bits (some 10 MB) and boundary's (13.4 MB) do;
 * imaged every step, only zfp at 3 bits does beside boundary. */
static void test_auto_weighs_time(void **state) {
  (void)state;
  static capture_t capture;
  char chosen[32];
  const char *limit = "memory.limit_gb=0.015", *codec = "rtm.snapshot_codec_steps=1.5";
  assert_int_equal(choose_weighed("rtm.imaging_step=3", limit, codec, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "snapshots/zfp6");
  assert_contains(capture.text, "snapshots (fp16) needs 0.0208 GB with the propagators, 0.015 GB "
                                "allowed; it takes 2.5 propagations");
  assert_contains(capture.text, "; it takes 2.5 propagations a shot (its coding 1.5 steps a "
                                "snapshot, rtm.snapshot_codec_steps), boundary 3)");
  assert_int_equal(choose_weighed("rtm.imaging_step=1", limit, codec, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "boundary");
  assert_contains(capture.text, "snapshots (zfp at 4 bits a value) needs");
  assert_contains(capture.text, "snapshots (zfp at 3 bits a value) fits but takes 3.5 "
                                "propagations a shot (its coding 1.5 steps a snapshot, "
                                "rtm.snapshot_codec_steps), boundary 3)");
  /* left to auto, the cpu backend's iso codec (several steps a snapshot: the C reference) */
  assert_int_equal(
      choose_weighed("rtm.imaging_step=1", "memory.limit_gb=0.05", NULL, &capture, chosen), RTM_OK);
  assert_string_equal(chosen, "boundary");
  assert_contains(capture.text, "snapshots (zfp at 6 bits a value) fits but takes ");
  assert_contains(capture.text, " steps a snapshot, measured), boundary 3)");
}

/* What auto weighs `way` at for a migration of 400 steps imaged every 5th (80 snapshots) on
 * the survey of n^3 cells with `equation`, its store in `imaging` memory, on a GPU (device 0)
 * or the cpu backend (-1): arithmetic alone, no device is asked. zfp's coding is set, 1.5
 * steps a snapshot. */
static double weighed(int n, const char *equation, const char *imaging, int device,
                      rtm_reconstruction_t way, rtm_precision_t precision) {
  const int cells[3] = {n, n, n};
  const char *const settings[] = {"time.steps=400", "rtm.imaging_step=5",           equation,
                                  imaging,          "rtm.snapshot_codec_steps=1.5", NULL};
  survey_t s;
  survey_config(&s, cells, settings);
  const double steps = rtm_migration_weighed_steps(&s.cfg, &s.grid, device, 400, 5, way, precision,
                                                   RTM_SNAPSHOT_RATE_DEFAULT);
  survey_release(&s);
  return steps;
}

/* A GPU's store in its host memory (memory.imaging = pinned) costs auto its crossings of PCIe:
 * a snapshot's out and back in steps in proportion to its bytes (fp16 half fp32's, zfp's
 * rtm_snapshots_slot_bytes), fewer steps for tti, whose step is longer; none for a store on
 * the device or on the cpu backend. fp32's the steps wait for; fp16's and zfp's cross beside
 * the 5 steps to the next snapshot, and only what outlasts them counts (fp16 here, not zfp),
 * in page-locked memory, not in pageable `host` memory, whose copies hold the steps.
 * boundary's shells cross beside the steps: free where a level crosses within a step (512^3:
 * 3 N), not where the shell is a large part of the volume (40^3 with a 20^3 interior: 6272
 * shell cells a level of 64000). */
static void test_host_store_crossings(void **state) {
  (void)state;
  enum { N = 400, SLOTS = 80, CELLS = 40 * 40 * 40, SHELL = 6272 };
  const char *iso = "physics.equation=iso", *pinned = "memory.imaging=pinned",
             *device = "memory.imaging=device";
  const rtm_reconstruction_t snapshots = RTM_RECONSTRUCT_SNAPSHOTS,
                             boundary = RTM_RECONSTRUCT_BOUNDARY;
  const double two = 2.0 * N;
  assert_true(weighed(40, iso, device, 0, snapshots, RTM_PRECISION_FP32) == two);
  assert_true(weighed(40, iso, device, 0, snapshots, RTM_PRECISION_ZFP) == two + SLOTS * 1.5);
  assert_true(weighed(40, iso, "memory.imaging=host", -1, snapshots, RTM_PRECISION_FP32) == two);
  const double fp32 = weighed(40, iso, pinned, 0, snapshots, RTM_PRECISION_FP32) - two;
  const double fp16 = weighed(40, iso, pinned, 0, snapshots, RTM_PRECISION_FP16) - two;
  const double zfp = weighed(40, iso, pinned, 0, snapshots, RTM_PRECISION_ZFP) - two;
  const double way = fp32 / (2.0 * SLOTS); /* an fp32 snapshot's crossing, one way */
  printf("iso, pinned, steps a shot beyond 2 N: fp32 snapshots %.1f (%.2f each way), fp16 %.1f, "
         "zfp %.1f\n",
         fp32, way, fp16, zfp);
  const double packing = weighed(40, iso, device, 0, snapshots, RTM_PRECISION_FP16) - two;
  assert_true(packing > 0.0);   /* fp16's conversions, measured */
  assert_true(way / 2.0 > 5.0); /* fp16's crossing outlasts the 5 steps */
  assert_true(fabs(fp16 - packing - SLOTS * 2.0 * (way / 2.0 - 5.0)) < 1e-9 * fp32);
  const int n[3] = {40, 40, 40};
  rtm_grid_t grid;
  assert_int_equal(rtm_grid_init(&grid, n, (double[3]){10, 10, 10}, (double[3]){0, 0, 0}), RTM_OK);
  const double zfp_way =
      way * (double)rtm_snapshots_slot_bytes(&grid, RTM_PRECISION_ZFP, 6) / (4.0 * CELLS);
  assert_true(zfp_way < 5.0); /* zfp's does not */
  assert_true(zfp == SLOTS * 1.5);
  /* pageable host memory: the copies hold the steps, every crossing counts */
  const double pageable =
      weighed(40, iso, "memory.imaging=host", 0, snapshots, RTM_PRECISION_ZFP) - two;
  assert_true(fabs(pageable - SLOTS * (1.5 + 2.0 * zfp_way)) < 1e-9 * pageable);

  assert_true(weighed(40, iso, device, 0, boundary, RTM_PRECISION_FP32) == 3.0 * N);
  const double shells = weighed(40, iso, pinned, 0, boundary, RTM_PRECISION_FP32);
  const double level = way * SHELL / CELLS; /* a level of the shell, one way */
  printf("iso, pinned: boundary at 40^3 %.1f steps a shot (a level crosses in %.2f steps)\n",
         shells, level);
  assert_true(level > 1.0);
  assert_true(fabs(shells - N * (1.0 + 2.0 * level)) < 1e-9 * shells);
  assert_true(weighed(512, iso, pinned, 0, boundary, RTM_PRECISION_FP32) == 3.0 * N);
  const double held = weighed(40, iso, "memory.imaging=host", 0, boundary, RTM_PRECISION_FP32);
  assert_true(fabs(held - N * (1.0 + 2.0 * (1.0 + level))) < 1e-9 * held); /* after the steps */

  const double tti = weighed(40, "physics.equation=tti", pinned, 0, snapshots, RTM_PRECISION_FP32);
  printf("tti, pinned: fp32 snapshots %.1f steps a shot beyond 2 N\n", tti - two);
  assert_true(tti > two && tti - two < fp32 / 2.0);
}

/* A migration of the survey of n cells with settings (two layers) and its ledger;
 * migration_release frees the three. */
static rtm_migration_t *migration_memory(const int n[3], const char *const *settings, survey_t *s,
                                         rtm_mem_ledger_t *memory) {
  rtm_migration_t *m = NULL;
  survey_config(s, n, settings);
  survey_set_model(s, survey_two_layers, NULL);
  assert_int_equal(rtm_migration_create(&s->cfg, &s->grid, &s->model, &m), RTM_OK);
  assert_int_equal(rtm_migration_memory(m, memory), RTM_OK);
  return m;
}

static void migration_release(rtm_migration_t *m, survey_t *s, rtm_mem_ledger_t *memory) {
  rtm_mem_ledger_release(memory);
  rtm_migration_destroy(m);
  survey_release(s);
}

/* The store in the ledger: shell cells x fields x (steps - 2) x 4 bytes; 40^3 cells with a
 * layer of 10 leave a 20^3 interior, whose shell is 20^3 - 12^3 = 6272 cells. */
static void test_store_bytes(void **state) {
  (void)state;
  const int n[3] = {40, 40, 40};
  const char *const settings[] = {"rtm.reconstruction=boundary", "time.steps=20",
                                  "physics.equation=vti", NULL};
  survey_t s;
  rtm_mem_ledger_t memory;
  rtm_migration_t *m = migration_memory(n, settings, &s, &memory);
  size_t bytes = 0;
  for (int r = 0; r < memory.count; ++r)
    if (strcmp(memory.records[r].label, "boundary shell") == 0) bytes = memory.records[r].bytes;
  printf("boundary shell: %zu bytes\n", bytes);
  assert_int_equal(bytes, (size_t)6272 * 2 * 18 * sizeof(float));
  migration_release(m, &s, &memory);
}

/* The two sides step through one medium: the model's volumes are in the ledger once, the
 * source side's (1 for iso, 4 for vti, 10 for tti on the cpu backend), none the receiver's. */
static void test_shared_medium(void **state) {
  (void)state;
  const int n[3] = {32, 32, 32};
  static const struct {
    const char *equation;
    int volumes;
  } cases[] = {
      {"physics.equation=iso", 1}, {"physics.equation=vti", 4}, {"physics.equation=tti", 10}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const char *const settings[] = {"time.steps=20", cases[c].equation, NULL};
    survey_t s;
    rtm_mem_ledger_t memory;
    rtm_migration_t *m = migration_memory(n, settings, &s, &memory);
    int source = 0, receiver = 0;
    for (int r = 0; r < memory.count; ++r) {
      const char *label = memory.records[r].label;
      if (!strstr(label, "model.")) continue;
      source += strncmp(label, "source ", 7) == 0;
      receiver += strncmp(label, "receiver ", 9) == 0;
    }
    printf("%s: the source side holds %d model volumes, the receiver side %d\n", cases[c].equation,
           source, receiver);
    assert_int_equal(source, cases[c].volumes);
    assert_int_equal(receiver, 0);
    migration_release(m, &s, &memory);
  }
}

/* rtm_migration_on_lit's hook: what it saw, the illumination then, and the shot's steps done
 * then (the progress callback's last count). */
typedef struct {
  rtm_migration_t *m;
  float *lit;
  int calls, steps_done, steps_at_lit;
} lit_seen_t;

static int take_lit(void *context) {
  lit_seen_t *seen = context;
  ++seen->calls;
  seen->steps_at_lit = seen->steps_done;
  return rtm_migration_read(seen->m, NULL, seen->lit);
}

static void count_steps(void *context, int steps_done) {
  ((lit_seen_t *)context)->steps_done = steps_done;
}

/* With fp32 snapshots the illumination is whole between a shot's passes: the hook is called
 * once a shot after the forward pass's steps and before any of the backward's, and sees the
 * illumination the shot ends with, bit for bit (the backward pass leaves it as it is);
 * boundary sums it in the imaging steps and never calls the hook. Two shots of the
 * flat-reflector survey, iso and tti, on the cpu backend. */
static void test_lit_between_passes(void **state) {
  (void)state;
  const char *const equations[] = {"physics.equation=iso", "physics.equation=tti"};
  for (int e = 0; e < 2; ++e)
    for (int way = 0; way < 2; ++way) {
      const char *const settings[] = {equations[e], NULL};
      survey_t s;
      survey_flat_modelled(&s, settings);
      s.cfg.rtm.reconstruction = way == 0 ? RTM_RECONSTRUCT_SNAPSHOTS : RTM_RECONSTRUCT_BOUNDARY;
      const size_t cells = rtm_grid_interior_cells(&s.grid);
      const size_t per_shot = (size_t)s.receiver_count * ((size_t)s.steps + 1);
      float *after = malloc(cells * sizeof *after), *observed = malloc(per_shot * sizeof *observed);
      lit_seen_t seen = {NULL, malloc(cells * sizeof(float)), 0, 0, -1};
      assert_true(after && observed && seen.lit);
      assert_int_equal(rtm_migration_create(&s.cfg, &s.grid, &s.model, &seen.m), RTM_OK);
      rtm_migration_on_lit(seen.m, take_lit, &seen);
      for (int shot = 0; shot < s.shots.count; ++shot) {
        const double *source = s.shots.source_m + 3 * (size_t)shot;
        memcpy(observed, s.observed + shot * per_shot, per_shot * sizeof *observed);
        rtm_migration_prepare(seen.m, source, rtm_migration_mute_velocity(seen.m, source),
                              s.receivers_m + 3 * (size_t)shot * s.receiver_count, s.receiver_count,
                              observed);
        assert_int_equal(rtm_migration_shot(seen.m, source,
                                            s.receivers_m + 3 * (size_t)shot * s.receiver_count,
                                            s.receiver_count, observed, count_steps, &seen, NULL),
                         RTM_OK);
        assert_int_equal(rtm_migration_read(seen.m, NULL, after), RTM_OK);
        if (way == 0) {
          assert_int_equal(seen.calls, shot + 1);
          /* between the passes: the forward's steps done, none of the backward's */
          assert_int_equal(seen.steps_at_lit, rtm_migration_steps(seen.m));
          assert_memory_equal(seen.lit, after, cells * sizeof *after);
        } else {
          assert_int_equal(seen.calls, 0);
        }
      }
      double light = 0.0;
      for (size_t i = 0; i < cells; ++i)
        light += after[i];
      assert_true(light > 0.0); /* the shots lit something */
      rtm_migration_destroy(seen.m);
      free(after), free(observed), free(seen.lit);
      survey_release(&s);
    }
}

RTM_TEST_MAIN(cmocka_unit_test(test_rebuilt_iso), cmocka_unit_test(test_rebuilt_vti),
              cmocka_unit_test(test_rebuilt_tti), cmocka_unit_test(test_images_iso),
              cmocka_unit_test(test_images_tti), cmocka_unit_test(test_store_bytes),
              cmocka_unit_test(test_refusals), cmocka_unit_test(test_auto),
              cmocka_unit_test(test_auto_counts_the_callers_host_arrays),
              cmocka_unit_test(test_auto_weighs_time), cmocka_unit_test(test_host_store_crossings),
              cmocka_unit_test(test_shared_medium), cmocka_unit_test(test_lit_between_passes))

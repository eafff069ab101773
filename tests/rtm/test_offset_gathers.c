/* The subsurface-offset gathers of rtm_imaging.h on the host: the CIP lines a plan places,
 * the accumulation against a plain loop over every element bit for bit (the reference a
 * device kernel is to match), the layer's elements left zero, clear, and the refusals: lags
 * wider than the interior (the plan, and the config naming rtm.offset_lags), a device in a
 * build without CUDA, keys out of range. */
#define _POSIX_C_SOURCE 200809L /* fileno, dup2: rtm_test_capture.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "imaging_testing.h"
#include "rtm_config.h"
#include "rtm_imaging.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

/* 40 x 36 x 44 cells, layer 8: interiors of 24 and 20 cells; every 8th line is 3 lines each
 * way, centred: x at 8 + (23 - 16) / 2 = 11, 19, 27; y at 8 + (19 - 16) / 2 = 9, 17, 25. */
static void test_plan_places_lines(void **state) {
  (void)state;
  rtm_grid_t grid;
  const int n[3] = {40, 36, 44};
  const double spacing_m[3] = {10.0, 10.0, 10.0};
  rtm_gather_plan_t plan;
  assert_int_equal(rtm_grid_init(&grid, n, spacing_m, NULL), RTM_OK);
  assert_int_equal(rtm_gather_plan_make(&grid, 8, 4, 8, 8, &plan), RTM_OK);
  assert_int_equal(plan.first[0], 11);
  assert_int_equal(plan.count[0], 3);
  assert_int_equal(plan.first[1], 9);
  assert_int_equal(plan.count[1], 3);
  assert_int_equal(rtm_gather_plan_cips(&plan), 9);
  assert_int_equal(rtm_gather_plan_cells(&plan, 44), 9 * 9 * 9 * 44);
  /* a step wider than the interior: one line, in its middle */
  assert_int_equal(rtm_gather_plan_make(&grid, 8, 4, 100, 100, &plan), RTM_OK);
  assert_int_equal(plan.count[0], 1);
  assert_int_equal(plan.first[0], 8 + 23 / 2);
  /* 2 x 10 + 1 = 21 lags fit across y's 20 cells no longer */
  capture_t capture;
  assert_int_equal(captured(&capture, rtm_gather_plan_make(&grid, 8, 10, 8, 8, &plan)),
                   RTM_ERR_CONFIG);
  assert_contains(capture.text, "rtm.offset_lags = 10");
}

/* The plain loop: element (cip, hy, hx, iz) += S(x - h) R(x + h), fmaf, where both and the
 * depth lie inside [layer, n - layer) on every axis; nothing elsewhere. */
static void brute_force(const rtm_grid_t *g, const rtm_gather_plan_t *p, float *gathers,
                        const float *source, rtm_layout_t sl, const float *receiver,
                        rtm_layout_t rl) {
  const int L = p->lags, nh = 2 * L + 1, w = p->layer;
  for (int cip = 0; cip < rtm_gather_plan_cips(p); ++cip)
    for (int hy = -L; hy <= L; ++hy)
      for (int hx = -L; hx <= L; ++hx)
        for (int iz = 0; iz < g->nz_local; ++iz) {
          const int x = p->first[0] + cip % p->count[0] * p->step[0];
          const int y = p->first[1] + cip / p->count[0] * p->step[1];
          const int z = g->z_offset + iz;
          const int xs[2] = {x - hx, x + hx}, ys[2] = {y - hy, y + hy};
          int inside = z >= w && z < g->n[2] - w;
          for (int k = 0; k < 2; ++k)
            inside =
                inside && xs[k] >= w && xs[k] < g->n[0] - w && ys[k] >= w && ys[k] < g->n[1] - w;
          if (!inside) continue;
          const float s = source[sl.origin + iz * sl.stride_z + ys[0] * sl.stride_y + xs[0]];
          const float r = receiver[rl.origin + iz * rl.stride_z + ys[1] * rl.stride_y + xs[1]];
          float *element =
              gathers +
              (((size_t)cip * nh + (size_t)(hy + L)) * nh + (hx + L)) * (size_t)g->nz_local + iz;
          *element = fmaf(s, r, *element);
        }
}

/* Two accumulations (a padded source with a dense receiver, then the other way round) on
 * random non-zero fields of the odd-sized slab (planes [5, 12) of 17), against the plain
 * loop bit for bit: with the layer (2 cells: lags reach into it and the slab's first planes
 * lie in it) and without (lags reach past the grid's edge). The elements the loop leaves
 * alone are zero, the others are not. */
static void test_accumulate_matches_loop(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_accumulate_matches_loop");
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const int layers[2] = {2, 0};
  for (int k = 0; k < 2; ++k) {
    rtm_gather_plan_t plan;
    rtm_gathers_t *gathers = NULL;
    rtm_mem_ledger_t ledger;
    rtm_mem_ledger_init(&ledger);
    assert_int_equal(rtm_gather_plan_make(&grid, layers[k], 3, 4, 3, &plan), RTM_OK);
    assert_int_equal(rtm_gathers_create(&grid, &plan, -1, 0, &ledger, &gathers), RTM_OK);
    assert_non_null(imaging_test_record(&ledger, "gathers"));
    const size_t cells = rtm_gather_plan_cells(&plan, grid.nz_local);
    float *fields[4];
    imaging_test_gather_fields(&rng, &grid, fields);
    const rtm_layout_t p = rtm_layout_padded(&grid), d = rtm_layout_dense(&grid);
    float *want = imaging_test_alloc(cells), *got = imaging_test_alloc(cells);
    assert_int_equal(rtm_gathers_accumulate(gathers, fields[0], p, fields[1], d), RTM_OK);
    assert_int_equal(rtm_gathers_accumulate(gathers, fields[2], d, fields[3], p), RTM_OK);
    brute_force(&grid, &plan, want, fields[0], p, fields[1], d);
    brute_force(&grid, &plan, want, fields[2], d, fields[3], p);
    assert_int_equal(rtm_gathers_read(gathers, got), RTM_OK);
    assert_memory_equal(got, want, cells * sizeof *got);
    size_t zeros = 0;
    for (size_t i = 0; i < cells; ++i)
      zeros += got[i] == 0.0f;
    printf("layer %d: %zu of %zu elements zero (outside the interior)\n", layers[k], zeros, cells);
    assert_true(zeros > 0 && zeros < cells);
    imaging_test_gathers_cleared(gathers, got, cells);
    free(got);
    free(want);
    for (int f = 0; f < 4; ++f)
      free(fields[f]);
    rtm_gathers_destroy(gathers);
    rtm_mem_ledger_release(&ledger);
  }
}

/* A build without CUDA refuses a device; with it, test_imaging_gpu's gathers case runs them. */
static void test_device_refused(void **state) {
  (void)state;
#ifdef RTM3D_HAVE_CUDA
  skip();
#endif
  rtm_grid_t grid;
  rtm_gather_plan_t plan;
  rtm_gathers_t *gathers = NULL;
  capture_t capture;
  imaging_test_grid(&grid);
  assert_int_equal(rtm_gather_plan_make(&grid, 2, 2, 4, 4, &plan), RTM_OK);
  assert_int_equal(captured(&capture, rtm_gathers_create(&grid, &plan, 0, 0, NULL, &gathers)),
                   RTM_ERR_UNSUPPORTED);
  assert_null(gathers);
}

/* What a device holds beside the gathers, the preflight's count: three dense fields of the
 * rank's interior where the sources stay (three steps' R), two where they are copied (one
 * step's S and R); nothing on the host. */
static void test_held_bytes(void **state) {
  (void)state;
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const size_t field = rtm_grid_interior_cells(&grid) * sizeof(float);
  assert_int_equal(rtm_gathers_held_bytes(&grid, 0, 1), 3 * field);
  assert_int_equal(rtm_gathers_held_bytes(&grid, 0, 0), 2 * field);
  assert_int_equal(rtm_gathers_held_bytes(&grid, -1, 1), 0);
  assert_int_equal(rtm_gathers_held_bytes(&grid, -1, 0), 0);
}

/* The config refuses what cannot be: keys out of range, and lags wider than the interior,
 * naming rtm.offset_lags with the grid and the layer. */
static void test_config_refusals(void **state) {
  (void)state;
  rtm_config_t cfg;
  capture_t capture;
  const char *const out_of_range[] = {"rtm.offset_lags=-1", "rtm.cip_x_step=0", "rtm.cip_y_step=0"};
  for (size_t k = 0; k < sizeof out_of_range / sizeof out_of_range[0]; ++k) {
    rtm_config_defaults(&cfg);
    assert_int_not_equal(captured(&capture, rtm_config_set(&cfg, out_of_range[k])), RTM_OK);
    assert_contains(capture.text, out_of_range[k] + 4); /* the key's name */
  }
  rtm_config_defaults(&cfg);
  assert_int_equal(rtm_config_set(&cfg, "grid.nx=60"), RTM_OK);
  assert_int_equal(rtm_config_set(&cfg, "boundary.width=20"), RTM_OK); /* interior 20 cells */
  assert_int_equal(rtm_config_set(&cfg, "rtm.offset_lags=9"), RTM_OK);
  assert_int_equal(rtm_config_validate(&cfg), RTM_OK); /* 19 lags fit */
  assert_int_equal(rtm_config_set(&cfg, "rtm.offset_lags=10"), RTM_OK);
  assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_ERR_CONFIG);
  assert_contains(capture.text, "rtm.offset_lags = 10");
  assert_contains(capture.text, "grid.nx = 60");
  assert_contains(capture.text, "at most 9");
}

RTM_TEST_MAIN(cmocka_unit_test(test_plan_places_lines),
              cmocka_unit_test(test_accumulate_matches_loop), cmocka_unit_test(test_held_bytes),
              cmocka_unit_test(test_device_refused), cmocka_unit_test(test_config_refusals))

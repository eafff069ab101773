/* imaging_testing.h - what the host and GPU tests of rtm_imaging.h share (header only): the
 * odd-sized grid with a local z-range, fresh non-zero inputs, the plain triple loop the
 * accumulation is checked against, values that exercise binary16 rounding, and the ledger's
 * total, the refusals of image strategies. Include after <cmocka.h>, with _POSIX_C_SOURCE
 * defined for rtm_test_capture.h. */
#ifndef RTM_TEST_IMAGING_TESTING_H
#define RTM_TEST_IMAGING_TESTING_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_codec.h"
#include "rtm_grid.h"
#include "rtm_half.h"
#include "rtm_imaging.h"
#include "rtm_memory.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_random.h"

/* 36 x 24 x 17 cells, this rank owning planes [5, 12): a box 6 cells in from every face
 * (rtm_image_keep_interior) cuts every axis, x at 4 and 32 (6 and 30 moved out to quads). */
static inline void imaging_test_box_grid(rtm_grid_t *grid) {
  const int n[3] = {36, 24, 17};
  const double spacing_m[3] = {10.0, 12.5, 8.0};
  assert_int_equal(rtm_grid_init(grid, n, spacing_m, NULL), 0);
  assert_int_equal(rtm_grid_set_z_range(grid, 5, 7), 0);
}

/* Zeroes a dense [nz_local][ny][nx] volume outside rtm_image_keep_interior's box of `width`:
 * x from width down to a multiple of 4 to nx - width up to one, y from width to ny - width,
 * global z from width to nz - width. */
static inline void imaging_test_outside_box(const rtm_grid_t *grid, int width, float *dense) {
  const long x_from = width / 4 * 4, x_to = (grid->n[0] - width + 3) / 4 * 4;
  for (long iz = 0; iz < grid->nz_local; ++iz)
    for (long iy = 0; iy < grid->n[1]; ++iy)
      for (long ix = 0; ix < grid->n[0]; ++ix) {
        const long z = grid->z_offset + iz;
        if (ix >= x_from && ix < x_to && iy >= width && iy < grid->n[1] - width && z >= width &&
            z < grid->n[2] - width)
          continue;
        dense[(iz * grid->n[1] + iy) * grid->n[0] + ix] = 0.0f;
      }
}

/* imaging_test_grid with rows of `nx` cells. */
static inline void imaging_test_grid_nx(rtm_grid_t *grid, int nx) {
  const int n[3] = {nx, 11, 17};
  const double spacing_m[3] = {10.0, 12.5, 8.0};
  assert_int_equal(rtm_grid_init(grid, n, spacing_m, NULL), 0);
  assert_int_equal(rtm_grid_set_z_range(grid, 5, 7), 0);
}

/* 13 x 11 x 17 cells, this rank owning planes [5, 12): odd extents (no row is a whole number
 * of vectors or warps), a padded row of 32 floats (21 + 11 of padding), a z-offset. */
static inline void imaging_test_grid(rtm_grid_t *grid) {
  imaging_test_grid_nx(grid, 13);
}

/* Uniform magnitudes in [lo, hi), random signs: never zero. */
static inline void imaging_test_fill(rtm_test_rng_t *rng, float *values, size_t count, double lo,
                                     double hi) {
  for (size_t i = 0; i < count; ++i) {
    const double magnitude = rtm_test_uniform(rng, lo, hi);
    values[i] = (float)((rtm_test_next(rng) >> 63) ? -magnitude : magnitude);
  }
}

static inline float *imaging_test_alloc(size_t count) {
  float *values = calloc(count ? count : 1, sizeof *values);
  assert_non_null(values);
  return values;
}

/* The accumulation written plainly: every cell, image then illumination, fmaf each. */
static inline void imaging_test_accumulate(const rtm_grid_t *grid, float *image,
                                           float *illumination, const float *source,
                                           rtm_layout_t source_layout, const float *receiver,
                                           rtm_layout_t receiver_layout) {
  for (long long iz = 0; iz < grid->nz_local; ++iz)
    for (long long iy = 0; iy < grid->n[1]; ++iy)
      for (long long ix = 0; ix < grid->n[0]; ++ix) {
        const size_t dense = (size_t)((iz * grid->n[1] + iy) * grid->n[0] + ix);
        const float s = source[source_layout.origin + iz * source_layout.stride_z +
                               iy * source_layout.stride_y + ix];
        const float r = receiver[receiver_layout.origin + iz * receiver_layout.stride_z +
                                 iy * receiver_layout.stride_y + ix];
        image[dense] = fmaf(s, r, image[dense]);
        illumination[dense] = fmaf(s, s, illumination[dense]);
      }
}

/* Values binary16 rounds in every way: normal ones of 11 significant bits and more, ties
 * between two halves (even and odd), the subnormal range (below 2^-14), values that round
 * to zero (below 2^-25), and magnitudes past 65520 that become infinity. */
static inline void imaging_test_half_values(rtm_test_rng_t *rng, float *values, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    float v;
    switch (i % 6) {
    case 0: v = (float)rtm_test_uniform(rng, 1e-3, 6e4); break;
    case 1: v = (float)rtm_test_uniform(rng, 1e-8, 6e-5); break;
    case 2: v = (float)rtm_test_uniform(rng, 6.6e4, 1e6); break;
    case 3: v = (float)rtm_test_uniform(rng, 1e-12, 2.9e-8); break;
    case 4: /* k + 1/2 units of the last place of a half in [1, 2): a tie */
      v = 1.0f + ((float)(rtm_test_next(rng) % 1024) + 0.5f) * 0x1p-10f;
      break;
    default: v = (float)rtm_test_uniform(rng, 0.5, 2.0); break;
    }
    values[i] = (rtm_test_next(rng) >> 63) ? -v : v;
  }
}

/* What an fp16 snapshot gives back for a volume: each value times 2^e, rounded to binary16
 * and scaled back, with e such that 2^e max |x| lies in [2^14, 2^15) (0 for an all-zero
 * volume; within [-126, 126]), found here by frexp apart from rtm_half_scale_exponent, and
 * the host's rtm_half conversions. */
static inline void imaging_test_half_scaled(float *values, size_t count) {
  float largest = 0.0f;
  for (size_t i = 0; i < count; ++i)
    largest = fmaxf(largest, fabsf(values[i]));
  int exponent = 0; /* largest = m 2^exponent, m in [0.5, 1) */
  frexpf(largest, &exponent);
  int e = largest > 0.0f ? 15 - exponent : 0;
  e = e < -126 ? -126 : e > 126 ? 126 : e;
  for (size_t i = 0; i < count; ++i)
    values[i] = ldexpf(rtm_half_to_float(rtm_half_from_float(ldexpf(values[i], e))), -e);
}

/* A dense interior [nz_local][ny][nx] replaced by its round trip through the
 * codec at `rate` (codec.c, the reference a zfp store and the device's kernels match). */
static inline void imaging_test_codec_round_trip(const rtm_grid_t *grid, float *dense, int rate) {
  const int n[3] = {grid->n[0], grid->n[1], grid->nz_local};
  const size_t row = (size_t)n[0], plane = row * (size_t)n[1];
  void *blocks = malloc(rtm_codec_bytes(n, rate));
  assert_non_null(blocks);
  assert_int_equal(rtm_codec_compress(dense, n, row, plane, rate, blocks, NULL), RTM_OK);
  assert_int_equal(rtm_codec_decompress(blocks, n, rate, dense, row, plane), RTM_OK);
  free(blocks);
}

static inline size_t imaging_test_ledger_total(const rtm_mem_ledger_t *ledger) {
  size_t total = 0;
  for (int i = 0; i < ledger->count; ++i)
    total += ledger->records[i].reserved_bytes;
  return total;
}

/* The ledger's record labelled `label`; fails the test when there is none. */
static inline const rtm_mem_record_t *imaging_test_record(const rtm_mem_ledger_t *ledger,
                                                          const char *label) {
  for (int i = 0; i < ledger->count; ++i)
    if (strcmp(ledger->records[i].label, label) == 0) return &ledger->records[i];
  print_error("no ledger record labelled '%s'\n", label);
  fail();
  return NULL;
}

/* Four random fields for the gathers' accumulations: padded, dense, dense, padded (a padded
 * source with a dense receiver, then the other way round). */
static inline void imaging_test_gather_fields(rtm_test_rng_t *rng, const rtm_grid_t *grid,
                                              float *fields[4]) {
  const size_t padded = grid->padded_cells, dense = rtm_grid_interior_cells(grid);
  for (int f = 0; f < 4; ++f) {
    const size_t count = f == 0 || f == 3 ? padded : dense;
    fields[f] = imaging_test_alloc(count);
    imaging_test_fill(rng, fields[f], count, 0.1, 3.0);
  }
}

/* Gathers cleared read back as zeros (got: scratch of count floats). */
static inline void imaging_test_gathers_cleared(rtm_gathers_t *gathers, float *got, size_t count) {
  assert_int_equal(rtm_gathers_clear(gathers), RTM_OK);
  assert_int_equal(rtm_gathers_read(gathers, got), RTM_OK);
  for (size_t i = 0; i < count; ++i)
    assert_true(got[i] == 0.0f);
}

/* Floats copied where an image of `device` lives (host memory for -1), and freed. */
typedef float *(*imaging_test_place_t)(const float *host, size_t count);
typedef void (*imaging_test_drop_t)(float *placed);

/* The illumination deferred (rtm_image_defer_illumination) on an image of `device`: one
 * accumulation as usual, then `count` with it deferred of sources `stride` floats apart (the
 * last first, as a backward pass takes a store's slots), then rtm_image_illuminate over
 * them. Before the pass the illumination is the first accumulation's alone; after it, image
 * and illumination are the plain loop's floats for all of them, bit for bit. */
static inline void imaging_test_deferred(rtm_test_rng_t *rng, int device, int nx, int count,
                                         size_t stride, imaging_test_place_t place,
                                         imaging_test_drop_t drop) {
  rtm_grid_t grid;
  imaging_test_grid_nx(&grid, nx);
  const size_t cells = rtm_grid_interior_cells(&grid), padded = grid.padded_cells;
  const rtm_layout_t p = rtm_layout_padded(&grid), d = rtm_layout_dense(&grid);
  float *sources = imaging_test_alloc((size_t)count * stride);
  float *receiver = imaging_test_alloc(padded), *first = imaging_test_alloc(cells);
  float *want_image = imaging_test_alloc(cells), *want_illumination = imaging_test_alloc(cells);
  float *got_image = imaging_test_alloc(cells), *got_illumination = imaging_test_alloc(cells);
  imaging_test_fill(rng, sources, (size_t)count * stride, 0.1, 3.0);
  imaging_test_fill(rng, receiver, padded, 0.1, 3.0);
  imaging_test_fill(rng, first, cells, 0.1, 3.0);
  float *placed_sources = place(sources, (size_t)count * stride);
  float *placed_receiver = place(receiver, padded), *placed_first = place(first, cells);
  rtm_image_t *image = NULL;
  assert_int_equal(rtm_image_create(&grid, device, "auto", NULL, &image), RTM_OK);
  assert_int_equal(rtm_image_accumulate(image, placed_first, d, placed_receiver, p), RTM_OK);
  imaging_test_accumulate(&grid, want_image, want_illumination, first, d, receiver, p);
  rtm_image_defer_illumination(image, 1);
  for (int k = count - 1; k >= 0; --k)
    assert_int_equal(
        rtm_image_accumulate(image, placed_sources + (size_t)k * stride, d, placed_receiver, p),
        RTM_OK);
  assert_int_equal(rtm_image_read(image, NULL, got_illumination), RTM_OK);
  assert_memory_equal(got_illumination, want_illumination, cells * sizeof(float));
  assert_int_equal(rtm_image_illuminate(image, placed_sources, stride, count), RTM_OK);
  rtm_image_defer_illumination(image, 0);
  for (int k = count - 1; k >= 0; --k)
    imaging_test_accumulate(&grid, want_image, want_illumination, sources + (size_t)k * stride, d,
                            receiver, p);
  assert_int_equal(rtm_image_read(image, got_image, got_illumination), RTM_OK);
  assert_memory_equal(got_image, want_image, cells * sizeof(float));
  assert_memory_equal(got_illumination, want_illumination, cells * sizeof(float));
  rtm_image_destroy(image);
  drop(placed_sources), drop(placed_receiver), drop(placed_first);
  free(sources), free(receiver), free(first);
  free(want_image), free(want_illumination), free(got_image), free(got_illumination);
}

/* rtm_image_create for the fields of `device` through `strategy` is a config error naming
 * memory.imaging, and leaves no image. */
static inline void imaging_test_image_refused(int device, const char *strategy) {
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  rtm_image_t *image = NULL;
  capture_t capture;
  assert_int_equal(captured(&capture, rtm_image_create(&grid, device, strategy, NULL, &image)),
                   RTM_ERR_CONFIG);
  assert_contains(capture.text, "memory.imaging");
  assert_null(image);
}

/* rtm_image_keep_interior on an image of `device` (imaging_test_box_grid, a box 6 cells in):
 * two accumulations (the source padded, then dense) add the plain loop's floats inside the
 * box and nothing outside it, 28 x 12 x 5 cells of this rank's planes. */
static inline void imaging_test_interior(rtm_test_rng_t *rng, int device,
                                         imaging_test_place_t place, imaging_test_drop_t drop) {
  enum { WIDTH = 6 };
  rtm_grid_t grid;
  imaging_test_box_grid(&grid);
  const size_t cells = rtm_grid_interior_cells(&grid), padded = grid.padded_cells;
  const rtm_layout_t p = rtm_layout_padded(&grid), d = rtm_layout_dense(&grid);
  float *source = imaging_test_alloc(padded), *source_dense = imaging_test_alloc(cells);
  float *receiver = imaging_test_alloc(cells);
  float *want_image = imaging_test_alloc(cells), *want_illumination = imaging_test_alloc(cells);
  float *got_image = imaging_test_alloc(cells), *got_illumination = imaging_test_alloc(cells);
  imaging_test_fill(rng, source, padded, 0.1, 3.0);
  imaging_test_fill(rng, source_dense, cells, 0.1, 3.0);
  imaging_test_fill(rng, receiver, cells, 0.1, 3.0);
  float *placed_source = place(source, padded), *placed_dense = place(source_dense, cells);
  float *placed_receiver = place(receiver, cells);
  rtm_image_t *image = NULL;
  assert_int_equal(rtm_image_create(&grid, device, "auto", NULL, &image), RTM_OK);
  rtm_image_keep_interior(image, WIDTH);
  assert_int_equal(rtm_image_accumulate(image, placed_source, p, placed_receiver, d), RTM_OK);
  assert_int_equal(rtm_image_accumulate(image, placed_dense, d, placed_receiver, d), RTM_OK);
  imaging_test_accumulate(&grid, want_image, want_illumination, source, p, receiver, d);
  imaging_test_accumulate(&grid, want_image, want_illumination, source_dense, d, receiver, d);
  imaging_test_outside_box(&grid, WIDTH, want_image);
  imaging_test_outside_box(&grid, WIDTH, want_illumination);
  assert_int_equal(rtm_image_read(image, got_image, got_illumination), RTM_OK);
  assert_memory_equal(got_image, want_image, cells * sizeof(float));
  assert_memory_equal(got_illumination, want_illumination, cells * sizeof(float));
  size_t kept = 0;
  for (size_t i = 0; i < cells; ++i)
    kept += got_image[i] != 0.0f;
  assert_int_equal(kept, 28 * 12 * 5); /* x [4, 32), y [6, 18), planes 6 to 10 of [5, 12) */
  rtm_image_destroy(image);
  drop(placed_source), drop(placed_dense), drop(placed_receiver);
  free(source), free(source_dense), free(receiver);
  free(want_image), free(want_illumination), free(got_image), free(got_illumination);
}

/* zero_layer's rule (solver/rtm/migration.c), written apart from the box's: a dense volume
 * zeroed outside [width, n - width) on every axis, z global. */
static inline void imaging_test_zero_layer(const rtm_grid_t *grid, int width, float *dense) {
  for (long iz = 0; iz < grid->nz_local; ++iz)
    for (long iy = 0; iy < grid->n[1]; ++iy)
      for (long ix = 0; ix < grid->n[0]; ++ix) {
        const long z = grid->z_offset + iz;
        if (ix < width || ix >= grid->n[0] - width || iy < width || iy >= grid->n[1] - width ||
            z < width || z >= grid->n[2] - width)
          dense[(iz * grid->n[1] + iy) * grid->n[0] + ix] = 0.0f;
      }
}

/* Over grids and widths (rows of 46 and 13 cells, which the box runs to the end of or which
 * take the device's one-cell kernel; widths 0 to 6; a slab in the middle, one wholly in the
 * layer): the image accumulated in rtm_image_keep_interior's box, then zeroed by
 * zero_layer's rule, is the one accumulated over every cell and zeroed so, bit for bit. */
static inline void imaging_test_interior_geometries(rtm_test_rng_t *rng, int device,
                                                    imaging_test_place_t place,
                                                    imaging_test_drop_t drop) {
  static const struct {
    int n[3], z_offset, nz_local, width;
  } cases[] = {{{46, 11, 17}, 0, 17, 1},
               {{36, 24, 17}, 5, 7, 3},
               {{36, 24, 17}, 0, 5, 6},
               {{13, 11, 17}, 5, 7, 2},
               {{36, 24, 17}, 5, 7, 0}};
  const double spacing_m[3] = {10.0, 12.5, 8.0};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    rtm_grid_t grid;
    assert_int_equal(rtm_grid_init(&grid, cases[c].n, spacing_m, NULL), 0);
    assert_int_equal(rtm_grid_set_z_range(&grid, cases[c].z_offset, cases[c].nz_local), 0);
    const size_t cells = rtm_grid_interior_cells(&grid), padded = grid.padded_cells;
    const rtm_layout_t p = rtm_layout_padded(&grid), d = rtm_layout_dense(&grid);
    float *source = imaging_test_alloc(padded), *receiver = imaging_test_alloc(cells);
    imaging_test_fill(rng, source, padded, 0.1, 3.0);
    imaging_test_fill(rng, receiver, cells, 0.1, 3.0);
    float *placed_source = place(source, padded), *placed_receiver = place(receiver, cells);
    float *got[2][2]; /* [boxed][image, illumination] */
    for (int boxed = 0; boxed < 2; ++boxed) {
      rtm_image_t *image = NULL;
      assert_int_equal(rtm_image_create(&grid, device, "auto", NULL, &image), RTM_OK);
      if (boxed) rtm_image_keep_interior(image, cases[c].width);
      assert_int_equal(rtm_image_accumulate(image, placed_source, p, placed_receiver, d), RTM_OK);
      got[boxed][0] = imaging_test_alloc(cells), got[boxed][1] = imaging_test_alloc(cells);
      assert_int_equal(rtm_image_read(image, got[boxed][0], got[boxed][1]), RTM_OK);
      for (int v = 0; v < 2; ++v)
        imaging_test_zero_layer(&grid, cases[c].width, got[boxed][v]);
      rtm_image_destroy(image);
    }
    for (int v = 0; v < 2; ++v)
      assert_memory_equal(got[1][v], got[0][v], cells * sizeof(float));
    for (int boxed = 0; boxed < 2; ++boxed)
      free(got[boxed][0]), free(got[boxed][1]);
    drop(placed_source), drop(placed_receiver);
    free(source), free(receiver);
  }
}

#endif

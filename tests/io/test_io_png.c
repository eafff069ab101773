/* PNG slices: size, colormap (positive red, negative blue, zero white, NaN black), the
 * percentile clip against a sorted reference, the Title text, refused sizes; and what a
 * figure says of a slice: its place in metres and by index, the plane nearest a place in
 * metres, a model's colours over its whole range. */
#include "rtm_test_io.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "rtm_test_png.h"
#include "rtm_io.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

#define PNG_PATH "test_io_png.png"

static int compare_floats(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static void test_colormap_and_title(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_io_png");
  /* 5 x 3, a random positive scale so no fixed value is special */
  const float s = (float)rtm_test_uniform(&rng, 0.5, 100.0);
  const float values[15] = {s,         0.0f, -s,   0.5f * s, NAN,  2.0f * s, -2.0f * s, 0.25f * s,
                            -0.5f * s, 0.0f, 0.0f, 0.0f,     0.0f, 0.0f,     0.0f};
  /* 15 values, 80th percentile of |v|: the 12th smallest = s (|v| sorted: 0 x8, .25s, .5s,
   * .5s, s, s, 2s, 2s); NaN is left out, so 14 finite values: ceil(0.8 * 14) = 12th = s */
  double clip = 0.0;
  assert_int_equal(rtm_png_clip_value(values, 15, 80.0, &clip), RTM_OK);
  assert_true(clip == s);
  remove(PNG_PATH);
  assert_int_equal(rtm_png_write(PNG_PATH, values, 5, 3, 80.0,
                                 "run.h5 /image z=3 (clip \xc2\xb1"
                                 "1)"),
                   RTM_OK);
  test_png_t image;
  assert_int_equal(test_png_read(PNG_PATH, &image), 0);
  assert_int_equal(image.width, 5);
  assert_int_equal(image.height, 3);
  assert_true(test_png_is(&image, 0, 0, 255, 0, 0));     /* +clip: red */
  assert_true(test_png_is(&image, 1, 0, 255, 255, 255)); /* 0: white */
  assert_true(test_png_is(&image, 2, 0, 0, 0, 255));     /* -clip: blue */
  assert_true(test_png_is(&image, 3, 0, 255, 128, 128)); /* +clip/2: half way to red */
  assert_true(test_png_is(&image, 4, 0, 0, 0, 0));       /* NaN: black */
  assert_true(test_png_is(&image, 0, 1, 255, 0, 0));     /* beyond the clip saturates */
  assert_true(test_png_is(&image, 1, 1, 0, 0, 255));
  assert_true(test_png_is(&image, 3, 1, 128, 128, 255)); /* -clip/2 */
  assert_true(test_png_is(&image, 4, 2, 255, 255, 255)); /* row 2 is the bottom row */
  /* the title is a Latin-1 tEXt chunk: the UTF-8 "±" became the single byte 0xb1 */
  assert_int_equal(image.title_compression, PNG_TEXT_COMPRESSION_NONE);
  assert_string_equal(image.title, "run.h5 /image z=3 (clip \xb1"
                                   "1)");
  free(image.rgb);
  remove(PNG_PATH);
}

static void test_clip_matches_sorted_percentile(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_io_png");
  const double percentiles[] = {1.0, 50.0, 90.0, 99.0, 99.9, 100.0};
  for (int trial = 0; trial < 20; ++trial) {
    size_t count = 1 + (size_t)(rtm_test_uniform(&rng, 0.0, 1.0) * 5000.0);
    float *values = malloc(count * sizeof *values);
    float *sorted = malloc(count * sizeof *sorted);
    for (size_t i = 0; i < count; ++i) {
      /* repeated values and both signs exercise the partition's equal-key handling */
      values[i] = (float)(floor(rtm_test_uniform(&rng, -50.0, 50.0)) * (trial % 2 ? 1.0 : 0.37));
      sorted[i] = fabsf(values[i]);
    }
    qsort(sorted, count, sizeof *sorted, compare_floats);
    for (size_t p = 0; p < sizeof percentiles / sizeof percentiles[0]; ++p) {
      double clip = 0.0;
      assert_int_equal(rtm_png_clip_value(values, count, percentiles[p], &clip), RTM_OK);
      size_t k = (size_t)ceil(percentiles[p] / 100.0 * (double)count) - 1;
      double expected = sorted[k > 0 ? k : 0] > 0.0f ? sorted[k] : 1.0;
      assert_true(clip == expected);
    }
    free(values);
    free(sorted);
  }
}

static void test_refuses_bad_arguments(void **state) {
  (void)state;
  const float values[4] = {1.0f, -1.0f, 0.5f, 0.0f};
  capture_t c;
  remove(PNG_PATH);
  capture_begin(&c, 2);
  int width_zero = rtm_png_write(PNG_PATH, values, 0, 4, 99.0, "t");
  int height_zero = rtm_png_write(PNG_PATH, values, 4, 0, 99.0, "t");
  int bad_clip = rtm_png_write(PNG_PATH, values, 2, 2, 0.0, "t");
  char *text = capture_end(&c);
  assert_int_not_equal(width_zero, RTM_OK);
  assert_int_not_equal(height_zero, RTM_OK);
  assert_int_not_equal(bad_clip, RTM_OK);
  assert_false(file_exists(PNG_PATH));
  assert_true(contains(text, "0 x 4"));
  free(text);
}

/* A plane's place in a title, the plane a place in metres names (the nearest, within half a
 * cell of the volume), and a model's colour range (its finite values' min to max). */
static void test_figure_places_and_ranges(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_io_png");
  /* a random origin and spacing: no round number is special */
  const double origin = rtm_test_uniform(&rng, -500.0, 500.0);
  const double spacing = rtm_test_uniform(&rng, 2.0, 25.0);
  rtm_io_axes_t axes = {
      .has_grid = 1, .spacing_m = {1.0, spacing, 1.0}, .origin_m = {0.0, origin, 0.0}};
  char text[64], expected[64];
  rtm_figure_plane_text(&axes, 'y', 40, text, sizeof text);
  snprintf(expected, sizeof expected, "y = %g m (index 40)", origin + 40 * spacing);
  assert_string_equal(text, expected);
  rtm_io_axes_t no_grid = {0};
  rtm_figure_plane_text(&no_grid, 'x', 7, text, sizeof text);
  assert_string_equal(text, "x index 7");

  long plane = -1;
  int exact = 0;
  /* on plane 40 (to a rounding of its place), then 0.3 cell past it: plane 40 still, said
   * not exact; 0.6 cell past: 41 */
  assert_true(rtm_figure_plane_at(&axes, 'y', origin + 40 * spacing, 80, &plane, &exact));
  assert_int_equal(plane, 40);
  assert_true(exact);
  assert_true(rtm_figure_plane_at(&axes, 'y', origin + 40.3 * spacing, 80, &plane, &exact));
  assert_int_equal(plane, 40);
  assert_false(exact);
  assert_true(rtm_figure_plane_at(&axes, 'y', origin + 40.6 * spacing, 80, &plane, &exact));
  assert_int_equal(plane, 41);
  /* half a cell beyond the ends rounds onto them; beyond that is outside */
  assert_true(rtm_figure_plane_at(&axes, 'y', origin - 0.4 * spacing, 80, &plane, &exact));
  assert_int_equal(plane, 0);
  /* exactly half a cell before the first plane (on a grid where that is exact: y = -5 m, 10 m
   * cells from 0): the first plane (lround alone gives -1, a plane outside the volume, read
   * past its data) */
  const rtm_io_axes_t round = {.has_grid = 1, .spacing_m = {10.0, 10.0, 10.0}};
  assert_true(rtm_figure_plane_at(&round, 'y', -5.0, 80, &plane, &exact));
  assert_int_equal(plane, 0);
  assert_false(exact);
  assert_true(rtm_figure_plane_at(&round, 'z', 794.9, 80, &plane, &exact));
  assert_int_equal(plane, 79);
  assert_false(rtm_figure_plane_at(&round, 'z', 795.0, 80, &plane, &exact));
  assert_true(rtm_figure_plane_at(&axes, 'y', origin + 79.4 * spacing, 80, &plane, &exact));
  assert_int_equal(plane, 79);
  assert_false(rtm_figure_plane_at(&axes, 'y', origin - 0.6 * spacing, 80, &plane, &exact));
  assert_false(rtm_figure_plane_at(&axes, 'y', origin + 79.6 * spacing, 80, &plane, &exact));
  assert_false(rtm_figure_plane_at(&axes, 'y', NAN, 80, &plane, &exact));

  assert_true(rtm_figure_is_model("/vp") && rtm_figure_is_model("epsilon"));
  assert_false(rtm_figure_is_model("/image") || rtm_figure_is_model("/snapshots/p"));
  /* a layer and one fast cell among 10000, a NaN left out */
  enum { CELLS = 10000 };
  float *vp = malloc(CELLS * sizeof *vp);
  const float layer = (float)rtm_test_uniform(&rng, 1500.0, 3000.0);
  for (int i = 0; i < CELLS; ++i)
    vp[i] = layer;
  vp[rtm_test_uniform(&rng, 0.0, 1.0) < 0.5 ? 17 : CELLS - 17] = layer + 900.0f;
  vp[5] = NAN;
  rtm_figure_style_t style = {.diverging = 1};
  rtm_figure_value_range(vp, CELLS, &style);
  assert_false(style.diverging);
  assert_true(style.lo == layer);
  assert_true(style.hi == layer + 900.0f);
  /* a constant model: a range around its value, never an empty one */
  for (int i = 0; i < CELLS; ++i)
    vp[i] = layer;
  rtm_figure_value_range(vp, CELLS, &style);
  assert_true(style.lo == layer && style.hi > style.lo);
  free(vp);
}

RTM_TEST_MAIN(cmocka_unit_test(test_colormap_and_title),
              cmocka_unit_test(test_clip_matches_sorted_percentile),
              cmocka_unit_test(test_refuses_bad_arguments),
              cmocka_unit_test(test_figure_places_and_ranges))

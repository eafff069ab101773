/* test_points - trilinear source/receiver taps: partition of unity, exact for linear
 * fields, z-decomposition, positions outside the grid. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_solver.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

enum { POINTS = 64 };

/* A grid with unequal spacings, a non-zero origin and rows padded beyond nx + 2R. */
static void make_grid(rtm_grid_t *grid) {
  const int n[3] = {17, 13, 11};
  const double spacing[3] = {10.0, 12.5, 8.0};
  const double origin[3] = {100.0, -50.0, 20.0};
  assert_int_equal(rtm_grid_init(grid, n, spacing, origin), RTM_OK);
}

/* The grid whole and as two ranks' slabs split at a random plane, which it returns. */
static int make_slabs(rtm_grid_t *whole, rtm_grid_t *lower, rtm_grid_t *upper) {
  make_grid(whole);
  make_grid(lower);
  make_grid(upper);
  const int split = 1 + rand() % (whole->n[2] - 1);
  assert_int_equal(rtm_grid_set_z_range(lower, 0, split), RTM_OK);
  assert_int_equal(rtm_grid_set_z_range(upper, split, whole->n[2] - split), RTM_OK);
  return split;
}

static void random_positions(const rtm_grid_t *grid, double *position, int count) {
  for (int p = 0; p < count; ++p)
    for (int a = 0; a < 3; ++a)
      position[3 * p + a] =
          grid->origin_m[a] + rtm_test_rand_uniform(0.0, grid->n[a] - 1.0) * grid->spacing_m[a];
}

/* Interior cell of a padded index (taps never point into the halo). */
static void cell_of(const rtm_grid_t *grid, size_t index, long cell[3]) {
  const size_t offset = index - grid->origin_index;
  cell[2] = (long)(offset / grid->stride_z);
  cell[1] = (long)(offset % grid->stride_z / grid->stride_y);
  cell[0] = (long)(offset % grid->stride_y);
}

static void test_weights_sum_to_one_and_reproduce_linear(void **unused) {
  (void)unused;
  rtm_grid_t grid;
  make_grid(&grid);
  double position[3 * POINTS];
  random_positions(&grid, position, POINTS);
  rtm_points_t points;
  assert_int_equal(rtm_points_init(&points, &grid, position, POINTS, "receiver"), RTM_OK);
  assert_int_equal(points.count, POINTS);

  const double gradient[3] = {rtm_test_rand_uniform(-2, 2), rtm_test_rand_uniform(-2, 2),
                              rtm_test_rand_uniform(-2, 2)};
  const double offset = rtm_test_rand_uniform(-100, 100);
  for (int p = 0; p < POINTS; ++p) {
    double sum = 0.0, value = 0.0, magnitude = 0.0;
    for (int t = 0; t < RTM_POINT_TAPS; ++t) {
      const size_t k = (size_t)p * RTM_POINT_TAPS + t;
      const double w = points.tap_weight[k];
      assert_true(w >= 0.0 && w <= 1.0);
      assert_true(points.tap_index[k] < grid.padded_cells);
      long cell[3];
      cell_of(&grid, points.tap_index[k], cell);
      double f = offset;
      for (int a = 0; a < 3; ++a) {
        assert_true(cell[a] >= 0 && cell[a] < grid.n[a]);
        f += gradient[a] * (grid.origin_m[a] + cell[a] * grid.spacing_m[a]);
      }
      sum += w;
      value += w * f;
      magnitude += w * fabs(f);
    }
    /* Each weight is a double product rounded to float (relative 2^-24), so their sum is
     * within 2^-24 of 1 and the interpolated value within 2^-24 of sum w |f|; FLT_EPSILON
     * = 2^-23 leaves a factor 2 for the double arithmetic. */
    assert_true(fabs(sum - 1.0) <= FLT_EPSILON);
    double exact = offset;
    for (int a = 0; a < 3; ++a)
      exact += gradient[a] * position[3 * p + a];
    if (fabs(value - exact) > FLT_EPSILON * magnitude)
      fail_msg("point %d: interpolated %.9g, linear function %.9g", p, value, exact);
  }
  rtm_points_release(&points);
}

static void test_grid_nodes_and_last_cell(void **unused) {
  (void)unused;
  rtm_grid_t grid;
  make_grid(&grid);
  /* exactly on the last node of every axis, and on an interior node */
  const double position[6] = {100.0 + 16 * 10.0, -50.0 + 12 * 12.5, 20.0 + 10 * 8.0,
                              100.0 + 3 * 10.0,  -50.0 + 5 * 12.5,  20.0 + 7 * 8.0};
  const long expect[2][3] = {{16, 12, 10}, {3, 5, 7}};
  rtm_points_t points;
  assert_int_equal(rtm_points_init(&points, &grid, position, 2, "source"), RTM_OK);
  for (int p = 0; p < 2; ++p) {
    int found = 0;
    for (int t = 0; t < RTM_POINT_TAPS; ++t) {
      const size_t k = (size_t)p * RTM_POINT_TAPS + t;
      if (points.tap_weight[k] == 0.0f) continue;
      assert_true(points.tap_weight[k] == 1.0f);
      long cell[3];
      cell_of(&grid, points.tap_index[k], cell);
      for (int a = 0; a < 3; ++a)
        assert_int_equal(cell[a], expect[p][a]);
      ++found;
    }
    assert_int_equal(found, 1);
  }
  rtm_points_release(&points);
}

static void test_single_cell_axis(void **unused) {
  (void)unused;
  rtm_grid_t grid;
  const int n[3] = {9, 1, 7};
  const double spacing[3] = {5.0, 5.0, 5.0};
  assert_int_equal(rtm_grid_init(&grid, n, spacing, NULL), RTM_OK);
  const double position[3] = {12.5, 0.0, 17.5};
  rtm_points_t points;
  assert_int_equal(rtm_points_init(&points, &grid, position, 1, "source"), RTM_OK);
  double sum = 0.0;
  for (int t = 0; t < RTM_POINT_TAPS; ++t) {
    long cell[3];
    cell_of(&grid, points.tap_index[t], cell);
    if (points.tap_weight[t] != 0.0f) assert_int_equal(cell[1], 0);
    sum += points.tap_weight[t];
  }
  assert_true(fabs(sum - 1.0) <= FLT_EPSILON);
  rtm_points_release(&points);
}

/* Two ranks owning z in [0, k) and [k, nz): every tap is owned by exactly one of them,
 * with the weight the whole grid gives it. */
static void test_z_decomposition(void **unused) {
  (void)unused;
  rtm_grid_t whole, lower, upper;
  const int split = make_slabs(&whole, &lower, &upper);
  double position[3 * POINTS];
  random_positions(&whole, position, POINTS);
  rtm_points_t pw, pl, pu;
  assert_int_equal(rtm_points_init(&pw, &whole, position, POINTS, "receiver"), RTM_OK);
  assert_int_equal(rtm_points_init(&pl, &lower, position, POINTS, "receiver"), RTM_OK);
  assert_int_equal(rtm_points_init(&pu, &upper, position, POINTS, "receiver"), RTM_OK);
  for (size_t k = 0; k < (size_t)POINTS * RTM_POINT_TAPS; ++k) {
    long cw[3], c[3];
    cell_of(&whole, pw.tap_index[k], cw);
    const int owner_is_lower = cw[2] < split;
    const rtm_points_t *owner = owner_is_lower ? &pl : &pu;
    const rtm_points_t *other = owner_is_lower ? &pu : &pl;
    const rtm_grid_t *grid = owner_is_lower ? &lower : &upper;
    assert_true(owner->tap_weight[k] == pw.tap_weight[k]);
    assert_true(other->tap_weight[k] == 0.0f);
    if (pw.tap_weight[k] != 0.0f) {
      cell_of(grid, owner->tap_index[k], c);
      assert_int_equal(c[0], cw[0]);
      assert_int_equal(c[1], cw[1]);
      assert_int_equal(c[2] + grid->z_offset, cw[2]);
    }
  }
  rtm_points_release(&pw);
  rtm_points_release(&pl);
  rtm_points_release(&pu);
}

/* The tensor-product form (axis_weight, base_index) gives every tap's weight and index as
 * the tables hold them, bit for bit, for trilinear and sinc of every radius, near the faces
 * (positions drawn over the whole grid, a quarter on nodes) and on two z-slabs. */
static void check_separable(const rtm_points_t *points, const rtm_grid_t *grid) {
  const int w = points->width;
  assert_int_equal(w * w * w, points->taps);
  for (int p = 0; p < points->count; ++p) {
    const double *axis = points->axis_weight + (size_t)p * 3 * (size_t)w;
    for (int t = 0; t < points->taps; ++t) {
      const int i = t % w, j = t / w % w, k = t / (w * w);
      const float weight = (float)((axis[i] * axis[w + j]) * axis[2 * w + k]);
      const size_t at = (size_t)p * (size_t)points->taps + (size_t)t;
      assert_true(weight == points->tap_weight[at]);
      if (weight != 0.0f)
        assert_true(points->base_index[p] + i + (long long)j * (long long)grid->stride_y +
                        (long long)k * (long long)grid->stride_z ==
                    (long long)points->tap_index[at]);
    }
  }
}

static void test_separable_form(void **unused) {
  (void)unused;
  rtm_grid_t whole, lower, upper;
  make_slabs(&whole, &lower, &upper);
  double position[3 * POINTS];
  random_positions(&whole, position, POINTS);
  for (int p = 0; p < POINTS / 4; ++p) /* some on nodes */
    for (int a = 0; a < 3; ++a)
      position[3 * p + a] = whole.origin_m[a] + (double)(rand() % whole.n[a]) * whole.spacing_m[a];
  const rtm_grid_t *grids[3] = {&whole, &lower, &upper};
  for (int radius = 0; radius <= RTM_POINT_MAX_RADIUS; ++radius) {
    const rtm_point_operator_t op = {radius ? RTM_POINTS_SINC : RTM_POINTS_TRILINEAR,
                                     radius ? radius : 1};
    for (int g = 0; g < 3; ++g) {
      rtm_points_t points;
      assert_int_equal(
          rtm_points_init_operator(&points, grids[g], position, POINTS, "receiver", &op), RTM_OK);
      assert_non_null(points.axis_weight);
      check_separable(&points, grids[g]);
      rtm_points_release(&points);
    }
  }
}

static void test_outside_is_an_error(void **unused) {
  (void)unused;
  rtm_grid_t grid;
  make_grid(&grid);
  double position[3 * 4];
  random_positions(&grid, position, 4);
  for (int a = 0; a < 3; ++a) {
    for (int side = 0; side < 2; ++side) {
      double bad[3 * 4];
      for (int i = 0; i < 12; ++i)
        bad[i] = position[i];
      /* a hundredth of a cell beyond either end of axis a, on point 2 */
      const double last = grid.origin_m[a] + (grid.n[a] - 1) * grid.spacing_m[a];
      bad[3 * 2 + a] =
          side ? last + 0.01 * grid.spacing_m[a] : grid.origin_m[a] - 0.01 * grid.spacing_m[a];
      rtm_points_t points;
      assert_int_equal(rtm_points_init(&points, &grid, bad, 4, "receiver"), RTM_ERR_CONFIG);
      assert_null(points.tap_index);
    }
  }
  double bad[3] = {position[0], NAN, position[2]};
  rtm_points_t points;
  assert_int_equal(rtm_points_init(&points, &grid, bad, 1, "source"), RTM_ERR_CONFIG);
}

/* Sinc points: the weights of a point far from the faces sum to about 1 (the operator
 * passes a constant within Hicks' band error); near a face, where taps are cut off, the
 * kept ones are scaled to the same sum (cut off as they were, a point 0.3 cells from the
 * face summed to 1.11 an axis); a coordinate a rounding below a node is the node. */
static void test_sinc_faces_and_nodes(void **unused) {
  (void)unused;
  rtm_grid_t grid;
  make_grid(&grid);
  const rtm_point_operator_t sinc = {RTM_POINTS_SINC, 4};
  const double inside[3] = {100.0 + 8.37 * 10.0, -50.0 + 6.21 * 12.5, 20.0 + 5.55 * 8.0};
  const double near_face[3] = {100.0 + 0.3 * 10.0, -50.0 + 6.21 * 12.5, 20.0 + 5.55 * 8.0};
  const double *positions[2] = {inside, near_face};
  double sums[2];
  for (int c = 0; c < 2; ++c) {
    rtm_points_t points;
    assert_int_equal(rtm_points_init_operator(&points, &grid, positions[c], 1, "point", &sinc),
                     RTM_OK);
    assert_int_equal(points.taps, 512);
    sums[c] = 0.0;
    for (int t = 0; t < points.taps; ++t)
      sums[c] += points.tap_weight[t];
    rtm_points_release(&points);
  }
  printf("sinc weights: %.5f inside, %.5f 0.3 cells from a face\n", sums[0], sums[1]);
  assert_true(fabs(sums[0] - 1.0) < 0.02);
  assert_true(fabs(sums[1] - sums[0]) < 0.02);
  /* a rounding below node (8, 6, 5): the node alone, weight 1 */
  const double below[3] = {nextafter(100.0 + 80.0, 0.0), nextafter(-50.0 + 75.0, 0.0),
                           nextafter(20.0 + 40.0, 0.0)};
  rtm_points_t points;
  assert_int_equal(rtm_points_init_operator(&points, &grid, below, 1, "point", &sinc), RTM_OK);
  int ones = 0, others = 0;
  for (int t = 0; t < points.taps; ++t) {
    ones += points.tap_weight[t] == 1.0f;
    others += points.tap_weight[t] != 0.0f && points.tap_weight[t] != 1.0f;
  }
  assert_int_equal(ones, 1);
  assert_int_equal(others, 0);
  rtm_points_release(&points);
}

RTM_TEST_MAIN_SEEDED(cmocka_unit_test(test_weights_sum_to_one_and_reproduce_linear),
                     cmocka_unit_test(test_sinc_faces_and_nodes),
                     cmocka_unit_test(test_grid_nodes_and_last_cell),
                     cmocka_unit_test(test_single_cell_axis),
                     cmocka_unit_test(test_z_decomposition), cmocka_unit_test(test_separable_form),
                     cmocka_unit_test(test_outside_is_an_error))

/* point_sample.h - point r of `points` sampled from a dense [nz_local][ny][nx] field in
 * double, as a backend records a receiver (its taps' weights times the field); *magnitude
 * gets the sum of |terms|, for a rounding bound (header only, solver tests). */
#ifndef RTM_TEST_POINT_SAMPLE_H
#define RTM_TEST_POINT_SAMPLE_H

#include <math.h>

#include "rtm_grid.h"
#include "rtm_solver.h"

static inline double rtm_test_point_sample(const rtm_grid_t *g, const rtm_points_t *points,
                                           const float *dense, int r, double *magnitude) {
  double sum = 0.0, sum_mag = 0.0;
  for (int t = 0; t < RTM_POINT_TAPS; ++t) {
    const size_t k = (size_t)r * RTM_POINT_TAPS + t;
    const float w = points->tap_weight[k];
    if (w == 0.0f) continue;
    const double v = dense[rtm_grid_dense_index(g, points->tap_index[k])];
    sum += w * v;
    sum_mag += w * fabs(v);
  }
  *magnitude = sum_mag;
  return sum;
}

#endif

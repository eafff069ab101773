/* Point sources and receivers: trilinear taps computed once, shared by every backend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "points_impl.h"
#include "rtm_solver.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

/* A coordinate may lie this many cells beyond the first or last cell and still count as
 * inside: positions written as origin + (n - 1) h come back with a rounding error. */
static const double edge_tolerance_cells = 1e-6;

int rtm_points_axis_inside(const rtm_grid_t *grid, int axis, double coordinate_m) {
  const double u = (coordinate_m - grid->origin_m[axis]) / grid->spacing_m[axis];
  return isfinite(u) && u >= -edge_tolerance_cells && u <= grid->n[axis] - 1 + edge_tolerance_cells;
}

/* Axis position in cells: lower tap i0 in [0, max(n - 2, 0)] and fraction f in [0, 1]. */
static void axis_taps(double u, int n, int *i0, double *f) {
  if (n == 1) {
    *i0 = 0;
    *f = 0.0;
    return;
  }
  int i = (int)floor(u);
  if (i < 0) i = 0;
  if (i > n - 2) i = n - 2;
  double frac = u - i;
  *i0 = i;
  *f = frac < 0.0 ? 0.0 : frac > 1.0 ? 1.0 : frac;
}

int rtm_points_init(rtm_points_t *points, const rtm_grid_t *grid, const double *position_m,
                    int count, const char *what) {
  int status = RTM_OK;
  memset(points, 0, sizeof *points);
  if (count < 0) RTM_FAIL(RTM_ERR_INTERNAL, "%s: negative point count %d", what, count);
  if (count == 0) return RTM_OK;
  points->position_m = malloc((size_t)count * 3 * sizeof *points->position_m);
  points->tap_index = malloc((size_t)count * RTM_POINT_TAPS * sizeof *points->tap_index);
  points->tap_weight = malloc((size_t)count * RTM_POINT_TAPS * sizeof *points->tap_weight);
  if (!points->position_m || !points->tap_index || !points->tap_weight)
    RTM_FAIL(RTM_ERR_NOMEM, "%s: out of memory for %d points", what, count);
  memcpy(points->position_m, position_m, (size_t)count * 3 * sizeof *position_m);
  points->count = count;

  for (int p = 0; p < count; ++p) {
    int i0[3];
    double f[3];
    for (int a = 0; a < 3; ++a) {
      const double x = position_m[3 * p + a];
      const double u = (x - grid->origin_m[a]) / grid->spacing_m[a];
      const int last = grid->n[a] - 1;
      if (!rtm_points_axis_inside(grid, a, x))
        RTM_FAIL(RTM_ERR_CONFIG, "%s %d: %c = %g m lies outside the grid [%g, %g] m", what, p,
                 "xyz"[a], x, grid -> origin_m[a],
                 grid -> origin_m[a] + last * grid -> spacing_m[a]);
      axis_taps(u, grid->n[a], &i0[a], &f[a]);
    }
    for (int t = 0; t < RTM_POINT_TAPS; ++t) {
      const int b[3] = {t & 1, (t >> 1) & 1, (t >> 2) & 1};
      int cell[3];
      double weight = 1.0;
      for (int a = 0; a < 3; ++a) {
        weight *= b[a] ? f[a] : 1.0 - f[a];
        cell[a] = i0[a] + b[a];
        if (cell[a] > grid->n[a] - 1) cell[a] = grid->n[a] - 1; /* n == 1: weight is 0 */
      }
      const long iz_local = cell[2] - grid->z_offset;
      size_t index = grid->origin_index;
      if (iz_local < 0 || iz_local >= grid->nz_local)
        weight = 0.0; /* another rank owns this tap */
      else
        index = rtm_grid_index(grid, cell[0], cell[1], iz_local);
      points->tap_index[(size_t)p * RTM_POINT_TAPS + t] = index;
      points->tap_weight[(size_t)p * RTM_POINT_TAPS + t] = (float)weight;
    }
  }
  return RTM_OK;
fail:
  rtm_points_release(points);
  return status;
}

int rtm_points_mean(const rtm_points_t *points, int point, const rtm_grid_t *grid,
                    const float *values, int squared, double *mean) {
  int status = RTM_OK;
  double sums[4] = {0.0, 0.0, 0.0, 0.0}; /* w value of each plane, then w of each plane */
  for (int k = 0; k < RTM_POINT_TAPS; ++k) {
    const double w = points->tap_weight[point * RTM_POINT_TAPS + k];
    if (w == 0.0) continue;
    const double v =
        values[rtm_grid_dense_index(grid, points->tap_index[point * RTM_POINT_TAPS + k])];
    sums[k / 4] += w * (squared ? v * v : v);
    sums[2 + k / 4] += w;
  }
  if (rtm_grid_is_slab(grid)) RTM_TRY(rtm_mpi_allreduce(sums, 4, RTM_MPI_SUM));
  const double weight_sum = sums[2] + sums[3];
  *mean = weight_sum > 0.0 ? (sums[0] + sums[1]) / weight_sum : 0.0;
fail:
  return status;
}

void rtm_points_release(rtm_points_t *points) {
  if (!points) return;
  free(points->position_m);
  free(points->tap_index);
  free(points->tap_weight);
  memset(points, 0, sizeof *points);
}

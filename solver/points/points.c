/* Point sources and receivers: trilinear or windowed-sinc taps computed once, shared by
 * every backend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "points_impl.h"
#include "rtm_mpi.h"
#include "rtm_points.h"
#include "rtm_status.h"

/* the tolerance at the volume's edge: the deck's (rtm_config.h) */
static const double edge_tolerance_cells = RTM_EDGE_TOLERANCE_CELLS;

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

/* I0, the modified Bessel function of the first kind, by its series (x <= 20 here). */
static double bessel_i0(double x) {
  double sum = 1.0, term = 1.0;
  for (int k = 1; k < 64 && term > 1e-17 * sum; ++k) {
    term *= (x / (2.0 * k)) * (x / (2.0 * k));
    sum += term;
  }
  return sum;
}

/* Hicks (2002), table 2: the Kaiser window's b for a monopole, kmax = pi / 2, radius 1..4. */
static const double hicks_b[RTM_POINT_MAX_RADIUS + 1] = {0.0, 1.24, 2.94, 4.53, 6.31};

/* One axis of an operator at position u (cells) on n cells: the first tap's cell and the
 * weights of `width` taps (2 for trilinear, 2 radius for sinc); a tap outside [0, n) gets
 * weight 0 (the taps stay in the volume), and on a node every operator is the node. */
static void axis_weights(const rtm_point_operator_t *op, double u, int n, int *first, double *w) {
  if (op->kind == RTM_POINTS_TRILINEAR) {
    int i0 = 0;
    double f = 0.0;
    axis_taps(u, n, &i0, &f);
    *first = i0;
    w[0] = 1.0 - f;
    w[1] = f;
    if (n == 1) w[1] = 0.0;
    return;
  }
  const int r = op->radius;
  /* on a node (within rounding, from either side): exactly the node */
  const double nearest = nearbyint(u);
  const int on_node = fabs(u - nearest) < 1e-9;
  int node = on_node ? (int)nearest : (int)floor(u);
  if (node > n - 1) node = n - 1;
  if (node < 0) node = 0;
  *first = node - r + 1;
  const double pi = 3.14159265358979323846, b = hicks_b[r], window_norm = bessel_i0(b);
  double all = 0.0, kept = 0.0;
  for (int k = 0; k < 2 * r; ++k) {
    const int cell = *first + k;
    const double x = cell - u;
    if (on_node) {
      w[k] = cell == node ? 1.0 : 0.0;
    } else {
      const double q = x / r;
      w[k] = fabs(q) < 1.0 ? sin(pi * x) / (pi * x) * bessel_i0(b * sqrt(1.0 - q * q)) / window_norm
                           : 0.0;
    }
    all += w[k];
    if (cell < 0 || cell >= n) w[k] = 0.0;
    kept += w[k];
  }
  /* taps cut off at a face: the kept ones scaled to the whole operator's sum, so that a
   * point near a face keeps its strength (up to +11% an axis otherwise) */
  if (kept != all && kept != 0.0)
    for (int k = 0; k < 2 * r; ++k)
      w[k] *= all / kept;
}

int rtm_points_init(rtm_points_t *points, const rtm_grid_t *grid, const double *position_m,
                    int count, const char *what) {
  return rtm_points_init_operator(points, grid, position_m, count, what, NULL);
}

int rtm_points_init_operator(rtm_points_t *points, const rtm_grid_t *grid, const double *position_m,
                             int count, const char *what, const rtm_point_operator_t *op) {
  int status = RTM_OK;
  const rtm_point_operator_t trilinear = {RTM_POINTS_TRILINEAR, 1};
  memset(points, 0, sizeof *points);
  if (!op) op = &trilinear;
  if (op->kind == RTM_POINTS_SINC && (op->radius < 1 || op->radius > RTM_POINT_MAX_RADIUS))
    RTM_FAIL(RTM_ERR_CONFIG, "%s: points.radius = %d is outside [1, %d]", what, op->radius,
             RTM_POINT_MAX_RADIUS);
  const int width = op->kind == RTM_POINTS_TRILINEAR ? 2 : 2 * op->radius;
  if (count < 0) RTM_FAIL(RTM_ERR_INTERNAL, "%s: negative point count %d", what, count);
  points->taps = width * width * width;
  points->taps_per_plane = width * width;
  if (count == 0) return RTM_OK;
  const size_t taps = (size_t)count * (size_t)points->taps;
  points->position_m = malloc((size_t)count * 3 * sizeof *points->position_m);
  points->tap_index = malloc(taps * sizeof *points->tap_index);
  points->tap_weight = malloc(taps * sizeof *points->tap_weight);
  points->width = width;
  points->axis_weight = malloc((size_t)count * 3 * (size_t)width * sizeof *points->axis_weight);
  points->base_index = malloc((size_t)count * sizeof *points->base_index);
  if (!points->position_m || !points->tap_index || !points->tap_weight || !points->axis_weight ||
      !points->base_index)
    RTM_FAIL(RTM_ERR_NOMEM, "%s: out of memory for %d points", what, count);
  memcpy(points->position_m, position_m, (size_t)count * 3 * sizeof *position_m);
  points->count = count;
  for (int p = 0; p < count; ++p) { /* the first point outside named, before any work */
    for (int a = 0; a < 3; ++a) {
      const double x = position_m[3 * p + a];
      if (!rtm_points_axis_inside(grid, a, x))
        RTM_FAIL(RTM_ERR_CONFIG, "%s %d: %c = %g m lies outside the grid [%g, %g] m", what, p,
                 "xyz"[a], x, grid -> origin_m[a],
                 grid -> origin_m[a] + (grid->n[a] - 1) * grid -> spacing_m[a]);
    }
  }

  /* each point's taps apart from the others': over the threads (a full receiver plane of a
   * 512^3 volume with sinc taps fills 1.4 GB of tables) */
#pragma omp parallel for schedule(static)
  for (int p = 0; p < count; ++p) {
    int first[3];
    double w[3][2 * RTM_POINT_MAX_RADIUS];
    for (int a = 0; a < 3; ++a) {
      const double u = (position_m[3 * p + a] - grid->origin_m[a]) / grid->spacing_m[a];
      axis_weights(op, u, grid->n[a], &first[a], w[a]);
    }
    /* the tensor product's factors, planes of other ranks at 0, and tap (0, 0, 0)'s index */
    double *axis = points->axis_weight + (size_t)p * 3 * (size_t)width;
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < width; ++k) {
        const long iz_local = first[2] + k - grid->z_offset;
        const int other_rank = a == 2 && (iz_local < 0 || iz_local >= grid->nz_local);
        axis[a * width + k] = other_rank ? 0.0 : w[a][k];
      }
    points->base_index[p] = (long long)grid->origin_index +
                            (long long)(first[2] - grid->z_offset) * (long long)grid->stride_z +
                            (long long)first[1] * (long long)grid->stride_y + first[0];
    /* plane by plane: z slowest, then y, then x */
    for (int t = 0; t < points->taps; ++t) {
      const int k[3] = {t % width, t / width % width, t / (width * width)};
      int cell[3];
      double weight = 1.0;
      for (int a = 0; a < 3; ++a) {
        weight *= w[a][k[a]];
        cell[a] = first[a] + k[a];
        if (cell[a] < 0) cell[a] = 0; /* weight 0 there */
        if (cell[a] > grid->n[a] - 1) cell[a] = grid->n[a] - 1;
      }
      const long iz_local = cell[2] - grid->z_offset;
      size_t index = grid->origin_index;
      if (weight == 0.0 || iz_local < 0 || iz_local >= grid->nz_local)
        weight = 0.0; /* outside the volume, or another rank owns this tap */
      else
        index = rtm_grid_index(grid, cell[0], cell[1], iz_local);
      points->tap_index[(size_t)p * points->taps + t] = index;
      points->tap_weight[(size_t)p * points->taps + t] = (float)weight;
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
  enum { MAX_PLANES = 2 * RTM_POINT_MAX_RADIUS };
  /* w value of each plane, then w of each plane */
  double sums[2 * MAX_PLANES] = {0.0};
  const int planes = points->taps / points->taps_per_plane;
  const size_t first = (size_t)point * (size_t)points->taps;
  for (int k = 0; k < points->taps; ++k) {
    const double w = points->tap_weight[first + k];
    if (w == 0.0) continue;
    const double v = values[rtm_grid_dense_index(grid, points->tap_index[first + k])];
    sums[k / points->taps_per_plane] += w * (squared ? v * v : v);
    sums[MAX_PLANES + k / points->taps_per_plane] += w;
  }
  if (rtm_grid_is_slab(grid))
    RTM_TRY(rtm_mpi_allreduce(grid->mpi, sums, 2 * MAX_PLANES, RTM_MPI_SUM));
  double value_sum = 0.0, weight_sum = 0.0;
  for (int p = 0; p < planes; ++p) {
    value_sum += sums[p];
    weight_sum += sums[MAX_PLANES + p];
  }
  *mean = weight_sum != 0.0 ? value_sum / weight_sum : 0.0;
fail:
  return status;
}

void rtm_points_release(rtm_points_t *points) {
  if (!points) return;
  free(points->position_m);
  free(points->tap_index);
  free(points->tap_weight);
  free(points->axis_weight);
  free(points->base_index);
  memset(points, 0, sizeof *points);
}

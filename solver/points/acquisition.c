/* The acquisition geometry from the config: the source position (autos at the centre) and
 * the receivers, a plane (autos inside the absorbing layer's inner edges) or a file of
 * "x y z" lines. */
#include "rtm_points.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_status.h"

static double axis_coordinate(const rtm_grid_t *grid, int axis, double cell) {
  return grid->origin_m[axis] + cell * grid->spacing_m[axis];
}

void rtm_source_position(const rtm_config_t *cfg, const rtm_grid_t *grid, double position_m[3]) {
  for (int a = 0; a < 3; ++a)
    position_m[a] = isnan(cfg->source.position_m[a])
                        ? axis_coordinate(grid, a, 0.5 * (grid->n[a] - 1))
                        : cfg->source.position_m[a];
}

/* A plane receiver axis: first, step and count with autos filling the cells that lie
 * inside the absorbing layer's inner edges. */
static int plane_axis(const rtm_config_t *cfg, const rtm_grid_t *grid, int axis, double first,
                      double step, int count, double *first_out, double *step_out,
                      int *count_out) {
  int width = cfg->boundary.width_cells;
  int last_cell = grid->n[axis] - 1 - width;
  int first_cell = width <= last_cell ? width : 0;
  if (width > last_cell) last_cell = grid->n[axis] - 1;
  *first_out = isnan(first) ? axis_coordinate(grid, axis, first_cell) : first;
  *step_out = isnan(step) ? grid->spacing_m[axis] : step;
  if (!(*step_out > 0.0)) {
    rtm_log_error("receivers.%c_step = %g: must be > 0", "xy"[axis], *step_out);
    return RTM_ERR_CONFIG;
  }
  if (count > 0) {
    *count_out = count;
  } else {
    double span = axis_coordinate(grid, axis, last_cell) - *first_out;
    *count_out = span < 0.0 ? 0 : (int)floor(span / *step_out + 1e-9) + 1;
  }
  if (*count_out < 1) {
    rtm_log_error("receivers: no receiver fits along %c (first %g m, step %g m)", "xy"[axis],
                  *first_out, *step_out);
    return RTM_ERR_CONFIG;
  }
  return RTM_OK;
}

static int receivers_from_plane(const rtm_config_t *cfg, const rtm_grid_t *grid,
                                const double source_m[3], double **position_m, int *count) {
  int status = RTM_OK;
  double x0, dxr, y0, dyr;
  int nxr, nyr;
  RTM_TRY(plane_axis(cfg, grid, 0, cfg->receivers.x_first_m, cfg->receivers.x_step_m,
                     cfg->receivers.x_count, &x0, &dxr, &nxr));
  RTM_TRY(plane_axis(cfg, grid, 1, cfg->receivers.y_first_m, cfg->receivers.y_step_m,
                     cfg->receivers.y_count, &y0, &dyr, &nyr));
  double z = isnan(cfg->receivers.z_m) ? source_m[2] : cfg->receivers.z_m;
  double *p = malloc((size_t)nxr * (size_t)nyr * 3 * sizeof *p);
  if (!p) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d x %d receivers", nxr, nyr);
  for (int j = 0; j < nyr; ++j)
    for (int i = 0; i < nxr; ++i) {
      double *r = p + 3 * ((size_t)j * nxr + i);
      r[0] = x0 + i * dxr;
      r[1] = y0 + j * dyr;
      r[2] = z;
    }
  *position_m = p;
  *count = nxr * nyr;
fail:
  return status;
}

static int receivers_from_file(const char *path, double **position_m, int *count) {
  int status = RTM_OK, line_number = 0, n = 0, capacity = 0;
  double *p = NULL;
  char line[1024];
  FILE *f = fopen(path, "r");
  if (!f) RTM_FAIL(RTM_ERR_INPUT, "receivers.file '%s': %s", path, strerror(errno));
  while (fgets(line, sizeof line, f)) {
    ++line_number;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    double x, y, z;
    char trailing[2];
    int fields = sscanf(line, "%lf %lf %lf %1s", &x, &y, &z, trailing);
    if (fields <= 0) {
      char blank[2];
      if (sscanf(line, "%1s", blank) != 1) continue; /* empty or comment line */
    }
    if (fields != 3 || !isfinite(x) || !isfinite(y) || !isfinite(z))
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: expected three numbers 'x y z' in metres", path,
               line_number);
    if (n == capacity) {
      capacity = capacity ? 2 * capacity : 64;
      double *grown = realloc(p, (size_t)capacity * 3 * sizeof *grown);
      if (!grown) RTM_FAIL(RTM_ERR_NOMEM, "out of memory reading %s", path);
      p = grown;
    }
    p[3 * n] = x;
    p[3 * n + 1] = y;
    p[3 * n + 2] = z;
    ++n;
  }
  if (n == 0) RTM_FAIL(RTM_ERR_INPUT, "receivers.file '%s' lists no receiver", path);
  fclose(f);
  *position_m = p;
  *count = n;
  return RTM_OK;
fail:
  if (f) fclose(f);
  free(p);
  return status;
}

int rtm_receiver_positions(const rtm_config_t *cfg, const rtm_grid_t *grid,
                           const double source_m[3], double **position_m, int *count) {
  *position_m = NULL;
  *count = 0;
  switch (cfg->receivers.layout) {
  case RTM_RECEIVERS_PLANE: return receivers_from_plane(cfg, grid, source_m, position_m, count);
  case RTM_RECEIVERS_FILE: return receivers_from_file(cfg->receivers.file, position_m, count);
  default: return RTM_OK;
  }
}

void rtm_points_warn_in_layer(const rtm_grid_t *grid, int width, const double *position_m,
                             int count, const char *what) {
  int inside = 0;
  for (int i = 0; i < count && width > 0; ++i)
    for (int a = 0; a < 3; ++a) {
      double cell = (position_m[3 * i + a] - grid->origin_m[a]) / grid->spacing_m[a];
      if (cell < width || cell > grid->n[a] - 1 - width) {
        ++inside;
        break;
      }
    }
  if (inside)
    rtm_log_warning("%d %s lie inside the absorbing layer (boundary.width = %d cells) and are "
                    "damped there",
                    inside, what, width);
}


/* The acquisition geometry from the config: the shots (the [source] position, a grid of
 * them or a file), and each shot's receivers: a plane (autos inside the absorbing layer's
 * inner edges), a file of "x y z" lines, or a patch that moves with the shot. */
#include "rtm_points.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "points_impl.h"
#include "rtm_status.h"

static double axis_coordinate(const rtm_grid_t *grid, int axis, double cell) {
  return grid->origin_m[axis] + cell * grid->spacing_m[axis];
}

static int inside_volume(const rtm_grid_t *grid, const double position_m[3]) {
  for (int a = 0; a < 3; ++a)
    if (!rtm_points_axis_inside(grid, a, position_m[a])) return 0;
  return 1;
}

/* "[x0, x1] x [y0, y1] x [z0, z1] m", the span of cell centres, for messages. */
static void describe_volume(const rtm_grid_t *grid, char *text, size_t size) {
  snprintf(text, size, "[%g, %g] x [%g, %g] x [%g, %g] m", grid->origin_m[0],
           axis_coordinate(grid, 0, grid->n[0] - 1), grid->origin_m[1],
           axis_coordinate(grid, 1, grid->n[1] - 1), grid->origin_m[2],
           axis_coordinate(grid, 2, grid->n[2] - 1));
}

/* The non-absorbing interior along axis: the cells from the absorbing layer's inner edge
 * to the far one, as coordinates; the whole axis when the layers leave no cell between. */
static void interior_span(const rtm_config_t *cfg, const rtm_grid_t *grid, int axis, double *low_m,
                          double *high_m) {
  int width = cfg->boundary.width_cells;
  int last_cell = grid->n[axis] - 1 - width;
  int first_cell = width <= last_cell ? width : 0;
  if (width > last_cell) last_cell = grid->n[axis] - 1;
  *low_m = axis_coordinate(grid, axis, first_cell);
  *high_m = axis_coordinate(grid, axis, last_cell);
}

void rtm_source_position(const rtm_config_t *cfg, const rtm_grid_t *grid, double position_m[3]) {
  const int ignored = rtm_config_source_axes_placed(cfg);
  for (int a = 0; a < 3; ++a)
    position_m[a] = a < ignored || isnan(cfg->source.position_m[a])
                        ? axis_coordinate(grid, a, 0.5 * (grid->n[a] - 1))
                        : cfg->source.position_m[a];
}

/* ---- files of positions ---- */

/* A line of a positions file read as three finite numbers 'x y z' into xyz, each token a
 * whole number (strtod: "5e" is not 5, as scanf read it: probe X, X7): 1; else 0 with why
 * (the value at fault and what is wrong with it: not a number, not finite, beyond a double's
 * range, a fourth value, a ';' or "//" taken for a comment; or how many values it holds). */
static int read_point_line(const char *line, double xyz[3], char *why, size_t size) {
  static const char *const axis[3] = {"x", "y", "z"};
  const char *at = line;
  for (int k = 0;; ++k) {
    at += strspn(at, " \t\r\n\v\f");
    const int token = (int)strcspn(at, " \t\r\n\v\f");
    if (token == 0 && k == 3) return 1;
    if (token == 0) {
      snprintf(why, size, "found %d value%s", k, k == 1 ? "" : "s");
      return 0;
    }
    if (*at == ';' || strncmp(at, "//", 2) == 0) {
      snprintf(why, size, "'%.*s' starts no comment here: comments begin with '#'",
               *at == ';' ? 1 : 2, at);
      return 0;
    }
    if (k == 3) {
      snprintf(why, size, "'%.*s' follows z: one point a line", token, at);
      return 0;
    }
    char *end = NULL;
    errno = 0;
    const double value = rtm_text_number(at, &end);
    if (end == at + token && isfinite(value)) {
      xyz[k] = value;
      at = end;
      continue;
    }
    if (end != at + token)
      snprintf(why, size, "%s = '%.*s' is not a number", axis[k], token, at);
    else if (errno == ERANGE)
      snprintf(why, size, "%s = %.*s is out of range (a double holds at most 1.8e308)", axis[k],
               token, at);
    else
      snprintf(why, size, "%s = %.*s is not finite", axis[k], token, at);
    return 0;
  }
}

/* One "x y z" per line of path ('#' comments, blank lines and a UTF-8 BOM skipped) for the
 * config key `key` ("receivers.file"), the points called `noun` ("receiver"). With `volume`,
 * every point must lie inside it (the error names file:line); without, rtm_points_init
 * checks later.
 * Only a regular file is read (a FIFO or /dev/zero is refused, not waited on or read for
 * ever); a line of 1024 bytes or more, or one with a NUL byte, is refused naming file:line. */
static int read_positions_file(const rtm_config_t *cfg, const char *path, const char *key,
                               const char *noun, const rtm_grid_t *volume, double **position_m,
                               int *count) {
  int status = RTM_OK, line_number = 0, n = 0, capacity = 0, got = 0;
  double *p = NULL;
  char line[1024], extent[256], why[256], where[RTM_CONFIG_ORIGIN_MAX];
  FILE *f = NULL;
  /* the deck's line of the key, as other errors about a deck's value say it */
  if (rtm_text_open(path, &f, NULL, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_INPUT, "%s: %s = '%s': %s", rtm_config_origin(cfg, key, where, sizeof where),
             key, path, why);
  for (;;) {
    status = rtm_text_read_line(f, line, sizeof line, &got, why, sizeof why);
    if (status != RTM_OK) RTM_FAIL(status, "%s:%d: %s", path, line_number + 1, why);
    if (!got) break;
    ++line_number;
    if (line_number == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 BOM, as decks */
      memmove(line, line + 3, strlen(line + 3) + 1);
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    if (line[strspn(line, " \t\r\n\v\f")] == '\0') continue; /* empty or comment line */
    double xyz[3];
    if (!read_point_line(line, xyz, why, sizeof why))
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: expected three numbers 'x y z' in metres: %s", path,
               line_number, why);
    const double x = xyz[0], y = xyz[1], z = xyz[2];
    if (volume && !inside_volume(volume, (const double[3]){x, y, z})) {
      describe_volume(volume, extent, sizeof extent);
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: %s (%.15g, %.15g, %.15g) m lies outside the volume, %s", path,
               line_number, noun, x, y, z, extent);
    }
    if (n == capacity) {
      if (capacity > INT_MAX / 6)
        RTM_FAIL(RTM_ERR_INPUT, "%s: more %ss than a run can hold", path, noun);
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
  if (n == 0)
    RTM_FAIL(RTM_ERR_INPUT, "%s: %s = '%s' lists no %s",
             rtm_config_origin(cfg, key, where, sizeof where), key, path, noun);
  fclose(f);
  *position_m = p;
  *count = n;
  return RTM_OK;
fail:
  if (f) fclose(f);
  free(p);
  return status;
}

/* ---- shots ---- */

/* A shot axis of shots.layout = grid: step auto = the non-absorbing interior's width /
 * count, first auto = the row of shots centred on that interior (so with both auto, one
 * shot in the middle of each of count equal parts). */
static int shot_axis(const rtm_config_t *cfg, const rtm_grid_t *grid, int axis, double first,
                     double step, int count, double *first_out, double *step_out) {
  double low, high;
  interior_span(cfg, grid, axis, &low, &high);
  *step_out = isnan(step) ? (high - low) / count : step;
  if (count > 1 && !(*step_out > 0.0)) {
    rtm_log_error("shots.%c_count = %d: the non-absorbing interior along %c has no width to "
                  "spread them over; give shots.%c_step",
                  "xy"[axis], count, "xy"[axis], "xy"[axis]);
    return RTM_ERR_CONFIG;
  }
  *first_out = isnan(first) ? 0.5 * (low + high) - 0.5 * (count - 1) * *step_out : first;
  return RTM_OK;
}

static int shots_from_grid(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_shots_t *shots) {
  int status = RTM_OK;
  double x0, dxs, y0, dys, source_m[3];
  char extent[256];
  const int nx = cfg->shots.x_count, ny = cfg->shots.y_count;
  RTM_TRY(shot_axis(cfg, grid, 0, cfg->shots.x_first_m, cfg->shots.x_step_m, nx, &x0, &dxs));
  RTM_TRY(shot_axis(cfg, grid, 1, cfg->shots.y_first_m, cfg->shots.y_step_m, ny, &y0, &dys));
  if ((long long)nx * ny > INT_MAX / 3)
    RTM_FAIL(RTM_ERR_CONFIG, "shots.x_count x shots.y_count = %d x %d: too many shots", nx, ny);
  rtm_source_position(cfg, grid, source_m);
  const double z = isnan(cfg->shots.z_m) ? source_m[2] : cfg->shots.z_m;
  shots->source_m = malloc((size_t)nx * (size_t)ny * 3 * sizeof *shots->source_m);
  if (!shots->source_m) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d x %d shots", nx, ny);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      double *s = shots->source_m + 3 * ((size_t)j * nx + i);
      s[0] = x0 + i * dxs;
      s[1] = y0 + j * dys;
      s[2] = z;
      if (!inside_volume(grid, s)) {
        describe_volume(grid, extent, sizeof extent);
        RTM_FAIL(RTM_ERR_CONFIG,
                 "shots.layout = grid: shot %d (x %d, y %d) at (%g, %g, %g) m lies outside the "
                 "volume, %s (shots.x_first, x_step, x_count, y_..., z place the shots)",
                 j * nx + i, i, j, s[0], s[1], s[2], extent);
      }
    }
  shots->count = nx * ny;
fail:
  return status;
}

static void patch_axis(const rtm_config_t *cfg, const rtm_grid_t *grid, int axis, double first,
                       double step, int count, double *first_out, double *step_out, int *count_out);

/* How many receivers of the patch around the shot at source_m lie inside the volume (those
 * rtm_receiver_positions keeps): along x times along y, where the patch's depth is inside. */
static long patch_kept(const rtm_config_t *cfg, const rtm_grid_t *grid, const double source_m[3]) {
  const double first[2] = {cfg->receivers.x_first_m, cfg->receivers.y_first_m},
               step[2] = {cfg->receivers.x_step_m, cfg->receivers.y_step_m};
  const int count[2] = {cfg->receivers.x_count, cfg->receivers.y_count};
  const double z = isnan(cfg->receivers.z_m) ? source_m[2] : cfg->receivers.z_m;
  long kept = rtm_points_axis_inside(grid, 2, z);
  for (int a = 0; a < 2 && kept > 0; ++a) {
    double first_m, step_m;
    int n;
    long inside = 0;
    patch_axis(cfg, grid, a, first[a], step[a], count[a], &first_m, &step_m, &n);
    for (int i = 0; i < n; ++i)
      inside += rtm_points_axis_inside(grid, a, source_m[a] + first_m + i * step_m);
    kept *= inside;
  }
  return kept;
}

/* Under receivers.layout = patch every shot records: one whose patch lies wholly outside the
 * volume is refused before any work (its place_shot would stop the run at that shot); the
 * shot whose patch keeps the most is shots->widest. */
static int check_patches(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_shots_t *shots) {
  int status = RTM_OK;
  char extent[256];
  long most = 0;
  if (cfg->receivers.layout != RTM_RECEIVERS_PATCH) return RTM_OK;
  for (int k = 0; k < shots->count; ++k) {
    const double *s = shots->source_m + 3 * (size_t)k;
    const long kept = patch_kept(cfg, grid, s);
    if (kept > most) {
      most = kept;
      shots->widest = k;
    }
    if (kept > 0) continue;
    describe_volume(grid, extent, sizeof extent);
    RTM_FAIL(RTM_ERR_CONFIG,
             "receivers.layout = patch: none of the receivers around shot %d at (%g, %g, %g) m "
             "lies inside the volume, %s (receivers.x_first and y_first are offsets from "
             "each shot)",
             k, s[0], s[1], s[2], extent);
  }
fail:
  return status;
}

int rtm_shots_init(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_shots_t *shots) {
  int status = RTM_OK;
  memset(shots, 0, sizeof *shots);
  switch (cfg->shots.layout) {
  case RTM_SHOTS_GRID: RTM_TRY(shots_from_grid(cfg, grid, shots)); break;
  case RTM_SHOTS_FILE:
    RTM_TRY(read_positions_file(cfg, cfg->shots.file, "shots.file", "shot", grid, &shots->source_m,
                                &shots->count));
    break;
  default:
    shots->source_m = malloc(3 * sizeof *shots->source_m);
    if (!shots->source_m) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the shot");
    rtm_source_position(cfg, grid, shots->source_m);
    shots->count = 1;
  }
  RTM_TRY(check_patches(cfg, grid, shots));
  return RTM_OK;
fail:
  rtm_shots_release(shots);
  return status;
}

int rtm_sizing_shot_position(const rtm_config_t *cfg, const rtm_grid_t *grid,
                             double position_m[3]) {
  rtm_shots_t shots;
  rtm_source_position(cfg, grid, position_m);
  /* only a patch's receivers change from shot to shot */
  if (cfg->shots.layout == RTM_SHOTS_SINGLE || cfg->receivers.layout != RTM_RECEIVERS_PATCH)
    return RTM_OK;
  const int status = rtm_shots_init(cfg, grid, &shots);
  if (status != RTM_OK) return status;
  memcpy(position_m, shots.source_m + 3 * (size_t)shots.widest, 3 * sizeof *position_m);
  rtm_shots_release(&shots);
  return RTM_OK;
}

void rtm_shots_release(rtm_shots_t *shots) {
  if (!shots) return;
  free(shots->source_m);
  memset(shots, 0, sizeof *shots);
}

/* ---- receivers ---- */

/* A plane receiver axis: first, step and count with autos filling the cells that lie
 * inside the absorbing layer's inner edges. */
static int plane_axis(const rtm_config_t *cfg, const rtm_grid_t *grid, int axis, double first,
                      double step, int count, double *first_out, double *step_out, int *count_out) {
  double low, high;
  interior_span(cfg, grid, axis, &low, &high);
  *first_out = isnan(first) ? low : first;
  *step_out = isnan(step) ? grid->spacing_m[axis] : step;
  if (!(*step_out > 0.0)) {
    rtm_log_error("receivers.%c_step = %g: must be > 0", "xy"[axis], *step_out);
    return RTM_ERR_CONFIG;
  }
  if (count > 0) {
    *count_out = count;
  } else {
    const double span = high - *first_out;
    const double fit = span < 0.0 ? 0.0 : floor(span / *step_out + 1e-9) + 1.0;
    /* counted in double: a step of 1e-300 m made a count past int's range (read as none) */
    if (fit > 1e8) {
      rtm_log_error("receivers.%c_step = %g m puts %.3g receivers along %c (from %g m to %g "
                    "m): more than 1e8; a step of the grid's spacing (%g m) or more is usual",
                    "xy"[axis], *step_out, fit, "xy"[axis], *first_out, high,
                    grid -> spacing_m[axis]);
      return RTM_ERR_CONFIG;
    }
    *count_out = (int)fit;
  }
  if (*count_out < 1) {
    rtm_log_error("receivers: no receiver fits along %c (first %g m, step %g m)", "xy"[axis],
                  *first_out, *step_out);
    return RTM_ERR_CONFIG;
  }
  /* a step far below the cells': traces the grid cannot tell apart, at the cost of many */
  if (*step_out < 0.25 * grid->spacing_m[axis] && *count_out > 1)
    rtm_log_warning("receivers.%c_step = %g m is %.3g times finer than grid.d%c = %g m: %d "
                    "receivers along %c record traces the grid cannot tell apart (it resolves "
                    "nothing finer than its cells), each costing memory and time; a step of "
                    "the spacing or more is usual",
                    "xy"[axis], *step_out, grid -> spacing_m[axis] / *step_out, "xy"[axis],
                    grid -> spacing_m[axis], *count_out, "xy"[axis]);
  return RTM_OK;
}

/* A patch axis: step auto = the spacing; count auto = as many as the plane layout fits in
 * the non-absorbing interior (a centred shot then sees the same spread as the plane);
 * first = the offset from the shot, auto = the patch centred on it. */
static void patch_axis(const rtm_config_t *cfg, const rtm_grid_t *grid, int axis, double first,
                       double step, int count, double *first_out, double *step_out,
                       int *count_out) {
  double low, high;
  interior_span(cfg, grid, axis, &low, &high);
  *step_out = isnan(step) ? grid->spacing_m[axis] : step;
  *count_out = count > 0 ? count : (int)floor((high - low) / *step_out + 1e-9) + 1;
  *first_out = isnan(first) ? -0.5 * (*count_out - 1) * *step_out : first;
}

/* nxr x nyr receivers at x0 + i dxr, y0 + j dyr, depth z; x fastest. */
static int receiver_plane(double x0, double dxr, int nxr, double y0, double dyr, int nyr, double z,
                          double **position_m, int *count) {
  int status = RTM_OK;
  if ((long long)nxr * nyr > INT_MAX / 3)
    RTM_FAIL(RTM_ERR_CONFIG, "receivers: %d x %d receivers are too many", nxr, nyr);
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
  RTM_TRY(receiver_plane(x0, dxr, nxr, y0, dyr, nyr, z, position_m, count));
fail:
  return status;
}

/* The patch around the shot; receivers outside the volume are left out (one warning says
 * how many), and a patch with none inside is an error. */
static int receivers_from_patch(const rtm_config_t *cfg, const rtm_grid_t *grid,
                                const double source_m[3], double **position_m, int *count) {
  int status = RTM_OK, nxr, nyr, all = 0, kept = 0;
  double x0, dxr, y0, dyr, *p = NULL;
  char extent[256];
  patch_axis(cfg, grid, 0, cfg->receivers.x_first_m, cfg->receivers.x_step_m,
             cfg->receivers.x_count, &x0, &dxr, &nxr);
  patch_axis(cfg, grid, 1, cfg->receivers.y_first_m, cfg->receivers.y_step_m,
             cfg->receivers.y_count, &y0, &dyr, &nyr);
  double z = isnan(cfg->receivers.z_m) ? source_m[2] : cfg->receivers.z_m;
  RTM_TRY(receiver_plane(source_m[0] + x0, dxr, nxr, source_m[1] + y0, dyr, nyr, z, &p, &all));
  for (int r = 0; r < all; ++r)
    if (inside_volume(grid, p + 3 * r)) memmove(p + 3 * kept++, p + 3 * r, 3 * sizeof *p);
  describe_volume(grid, extent, sizeof extent);
  if (kept == 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "receivers.layout = patch: none of the %d receivers around the shot at (%g, %g, "
             "%g) m lies inside the volume, %s",
             all, source_m[0], source_m[1], source_m[2], extent);
  if (kept < all)
    rtm_log_warning("receivers.layout = patch: %d of the %d receivers around the shot at (%g, "
                    "%g, %g) m lie outside the volume and are left out",
                    all - kept, all, source_m[0], source_m[1], source_m[2]);
  *position_m = p;
  *count = kept;
  return RTM_OK;
fail:
  free(p);
  return status;
}

int rtm_receiver_positions(const rtm_config_t *cfg, const rtm_grid_t *grid,
                           const double source_m[3], double **position_m, int *count) {
  *position_m = NULL;
  *count = 0;
  switch (cfg->receivers.layout) {
  case RTM_RECEIVERS_PLANE: return receivers_from_plane(cfg, grid, source_m, position_m, count);
  case RTM_RECEIVERS_PATCH: return receivers_from_patch(cfg, grid, source_m, position_m, count);
  case RTM_RECEIVERS_FILE:
    return read_positions_file(cfg, cfg->receivers.file, "receivers.file", "receiver", grid,
                               position_m, count);
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
    rtm_log_warning("%d %s%s inside the absorbing layer (boundary.width = %d cells) and %s "
                    "damped there",
                    inside, what, inside == 1 ? " lies" : "s lie", width,
                    inside == 1 ? "is" : "are");
}

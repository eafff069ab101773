/* rtm3d accuracy CONFIG: what the deck's grid spacing, time step and wavelet cost in
 * accuracy, before a long run. The deck's model gives vp_min and vp_max, and with them the
 * deck's dt (time.dt, or time.cfl against vp_max); then a homogeneous medium at vp_min (the
 * fewest points per wavelength) is run on the deck's spacing and dt, with the deck's
 * wavelet and backend, the source on a node at the centre of a box closed by walls, large
 * enough that no wall's reflection reaches a receiver within its window, and receivers
 * 1.5, 2.5 and 4 peak wavelengths away along the x and z axes, the xy diagonal, the body
 * diagonal and an oblique direction off the grid nodes. Each trace is compared with
 * p = w(t - r / v) / (4 pi r) over [0, r / v + 2.4 / f] (relative L2), three times: with
 * the deck's own time.dispersion_correction and points.interpolation, with the correction
 * turned over (none for full or traces, full for none), and with the other point operator
 * (tests/solver/test_dispersion.c); the deck's worst error is said last. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "progress.h"
#include "rtm_propagator.h"
#include "rtm_status.h"
#include "rtm_traces.h" /* rtm_traces_backend_for */
#include "solver_io.h"

enum { DIRECTIONS = 5, OFFSETS = 3, RECEIVERS = DIRECTIONS * OFFSETS, MODES = 3 };

static const char *const direction_names[DIRECTIONS] = {"x axis", "z axis", "xy diagonal",
                                                        "body diagonal", "oblique, off grid"};
/* unit vectors (the oblique one is not along any grid line: its receivers fall between
 * nodes) */
static const double directions[DIRECTIONS][3] = {
    {1.0, 0.0, 0.0},
    {0.0, 0.0, 1.0},
    {0.70710678118654752, 0.70710678118654752, 0.0},
    {0.57735026918962576, 0.57735026918962576, 0.57735026918962576},
    {0.52573111211913361, 0.30901699437494742, 0.79263379155996680}};
static const double offset_wavelengths[OFFSETS] = {1.5, 2.5, 4.0};
static const double pi = 3.14159265358979323846;

/* The table's columns: the deck as it is, the deck with its correction turned over, the deck
 * with the other point operator. */
typedef struct {
  rtm_dispersion_correction_t mode;
  rtm_point_interpolation_t points;
  char title[24];
} column_t;

static const char *mode_name(rtm_dispersion_correction_t mode) {
  return mode == RTM_DISPERSION_FULL ? "full" : mode == RTM_DISPERSION_TRACES ? "traces" : "none";
}

static void plan_columns(const rtm_config_t *cfg, column_t column[MODES]) {
  const rtm_dispersion_correction_t mode = cfg->time.dispersion_correction;
  const rtm_point_interpolation_t points = cfg->points.interpolation;
  const rtm_point_interpolation_t other = points == RTM_INTERPOLATION_SINC
                                              ? RTM_INTERPOLATION_TRILINEAR
                                              : RTM_INTERPOLATION_SINC;
  const rtm_dispersion_correction_t over =
      mode == RTM_DISPERSION_NONE ? RTM_DISPERSION_FULL : RTM_DISPERSION_NONE;
  column[0] = (column_t){mode, points, "this deck"};
  column[1] = (column_t){over, points, ""};
  snprintf(column[1].title, sizeof column[1].title, "%s", mode_name(over));
  column[2] = (column_t){mode, other, ""};
  snprintf(column[2].title, sizeof column[2].title, "%s",
           other == RTM_INTERPOLATION_SINC ? "sinc" : "trilinear");
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d accuracy CONFIG [--set section.key=value ...] [--quiet]\n\n"
          "What the deck's grid spacing, time step and wavelet cost in accuracy, before a\n"
          "long run: a homogeneous medium at the model's slowest velocity (the fewest points\n"
          "per wavelength) runs on the deck's spacing and dt (time.dt, or time.cfl against the\n"
          "fastest velocity) with its wavelet and backend, and the traces of receivers 1.5,\n"
          "2.5 and 4 peak wavelengths from the source along the x and z axes, the xy and body\n"
          "diagonals and an oblique line off the grid nodes are compared with the exact\n"
          "p = w(t - r/v) / (4 pi r) (relative L2 over the arrival): with the deck's own\n"
          "time.dispersion_correction and points.interpolation, with the correction turned\n"
          "over (none for full, full for none) and with the other point operator, each\n"
          "column what one choice costs; the deck's worst error last. Nothing is written.\n\n"
          "  --set k=v   override one key of the deck (repeatable)\n"
          "  --quiet, -q errors, the deck's figures and the table: no warnings or progress\n");
}

/* The deck's keys the homogeneous runs do not take (their source, receivers, shots and
 * outputs are accuracy's own) back at their defaults before the deck is checked: a warning
 * or an error about them (snapshots.every past time.steps, a receiver plane outside the
 * volume) would be about a run accuracy does not make. time.steps stays: the deck's run
 * length is what the time dispersion is said for. */
static void forget_unused_keys(rtm_config_t *cfg) {
  static const char *const sections[] = {"shots", "receivers", "snapshots", "output", "rtm"};
  static const char *const keys[][2] = {
      {"source", "x"}, {"source", "y"}, {"source", "z"}, {"mpi", "shot_groups"}};
  for (size_t k = 0; k < sizeof sections / sizeof sections[0]; ++k)
    rtm_config_reset(cfg, sections[k], NULL);
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k)
    rtm_config_reset(cfg, keys[k][0], keys[k][1]);
}

/* The steps of each homogeneous run: to the farthest receiver's window end (its arrival
 * and the wavelet after it), an int count (time.steps' range). */
static int count_steps(const rtm_config_t *deck, double velocity, double dt,
                       const double distance[RECEIVERS], int *steps) {
  const double f = deck->source.frequency_hz;
  const double delay = isnan(deck->source.delay_s) ? 1.2 / f : deck->source.delay_s;
  double longest = 0.0;
  for (int r = 0; r < RECEIVERS; ++r)
    longest = fmax(longest, distance[r] / velocity + delay + 1.2 / f);
  const double count = ceil(longest / dt) + 1.0;
  if (!(count <= INT_MAX - 1)) {
    rtm_log_error("accuracy: the farthest receiver's window ends at %g s, %.3g steps of dt = "
                  "%g s: more than a run can count (%d); raise time.dt or source.frequency",
                  longest, count, dt, INT_MAX - 1);
    return RTM_ERR_CONFIG;
  }
  *steps = (int)count;
  return RTM_OK;
}

/* The homogeneous run of `mode`: each receiver's relative L2 error. */
static int run_mode(const rtm_config_t *deck, double velocity, double dt, const int n[3],
                    const double receiver_m[RECEIVERS][3], const double distance[RECEIVERS],
                    rtm_dispersion_correction_t mode, rtm_point_interpolation_t points,
                    int steps, rtm_progress_t *progress, int steps_before,
                    double error[RECEIVERS]) {
  int status = RTM_OK;
  char path[RTM_CONFIG_PATH_MAX], setting[2 * RTM_CONFIG_PATH_MAX];
  rtm_config_t cfg = *deck;
  rtm_model_t model = {0};
  rtm_propagator_t prop = {0};
  int created = 0, fd = -1;
  float *traces = NULL;
  FILE *file = NULL;
  /* the receivers' file, removed at the end, in the temporary folder (TMPDIR, as figures') */
  const char *folder = getenv("TMPDIR");
  if (!folder || !folder[0]) folder = "/tmp";
  if ((size_t)snprintf(path, sizeof path, "%s/rtm3d_accuracy_XXXXXX", folder) >= sizeof path)
    RTM_FAIL(RTM_ERR_CONFIG, "accuracy: TMPDIR = %s is too long a path", folder);
  fd = mkstemp(path);
  if (fd < 0)
    RTM_FAIL(RTM_ERR_IO,
             "accuracy: cannot create its receivers' file in the temporary folder %s: %s (set "
             "TMPDIR to a folder where files can be written)",
             folder, strerror(errno));
  file = fdopen(fd, "w");
  if (!file) {
    close(fd);
    RTM_FAIL(RTM_ERR_IO, "accuracy: cannot write %s", path);
  }
  for (int r = 0; r < RECEIVERS; ++r)
    fprintf(file, "%.17g %.17g %.17g\n", receiver_m[r][0], receiver_m[r][1], receiver_m[r][2]);
  fclose(file);
  file = NULL;
  const double source_delay =
      isnan(deck->source.delay_s) ? 1.2 / deck->source.frequency_hz : deck->source.delay_s;
  for (int a = 0; a < 3; ++a) {
    cfg.grid.n[a] = n[a];
    cfg.grid.origin_m[a] = 0.0;
  }
  cfg.model.file[0] = '\0';
  cfg.physics.equation = RTM_EQUATION_ISO;
  const rtm_backend_t *backend = NULL;
  RTM_TRY(rtm_backend_select(cfg.backend.name, &backend));
  if (strcmp(backend->name, "cpu") == 0) { /* kernel.* ignored there: said once, for the deck */
    snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "auto");
    cfg.kernel.stages = cfg.kernel.zblock = RTM_CFG_AUTO_INT;
    cfg.kernel.block[0] = cfg.kernel.block[1] = RTM_CFG_AUTO_INT;
  }
  cfg.time.dt_s = dt;
  cfg.time.steps = steps;
  cfg.time.dispersion_correction = mode;
  cfg.points.interpolation = points;
  cfg.boundary.width_cells = 0;
  cfg.snapshots.every_steps = 0;
  cfg.shots.layout = RTM_SHOTS_SINGLE;
  cfg.mpi.shot_groups = 1;
  snprintf(setting, sizeof setting, "receivers.file=%s", path);
  RTM_TRY(rtm_config_set(&cfg, "receivers.layout=file"));
  RTM_TRY(rtm_config_set(&cfg, setting));
  snprintf(setting, sizeof setting, "model.vp=%.17g", velocity);
  RTM_TRY(rtm_config_set(&cfg, setting));
  /* homogeneous: the deck's interface (and the velocity below it) is not this medium's */
  RTM_TRY(rtm_config_set(&cfg, "model.interface_z=auto"));
  RTM_TRY(rtm_config_set(&cfg, "model.vp_below=auto"));
  for (int a = 0; a < 3; ++a) { /* the source on the centre node */
    snprintf(setting, sizeof setting, "source.%c=%.17g", "xyz"[a],
             (n[a] / 2) * cfg.grid.spacing_m[a]);
    RTM_TRY(rtm_config_set(&cfg, setting));
  }
  rtm_grid_t grid;
  RTM_TRY(rtm_grid_init(&grid, cfg.grid.n, cfg.grid.spacing_m, cfg.grid.origin_m));
  RTM_TRY(rtm_app_load_model(&cfg, &grid, &model));
  RTM_TRY(rtm_propagator_create(&cfg, &grid, &model, &prop));
  created = 1;
  for (int it = 0; it < prop.steps; ++it) {
    RTM_TRY(rtm_propagator_step(&prop, it, RTM_FORWARD));
    if (rtm_progress_due(progress, steps_before + it + 1) && prop.backend->synchronize)
      RTM_TRY(prop.backend->synchronize(prop.state)); /* the rate of steps done */
    rtm_progress_update(progress, steps_before + it + 1);
  }
  const int samples = prop.steps + 1;
  traces = malloc((size_t)RECEIVERS * samples * sizeof *traces);
  if (!traces) RTM_FAIL(RTM_ERR_NOMEM, "accuracy: out of memory for the traces");
  RTM_TRY(prop.backend->read_traces(prop.state, RTM_FIELD_P, traces));
  RTM_TRY(rtm_propagator_correct_traces(
      &prop, rtm_traces_backend_for(prop.backend->name), RECEIVERS, traces));
  const double f = cfg.source.frequency_hz, amplitude = cfg.source.amplitude;
  for (int r = 0; r < RECEIVERS; ++r) {
    const double end_s = distance[r] / velocity + source_delay + 1.2 / f;
    double num = 0.0, den = 0.0;
    for (int k = 0; k < samples && k * dt <= end_s; ++k) {
      const double exact = amplitude *
                           rtm_ricker(k * dt - distance[r] / velocity, f, source_delay) /
                           (4.0 * pi * distance[r]);
      const double e = traces[(size_t)r * samples + k] - exact;
      num += e * e;
      den += exact * exact;
    }
    /* a trace that is not finite, or a window without one sample of the exact arrival,
     * gives no error to print: refused, not shown as nan% */
    if (!(den > 0.0) || !isfinite(num))
      RTM_FAIL(RTM_ERR_NUMERIC,
               "accuracy: receiver %d (%.3g m away) has %s: no error to report "
               "(time.dispersion_correction = %s)",
               r, distance[r],
               !(den > 0.0) ? "no sample of the exact arrival" : "a non-finite trace",
               mode_name(mode));
    error[r] = sqrt(num / den);
  }
fail:
  if (file) fclose(file);
  if (fd >= 0) remove(path);
  free(traces);
  if (created) rtm_propagator_destroy(&prop);
  rtm_model_release(&model);
  return status;
}

int rtm_cmd_accuracy(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
  int status = RTM_OK, quiet = 0;
  rtm_config_t cfg;
  rtm_model_t deck_model = {0};
  double error[MODES][RECEIVERS];
  /* --force is the config reader's for the commands that write (a probe: accuracy took it
   * without a word) */
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--set") == 0)
      ++i;
    else if (strcmp(argv[i], "--force") == 0)
      RTM_FAIL(RTM_ERR_USAGE, "accuracy writes nothing: --force does not apply; leave it out");
  RTM_TRY(rtm_app_read_config(argc, argv, &cfg, &quiet, NULL, NULL));
  forget_unused_keys(&cfg);
  {
    /* the third column runs the other point operator: with trilinear points, sinc at the
     * deck's points.radius, which the check would call ignored (a review) */
    rtm_config_t checked = cfg;
    checked.points.interpolation = RTM_INTERPOLATION_SINC;
    RTM_TRY(rtm_config_validate(&checked));
  }
  rtm_grid_t deck_grid;
  RTM_TRY(rtm_grid_init(&deck_grid, cfg.grid.n, cfg.grid.spacing_m, cfg.grid.origin_m));
  RTM_TRY(rtm_app_load_model_values(&cfg, &deck_grid, &deck_model)); /* its velocities */
  double dt = 0.0;
  RTM_TRY(rtm_resolve_dt(&cfg, &deck_model, &deck_grid, &dt));
  const double velocity = deck_model.vp_min, v_max = deck_model.vp_max;
  rtm_model_release(&deck_model);
  const double f = cfg.source.frequency_hz, wavelength = velocity / f;
  double h_min = cfg.grid.spacing_m[0], h_max = cfg.grid.spacing_m[0];
  for (int a = 1; a < 3; ++a) {
    h_min = fmin(h_min, cfg.grid.spacing_m[a]);
    h_max = fmax(h_max, cfg.grid.spacing_m[a]);
  }
  /* a wall's reflection reaches an axis receiver r away after 2 H - r: past its window
   * (r + 2.4 wavelengths of travel) with 4 cells to spare when H = r + 1.2 wavelengths +
   * 4 cells */
  int n[3];
  for (int a = 0; a < 3; ++a) {
    const double half =
        (offset_wavelengths[OFFSETS - 1] + 1.2) * wavelength / cfg.grid.spacing_m[a];
    n[a] = 2 * ((int)ceil(half) + 4) + 1;
  }
  double receiver_m[RECEIVERS][3], distance[RECEIVERS];
  for (int d = 0; d < DIRECTIONS; ++d)
    for (int o = 0; o < OFFSETS; ++o) {
      const int r = d * OFFSETS + o;
      double squared = 0.0;
      for (int a = 0; a < 3; ++a) {
        const double centre = (n[a] / 2) * cfg.grid.spacing_m[a];
        /* on a node along the grid lines (rounded), exactly at the offset off them */
        double step = offset_wavelengths[o] * wavelength * directions[d][a];
        if (d < DIRECTIONS - 1) step = round(step / cfg.grid.spacing_m[a]) * cfg.grid.spacing_m[a];
        receiver_m[r][a] = centre + step;
        squared += step * step;
      }
      distance[r] = sqrt(squared);
    }
  printf("accuracy: spacing %g x %g x %g m, dt %.4g s (Courant %.3g at vp_max %g m/s), Ricker "
         "%g Hz;\n  a homogeneous %g m/s (the model's vp_min: %.3g points per peak wavelength, "
         "%.3g at 2.5 f) on %d x %d x %d cells\n",
         cfg.grid.spacing_m[0], cfg.grid.spacing_m[1], cfg.grid.spacing_m[2], dt,
         v_max * dt / h_min, v_max, f, velocity, wavelength / h_max, wavelength / 2.5 / h_max, n[0],
         n[1], n[2]);
  fflush(stdout);
  /* The homogeneous runs say no warning: their steps, box and receivers are accuracy's, not
   * the deck's (a time-dispersion warning for "the run's 0.43 s" would name a run the user
   * never asked for), and what concerns the deck (its spacing, dt and wavelet, the same in
   * these runs) was said above by rtm_resolve_dt. Errors still print. */
  rtm_log_set_quiet(1);
  column_t column[MODES];
  plan_columns(&cfg, column);
  int steps = 0;
  RTM_TRY(count_steps(&cfg, velocity, dt, distance, &steps));
  const double cells = (double)n[0] * n[1] * n[2];
  if (!quiet)
    printf("  %d runs of %d steps (dt %.4g s, to the farthest receiver's window) on %.3g "
           "cells\n",
           MODES, steps, dt, cells);
  fflush(stdout);
  rtm_progress_t progress;
  rtm_progress_begin(&progress, MODES * steps, cells, quiet);
  for (int m = 0; m < MODES && status == RTM_OK; ++m) {
    char label[32];
    snprintf(label, sizeof label, "run %d/%d", m + 1, MODES);
    rtm_progress_label(&progress, label);
    status = run_mode(&cfg, velocity, dt, n, receiver_m, distance, column[m].mode,
                      column[m].points, steps, &progress, m * steps, error[m]);
  }
  rtm_progress_end(&progress);
  rtm_log_set_quiet(quiet);
  if (status != RTM_OK) goto fail;
  printf("  %-18s %10s %14s %14s %14s\n", "direction", "offset", column[0].title, column[1].title,
         column[2].title);
  double worst = 0.0, worst_off_grid = 0.0;
  for (int r = 0; r < RECEIVERS; ++r) {
    printf("  %-18s %7.2f wl %13.3f%% %13.3f%% %13.3f%%\n", direction_names[r / OFFSETS],
           distance[r] / wavelength, 100.0 * error[0][r], 100.0 * error[1][r], 100.0 * error[2][r]);
    worst = fmax(worst, error[0][r]);
    if (r / OFFSETS == DIRECTIONS - 1) worst_off_grid = fmax(worst_off_grid, error[0][r]);
  }
  char points_said[40];
  if (cfg.points.interpolation == RTM_INTERPOLATION_SINC)
    snprintf(points_said, sizeof points_said, "sinc, radius %d", cfg.points.radius);
  else
    snprintf(points_said, sizeof points_said, "trilinear");
  printf("  relative L2 error of each trace against the exact one (wl: peak wavelengths);\n"
         "  this deck: time.dispersion_correction = %s, points.interpolation = %s;\n"
         "  %s: the correction %s instead; %s: %s points instead\n",
         mode_name(column[0].mode), points_said, column[1].title, mode_name(column[1].mode),
         column[2].title, column[2].title);
  printf("this deck: worst %.3f%%, off the grid nodes %.3f%%\n", 100.0 * worst,
         100.0 * worst_off_grid);
fail:
  return rtm_status_exit_code(status);
}

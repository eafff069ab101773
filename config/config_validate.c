/* config_validate.c - checks that involve more than one key, run once the deck and every
 * --set override are in. Every problem is reported before the call fails. */
#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h" /* rtm_cfg_find */
#include "rtm_config.h"
#include "rtm_status.h"

typedef struct {
  const rtm_config_t *cfg;
  int errors;
} checker_t;

static checker_t checker_of(const rtm_config_t *cfg) {
  checker_t check = {cfg, 0};
  return check;
}

/* A message prefixed with where its values came from (rtm_config_origin: the deck, and the
 * keys it names that --set changed). */
static void say(const checker_t *check, int error, const char *fmt, va_list args) {
  char message[1024], where[RTM_CONFIG_ORIGIN_MAX];
  vsnprintf(message, sizeof message, fmt, args);
  rtm_config_origin(check->cfg, message, where, sizeof where);
  if (error)
    rtm_log_error("%s: %s", where, message);
  else
    rtm_log_warning("%s: %s", where, message);
}

static void check_error(checker_t *check, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void check_error(checker_t *check, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  say(check, 1, fmt, args);
  va_end(args);
  ++check->errors;
}

static void check_warning(const checker_t *check, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void check_warning(const checker_t *check, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  say(check, 0, fmt, args);
  va_end(args);
}

/* A coordinate given by the user (not auto) must lie on the grid's span of cell centres,
 * within the tolerance a points file has (RTM_EDGE_TOLERANCE_CELLS); said with the digits
 * that show it outside (probe M, M5: "230 m lies outside [0, 230] m"). */
static void check_inside(checker_t *check, const rtm_config_t *cfg, const char *key, int axis,
                         double coordinate_m) {
  static const char *const names[3][3] = {
      {"nx", "dx", "ox"}, {"ny", "dy", "oy"}, {"nz", "dz", "oz"}};
  if (isnan(coordinate_m)) return;
  double low = cfg->grid.origin_m[axis];
  double high = low + (cfg->grid.n[axis] - 1) * cfg->grid.spacing_m[axis];
  const double tolerance = RTM_EDGE_TOLERANCE_CELLS * cfg->grid.spacing_m[axis];
  if (coordinate_m < low - tolerance || coordinate_m > high + tolerance)
    check_error(check,
                "%s = %.15g m lies outside the volume, [%g, %g] m from grid.%s, grid.%s and "
                "grid.%s (%.3g m beyond it)",
                key, coordinate_m, low, high, names[axis][2], names[axis][0], names[axis][1],
                coordinate_m < low ? low - coordinate_m : coordinate_m - high);
}

/* Printable UTF-8: every character well formed, none a C0 or C1 control or DEL. */
static int printable_text(const char *text) {
  for (const unsigned char *c = (const unsigned char *)text; *c;) {
    const size_t length = rtm_utf8_length((const char *)c);
    if (length == 0 || (length == 1 && (*c < 0x20 || *c == 0x7f)) ||
        (length == 2 && c[0] == 0xc2 && c[1] < 0xa0)) /* U+0080-U+009F */
      return 0;
    c += length;
  }
  return 1;
}

static int only_space(const char *text) {
  while (isspace((unsigned char)*text))
    ++text;
  return *text == '\0';
}

/* Appends ", name" (or "name" first) to a list of keys for a message. */
static void append_key(char *list, size_t size, const char *name) {
  size_t used = strlen(list);
  snprintf(list + used, size - used, "%s%s", used ? ", " : "", name);
}

/* [shots]: what the layout needs, the positions given in metres, the keys it ignores. The
 * positions that autos resolve are checked by rtm_shots_init, before anything runs. */
static void check_shots(checker_t *check, const rtm_config_t *cfg) {
  static const char *const layout_names[] = {"single", "grid", "file"};
  const rtm_shot_layout_t layout = cfg->shots.layout;
  const char *layout_name = layout_names[layout];
  if (layout == RTM_SHOTS_FILE && only_space(cfg->shots.file))
    check_error(check, "shots.layout = file needs shots.file (one \"x y z\" per line)");
  if (layout != RTM_SHOTS_FILE && cfg->shots.file[0])
    check_warning(check, "shots.file is ignored unless shots.layout = file");

  char grid_keys[256] = "";
  if (!isnan(cfg->shots.x_first_m)) append_key(grid_keys, sizeof grid_keys, "shots.x_first");
  if (!isnan(cfg->shots.x_step_m)) append_key(grid_keys, sizeof grid_keys, "shots.x_step");
  if (cfg->shots.x_count != 1) append_key(grid_keys, sizeof grid_keys, "shots.x_count");
  if (!isnan(cfg->shots.y_first_m)) append_key(grid_keys, sizeof grid_keys, "shots.y_first");
  if (!isnan(cfg->shots.y_step_m)) append_key(grid_keys, sizeof grid_keys, "shots.y_step");
  if (cfg->shots.y_count != 1) append_key(grid_keys, sizeof grid_keys, "shots.y_count");
  if (!isnan(cfg->shots.z_m)) append_key(grid_keys, sizeof grid_keys, "shots.z");
  if (layout != RTM_SHOTS_GRID && grid_keys[0])
    check_warning(check, "%s ignored unless shots.layout = grid (shots.layout = %s)", grid_keys,
                  layout_name);

  if (layout == RTM_SHOTS_GRID) {
    check_inside(check, cfg, "shots.x_first", 0, cfg->shots.x_first_m);
    check_inside(check, cfg, "shots.y_first", 1, cfg->shots.y_first_m);
    check_inside(check, cfg, "shots.z", 2, cfg->shots.z_m);
    /* NAN when either is auto: check_inside skips it */
    if (cfg->shots.x_count > 1)
      check_inside(check, cfg,
                   "shots.x_first + (shots.x_count - 1) shots.x_step (the last shot's x)", 0,
                   cfg->shots.x_first_m + (cfg->shots.x_count - 1) * cfg->shots.x_step_m);
    if (cfg->shots.y_count > 1)
      check_inside(check, cfg,
                   "shots.y_first + (shots.y_count - 1) shots.y_step (the last shot's y)", 1,
                   cfg->shots.y_first_m + (cfg->shots.y_count - 1) * cfg->shots.y_step_m);
  }
  if (layout != RTM_SHOTS_SINGLE && cfg->snapshots.every_steps > 0)
    check_error(check,
                "snapshots.every = %d with shots.layout = %s: runs of many shots write no "
                "snapshots (yet); set snapshots.every = 0, or shots.layout = single",
                cfg->snapshots.every_steps, layout_name);
  for (int a = 0; a < rtm_config_source_axes_placed(cfg); ++a)
    if (!isnan(cfg->source.position_m[a]))
      check_warning(check, "source.%c is ignored by shots.layout = %s, which places the shots%s",
                    "xyz"[a], layout_name,
                    layout == RTM_SHOTS_GRID ? " (source.z is their depth when shots.z = auto)"
                                             : "");
}

/* receivers.layout = patch: x_first and y_first are offsets from each shot, so only the
 * depth is a position; counts whose patch is wider than the volume lose receivers at
 * every shot. */
static void check_patch(checker_t *check, const rtm_config_t *cfg) {
  static const char *const names[2][3] = {{"x", "nx", "dx"}, {"y", "ny", "dy"}};
  const int counts[2] = {cfg->receivers.x_count, cfg->receivers.y_count};
  const double steps[2] = {cfg->receivers.x_step_m, cfg->receivers.y_step_m};
  for (int a = 0; a < 2; ++a) {
    const double step = isnan(steps[a]) ? cfg->grid.spacing_m[a] : steps[a];
    const double patch = (counts[a] - 1) * step,
                 volume = (cfg->grid.n[a] - 1) * cfg->grid.spacing_m[a];
    if (counts[a] > 0 && patch > volume)
      check_warning(check,
                    "receivers.%s_count = %d at receivers.%s_step = %g m spans %g m, more than the "
                    "volume's %g m (grid.%s, grid.%s): a patch loses receivers at every shot",
                    names[a][0], counts[a], names[a][0], step, patch, volume, names[a][1],
                    names[a][2]);
  }
}

/* ---- values in range but absurd: what float32 fields and double positions can hold ---- */

/* The largest |symbol| of the 8th-order second-derivative stencil (at kh = pi):
 * 205/72 + 2 (8/5 + 1/5 + 8/315 + 1/560), as solver/physics/stability.c computes it. */
static const double stencil_nyquist_symbol = 6.5016;
#define PI 3.14159265358979323846
/* A step's phase advance 2 pi f dt below sqrt(FLT_EPSILON) rad: the leapfrog's update
 * (2 pi f dt)^2 p of a wave at f is under half an ulp of p in the float32 fields and is
 * rounded away, so that wave cannot evolve at all. */
#define FLOAT_PHASE_FLOOR 3.4526698e-4
/* |(1 - 2 x^2) exp(-x^2)|, the Ricker at x = pi f (t - t0), is below FLT_TRUE_MIN
 * (1.4e-45) of its peak for x^2 > 110: |t - t0| > sqrt(110) / (pi f) = 3.34 / f. */
#define RICKER_FLOAT_REACH 3.3385

/* Spacing: the kernels keep 1/h^2 as a float32 coefficient of the Laplacian, which
 * overflows below 1/sqrt(FLT_MAX) = 5.4e-20 m and is no normal float above
 * 1/sqrt(FLT_MIN) = 9.2e18 m (the Laplacian then vanishes). Origin: positions are doubles,
 * and where |x| / h exceeds 2^29 (FLT_EPSILON / DBL_EPSILON) a double no longer places a
 * point within a cell as finely as the float32 tap weights do: points between nodes
 * collapse onto the same taps (grid.ox = 1e17 m with dx = 10 m puts 16 receivers on 4). */
static void check_grid_numbers(checker_t *check, const rtm_config_t *cfg) {
  static const char *const names[3][3] = {
      {"nx", "dx", "ox"}, {"ny", "dy", "oy"}, {"nz", "dz", "oz"}};
  const double finest = 1.0 / sqrt(FLT_MAX), coarsest = 1.0 / sqrt(FLT_MIN);
  const double reach_cells = (double)(1 << 29);
  for (int a = 0; a < 3; ++a) {
    const double h = cfg->grid.spacing_m[a], origin = cfg->grid.origin_m[a];
    if (!(h >= finest && h <= coarsest)) {
      check_error(check,
                  "grid.%s = %g m: the kernels keep 1/%s^2 as a float32, which %s; a spacing "
                  "in [%.3g, %.3g] m works",
                  names[a][1], h, names[a][1],
                  h < finest ? "overflows below 1/sqrt(FLT_MAX) m"
                             : "is no normal float above 1/sqrt(FLT_MIN) m (nothing propagates)",
                  finest, coarsest);
      continue;
    }
    const double far_m = fmax(fabs(origin), fabs(origin + (cfg->grid.n[a] - 1) * h));
    if (!(far_m / h <= reach_cells))
      check_error(check,
                  "grid.%s = %g m: the %c coordinates reach %g m, %.3g cells of grid.%s = %g m "
                  "from 0, where a double resolves a position only to %.3g m: sources and "
                  "receivers between nodes would collapse onto the same taps; keep the "
                  "volume within 2^29 cells of 0 (|grid.%s| <= %.4g m here)",
                  names[a][2], origin, "xyz"[a], far_m, far_m / h, names[a][1], h,
                  far_m * DBL_EPSILON, names[a][2], reach_cells * h - (cfg->grid.n[a] - 1) * h);
  }
}

/* Velocities of the constant model: its volumes are float32, where a velocity below FLT_MIN
 * (1.2e-38 m/s) is 0 or denormal; the model check would then blame "vp = 0 m/s at cell
 * (ix 0, iy 0, iz 0)" rather than the key. vp_below counts only below an interface. */
static void check_velocities(checker_t *check, const rtm_config_t *cfg) {
  if (cfg->model.file[0]) return;
  const struct {
    const char *key;
    double value;
  } speeds[] = {
      {"model.vp", cfg->model.vp_m_s},
      {"model.vp_below", isnan(cfg->model.interface_z_m) ? NAN : cfg->model.vp_below_m_s}};
  for (size_t k = 0; k < sizeof speeds / sizeof speeds[0]; ++k)
    if (speeds[k].value < FLT_MIN)
      check_error(check,
                  "%s = %g m/s: the model holds velocities as float32, where this is %s "
                  "(float32's smallest normal number is %.3g); give the P velocity in m/s "
                  "(1500 to 6000 is usual)",
                  speeds[k].key, speeds[k].value, (float)speeds[k].value == 0.0f ? "0" : "denormal",
                  (double)FLT_MIN);
}

/* The wavefield near a point source of amplitude A is about A / (4 pi h) one cell away
 * (and A / (4 pi r) at r: below RTM_FLOAT_FULL_PRECISION at the volume's far corner the
 * float32 fields lose precision among the subnormal numbers, then underflow to zero: probe
 * N, N1: 1e-42 gave all-zero gathers with exit 0)
 * (p = w(t - r/v) / (4 pi r), |w| <= 1), and the stencil sums it times up to
 * S (1/dx^2 + 1/dy^2 + 1/dz^2): beyond FLT_MAX the float32 fields overflow at the first
 * steps, whatever else the deck says. The traces scale with A, so nothing is lost by a
 * smaller one. */
double rtm_config_volume_diagonal_m(const rtm_config_t *cfg) {
  const double *h = cfg->grid.spacing_m;
  double squares = 0.0;
  for (int a = 0; a < 3; ++a)
    squares += pow((cfg->grid.n[a] - 1) * h[a], 2.0);
  return fmax(sqrt(squares), fmax(h[0], fmax(h[1], h[2])));
}

/* The largest grid spacing the messages call usual (metres). */
static const double usual_spacing_max_m = 100.0;

static void check_amplitude(checker_t *check, const rtm_config_t *cfg) {
  const double *h = cfg->grid.spacing_m;
  const double diagonal = rtm_config_volume_diagonal_m(cfg);
  const double far_field = fabs(cfg->source.amplitude) / (4.0 * PI * diagonal);
  const double h_max = fmax(h[0], fmax(h[1], h[2]));
  const double h_min = fmin(h[0], fmin(h[1], h[2]));
  const double stencil =
      stencil_nyquist_symbol * (1.0 / (h[0] * h[0]) + 1.0 / (h[1] * h[1]) + 1.0 / (h[2] * h[2]));
  const double near_field = fabs(cfg->source.amplitude) / (4.0 * PI * h_min);
  const double gain = fmax(1.0, stencil);
  /* the far corner's Laplacian below float32's precision, where the wavefield is not */
  const int corner_underflows = far_field / (h_max * h_max) < RTM_FLOAT_FULL_PRECISION &&
                                far_field >= RTM_FLOAT_FULL_PRECISION;
  if (cfg->source.amplitude == 0.0)
    check_error(check, "source.amplitude = 0: every trace, snapshot and image would be zero; "
                       "1 is usual (the outputs scale with it)");
  else if (near_field * gain > FLT_MAX && fabs(cfg->source.amplitude) <= 1.0)
    check_error(check,
                "grid spacing h_min = %g m: the Laplacian of a wavefield one cell from the "
                "source, |source.amplitude| / (4 pi h_min) times about %.3g / h_min^2, passes "
                "float32's largest number, %.3g, even at source.amplitude = %g: grid.dx, "
                "grid.dy and grid.dz must be far larger (metres: 1 to 100 is usual)",
                h_min, stencil_nyquist_symbol * 3.0, (double)FLT_MAX, cfg->source.amplitude);
  else if (corner_underflows && h_max <= usual_spacing_max_m)
    /* a usual spacing: only a tiny amplitude gets here (1 clears it by some 20 decades) */
    check_error(check,
                "source.amplitude = %g: the Laplacian of the wavefield at the volume's far "
                "corner, about |amplitude| / (4 pi r) / h_max^2 = %.3g (r = %.4g m, h_max = %g "
                "m), falls below %.3g, where float32 loses precision and then gives zero: the "
                "run would write wrong traces; they scale with the amplitude, so "
                "|source.amplitude| >= %.3g (1 is usual) loses nothing",
                cfg->source.amplitude, far_field / (h_max * h_max), diagonal, h_max,
                RTM_FLOAT_FULL_PRECISION,
                RTM_FLOAT_FULL_PRECISION * 4.0 * PI * diagonal * h_max * h_max);
  else if (corner_underflows)
    check_error(
        check,
        "grid spacing h_max = %g m: the Laplacian of the wavefield at the volume's far "
        "corner, about |source.amplitude| / (4 pi r) / h_max^2 = %.3g (r = %.4g m), "
        "falls below %.3g, where float32 loses precision and then gives zero: the run "
        "would write wrong traces; grid.dx, grid.dy and grid.dz must be far smaller (metres: 1 to "
        "100 is usual)",
        h_max, far_field / (h_max * h_max), diagonal, RTM_FLOAT_FULL_PRECISION);
  else if (far_field < RTM_FLOAT_FULL_PRECISION)
    check_error(check,
                "source.amplitude = %g: the wavefield across the volume, about |amplitude| / "
                "(4 pi r), falls to %.3g at its far corner (r = %.4g m), below %.3g, where "
                "float32 loses precision and then gives zero (its smallest normal number is "
                "%.3g): the run would write wrong or zero traces and images; they scale with the "
                "amplitude, so |source.amplitude| >= %.3g (1 is usual) loses nothing",
                cfg->source.amplitude, far_field, diagonal, RTM_FLOAT_FULL_PRECISION,
                (double)FLT_MIN, RTM_FLOAT_FULL_PRECISION * 4.0 * PI * diagonal);
  else if (near_field * gain > FLT_MAX)
    check_error(check,
                "source.amplitude = %g: the wavefield one cell from the source, about "
                "|amplitude| / (4 pi h_min) = %.3g, and its Laplacian, %.3g, must stay under "
                "float32's largest number, %.3g: the run would overflow; the traces scale with "
                "the amplitude, so |source.amplitude| <= %.3g (1 is usual) loses nothing",
                cfg->source.amplitude, near_field, near_field * stencil, (double)FLT_MAX,
                FLT_MAX * 4.0 * PI * h_min / gain);
}

/* dt = auto of the constant model, time.cfl x h_min / v_max with v_max its fastest phase
 * velocity (vp, or vp_below, times sqrt(1 + 2 epsilon) for vti and tti), as rtm_resolve_dt
 * finds it: the largest stable step. NAN when model.file sets v_max. */
static double auto_dt(const rtm_config_t *cfg) {
  if (cfg->model.file[0]) return NAN;
  double v_max = cfg->model.vp_m_s;
  if (!isnan(cfg->model.interface_z_m) && !isnan(cfg->model.vp_below_m_s))
    v_max = fmax(v_max, cfg->model.vp_below_m_s);
  if (cfg->physics.equation != RTM_EQUATION_ISO && cfg->model.epsilon > 0.0)
    v_max *= sqrt(1.0 + 2.0 * cfg->model.epsilon);
  const double *h = cfg->grid.spacing_m;
  return cfg->time.cfl * fmin(h[0], fmin(h[1], h[2])) / v_max;
}

/* The dt of a run of this deck when the deck alone gives it: time.dt, or auto_dt. */
static double deck_dt(const rtm_config_t *cfg) {
  return isnan(cfg->time.dt_s) ? auto_dt(cfg) : cfg->time.dt_s;
}

/* A step the float32 fields can see the source's wave move in, and a wavelet that is not
 * zero everywhere in the run's window [0, steps dt]. */
static void check_timing(checker_t *check, const rtm_config_t *cfg, double dt) {
  const double f = cfg->source.frequency_hz;
  const double phase = 2.0 * PI * f * dt;
  /* the dt the frequency needs, against the largest stable one where the deck gives it: a
   * frequency no stable dt serves is the frequency's fault (probe E12: 1e-320 Hz was blamed
   * on time.dt, "time.dt >= inf s lets it") */
  const double needed_dt = FLOAT_PHASE_FLOOR / (2.0 * PI * f), stable_dt = auto_dt(cfg);
  const int no_dt = !(needed_dt < HUGE_VAL) || (!isnan(stable_dt) && needed_dt > stable_dt);
  if (!(phase >= FLOAT_PHASE_FLOOR)) {
    if (isnan(cfg->time.dt_s))
      check_error(check,
                  "source.frequency = %g Hz is too low for dt = %g s (time.dt = auto: time.cfl "
                  "x h_min / v_max): a step advances the wavelet's phase by 2 pi f dt = %.3g "
                  "rad, and the float32 fields round away a change under %.3g rad (the "
                  "leapfrog's update (2 pi f dt)^2 p is below half an ulp of p): the wave "
                  "could not move; source.frequency >= %.3g Hz can",
                  f, dt, phase, FLOAT_PHASE_FLOOR, FLOAT_PHASE_FLOOR / (2.0 * PI * dt));
    else if (no_dt && !isnan(stable_dt))
      check_error(check,
                  "source.frequency = %g Hz is too low for any stable time.dt: a step must "
                  "advance the wavelet's phase by 2 pi f dt >= %.3g rad (the float32 fields "
                  "round away a smaller change: the wave could not move), which needs dt >= "
                  "%.3g s, above the largest stable dt (time.cfl x h_min / v_max = %.3g s); "
                  "source.frequency >= %.3g Hz can",
                  f, FLOAT_PHASE_FLOOR, fmin(needed_dt, DBL_MAX), stable_dt,
                  FLOAT_PHASE_FLOOR / (2.0 * PI * stable_dt));
    else if (no_dt)
      check_error(check,
                  "source.frequency = %g Hz is too low for any time.dt: a step must advance "
                  "the wavelet's phase by 2 pi f dt >= %.3g rad (the float32 fields round away "
                  "a smaller change: the wave could not move); at time.dt = %g s "
                  "source.frequency >= %.3g Hz can",
                  f, FLOAT_PHASE_FLOOR, dt, FLOAT_PHASE_FLOOR / (2.0 * PI * dt));
    else
      check_error(check,
                  "time.dt = %g s is too short for source.frequency = %g Hz: a step advances "
                  "the wavelet's phase by 2 pi f dt = %.3g rad, and the float32 fields round "
                  "away a change under %.3g rad (the leapfrog's update (2 pi f dt)^2 p is "
                  "below half an ulp of p): the wave could not move; time.dt >= %.3g s (or "
                  "auto) lets it",
                  dt, f, phase, FLOAT_PHASE_FLOOR, needed_dt);
    return;
  }
  if (isnan(cfg->source.delay_s)) return; /* auto, 1.2 / f: inside the reach below */
  const double run_s = cfg->time.steps * dt, reach_s = RICKER_FLOAT_REACH / f;
  const double delay = cfg->source.delay_s;
  if (!(delay >= -reach_s && delay <= run_s + reach_s))
    check_error(check,
                "source.delay = %g s puts the wavelet's centre more than 3.34 / "
                "source.frequency = %.3g s outside the run's window [0, %g] s (time.steps x "
                "dt = %d x %g s), where the Ricker is under 1.4e-45 of its peak, less than "
                "float32's smallest number: the source would never fire; a delay in [%.3g, "
                "%.3g] s does (auto: 1.2 / f = %.3g s)",
                delay, reach_s, run_s, cfg->time.steps, dt, -reach_s, run_s + reach_s, 1.2 / f);
}

int rtm_config_check_timing(const rtm_config_t *cfg, double dt_s) {
  checker_t check = checker_of(cfg);
  check_timing(&check, cfg, dt_s);
  return check.errors ? RTM_ERR_CONFIG : RTM_OK;
}

/* An int or double key's value in cfg, as a double (auto: NaN). */
static double number_of(const rtm_config_t *cfg, const rtm_cfg_entry_t *row) {
  const void *at = (const char *)cfg + row->offset;
  return row->type == RTM_CFG_INT ? *(const int *)at : *(const double *)at;
}

/* Whether an int or double key (auto or not) holds other than its default. */
static int set_away_from_default(const rtm_config_t *cfg, const rtm_cfg_entry_t *row) {
  const double value = number_of(cfg, row);
  const double fallback =
      strcmp(row->default_text, "auto") == 0 ? NAN : strtod(row->default_text, NULL);
  return !(value == fallback || (isnan(value) && isnan(fallback)));
}

/* Each of `keys` [count] of `section` set away from its default, named as ignored, `why`
 * saying what makes it do nothing. */
static void warn_keys_ignored(checker_t *check, const rtm_config_t *cfg, const char *section,
                              const char *const *keys, size_t count, const char *why) {
  for (size_t k = 0; k < count; ++k) {
    const rtm_cfg_entry_t *row = rtm_cfg_find(section, keys[k]);
    if (row && set_away_from_default(cfg, row))
      check_warning(check, "%s.%s = %g is ignored: %s", section, keys[k], number_of(cfg, row), why);
  }
}

/* The constant model's keys (model.vp ... model.vp_below) do nothing beside model.file:
 * each one set away from its default is named. */
static void warn_constants_ignored(checker_t *check, const rtm_config_t *cfg) {
  if (!cfg->model.file[0]) return;
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    if (strcmp(row->section, "model") != 0 ||
        (row->type != RTM_CFG_DOUBLE && row->type != RTM_CFG_DOUBLE_AUTO))
      continue;
    if (set_away_from_default(cfg, row))
      check_warning(check, "model.%s = %g is ignored: model.file = %s gives the model", row->key,
                    number_of(cfg, row), cfg->model.file);
  }
}

/* Keys that do nothing beside another key's value, set away from their defaults (a probe:
 * each was taken without a word): the interface's dip and lower velocity without an
 * interface, the sinc radius with trilinear points, the receivers' keys with none, the
 * checkpoint count where no checkpoints are kept, the mute's line without the mute. */
static void warn_others_ignored(checker_t *check, const rtm_config_t *cfg) {
  static const char *const interface[] = {"interface_dip", "vp_below"};
  static const char *const radius[] = {"radius"};
  static const char *const receivers[] = {"z",       "x_first", "x_step", "x_count",
                                          "y_first", "y_step",  "y_count"};
  static const char *const checkpoints[] = {"checkpoints"};
  static const char *const mute[] = {"mute_velocity", "mute_taper"};
  const rtm_reconstruction_t way = cfg->rtm.reconstruction;
  if (!cfg->model.file[0] && isnan(cfg->model.interface_z_m))
    warn_keys_ignored(check, cfg, "model", interface, 2,
                      "model.interface_z = auto puts no interface in the constant model");
  if (cfg->points.interpolation == RTM_INTERPOLATION_TRILINEAR)
    warn_keys_ignored(check, cfg, "points", radius, 1,
                      "it is the sinc operator's, and points.interpolation = trilinear");
  if (cfg->receivers.layout == RTM_RECEIVERS_NONE)
    warn_keys_ignored(check, cfg, "receivers", receivers, 7,
                      "receivers.layout = none records nothing");
  if (way == RTM_RECONSTRUCT_SNAPSHOTS || way == RTM_RECONSTRUCT_BOUNDARY)
    warn_keys_ignored(check, cfg, "rtm", checkpoints, 1,
                      way == RTM_RECONSTRUCT_SNAPSHOTS
                          ? "rtm.reconstruction = snapshots keeps no checkpoints"
                          : "rtm.reconstruction = boundary keeps no checkpoints");
  if (!cfg->rtm.mute)
    warn_keys_ignored(check, cfg, "rtm", mute, 2, "rtm.mute = false mutes nothing");
}

/* rtm.offset_lags: the 2 L + 1 lags must fit across the non-absorbing interior in x and y
 * (a CIP's x - h and x + h both inside it for some CIP; outside it the gathers are zero). */
static void check_gathers(checker_t *check, const rtm_config_t *cfg) {
  static const char *const names[2] = {"nx", "ny"};
  const int lags = cfg->rtm.offset_lags, layer = cfg->boundary.width_cells;
  if (lags <= 0) return;
  for (int a = 0; a < 2; ++a) {
    const int width = cfg->grid.n[a] - 2 * layer;
    if (2 * lags + 1 > width) {
      check_error(check,
                  "rtm.offset_lags = %d: the lags span 2 x %d + 1 = %d cells in %c, but the "
                  "non-absorbing interior is %d cells wide there (grid.%s = %d less "
                  "boundary.width = %d on each side): at most %d",
                  lags, lags, 2 * lags + 1, "xy"[a], width, names[a], cfg -> grid.n[a], layer,
                  width > 1 ? (width - 1) / 2 : 0);
      return;
    }
  }
}

/* rtm keys that do nothing in this deck, set away from their defaults: zfp's rate where
 * no snapshot is coded (auto may fall back to zfp snapshots at the rate, snapshots in zfp
 * code them; nothing else does), the codec's cost where auto does not choose, the gathers'
 * keys without gathers. */
static void warn_rtm_ignored(checker_t *check, const rtm_config_t *cfg) {
  static const char *const gather_keys[] = {"cip_x_step", "cip_y_step", "angles", "angle_max"};
  const rtm_cfg_entry_t *rate = rtm_cfg_find("rtm", "snapshot_rate");
  const rtm_reconstruction_t way = cfg->rtm.reconstruction;
  const int coded =
      way == RTM_RECONSTRUCT_AUTO ||
      (way == RTM_RECONSTRUCT_SNAPSHOTS && cfg->rtm.snapshot_precision == RTM_PRECISION_ZFP);
  if (!coded && rate && set_away_from_default(cfg, rate)) {
    if (way == RTM_RECONSTRUCT_SNAPSHOTS)
      check_warning(check,
                    "rtm.snapshot_rate = %d is ignored: it is zfp's bits a value, and "
                    "rtm.snapshot_precision = %s",
                    cfg->rtm.snapshot_rate, rtm_precision_name(cfg->rtm.snapshot_precision));
    else
      check_warning(check,
                    "rtm.snapshot_rate = %d is ignored: rtm.reconstruction = %s keeps no "
                    "snapshots",
                    cfg->rtm.snapshot_rate,
                    way == RTM_RECONSTRUCT_BOUNDARY ? "boundary" : "checkpoint");
  }
  if (way != RTM_RECONSTRUCT_AUTO && !isnan(cfg->rtm.snapshot_codec_steps))
    check_warning(check,
                  "rtm.snapshot_codec_steps = %g is ignored: it weighs the ways "
                  "rtm.reconstruction = auto chooses from, and rtm.reconstruction = %s",
                  cfg->rtm.snapshot_codec_steps,
                  way == RTM_RECONSTRUCT_SNAPSHOTS  ? "snapshots"
                  : way == RTM_RECONSTRUCT_BOUNDARY ? "boundary"
                                                    : "checkpoint");
  if (cfg->rtm.offset_lags == 0)
    warn_keys_ignored(check, cfg, "rtm", gather_keys, sizeof gather_keys / sizeof gather_keys[0],
                      "it shapes the common-image gathers, and rtm.offset_lags = 0 takes none");
}

int rtm_config_validate(const rtm_config_t *cfg) {
  checker_t check = checker_of(cfg);
  const int plane = cfg->receivers.layout == RTM_RECEIVERS_PLANE;

  /* numbers the float32 fields cannot hold, named before anything is read or allocated */
  check_grid_numbers(&check, cfg);
  check_velocities(&check, cfg);
  if (cfg->time.steps > INT_MAX - 1)
    check_error(&check,
                "time.steps = %d: traces hold time.steps + 1 samples, a 32-bit count: at most "
                "%d steps",
                cfg->time.steps, INT_MAX - 1);
  /* the warps run FFTs of the whole trace padded 8x, at most 2^27 samples (traces.c) */
  else if (cfg->time.dispersion_correction != RTM_DISPERSION_NONE &&
           cfg->time.steps > (1 << 24) - 1)
    check_error(&check,
                "time.steps = %d with time.dispersion_correction = %s: the warps transform "
                "whole traces of time.steps + 1 samples padded 8x, at most %d steps; set "
                "time.dispersion_correction = none for a longer run",
                cfg->time.steps,
                cfg->time.dispersion_correction == RTM_DISPERSION_FULL ? "full" : "traces",
                (1 << 24) - 1);
  if (!check.errors) {
    check_amplitude(&check, cfg);
    const double dt = deck_dt(cfg);
    if (!isnan(dt)) check_timing(&check, cfg, dt);
  }
  warn_constants_ignored(&check, cfg);
  warn_rtm_ignored(&check, cfg);
  warn_others_ignored(&check, cfg);

  /* off runs the z-slabs on ghost planes that never change: every result is wrong */
  if (cfg->mpi.exchange == RTM_EXCHANGE_OFF)
    check_error(&check,
                "mpi.exchange = off leaves the z-slabs' ghost planes stale, so a run's traces, "
                "snapshots and image would be wrong: use overlap or blocking; what the exchange "
                "costs is measured by `mpirun -np N rtm3d bench` (overlap, blocking and off side "
                "by side)");
  if (cfg->receivers.layout == RTM_RECEIVERS_FILE && only_space(cfg->receivers.file))
    check_error(&check, "receivers.layout = file needs receivers.file (one \"x y z\" per line)");
  if (cfg->receivers.layout != RTM_RECEIVERS_FILE && cfg->receivers.file[0])
    check_warning(&check, "receivers.file is ignored unless receivers.layout = file");
  if (cfg->model.file[0] && only_space(cfg->model.file))
    check_error(&check,
                "model.file = \"%s\" is blank: give a path, or leave it empty for the "
                "constant model (model.vp, model.epsilon, ...)",
                cfg->model.file);

  /* kernel.block_x x kernel.block_y is a tile of cells; how many threads run it depends on
   * the kernel (iso: block_x / 4 x block_y, vti/tti: one per cell), so each cuda kernel
   * checks its own shape when the backend is created, before anything is written. */

  const size_t name_length = strlen(cfg->output.name);
  if (name_length >= 7 && strcmp(cfg->output.name + name_length - 7, ".resume") == 0)
    check_error(&check,
                "output.name = \"%s\": a name ending in .resume is a migration's resume state "
                "(NAME.resume.h5 of output.name NAME): choose another",
                cfg->output.name);
  if (!cfg->output.name[0] || strchr(cfg->output.name, '/'))
    check_error(&check,
                "output.name = \"%s\": expected a file name stem without '/' (output.dir "
                "chooses the directory)",
                cfg->output.name);
  else if (!printable_text(cfg->output.name))
    check_error(&check,
                "output.name = \"%s\" holds control characters or bytes that are not UTF-8: "
                "the names of the outputs, and the XDMF sidecar and report that quote them, "
                "need printable text",
                cfg->output.name);
  if (only_space(cfg->output.dir))
    check_error(&check, "output.dir is empty: give a directory (\".\" for the current one)");

  /* The grid is always the deck's (a model file must match it), so positions can be
   * checked here, before anything is read; not the source's coordinates a shot layout
   * ignores (check_shots names them: x and y under grid, all three under file). */
  static const char *const source_keys[3] = {"source.x", "source.y", "source.z"};
  for (int a = rtm_config_source_axes_placed(cfg); a < 3; ++a)
    check_inside(&check, cfg, source_keys[a], a, cfg->source.position_m[a]);
  if (plane) {
    check_inside(&check, cfg, "receivers.z", 2, cfg->receivers.z_m);
    check_inside(&check, cfg, "receivers.x_first", 0, cfg->receivers.x_first_m);
    check_inside(&check, cfg, "receivers.y_first", 1, cfg->receivers.y_first_m);
  }
  if (cfg->receivers.layout == RTM_RECEIVERS_PATCH) {
    check_inside(&check, cfg, "receivers.z", 2, cfg->receivers.z_m);
    check_patch(&check, cfg);
  }
  if ((plane || cfg->receivers.layout == RTM_RECEIVERS_PATCH) &&
      (long long)cfg->receivers.x_count * cfg->receivers.y_count > INT_MAX / 3)
    check_error(&check, "receivers.x_count x receivers.y_count = %d x %d: too many receivers",
                cfg->receivers.x_count, cfg->receivers.y_count);
  check_shots(&check, cfg);

  /* snapshots.fields and receivers.fields are each one of p, q, p,q (the schema checks the
   * spelling); iso has no q */
  if (cfg->physics.equation == RTM_EQUATION_ISO) {
    const struct {
      const char *key, *value;
    } lists[] = {{"snapshots.fields", cfg->snapshots.fields},
                 {"receivers.fields", cfg->receivers.fields}};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; ++k)
      if (strchr(lists[k].value, 'q'))
        check_error(&check,
                    "%s = %s: physics.equation = iso has no field q (record p, or use "
                    "vti or tti)",
                    lists[k].key, lists[k].value);
  }
  if (cfg->physics.equation == RTM_EQUATION_ISO && !cfg->model.file[0] &&
      (cfg->model.epsilon != 0.0 || cfg->model.delta != 0.0))
    check_warning(&check, "model.epsilon and model.delta are ignored by physics.equation = iso");
  if (cfg->physics.equation != RTM_EQUATION_TTI && !cfg->model.file[0] &&
      (cfg->model.theta_deg != 0.0 || cfg->model.phi_deg != 0.0))
    check_warning(&check, "model.theta and model.phi are used only by physics.equation = tti");
  if (cfg->physics.equation == RTM_EQUATION_ISO &&
      cfg->memory.model_precision != RTM_PRECISION_FP32)
    check_warning(&check,
                  "memory.model_precision = %s is ignored by physics.equation = iso (it "
                  "applies to the vti/tti coefficient volumes)",
                  rtm_precision_name(cfg->memory.model_precision));
  check_gathers(&check, cfg);
  if (cfg->snapshots.every_steps > cfg->time.steps)
    check_warning(&check, "snapshots.every = %d exceeds time.steps = %d: no snapshot is written",
                  cfg->snapshots.every_steps, cfg->time.steps);

  return check.errors ? RTM_ERR_CONFIG : RTM_OK;
}

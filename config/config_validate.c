/* config_validate.c - checks that involve more than one key, run once the deck and every
 * --set override are in. Every problem is reported before the call fails. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rtm_config.h"
#include "rtm_status.h"

typedef struct {
  const char *where; /* the deck's path, or a stand-in for defaults and --set only */
  int errors;
} checker_t;

static void check_error(checker_t *check, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void check_error(checker_t *check, const char *fmt, ...) {
  char message[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  rtm_log_error("%s: %s", check->where, message);
  ++check->errors;
}

/* A coordinate given by the user (not auto) must lie on the grid's span of cell centres. */
static void check_inside(checker_t *check, const rtm_config_t *cfg, const char *key, int axis,
                         double coordinate_m) {
  static const char *const names[3][3] = {
      {"nx", "dx", "ox"}, {"ny", "dy", "oy"}, {"nz", "dz", "oz"}};
  if (isnan(coordinate_m)) return;
  double low = cfg->grid.origin_m[axis];
  double high = low + (cfg->grid.n[axis] - 1) * cfg->grid.spacing_m[axis];
  if (coordinate_m < low || coordinate_m > high)
    check_error(check,
                "%s = %g m lies outside the volume, [%g, %g] m from grid.%s, grid.%s and grid.%s",
                key, coordinate_m, low, high, names[axis][2], names[axis][0], names[axis][1]);
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
    rtm_log_warning("%s: shots.file is ignored unless shots.layout = file", check->where);

  char grid_keys[256] = "";
  if (!isnan(cfg->shots.x_first_m)) append_key(grid_keys, sizeof grid_keys, "shots.x_first");
  if (!isnan(cfg->shots.x_step_m)) append_key(grid_keys, sizeof grid_keys, "shots.x_step");
  if (cfg->shots.x_count != 1) append_key(grid_keys, sizeof grid_keys, "shots.x_count");
  if (!isnan(cfg->shots.y_first_m)) append_key(grid_keys, sizeof grid_keys, "shots.y_first");
  if (!isnan(cfg->shots.y_step_m)) append_key(grid_keys, sizeof grid_keys, "shots.y_step");
  if (cfg->shots.y_count != 1) append_key(grid_keys, sizeof grid_keys, "shots.y_count");
  if (!isnan(cfg->shots.z_m)) append_key(grid_keys, sizeof grid_keys, "shots.z");
  if (layout != RTM_SHOTS_GRID && grid_keys[0])
    rtm_log_warning("%s: %s ignored unless shots.layout = grid (shots.layout = %s)", check->where,
                    grid_keys, layout_name);

  if (layout == RTM_SHOTS_GRID) {
    check_inside(check, cfg, "shots.x_first", 0, cfg->shots.x_first_m);
    check_inside(check, cfg, "shots.y_first", 1, cfg->shots.y_first_m);
    check_inside(check, cfg, "shots.z", 2, cfg->shots.z_m);
    /* NAN when either is auto: check_inside skips it */
    if (cfg->shots.x_count > 1)
      check_inside(check, cfg, "shots.x_first + (x_count - 1) x_step (the last shot's x)", 0,
                   cfg->shots.x_first_m + (cfg->shots.x_count - 1) * cfg->shots.x_step_m);
    if (cfg->shots.y_count > 1)
      check_inside(check, cfg, "shots.y_first + (y_count - 1) y_step (the last shot's y)", 1,
                   cfg->shots.y_first_m + (cfg->shots.y_count - 1) * cfg->shots.y_step_m);
  }
  if (layout != RTM_SHOTS_SINGLE && cfg->snapshots.every_steps > 0)
    check_error(check,
                "snapshots.every = %d with shots.layout = %s: runs of many shots write no "
                "snapshots (yet); set snapshots.every = 0, or shots.layout = single",
                cfg->snapshots.every_steps, layout_name);
  const int ignored_axes = layout == RTM_SHOTS_GRID ? 2 : layout == RTM_SHOTS_FILE ? 3 : 0;
  for (int a = 0; a < ignored_axes; ++a)
    if (!isnan(cfg->source.position_m[a]))
      rtm_log_warning("%s: source.%c is ignored by shots.layout = %s, which places the shots%s",
                      check->where, "xyz"[a], layout_name,
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
      rtm_log_warning("%s: receivers.%s_count = %d at %s_step = %g m spans %g m, more than the "
                      "volume's %g m (grid.%s, grid.%s): a patch loses receivers at every shot",
                      check->where, names[a][0], counts[a], names[a][0], step, patch, volume,
                      names[a][1], names[a][2]);
  }
}

int rtm_config_validate(const rtm_config_t *cfg) {
  checker_t check = {cfg->path[0] ? cfg->path : "configuration", 0};
  const int plane = cfg->receivers.layout == RTM_RECEIVERS_PLANE;

  if (cfg->receivers.layout == RTM_RECEIVERS_FILE && only_space(cfg->receivers.file))
    check_error(&check, "receivers.layout = file needs receivers.file (one \"x y z\" per line)");
  if (cfg->receivers.layout != RTM_RECEIVERS_FILE && cfg->receivers.file[0])
    rtm_log_warning("%s: receivers.file is ignored unless receivers.layout = file", check.where);
  if (cfg->model.file[0] && only_space(cfg->model.file))
    check_error(&check,
                "model.file = \"%s\" is blank: give a path, or leave it empty for the "
                "constant model (model.vp, model.epsilon, ...)",
                cfg->model.file);

  /* kernel.block_x x kernel.block_y is a tile of cells; how many threads run it depends on
   * the kernel (iso: block_x / 4 x block_y, vti/tti: one per cell), so each cuda kernel
   * checks its own shape when the backend is created, before anything is written. */

  if (!cfg->output.name[0] || strchr(cfg->output.name, '/'))
    check_error(&check,
                "output.name = \"%s\": expected a file name stem without '/' (output.dir "
                "chooses the directory)",
                cfg->output.name);
  if (only_space(cfg->output.dir))
    check_error(&check, "output.dir is empty: give a directory (\".\" for the current one)");

  /* The grid is always the deck's (a model file must match it), so positions can be
   * checked here, before anything is read. */
  check_inside(&check, cfg, "source.x", 0, cfg->source.position_m[0]);
  check_inside(&check, cfg, "source.y", 1, cfg->source.position_m[1]);
  check_inside(&check, cfg, "source.z", 2, cfg->source.position_m[2]);
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
    rtm_log_warning("%s: model.epsilon and model.delta are ignored by physics.equation = iso",
                    check.where);
  if (cfg->physics.equation != RTM_EQUATION_TTI && !cfg->model.file[0] &&
      (cfg->model.theta_deg != 0.0 || cfg->model.phi_deg != 0.0))
    rtm_log_warning("%s: model.theta and model.phi are used only by physics.equation = tti",
                    check.where);
  if (cfg->physics.equation == RTM_EQUATION_ISO &&
      cfg->memory.model_precision != RTM_PRECISION_FP32)
    rtm_log_warning("%s: memory.model_precision = %s is ignored by physics.equation = iso (it "
                    "applies to the vti/tti coefficient volumes)",
                    check.where, rtm_precision_name(cfg->memory.model_precision));
  if (cfg->snapshots.every_steps > cfg->time.steps)
    rtm_log_warning("%s: snapshots.every = %d exceeds time.steps = %d: no snapshot is written",
                    check.where, cfg->snapshots.every_steps, cfg->time.steps);

  return check.errors ? RTM_ERR_CONFIG : RTM_OK;
}

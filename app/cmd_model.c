/* rtm3d model CONFIG: forward modelling. Sets up the propagator, runs the time loop with
 * snapshots and progress, writes the HDF5 output and the JSON run report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "progress.h"
#include "rtm_io.h"
#include "rtm_propagator.h"
#include "rtm_status.h"
#include "solver_io.h"
#include "rtm_traces.h"
#include "rtm_version.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d model CONFIG [--set section.key=value ...] [--quiet]\n\n"
          "Forward modelling: propagates a Ricker source through the model of CONFIG and\n"
          "writes OUTPUT.h5 (snapshots /snapshots/p, and /snapshots/q for vti/tti when\n"
          "snapshots.fields asks, every snapshots.every steps; the gather /traces/p, and\n"
          "/traces/q for vti/tti when receivers.fields asks, with /traces/receivers) and\n"
          "OUTPUT.json (timings, MCells/s, memory), where OUTPUT = output.dir/output.name.\n\n"
          "  --set k=v   override one key of the deck (repeatable), e.g. --set time.steps=200\n"
          "  --quiet     no progress output\n\n"
          "'rtm3d help-config' lists every key.\n");
}

static int all_finite(const float *values, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (!isfinite(values[i])) return 0;
  return 1;
}

int rtm_cmd_model(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
  int status = RTM_OK, quiet = 0;
  rtm_config_t *cfg = calloc(1, sizeof *cfg);
  rtm_grid_t grid;
  rtm_model_t model = {0};
  rtm_propagator_t prop = {0};
  rtm_output_t *output = NULL;
  float *field = NULL, *traces = NULL, *resampled = NULL, *dry_in = NULL, *dry_out = NULL;
  char *config_text = NULL;
  char h5_path[2 * RTM_CONFIG_PATH_MAX], json_path[2 * RTM_CONFIG_PATH_MAX], device[256] = "";
  rtm_timing_t timings[4];
  double t0 = rtm_wall_seconds();

  if (!cfg) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  RTM_TRY(rtm_app_load_config(argc, argv, cfg, &quiet, NULL, NULL));
  const unsigned snapshot_fields = rtm_field_mask(cfg->snapshots.fields);
  /* TTI grows where the tilt changes from cell to cell (rtm_anisotropy.h) */
  const char *unstable_hint =
      cfg->physics.equation == RTM_EQUATION_TTI
          ? " (tti: a tilt that changes sharply grows; raise physics.smooth_angles)"
          : "";
  RTM_TRY(rtm_grid_init(&grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  RTM_TRY(rtm_app_load_model(cfg, &grid, &model));
  RTM_TRY(rtm_propagator_create(cfg, &grid, &model, &prop));
  /* Gathers resampled to output.trace_dt go through the trace pipeline; a ratio it cannot
   * represent is refused now, before the propagation, on a one-trace dry run. */
  const int samples = prop.steps + 1;
  const int resample =
      !isnan(cfg->output.trace_dt_s) && fabs(cfg->output.trace_dt_s - prop.dt_s) > 1e-9 * prop.dt_s;
  const double trace_dt = resample ? cfg->output.trace_dt_s : prop.dt_s;
  const int trace_samples =
      resample ? (int)floor(prop.steps * prop.dt_s / trace_dt + 1e-9) + 1 : samples;
  if (resample && prop.receivers.count > 0) {
    dry_in = calloc((size_t)samples, sizeof *dry_in);
    dry_out = calloc((size_t)trace_samples, sizeof *dry_out);
    if (!dry_in || !dry_out) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
    if (rtm_traces_resample("cpu", 1, samples, prop.dt_s, dry_in, trace_samples, trace_dt,
                            dry_out) != RTM_OK)
      RTM_FAIL(RTM_ERR_CONFIG, "output.trace_dt = %g s cannot be reached from dt = %g s", trace_dt,
               prop.dt_s);
  }
  if (prop.backend->describe) prop.backend->describe(prop.state, device, sizeof device);

  snprintf(h5_path, sizeof h5_path, "%s/%s.h5", cfg->output.dir, cfg->output.name);
  snprintf(json_path, sizeof json_path, "%s/%s.json", cfg->output.dir, cfg->output.name);
  config_text = rtm_config_echo_string(cfg);
  if (!config_text) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  rtm_run_info_t info = {RTM3D_VERSION, RTM3D_GIT_REVISION, prop.backend->name, device,
                         config_text};
  const rtm_io_volume_t volume = rtm_app_volume(&grid);
  RTM_TRY(rtm_output_create(h5_path, &volume, &info, &output));

  const int every = cfg->snapshots.every_steps, steps = prop.steps;
  const int snapshot_count = every > 0 ? steps / every : 0;
  const size_t cells = rtm_grid_interior_cells(&grid);
  field = malloc(cells * sizeof *field);
  if (!field) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a %zu-cell snapshot buffer", cells);
  if (snapshot_count > 0 && (snapshot_fields & RTM_FIELD_BIT(RTM_FIELD_P)))
    RTM_TRY(rtm_output_snapshots_begin(output, "p", snapshot_count));
  if (snapshot_count > 0 && (snapshot_fields & RTM_FIELD_BIT(RTM_FIELD_Q)))
    RTM_TRY(rtm_output_snapshots_begin(output, "q", snapshot_count));

  if (!quiet)
    rtm_log_info("model: %d x %d x %d cells, %d steps of %.4g ms, backend %s%s%s, %d receivers",
                 grid.n[0], grid.n[1], grid.n[2], steps, prop.dt_s * 1e3, prop.backend->name,
                 device[0] ? " on " : "", device, prop.receivers.count);
  double t_setup = rtm_wall_seconds();
  double snapshot_s = 0.0;
  rtm_progress_t progress;
  rtm_progress_begin(&progress, steps, (double)cells, quiet);
  for (int it = 0; it < steps; ++it) {
    RTM_TRY(prop.backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD));
    int level = it + 1;
    if (every > 0 && level % every == 0 && level / every <= snapshot_count) {
      double ts = rtm_wall_seconds();
      for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
        if (!(snapshot_fields & RTM_FIELD_BIT(f))) continue;
        RTM_TRY(prop.backend->read_field(prop.state, (rtm_field_t)f, RTM_LEVEL_CURRENT, field));
        if (!all_finite(field, cells))
          RTM_FAIL(RTM_ERR_NUMERIC,
                   "the wavefield is not finite at step %d: the run is "
                   "unstable%s",
                   level, unstable_hint);
        RTM_TRY(rtm_output_write_snapshot(output, rtm_field_name((rtm_field_t)f), level / every - 1,
                                          level, level * prop.dt_s, field));
      }
      snapshot_s += rtm_wall_seconds() - ts;
    }
    rtm_progress_update(&progress, it + 1);
  }
  if (prop.backend->synchronize) RTM_TRY(prop.backend->synchronize(prop.state));
  rtm_progress_end(&progress);
  double t_loop = rtm_wall_seconds();

  RTM_TRY(prop.backend->read_field(prop.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, field));
  if (!all_finite(field, cells))
    RTM_FAIL(RTM_ERR_NUMERIC, "the final wavefield is not finite: the run is unstable%s",
             unstable_hint);
  if (prop.receivers.count > 0) {
    const size_t count = (size_t)prop.receivers.count;
    traces = malloc(count * (size_t)samples * sizeof *traces);
    if (!traces) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %zu traces", count);
    if (resample) {
      resampled = malloc(count * (size_t)trace_samples * sizeof *resampled);
      if (!resampled) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %zu resampled traces", count);
    }
    /* /traces/<field> for each field receivers.fields asks for, the same way */
    for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
      if (!(prop.trace_fields & RTM_FIELD_BIT(f))) continue;
      const char *name = rtm_field_name((rtm_field_t)f);
      RTM_TRY(prop.backend->read_traces(prop.state, (rtm_field_t)f, traces));
      if (!all_finite(traces, count * (size_t)samples))
        RTM_FAIL(RTM_ERR_NUMERIC,
                 "the recorded traces of %s are not finite: the run is "
                 "unstable%s",
                 name, unstable_hint);
      const float *written = traces;
      if (resample) {
        RTM_TRY(rtm_traces_resample(strcmp(prop.backend->name, "cuda") == 0 ? "cuda" : "cpu",
                                    (int)count, samples, prop.dt_s, traces, trace_samples, trace_dt,
                                    resampled));
        written = resampled;
      }
      RTM_TRY(rtm_output_write_traces(output, name, written, (int)count, trace_samples, trace_dt,
                                      prop.receivers.position_m));
    }
  }
  status = rtm_output_close(output, 1); /* frees the output whatever it returns */
  output = NULL;
  RTM_TRY(status);
  double t_end = rtm_wall_seconds();

  double propagate_s = (t_loop - t_setup) - snapshot_s;
  double mcells = propagate_s > 0.0 ? (double)cells * steps / propagate_s * 1e-6 : 0.0;
  timings[0] = (rtm_timing_t){"setup", t_setup - t0};
  timings[1] = (rtm_timing_t){"propagate", propagate_s};
  timings[2] = (rtm_timing_t){"snapshots", snapshot_s};
  timings[3] = (rtm_timing_t){"write", t_end - t_loop};
  rtm_report_t report = {.command = "model",
                         .info = &info,
                         .steps = steps,
                         .dt_s = prop.dt_s,
                         .model_precision = rtm_precision_name(rtm_config_model_precision(cfg)),
                         .timings = timings,
                         .timing_count = 4,
                         .mcells_per_s = mcells,
                         .output_path = h5_path};
  RTM_TRY(rtm_app_write_report(json_path, &report, &grid, &prop.ledger));
  if (!quiet) {
    rtm_log_info("done in %.2f s: propagation %.2f s, %.1f MCells/s", t_end - t0, propagate_s,
                 mcells);
    rtm_log_info("wrote %s and %s", h5_path, json_path);
  }
fail:
  if (output) rtm_output_close(output, 0);
  rtm_propagator_destroy(&prop);
  rtm_model_release(&model);
  free(traces);
  free(resampled);
  free(dry_in);
  free(dry_out);
  free(field);
  free(config_text);
  free(cfg);
  return rtm_status_exit_code(status);
}

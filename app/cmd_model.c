/* rtm3d model CONFIG: forward modelling. Sets up the propagator, runs the time
 * loop with snapshots and progress, writes the HDF5 output and the JSON run
 * report. With shots.layout = grid or file it runs every shot on the one
 * propagator, moved from shot to shot (rtm_propagator_set_shot), and writes the
 * many-shot layout (/shots/<k>/...). The gathers reach the file through
 * solver/rtm_gathers.h (streamed while the steps run, or collected after them,
 * and between shot groups). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "progress.h"
#include "rtm_gathers.h"
#include "rtm_io.h"
#include "rtm_mpi.h"
#include "rtm_propagator.h"
#include "rtm_status.h"
#include "rtm_version.h"
#include "solver_io.h"

static void usage(FILE *out) {
  fprintf(out, "usage: rtm3d model CONFIG [--set section.key=value ...] "
               "[--quiet] [--force]\n\n"
               "Forward modelling: propagates a Ricker source through the "
               "model of CONFIG and\n"
               "writes OUTPUT.h5 (snapshots /snapshots/p, and /snapshots/q for "
               "vti/tti when\n"
               "snapshots.fields asks, every snapshots.every steps; the gather "
               "/traces/p, and\n"
               "/traces/q for vti/tti when receivers.fields asks, with "
               "/traces/receivers) and\n"
               "OUTPUT.json (timings, MCells/s, memory), where OUTPUT = "
               "output.dir/output.name.\n"
               "shots.layout = grid or file runs many shots and writes each "
               "one's gathers as\n"
               "/shots/<k>/traces/<field> with /shots/<k>/source and "
               "/shots/<k>/receivers.\n\n"
               "  --set k=v   override one key of the deck (repeatable), e.g. "
               "--set time.steps=200\n"
               "  --quiet     errors alone: no progress, warnings or summary\n"
               "  --force     replace OUTPUT.h5 when it exists "
               "(output.overwrite = true)\n\n"
               "'rtm3d help-config' lists every key.\n");
}

/* The state of one modelling run, shared by its phases. */
typedef struct {
  rtm_config_t cfg;
  int quiet;
  unsigned snapshot_fields;
  const char *unstable_hint; /* appended to the messages that report an unstable run */
  rtm_grid_t grid;           /* this rank's slab under MPI */
  rtm_grid_t whole_grid;     /* the volume */
  rtm_model_t model;
  rtm_propagator_t prop;
  rtm_shots_t shots;
  int many_shots;                /* shots.layout grid or file: the many-shot layout, whatever
                                    the count */
  double *shot_seconds;          /* [3][shots.count]: set_shot, propagate, write of each
                                    shot */
  rtm_trace_sampling_t sampling; /* the gathers: as recorded, as written */
  char device[256];
  char h5_path[2 * RTM_CONFIG_PATH_MAX], json_path[2 * RTM_CONFIG_PATH_MAX];
  char segy_path[2 * RTM_CONFIG_PATH_MAX]; /* output.segy: the gathers again, as
                                              SEG-Y */
  char *config_text;
  rtm_run_info_t info;
  rtm_output_t *output;
  rtm_io_name_lock_t lock;   /* rank 0: output.dir/output.name held from set-up to the end */
  rtm_io_outputs_t *outputs; /* rank 0: the files written, renamed together at the end */
  int every, snapshot_count;
  int root;           /* rank 0 (or the only rank): it writes the file and the report */
  int shot_lines;     /* a line per shot: each group's first rank, unless --quiet */
  size_t cells;       /* of the whole grid: the rates */
  size_t local_cells; /* of this rank's slab */
  float *field;       /* this rank's slab of one volume: snapshots and the final check */
  float *slab_buffer; /* rank 0 under MPI: another rank's slab on its way to the
                         file */
  double start_s, setup_end_s, loop_end_s, end_s, snapshot_s;
  double setup_s, propagate_s, write_s; /* the report's phases, summed over the shots */
  double loaded_s, created_s;           /* setup's parts: deck and model, then the propagator */
  rtm_trace_stream_t *stream;           /* the gathers streamed to the file while the steps run */
  double correct_s;                     /* time.dispersion_correction's warps of the traces (within
                                           write) */
  rtm_timing_t rank_timings[RTM_APP_RANK_TIMINGS]; /* under MPI: the phases over
                                                      the ranks */
  char *rank_lines; /* rank 0 under MPI: [ranks][RANK_LINE] "rank r: host,
                       device" */
} model_run_t;

static int wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
  return 0;
}

static int check_shot_groups(const model_run_t *run);

static int set_up_propagator(model_run_t *run, int argc, char **argv) {
  int status = RTM_OK;
  rtm_config_t *cfg = &run->cfg;
  RTM_TRY(rtm_app_load_config(argc, argv, cfg, &run->quiet, NULL, NULL));
  snprintf(run->h5_path, sizeof run->h5_path, "%s/%s.h5", cfg->output.dir, cfg->output.name);
  RTM_TRY(rtm_app_claim_output(cfg, run->h5_path, &run->lock)); /* before any work */
  run->snapshot_fields = rtm_field_mask(cfg->snapshots.fields);
  /* TTI grows where the tilt changes from cell to cell (rtm_anisotropy.h) */
  run->unstable_hint = cfg->physics.equation == RTM_EQUATION_TTI
                           ? " (tti: a tilt that changes sharply grows; raise "
                             "physics.smooth_angles)"
                           : "";
  RTM_TRY(rtm_grid_init(&run->grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  RTM_TRY(rtm_mpi_split_groups(cfg->mpi.shot_groups)); /* refused alike on every rank */
  run->root = rtm_mpi_world_rank() == 0;
  run->shot_lines = !run->quiet && rtm_mpi_rank() == 0;
  run->quiet = run->quiet || !run->root; /* one progress line, rank 0's */
  run->whole_grid = run->grid;           /* the file and the report describe the whole volume */
  RTM_TRY(rtm_app_slab(&run->grid));
  RTM_TRY(rtm_app_load_model(cfg, &run->grid, &run->model));
  /* every shot is placed before the first step: one outside the volume stops
   * the run here */
  RTM_TRY(rtm_shots_init(cfg, &run->grid, &run->shots));
  run->many_shots = cfg->shots.layout != RTM_SHOTS_SINGLE;
  RTM_TRY(check_shot_groups(run));
  run->shot_seconds = calloc(3 * (size_t)run->shots.count, sizeof *run->shot_seconds);
  if (!run->shot_seconds) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d shots", run->shots.count);
  run->loaded_s = rtm_wall_seconds();
  RTM_TRY(rtm_propagator_create(cfg, &run->grid, &run->model, &run->prop));
  run->created_s = rtm_wall_seconds();
fail:
  return status;
}

/* mpi.shot_groups > 1 needs the many-shot layout (which writes no snapshots)
 * and a shot for every group; refused on every rank alike. */
static int check_shot_groups(const model_run_t *run) {
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  const int groups = cfg->mpi.shot_groups;
  if (groups == 1) return RTM_OK;
  if (!run->many_shots)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: mpi.shot_groups = %d shares shots among groups of ranks, and "
             "shots.layout = "
             "single has one: set shots.layout = grid or file, or "
             "mpi.shot_groups = 1",
             cfg->path, groups);
  if (run->shots.count < groups)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: mpi.shot_groups = %d for %d shots would leave groups idle: "
             "at most %d",
             cfg->path, groups, run->shots.count, run->shots.count);
fail:
  return status;
}

/* A window of the streamed gathers into the file: the writer thread's call
 * (rtm_gathers.h). */
static int write_window(void *context, rtm_field_t field, const float *window, int receivers,
                        int first, int count) {
  model_run_t *run = context;
  return rtm_output_traces_window(run->output, rtm_field_name(field), window, receivers, first,
                                  count);
}

/* OUTPUT.h5 with the run's provenance, the snapshot buffer and the snapshot
 * datasets (and, streaming, the trace datasets and their writer). */
static int open_output(model_run_t *run) {
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  const rtm_propagator_t *prop = &run->prop;
  if (prop->backend->describe)
    prop->backend->describe(prop->state, run->device, sizeof run->device);
  snprintf(run->h5_path, sizeof run->h5_path, "%s/%s.h5", cfg->output.dir, cfg->output.name);
  snprintf(run->json_path, sizeof run->json_path, "%s/%s.json", cfg->output.dir, cfg->output.name);
  run->config_text = rtm_config_echo_string(cfg);
  if (!run->config_text) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  run->info = (rtm_run_info_t){RTM3D_VERSION, RTM3D_GIT_REVISION, prop->backend->name,
                               run->device,   run->config_text,   rtm_app_command_line()};
  run->every = cfg->snapshots.every_steps;
  run->snapshot_count = run->every > 0 ? prop->steps / run->every : 0;
  run->local_cells = rtm_grid_interior_cells(&run->grid);
  run->cells = rtm_grid_interior_cells(&run->whole_grid);
  run->field = rtm_mem_host_large(run->local_cells * sizeof *run->field);
  if (!run->field)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a %zu-cell snapshot buffer", run->local_cells);
  if (!run->root) return RTM_OK; /* rank 0 writes */
  /* the outputs' size, weighed against the disk before the first step:
   * snapshots of each field, every shot's gathers and receiver positions, the
   * SEG-Y copy of the gathers (its 240-byte trace headers), and 1 MB for the
   * metadata, the sidecar and the report */
  const double traces = (double)run->shots.count * prop->receivers.count;
  const double gather_bytes =
      4.0 * traces * rtm_field_count(prop->trace_fields) * run->sampling.trace_samples;
  const double file_bytes =
      4.0 * (double)run->snapshot_count * rtm_field_count(run->snapshot_fields) * run->cells +
      gather_bytes + 24.0 * traces +
      (run->segy_path[0] ? 4.0 * traces * run->sampling.trace_samples + 240.0 * traces + 3600.0
                         : 0.0) +
      1e6;
  RTM_TRY(rtm_app_check_disk(cfg->output.dir, file_bytes,
                             "raise snapshots.every, snapshot fewer snapshots.fields, record "
                             "fewer receivers, or set output.dir on a larger disk"));
  const size_t slab_cells = rtm_app_slab_buffer_cells(&run->grid);
  if (slab_cells > 0 && run->snapshot_count > 0) {
    /* the other ranks' slabs come one at a time (rtm_app_write_slabs): room for
     * the largest */
    run->slab_buffer = malloc(slab_cells * sizeof *run->slab_buffer);
    if (!run->slab_buffer)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a %zu-cell slab of the snapshots", slab_cells);
  }
  const rtm_io_volume_t volume = rtm_app_volume(&run->whole_grid);
  RTM_TRY(rtm_app_create_output(run->h5_path, &volume, &run->info, &run->output));
  for (int f = RTM_FIELD_P; run->stream && f <= RTM_FIELD_Q; ++f)
    if (prop->trace_fields & RTM_FIELD_BIT(f))
      RTM_TRY(rtm_output_traces_begin(
          run->output, rtm_field_name((rtm_field_t)f), prop->receivers.count, run->sampling.samples,
          rtm_trace_stream_window(run->stream), prop->dt_s, prop->receivers.position_m));
  if (run->stream)
    RTM_TRY(rtm_trace_stream_start(run->stream, write_window, run, run->unstable_hint));
  if (run->snapshot_count > 0 && (run->snapshot_fields & RTM_FIELD_BIT(RTM_FIELD_P)))
    RTM_TRY(rtm_output_snapshots_begin(run->output, "p", run->snapshot_count));
  if (run->snapshot_count > 0 && (run->snapshot_fields & RTM_FIELD_BIT(RTM_FIELD_Q)))
    RTM_TRY(rtm_output_snapshots_begin(run->output, "q", run->snapshot_count));
fail:
  return status;
}

/* Snapshot `level / every - 1` of each field snapshots.fields asks for: each
 * rank's slab written collectively, or by rank 0 as it comes (rank 0 never
 * holds the volume). */
static int write_snapshots(model_run_t *run, int level) {
  int status = RTM_OK;
  const rtm_propagator_t *prop = &run->prop;
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (!(run->snapshot_fields & RTM_FIELD_BIT(f))) continue;
    RTM_TRY(prop->backend->read_field(prop->state, (rtm_field_t)f, RTM_LEVEL_CURRENT, run->field));
    if (!rtm_values_finite(run->field, run->local_cells))
      RTM_FAIL(RTM_ERR_NUMERIC, "the wavefield is not finite at step %d: the run is unstable%s",
               level, run->unstable_hint);
    const rtm_app_slab_target_t snapshot = {rtm_field_name((rtm_field_t)f), level / run->every - 1,
                                            level, level * prop->dt_s};
    rtm_trace_stream_lock(run->stream); /* the file is the writer thread's too */
    status = rtm_app_write_slabs(&run->grid, run->output, run->h5_path, &snapshot, run->field,
                                 run->slab_buffer);
    rtm_trace_stream_unlock(run->stream);
    if (status != RTM_OK) goto fail;
  }
fail:
  return status;
}

static void print_run_line(const model_run_t *run) {
  const rtm_propagator_t *prop = &run->prop;
  if (run->quiet) return;
  if (run->many_shots)
    rtm_log_info("model: %d shots, %d x %d x %d cells, %d steps of %.4g ms "
                 "each, backend %s%s%s",
                 run->shots.count, run->grid.n[0], run->grid.n[1], run->grid.n[2], prop->steps,
                 prop->dt_s * 1e3, prop->backend->name, run->device[0] ? " on " : "", run->device);
  else
    rtm_log_info("model: %d x %d x %d cells, %d steps of %.4g ms, backend "
                 "%s%s%s, %d receivers",
                 run->grid.n[0], run->grid.n[1], run->grid.n[2], prop->steps, prop->dt_s * 1e3,
                 prop->backend->name, run->device[0] ? " on " : "", run->device,
                 prop->receivers.count);
}

/* The time loop of one shot, with snapshots and progress (steps_before: the
 * steps of the shots before it); the time spent on snapshots is kept apart. */
static int propagate(model_run_t *run, rtm_progress_t *progress, int steps_before) {
  int status = RTM_OK;
  rtm_propagator_t *prop = &run->prop;
  const int steps = prop->steps, every = run->every;
  for (int it = 0; it < steps; ++it) {
    RTM_TRY(rtm_propagator_step(prop, it, RTM_FORWARD));
    int level = it + 1;
    if (every > 0 && level % every == 0 && level / every <= run->snapshot_count) {
      double snapshot_start_s = rtm_wall_seconds();
      RTM_TRY(write_snapshots(run, level));
      run->snapshot_s += rtm_wall_seconds() - snapshot_start_s;
    }
    if (run->stream) RTM_TRY(rtm_trace_stream_step(run->stream, it));
    if (rtm_progress_due(progress, steps_before + it + 1) && prop->backend->synchronize)
      RTM_TRY(prop->backend->synchronize(prop->state)); /* the rate of steps done */
    rtm_progress_update(progress, steps_before + it + 1);
  }
  if (prop->backend->synchronize) RTM_TRY(prop->backend->synchronize(prop->state));
fail:
  return status;
}

static int check_final_wavefield(model_run_t *run) {
  int status = RTM_OK;
  const rtm_propagator_t *prop = &run->prop;
  size_t nonfinite = 0;
  if (prop->backend->count_nonfinite) { /* on the device: 8 bytes back, not the volume */
    RTM_TRY(
        prop->backend->count_nonfinite(prop->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &nonfinite));
  } else {
    RTM_TRY(prop->backend->read_field(prop->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, run->field));
    nonfinite = !rtm_values_finite(run->field, run->local_cells);
  }
  if (nonfinite)
    RTM_FAIL(RTM_ERR_NUMERIC, "the final wavefield is not finite: the run is unstable%s",
             run->unstable_hint);
fail:
  return status;
}

/* /traces/<field> with the source (shot < 0), or /shots/<shot>/traces/<field>
 * with the shot's source and receivers: the file's first rank writes. */
static int write_shot(void *context, int shot, const rtm_shot_gathers_t *g) {
  model_run_t *run = context;
  int status = RTM_OK;
  const rtm_field_t first = g->fields & RTM_FIELD_BIT(RTM_FIELD_P) ? RTM_FIELD_P : RTM_FIELD_Q;
  if (g->count <= 0) {
    if (shot >= 0)
      RTM_TRY(rtm_output_write_shot(run->output, shot, g->source_m, rtm_field_name(first), NULL, 0,
                                    run->sampling.trace_samples, run->sampling.trace_dt, NULL));
  } else {
    const float *samples = g->samples;
    for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
      if (!(g->fields & RTM_FIELD_BIT(f))) continue;
      const char *name = rtm_field_name((rtm_field_t)f);
      if (shot < 0)
        RTM_TRY(rtm_output_write_traces(run->output, name, samples, g->count,
                                        run->sampling.trace_samples, run->sampling.trace_dt,
                                        g->position_m));
      else
        RTM_TRY(rtm_output_write_shot(run->output, shot, g->source_m, name, samples, g->count,
                                      run->sampling.trace_samples, run->sampling.trace_dt,
                                      g->position_m));
      samples += (size_t)g->count * (size_t)run->sampling.trace_samples;
    }
  }
  if (shot < 0) RTM_TRY(rtm_output_write_source(run->output, g->source_m));
fail:
  return status;
}

/* The traces of the shot just propagated into the file (shot < 0: the
 * single-shot layout); streamed ones have their windows not yet copied or
 * written left, and the source. */
static int write_traces(model_run_t *run, int shot) {
  int status = RTM_OK;
  rtm_shot_gathers_t g;
  memset(&g, 0, sizeof g);
  if (run->stream) {
    RTM_TRY(rtm_trace_stream_finish(run->stream));
    RTM_TRY(rtm_output_write_source(run->output, run->prop.source_position_m));
    return RTM_OK;
  }
  RTM_TRY(rtm_gathers_collect(&run->prop, &run->sampling, run->unstable_hint, &g, &run->correct_s));
  if (run->root) RTM_TRY(write_shot(run, shot, &g));
fail:
  rtm_gathers_release(&g);
  return status;
}

/* One shot at the [source] position: /snapshots and /traces, today's layout. */
static int run_single_shot(model_run_t *run) {
  int status = RTM_OK;
  rtm_progress_t progress;
  print_run_line(run);
  run->setup_end_s = rtm_wall_seconds();
  rtm_progress_begin(&progress, run->prop.steps, (double)run->cells, run->quiet);
  RTM_TRY(propagate(run, &progress, 0));
  rtm_progress_end(&progress);
  run->loop_end_s = rtm_wall_seconds();
  RTM_TRY(check_final_wavefield(run));
  RTM_TRY(write_traces(run, -1));
  run->setup_s = run->setup_end_s - run->start_s;
  run->propagate_s = (run->loop_end_s - run->setup_end_s) - run->snapshot_s;
fail:
  return status;
}

/* Every shot on the one propagator, moved from shot to shot; its gathers under
 * /shots/<k>. With shot groups (mpi.shot_groups = G) group g takes shots g, g +
 * G, ..., a round of G shots at a time, and the gathers of each round are
 * written in shot order. The progress counts the steps of the first group's
 * shots; a line per shot (from each group's first rank) gives its own figures.
 */
static int run_many_shots(model_run_t *run) {
  int status = RTM_OK;
  const int count = run->shots.count, steps = run->prop.steps;
  const int groups = rtm_mpi_groups(), group = rtm_mpi_group();
  double *set_shot_s = run->shot_seconds, *propagate_s = set_shot_s + count;
  double *write_s = propagate_s + count;
  char label[64];
  rtm_progress_t progress;
  rtm_shot_gathers_t gathers = {0};
  print_run_line(run);
  run->setup_end_s = rtm_wall_seconds();
  rtm_progress_begin(&progress, (count + groups - 1) / groups * steps, (double)run->cells,
                     run->quiet);
  for (int round = 0; round * groups < count; ++round) {
    const int k = round * groups + group;
    double propagated_s = rtm_wall_seconds();
    if (k < count) {
      const double *source_m = run->shots.source_m + 3 * (size_t)k;
      const double start_s = rtm_wall_seconds();
      RTM_TRY(rtm_propagator_set_shot(&run->prop, &run->cfg, source_m));
      const double placed_s = rtm_wall_seconds();
      snprintf(label, sizeof label, "shot %d/%d", k + 1, count);
      rtm_progress_label(&progress, label);
      RTM_TRY(propagate(run, &progress, round * steps));
      propagated_s = rtm_wall_seconds();
      RTM_TRY(check_final_wavefield(run));
      RTM_TRY(rtm_gathers_collect(&run->prop, &run->sampling, run->unstable_hint, &gathers,
                                  &run->correct_s));
      set_shot_s[k] = placed_s - start_s;
      propagate_s[k] = propagated_s - placed_s;
      run->setup_s += set_shot_s[k];
      run->propagate_s += propagate_s[k];
      if (run->shot_lines) {
        char who[32] = "";
        if (groups > 1) snprintf(who, sizeof who, "group %d: ", group);
        rtm_log_info_any_rank(
            "%sshot %d/%d at (%g, %g, %g) m: %d receivers, propagation %.2f s, "
            "%.1f "
            "MCells/s",
            who, k + 1, count, source_m[0], source_m[1], source_m[2], run->prop.receivers.count,
            propagate_s[k],
            propagate_s[k] > 0.0 ? (double)run->cells * steps / propagate_s[k] * 1e-6 : 0.0);
      }
    }
    RTM_TRY(rtm_gathers_write_round(&run->sampling, round, count, &gathers, write_shot, run));
    rtm_gathers_release(&gathers);
    if (k < count) {
      write_s[k] = rtm_wall_seconds() - propagated_s;
      run->write_s += write_s[k];
    }
  }
  rtm_progress_end(&progress);
  run->loop_end_s = rtm_wall_seconds();
  run->setup_s += run->setup_end_s - run->start_s;
fail:
  rtm_gathers_release(&gathers);
  return status;
}

/* The run file closed (and SEG-Y written from it) as partial files, listed in
 * run->outputs to be renamed with the report. */
static int close_output(model_run_t *run) {
  int status = RTM_OK;
  char h5_partial[sizeof run->h5_path + 16], segy_partial[sizeof run->segy_path + 16];
  run->end_s = rtm_wall_seconds(); /* a rank without the file ends here (its I/O time) */
  if (!run->root) return RTM_OK;
  status = rtm_output_finish(run->output, run->outputs); /* frees the output either way */
  run->output = NULL;
  if (status == RTM_OK && !run->segy_path[0] && run->cfg.output.overwrite) {
    /* an earlier run's NAME.sgy would sit beside this run's file as if it were
     * its copy */
    char stale[sizeof run->segy_path];
    snprintf(stale, sizeof stale, "%s/%s.sgy", run->cfg.output.dir, run->cfg.output.name);
    RTM_TRY(rtm_io_outputs_drop(run->outputs, stale));
  }
  if (status == RTM_OK && run->segy_path[0]) {
    const unsigned fields = run->prop.trace_fields;
    RTM_TRY(rtm_io_partial_path(run->h5_path, h5_partial, sizeof h5_partial));
    RTM_TRY(rtm_io_outputs_add(run->outputs, run->segy_path, segy_partial, sizeof segy_partial));
    status = rtm_segy_write(h5_partial, fields & RTM_FIELD_BIT(RTM_FIELD_P) ? "p" : "q",
                            segy_partial); /* plan_segy checked it */
  }
  run->end_s = rtm_wall_seconds();
fail:
  return status;
}

/* The gathers go to the file while the steps run when the backend can copy
 * windows of them out (cuda), one rank writes one shot's traces as recorded (no
 * resampling, no time-dispersion warp of whole traces) and there are several
 * windows of about 64 MB (output.stream_window samples instead);
 * output.stream_traces = off writes them after the run instead (the same file,
 * bit for bit: tests/app/cli_stream_gpu.sh). */
static int plan_streaming(model_run_t *run) {
  if (run->many_shots || run->cfg.output.stream_traces == RTM_STREAM_TRACES_OFF) return RTM_OK;
  return rtm_trace_stream_create(&run->prop, &run->sampling, run->cfg.output.stream_window,
                                 &run->stream);
}

/* output.segy = true: SEG-Y can hold these gathers (segyio in the build, the
 * interval in whole microseconds, at most 32767 samples), and dir/name.sgy may
 * be written; before any step. */
static int plan_segy(model_run_t *run) {
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  if (!cfg->output.segy) return RTM_OK;
  if (!rtm_segy_available())
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.segy = true, but this build has no SEG-Y (install "
             "libsegyio-dev and "
             "configure again, or set output.segy = false)",
             cfg->path[0] ? cfg->path : "configuration");
  if (run->prop.receivers.count == 0)
    RTM_FAIL(RTM_ERR_CONFIG, "%s: output.segy = true, but the run records no receivers",
             cfg->path[0] ? cfg->path : "configuration");
  const double us = run->sampling.trace_dt * 1e6;
  if (fabs(us - round(us)) > 1e-6 * us || round(us) < 1 || round(us) > 32767)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.segy = true needs the gathers' interval in whole "
             "microseconds (1 to "
             "32767), and it is %.9g s (output.trace_dt %s): set "
             "output.trace_dt = %g, say",
             cfg->path[0] ? cfg->path : "configuration", run->sampling.trace_dt,
             isnan(cfg->output.trace_dt_s) ? "auto: the modelling dt" : "as set",
             floor(us) > 0 ? floor(us) * 1e-6 : 1e-6);
  if (run->sampling.trace_samples > 32767)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.segy = true: %d samples a trace, SEG-Y rev 1 holds at "
             "most 32767; "
             "raise output.trace_dt",
             cfg->path[0] ? cfg->path : "configuration", run->sampling.trace_samples);
  snprintf(run->segy_path, sizeof run->segy_path, "%s/%s.sgy", cfg->output.dir, cfg->output.name);
  RTM_TRY(rtm_app_check_overwrite(cfg, run->segy_path));
fail:
  return status;
}

/* Under MPI, the ranks' phases (the split steps', the host's wait in the
 * exchange, the I/O) reduced over the ranks for the report. */
static int reduce_rank_phases(model_run_t *run) {
  int status = RTM_OK;
  double seconds[RTM_APP_RANK_PHASES];
  if (rtm_mpi_world_size() == 1) return RTM_OK;
  if (rtm_mpi_groups() > 1) /* each shot's figures are its group's: the file's rank gets them */
    RTM_TRY(rtm_mpi_world_allreduce(run->shot_seconds, 3 * run->shots.count, RTM_MPI_MAX));
  RTM_TRY(rtm_propagator_phase_seconds(&run->prop, seconds));
  seconds[RTM_PHASE_COUNT] = run->prop.halo_s;
  seconds[RTM_PHASE_COUNT + 1] = run->snapshot_s + run->write_s + run->end_s - run->loop_end_s;
  RTM_TRY(rtm_app_rank_timings(seconds, run->rank_timings));
fail:
  return status;
}

/* OUTPUT.json: the phases' times and the propagation's MCells/s, then the
 * summary lines. */
static int write_report(model_run_t *run) {
  int status = RTM_OK;
  if (!run->root) return RTM_OK;
  const int steps = run->prop.steps, count = run->shots.count;
  const double propagate_s = run->propagate_s;
  const double mcells =
      propagate_s > 0.0 ? (double)run->cells * steps * count / propagate_s * 1e-6 : 0.0;
  /* setup's parts after the phases: the deck, model and shots; the propagator
   * (device, model upload, point operators); the rest (trace plans, the output
   * file) */
  rtm_timing_t timings[8 + RTM_APP_RANK_TIMINGS] = {
      {"setup", run->setup_s},
      {"propagate", propagate_s},
      {"snapshots", run->snapshot_s},
      {"write", run->write_s + run->end_s - run->loop_end_s},
      {"dispersion_correction", run->correct_s},
      {"setup_load", run->loaded_s - run->start_s},
      {"setup_propagator", run->created_s - run->loaded_s},
      {"setup_output", run->setup_end_s - run->created_s}};
  const int timing_count = rtm_mpi_world_size() > 1 ? 8 + RTM_APP_RANK_TIMINGS : 8;
  for (int k = 8; k < timing_count; ++k)
    timings[k] = run->rank_timings[k - 8];
  const rtm_report_shot_values_t shot_values[3] = {{"set_shot_s", run->shot_seconds},
                                                   {"propagate_s", run->shot_seconds + count},
                                                   {"write_s", run->shot_seconds + 2 * count}};
  rtm_report_t report = {.command = "model",
                         .info = &run->info,
                         .steps = steps,
                         .dt_s = run->prop.dt_s,
                         .model_precision =
                             rtm_precision_name(rtm_config_model_precision(&run->cfg)),
                         .timings = timings,
                         .timing_count = timing_count,
                         .mcells_per_s = mcells,
                         .shot_count = run->many_shots ? count : 0,
                         .shot_values = shot_values,
                         .shot_value_count = 3,
                         .output_path = run->h5_path,
                         .rank_lines = run->rank_lines,
                         .rank_line_size = RTM_RANK_LINE,
                         .rank_count = rtm_mpi_world_size(),
                         .slab_writes = rtm_app_slab_writes()};
  char json_partial[sizeof run->json_path + 16];
  RTM_TRY(rtm_io_outputs_add(run->outputs, run->json_path, json_partial, sizeof json_partial));
  RTM_TRY(rtm_app_write_report(json_partial, &report, &run->whole_grid, &run->prop.ledger));
  RTM_TRY(rtm_io_outputs_commit(run->outputs)); /* the files appear together, or none */
  if (!run->quiet) {
    rtm_log_info("done in %.2f s: propagation %.2f s, %.1f MCells/s", run->end_s - run->start_s,
                 propagate_s, mcells);
    if (run->segy_path[0]) rtm_log_info("wrote %s (SEG-Y)", run->segy_path);
    rtm_log_info("wrote %s and %s", run->h5_path, run->json_path);
  }
fail:
  return status;
}

int rtm_cmd_model(int argc, char **argv) {
  if (wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  int status = RTM_OK;
  model_run_t *run = calloc(1, sizeof *run);
  if (!run) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  run->lock.fd = -1;
  RTM_TRY(rtm_io_outputs_create(&run->outputs));
  run->start_s = rtm_wall_seconds();
  RTM_TRY(set_up_propagator(run, argc, argv));
  RTM_TRY(rtm_gathers_plan(&run->prop, run->cfg.output.trace_dt_s, &run->sampling));
  RTM_TRY(plan_segy(run));
  RTM_TRY(plan_streaming(run));
  RTM_TRY(open_output(run));
  RTM_TRY(run->many_shots ? run_many_shots(run) : run_single_shot(run));
  RTM_TRY(close_output(run));
  RTM_TRY(reduce_rank_phases(run));
  RTM_TRY(
      rtm_propagator_rank_lines(&run->prop, &run->cfg, &run->grid, run->device, &run->rank_lines));
  RTM_TRY(write_report(run));
fail:
  rtm_mpi_fail_fast(status); /* before the propagator's collective release */
  if (run) {
    rtm_trace_stream_stop(run->stream, 1); /* a failed run's writer, before the file closes */
    free(run->slab_buffer);
    free(run->field);
    if (run->output) rtm_output_close(run->output, 0);
    rtm_io_outputs_free(run->outputs); /* a failed run's partial files */
    rtm_io_unlock_name(&run->lock);
    free(run->config_text);
    free(run->rank_lines);
    rtm_propagator_destroy(&run->prop);
    rtm_shots_release(&run->shots);
    free(run->shot_seconds);
    rtm_trace_stream_destroy(run->stream); /* after the propagator: it waited for the copies */
    rtm_model_release(&run->model);
    free(run);
  }
  return rtm_status_exit_code(status);
}

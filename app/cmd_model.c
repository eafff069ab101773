/* rtm3d model CONFIG: forward modelling. Sets up the propagator, runs the time loop with
 * snapshots and progress, writes the HDF5 output and the JSON run report. With
 * shots.layout = grid or file it runs every shot on the one propagator, moved from shot to
 * shot (rtm_propagator_set_shot), and writes the many-shot layout (/shots/<k>/...). The
 * gathers reach the file through solver/rtm_gathers.h (streamed while the steps run, or
 * collected after them, and between shot groups); model_output.c writes the files, each
 * shot's gathers on the run's I/O thread while the next shot runs (model_writes.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_run.h"
#include "progress.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d model CONFIG [--set section.key=value ...] [--quiet] [--force]\n\n"
          "Forward modelling: propagates a Ricker source through the model of CONFIG and\n"
          "writes OUTPUT.h5 (snapshots /snapshots/p, and /snapshots/q for vti/tti when\n"
          "snapshots.fields asks, every snapshots.every steps; the gather /traces/p, and\n"
          "/traces/q for vti/tti when receivers.fields asks, with /traces/receivers) and\n"
          "OUTPUT.json (timings, MCells/s, memory), where OUTPUT = output.dir/output.name.\n"
          "shots.layout = grid or file runs many shots and writes each one's gathers as\n"
          "/shots/<k>/traces/<field> with /shots/<k>/source and /shots/<k>/receivers.\n\n"
          "  --set k=v   override one key of the deck (repeatable), e.g. --set time.steps=200\n"
          "  --quiet, -q errors alone: no progress, warnings or summary\n"
          "  --force     replace OUTPUT.h5 when it exists (output.overwrite = true)\n\n"
          "'rtm3d help-config' lists every key.\n");
}

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
  rtm_mpi_set_timeout(run->mpi, cfg->mpi.timeout_s); /* how long a rank waits for another */
  RTM_TRY(rtm_app_check_same_deck(cfg, run->mpi));
  snprintf(run->h5_path, sizeof run->h5_path, "%s/%s.h5", cfg->output.dir, cfg->output.name);
  run->snapshot_fields = rtm_field_mask(cfg->snapshots.fields);
  /* TTI grows where the tilt changes from cell to cell (rtm_anisotropy.h) */
  run->unstable_hint =
      cfg->physics.equation == RTM_EQUATION_TTI
          ? " (tti: a tilt that changes sharply grows; raise physics.smooth_angles)"
          : "";
  RTM_TRY(rtm_grid_init(&run->grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  RTM_TRY(rtm_check_deck_dt(cfg, &run->grid));
  RTM_TRY(rtm_app_split_groups(cfg, run->mpi)); /* refused alike on every rank */
  run->root = rtm_mpi_world_rank(run->mpi) == 0;
  run->shot_lines = !run->quiet && rtm_mpi_rank(run->mpi) == 0;
  run->quiet = run->quiet || !run->root; /* one progress line, rank 0's */
  run->whole_grid = run->grid;           /* the file and the report describe the whole volume */
  RTM_TRY(rtm_app_slab(&run->grid, run->mpi, 1));
  /* every shot is placed before the first step: one outside the volume stops the run here */
  RTM_TRY(rtm_shots_init(cfg, &run->grid, &run->shots));
  run->many_shots = cfg->shots.layout != RTM_SHOTS_SINGLE;
  RTM_TRY(check_shot_groups(run));
  /* an abort of the job (a failure on any rank, the watchdog) leaves nothing the run made */
  run->lock.fd = -1;
  run->made = (rtm_app_made_t){&run->lock, &run->outputs, &run->output, run->h5_path};
  if (run->root) rtm_mpi_on_abort(run->mpi, rtm_app_remove_made, &run->made);
  /* the deck's errors said, the output is claimed before any work */
  RTM_TRY(rtm_app_claim_output(cfg, run->mpi, run->h5_path, 0, &run->lock));
  /* without --force no file at the run's names is replaced, one that appears meanwhile either */
  if (!cfg->output.overwrite) rtm_io_outputs_replace_none(run->outputs);
  RTM_TRY(rtm_app_load_run_model(cfg, &run->grid, run->mpi, &run->model));
  run->shot_seconds = calloc(3 * (size_t)run->shots.count, sizeof *run->shot_seconds);
  if (!run->shot_seconds) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d shots", run->shots.count);
  run->loaded_s = rtm_wall_seconds();
  RTM_TRY(rtm_propagator_create(cfg, &run->grid, &run->model, &run->prop));
  run->created_s = rtm_wall_seconds();
fail:
  return status;
}

/* mpi.shot_groups > 1 needs the many-shot layout (which writes no snapshots) and a shot for
 * every group; refused on every rank alike. */
static int check_shot_groups(const model_run_t *run) {
  char where[RTM_CONFIG_ORIGIN_MAX];
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  const int groups = cfg->mpi.shot_groups;
  if (groups == 1) return RTM_OK;
  if (!run->many_shots)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: mpi.shot_groups = %d shares shots among groups of ranks, and shots.layout = "
             "single has one: set shots.layout = grid or file, or mpi.shot_groups = 1",
             rtm_config_origin(cfg, "mpi.shot_groups, shots.layout", where, sizeof where), groups);
  if (run->shots.count < groups)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: mpi.shot_groups = %d for %d shots would leave groups idle: at most %d",
             rtm_config_origin(cfg, "mpi.shot_groups", where, sizeof where), groups,
             run->shots.count, run->shots.count);
fail:
  return status;
}

static void print_run_line(const model_run_t *run) {
  const rtm_propagator_t *prop = &run->prop;
  if (run->quiet) return;
  if (run->many_shots)
    rtm_log_info("model: %d shots, %d x %d x %d cells, %d steps of %.4g ms each, backend %s%s%s",
                 run->shots.count, run->grid.n[0], run->grid.n[1], run->grid.n[2], prop->steps,
                 prop->dt_s * 1e3, prop->backend->name, run->device[0] ? " on " : "", run->device);
  else
    rtm_log_info("model: %d x %d x %d cells, %d steps of %.4g ms, backend %s%s%s, %d receivers",
                 run->grid.n[0], run->grid.n[1], run->grid.n[2], prop->steps, prop->dt_s * 1e3,
                 prop->backend->name, run->device[0] ? " on " : "", run->device,
                 prop->receivers.count);
}

/* The time loop of one shot, with snapshots and progress (steps_before: the steps of the
 * shots before it); the time spent on snapshots is kept apart. */
static int propagate(model_run_t *run, rtm_progress_t *progress, int steps_before) {
  int status = RTM_OK;
  rtm_propagator_t *prop = &run->prop;
  const int steps = prop->steps, every = run->every;
  for (int it = 0; it < steps; ++it) {
    RTM_TRY(rtm_propagator_step(prop, it, RTM_FORWARD));
    int level = it + 1;
    if (every > 0 && level % every == 0 && level / every <= run->snapshot_count) {
      double snapshot_start_s = rtm_wall_seconds();
      RTM_TRY(rtm_model_write_snapshots(run, level));
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

/* The traces of the shot just propagated into the file (shot < 0: the single-shot layout);
 * streamed ones have their windows not yet copied or written left, and the source. */
static int write_traces(model_run_t *run, int shot) {
  int status = RTM_OK;
  rtm_shot_gathers_t g;
  memset(&g, 0, sizeof g);
  if (run->stream) {
    RTM_TRY(rtm_trace_stream_finish(run->stream));
    run->correct_s += rtm_trace_stream_correct_seconds(run->stream); /* beside the steps */
    double waited_s = 0.0, written_s = 0.0;
    rtm_trace_stream_seconds(run->stream, &waited_s, &written_s);
    run->writer_waits_s += waited_s;
    run->behind_s += written_s;
    RTM_TRY(rtm_output_write_source(run->output, run->prop.source_position_m));
    return RTM_OK;
  }
  RTM_TRY(rtm_gathers_collect(&run->prop, &run->sampling, run->unstable_hint, &g, &run->correct_s));
  if (run->root) RTM_TRY(rtm_model_write_shot(run, shot, &g));
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

/* Every shot on the one propagator, moved from shot to shot; its gathers under /shots/<k>,
 * written by the run's I/O thread while the next shot propagates. With shot groups
 * (mpi.shot_groups = G) group g takes shots g, g + G, ..., a round of G shots at a time, and
 * the gathers of each round are received (on this thread) and written in shot order. The
 * progress counts the steps of the first group's shots; a line per shot (from each group's
 * first rank) gives its own figures. */
static int run_many_shots(model_run_t *run) {
  int status = RTM_OK;
  const int count = run->shots.count, steps = run->prop.steps;
  const int groups = rtm_mpi_groups(run->mpi), group = rtm_mpi_group(run->mpi);
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
    RTM_TRY(rtm_model_check_writes(run)); /* a shot's gathers not written stop the run */
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
            "%sshot %d/%d at (%g, %g, %g) m: %d receivers, propagation %.2f s, %.1f "
            "MCells/s",
            who, k + 1, count, source_m[0], source_m[1], source_m[2], run->prop.receivers.count,
            propagate_s[k],
            propagate_s[k] > 0.0 ? (double)run->cells * steps / propagate_s[k] * 1e-6 : 0.0);
      }
    }
    /* queued to the I/O thread (rank 0), once the write before the last has ended */
    RTM_TRY(rtm_gathers_write_round(run->mpi, &run->sampling, round, count, &gathers,
                                    rtm_model_queue_shot, run));
    rtm_gathers_release(&gathers); /* a group's first rank's, sent */
    if (k < count) {
      write_s[k] = rtm_wall_seconds() - propagated_s; /* this thread's: collect, send, queue */
      run->write_s += write_s[k];
    }
  }
  rtm_progress_end(&progress);
  run->loop_end_s = rtm_wall_seconds();
  run->setup_s += run->setup_end_s - run->start_s;
  RTM_TRY(rtm_model_settle_writes(run)); /* the last shots' in the file: within "write" */
fail:
  rtm_gathers_release(&gathers);
  return status;
}

/* Resampled gathers (output.trace_dt): two samples at least, and a warning where their
 * Nyquist lies below the source's band (2.5 x source.frequency): such gathers are low-passed,
 * and a migration of them images less than the run modelled. */
static int check_trace_dt(const model_run_t *run) {
  char where[RTM_CONFIG_ORIGIN_MAX];
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  const rtm_trace_sampling_t *s = &run->sampling;
  const double lasts_s = run->prop.steps * run->prop.dt_s;
  if (!s->resample) return RTM_OK;
  if (s->trace_samples < 2)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.trace_dt = %g s is longer than the run (%d steps of %g s = %g s): its "
             "traces would hold one sample; set output.trace_dt to %.10g s or less",
             rtm_config_origin(cfg, "output.trace_dt", where, sizeof where), s->trace_dt,
             run->prop.steps, run->prop.dt_s, lasts_s, lasts_s);
  const double band_hz = 2.5 * cfg->source.frequency_hz, nyquist_hz = 0.5 / s->trace_dt;
  if (nyquist_hz < band_hz)
    rtm_log_warning(
        "%s: output.trace_dt = %g s samples up to %.4g Hz, below the source's band "
        "(to %.4g Hz, 2.5 x source.frequency): the gathers lose what lies above; "
        "output.trace_dt <= %.4g s keeps it",
        rtm_config_origin(cfg, "output.trace_dt, source.frequency", where, sizeof where),
        s->trace_dt, nyquist_hz, band_hz, 0.5 / band_hz);
fail:
  return status;
}

/* The gathers go to the file while the steps run when the backend can copy windows of them
 * out (cuda), one rank writes one shot's traces at the run's dt (no resampling) and there
 * are several windows of about 64 MB (output.stream_window samples instead); with the
 * time-dispersion correction (the default) the windows leave the GPU corrected by the warp's
 * band (rtm_gathers.h). output.stream_traces = off writes them after the run instead: the
 * same file bit for bit without a correction; with one, the whole-trace warp, 1e-4 from the
 * exact warp where the band is 2e-5 (tests/app/cli_stream_gpu.sh). */
static int plan_streaming(model_run_t *run) {
  int status = RTM_OK;
  if (run->many_shots || run->cfg.output.stream_traces == RTM_STREAM_TRACES_OFF) return RTM_OK;
  RTM_TRY(rtm_trace_stream_create(&run->prop, &run->sampling, run->cfg.output.stream_window,
                                  &run->stream));
fail:
  return status;
}

/* Under MPI, the ranks' phases (the split steps', the host's wait in the exchange, the
 * I/O) reduced over the ranks for the report. */
static int reduce_rank_phases(model_run_t *run) {
  int status = RTM_OK;
  double seconds[RTM_APP_RANK_PHASES];
  if (rtm_mpi_world_size(run->mpi) == 1) return RTM_OK;
  RTM_TRY(rtm_propagator_phase_seconds(&run->prop, seconds));
  seconds[RTM_PHASE_COUNT] = run->prop.halo_s;
  seconds[RTM_PHASE_COUNT + 1] = run->snapshot_s + run->write_s + run->end_s - run->loop_end_s;
  RTM_TRY(rtm_app_reduce_run_timings(run->mpi, seconds, run->shot_seconds, 3 * run->shots.count,
                                     run->rank_timings));
fail:
  return status;
}

int rtm_cmd_model(int argc, char **argv, rtm_mpi_t *mpi) {
  if (wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  int status = RTM_OK;
  model_run_t *run = calloc(1, sizeof *run);
  if (!run) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  run->mpi = mpi;
  run->lock.fd = -1;
  RTM_TRY(rtm_io_outputs_create(&run->outputs));
  run->start_s = rtm_wall_seconds();
  RTM_TRY(set_up_propagator(run, argc, argv));
  RTM_TRY(rtm_gathers_plan(&run->prop, run->cfg.output.trace_dt_s, &run->sampling));
  RTM_TRY(check_trace_dt(run));
  RTM_TRY(rtm_model_plan_segy(run));
  RTM_TRY(plan_streaming(run));
  RTM_TRY(rtm_io_worker_create(&run->worker));
  RTM_TRY(rtm_model_open_output(run));
  RTM_TRY(run->many_shots ? run_many_shots(run) : run_single_shot(run));
  RTM_TRY(rtm_model_close_output(run));
  RTM_TRY(reduce_rank_phases(run));
  RTM_TRY(rtm_propagator_rank_lines(&run->prop, &run->cfg, run->device, &run->rank_lines));
  RTM_TRY(rtm_model_write_report(run));
fail:
  /* before the propagator's collective release */
  rtm_mpi_fail_fast(mpi, status); /* an abort runs rtm_app_remove_made first */
  rtm_mpi_on_abort(mpi, NULL, NULL); /* the run's record is freed below */
  if (run) {
    /* its jobs run first (a failed run's too): they use the file, the propagator and the
     * stream's slots */
    rtm_io_worker_destroy(run->worker);
    rtm_model_release_writes(run);
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

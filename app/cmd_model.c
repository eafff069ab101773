#define _POSIX_C_SOURCE 200809L /* gethostname */
/* rtm3d model CONFIG: forward modelling. Sets up the propagator, runs the time loop with
 * snapshots and progress, writes the HDF5 output and the JSON run report. With
 * shots.layout = grid or file it runs every shot on the one propagator, moved from shot to
 * shot (rtm_propagator_set_shot), and writes the many-shot layout (/shots/<k>/...). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "progress.h"
#include "rtm_io.h"
#include "rtm_memory.h"
#include "rtm_mpi.h"
#include "rtm_mpi_halo.h"
#include "rtm_propagator.h"
#include "rtm_status.h"
#include "solver_io.h"
#include "rtm_traces.h"
#include "rtm_version.h"

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
          "  --quiet     errors alone: no progress, warnings or summary\n"
          "  --force     replace OUTPUT.h5 when it exists (output.overwrite = true)\n\n"
          "'rtm3d help-config' lists every key.\n");
}

static int all_finite(const float *values, size_t count) {
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
  for (size_t i = 0; i < count; ++i)
    bad |= !isfinite(values[i]);
  return !bad;
}

/* The thread that writes the streamed windows to the file, so that the steps go on being
 * queued while a window is written: window k is copied out into slot k % S (S =
 * RTM_TRACE_SLOTS) by the main thread, which first waits for window k - S, the slot's last,
 * to be in the file, and written by this one once its copy has landed.
 * The file is touched by one thread at a time (file_lock: the snapshots are written by the
 * main thread). */
typedef struct {
  pthread_t thread;
  int started;
  pthread_mutex_t lock; /* copied, written, stop, status */
  pthread_cond_t changed;
  pthread_mutex_t file_lock;
  int copied;  /* windows [0, copied) are queued to be copied out */
  int written; /* windows [0, written) are in the file */
  int stop;    /* no more windows will come: write what is copied, then end */
  int abandon; /* the run failed: end without writing what is left */
  int status;  /* the writer's first failure */
} stream_writer_t;

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
  int many_shots;       /* shots.layout grid or file: the many-shot layout, whatever the count */
  double *shot_seconds; /* [3][shots.count]: set_shot, propagate, write of each shot */
  /* gathers: prop.steps + 1 samples of prop.dt_s, written as trace_samples of trace_dt */
  int samples, trace_samples, resample;
  double trace_dt;
  char device[256];
  char h5_path[2 * RTM_CONFIG_PATH_MAX], json_path[2 * RTM_CONFIG_PATH_MAX];
  char segy_path[2 * RTM_CONFIG_PATH_MAX]; /* output.segy: the gathers again, as SEG-Y */
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
  float *slab_buffer; /* rank 0 under MPI: another rank's slab on its way to the file */
  double start_s, setup_end_s, loop_end_s, end_s, snapshot_s;
  double setup_s, propagate_s, write_s; /* the report's phases, summed over the shots */
  double loaded_s, created_s;           /* setup's parts: deck and model, then the propagator */
  /* the gathers streamed to the file while the steps run (plan_streaming): windows of
   * stream_window samples copied from the device into page-locked slots, [field][slot] */
  int stream_window, stream_next, stream_windows;
  float *stream_slot[2][RTM_TRACE_SLOTS];
  size_t stream_slot_bytes;
  stream_writer_t writer;
  double correct_s; /* time.dispersion_correction's warps of the traces (within write) */
  rtm_timing_t rank_timings[RTM_APP_RANK_TIMINGS]; /* under MPI: the phases over the ranks */
  char *rank_lines; /* rank 0 under MPI: [ranks][RANK_LINE] "rank r: host, device" */
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
  run->unstable_hint =
      cfg->physics.equation == RTM_EQUATION_TTI
          ? " (tti: a tilt that changes sharply grows; raise physics.smooth_angles)"
          : "";
  RTM_TRY(rtm_grid_init(&run->grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  RTM_TRY(rtm_mpi_split_groups(cfg->mpi.shot_groups)); /* refused alike on every rank */
  run->root = rtm_mpi_world_rank() == 0;
  run->shot_lines = !run->quiet && rtm_mpi_rank() == 0;
  run->quiet = run->quiet || !run->root; /* one progress line, rank 0's */
  run->whole_grid = run->grid;           /* the file and the report describe the whole volume */
  RTM_TRY(rtm_app_slab(&run->grid));
  RTM_TRY(rtm_app_load_model(cfg, &run->grid, &run->model));
  /* every shot is placed before the first step: one outside the volume stops the run here */
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

/* mpi.shot_groups > 1 needs the many-shot layout (which writes no snapshots) and a shot for
 * every group; refused on every rank alike. */
static int check_shot_groups(const model_run_t *run) {
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  const int groups = cfg->mpi.shot_groups;
  if (groups == 1) return RTM_OK;
  if (!run->many_shots)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: mpi.shot_groups = %d shares shots among groups of ranks, and shots.layout = "
             "single has one: set shots.layout = grid or file, or mpi.shot_groups = 1",
             cfg->path, groups);
  if (run->shots.count < groups)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: mpi.shot_groups = %d for %d shots would leave groups idle: at most %d", cfg->path,
             groups, run->shots.count, run->shots.count);
fail:
  return status;
}

/* Gathers resampled to output.trace_dt go through the trace pipeline; a ratio it cannot
 * represent is refused now, before the propagation, on a one-trace dry run. */
static int plan_trace_sampling(model_run_t *run) {
  int status = RTM_OK;
  const rtm_propagator_t *prop = &run->prop;
  const double trace_dt_s = run->cfg.output.trace_dt_s;
  float *dry_in = NULL, *dry_out = NULL;
  run->samples = prop->steps + 1;
  run->resample = !isnan(trace_dt_s) && fabs(trace_dt_s - prop->dt_s) > 1e-9 * prop->dt_s;
  run->trace_dt = run->resample ? trace_dt_s : prop->dt_s;
  const double trace_samples =
      run->resample ? floor(prop->steps * prop->dt_s / run->trace_dt + 1e-9) + 1 : run->samples;
  /* a shot's gathers on rank 0: the recorded traces, the resampled ones of each field and the
   * pipeline's spectra (about 12 bytes a resampled sample), weighed now, not after the run */
  const int fields = rtm_field_count(prop->trace_fields);
  /* the traces as recorded (a sinc receiver cut between ranks in parts, one a plane) */
  const int recorded = prop->receiver_parts ? prop->recorded.count : prop->receivers.count;
  const double gathers_bytes =
      (double)recorded * run->samples * 4.0 +
      (double)prop->receivers.count * trace_samples * (4.0 * fields + (run->resample ? 12.0 : 0.0));
  const double available = (double)rtm_mem_host_available_bytes();
  const int too_large = trace_samples > 1e9 || (available > 0.0 && gathers_bytes > available);
  if (prop->receivers.count > 0 && too_large && run->resample)
    RTM_FAIL(RTM_ERR_CONFIG,
             "output.trace_dt = %g s makes %.4g samples a trace (the run lasts %g s): the "
             "gathers of %d receivers would need %.3g GB on rank 0, %.3g GB are available; "
             "raise output.trace_dt (dt = %g s) or record fewer receivers",
             run->trace_dt, trace_samples, prop->steps * prop->dt_s, prop->receivers.count,
             gathers_bytes * 1e-9, available * 1e-9, prop->dt_s);
  if (prop->receivers.count > 0 && too_large)
    RTM_FAIL(RTM_ERR_CONFIG,
             "the gathers of %d receivers x %.4g samples (time.steps + 1) would need %.3g GB on "
             "rank 0, %.3g GB are available: record fewer receivers ([receivers]) or fewer "
             "samples (output.trace_dt coarser than dt = %g s)",
             prop->receivers.count, trace_samples, gathers_bytes * 1e-9, available * 1e-9,
             prop->dt_s);
  run->trace_samples = (int)trace_samples;
  if (run->resample && prop->receivers.count > 0) {
    dry_in = calloc((size_t)run->samples, sizeof *dry_in);
    dry_out = calloc((size_t)run->trace_samples, sizeof *dry_out);
    if (!dry_in || !dry_out) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
    if (rtm_traces_resample("cpu", 1, run->samples, prop->dt_s, dry_in, run->trace_samples,
                            run->trace_dt, dry_out) != RTM_OK)
      RTM_FAIL(RTM_ERR_CONFIG, "output.trace_dt = %g s cannot be reached from dt = %g s",
               run->trace_dt, prop->dt_s);
  }
fail:
  free(dry_in);
  free(dry_out);
  return status;
}

static int stream_writer_start(model_run_t *run);

/* OUTPUT.h5 with the run's provenance, the snapshot buffer and the snapshot datasets (and,
 * streaming, the trace datasets and their writer). */
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
  /* the outputs' size, weighed against the disk before the first step: snapshots of each
   * field, every shot's gathers and receiver positions, the SEG-Y copy of the gathers (its
   * 240-byte trace headers), and 1 MB for the metadata, the sidecar and the report */
  const double traces = (double)run->shots.count * prop->receivers.count;
  const double gather_bytes =
      4.0 * traces * rtm_field_count(prop->trace_fields) * run->trace_samples;
  const double file_bytes =
      4.0 * (double)run->snapshot_count * rtm_field_count(run->snapshot_fields) * run->cells +
      gather_bytes + 24.0 * traces +
      (run->segy_path[0] ? 4.0 * traces * run->trace_samples + 240.0 * traces + 3600.0 : 0.0) + 1e6;
  RTM_TRY(rtm_app_check_disk(cfg->output.dir, file_bytes,
                             "raise snapshots.every, snapshot fewer snapshots.fields, record "
                             "fewer receivers, or set output.dir on a larger disk"));
  const size_t slab_cells = rtm_app_slab_buffer_cells(&run->grid);
  if (slab_cells > 0 && run->snapshot_count > 0) {
    /* the other ranks' slabs come one at a time (rtm_app_write_slabs): room for the largest */
    run->slab_buffer = malloc(slab_cells * sizeof *run->slab_buffer);
    if (!run->slab_buffer)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a %zu-cell slab of the snapshots", slab_cells);
  }
  const rtm_io_volume_t volume = rtm_app_volume(&run->whole_grid);
  RTM_TRY(rtm_app_create_output(run->h5_path, &volume, &run->info, &run->output));
  for (int f = RTM_FIELD_P; run->stream_window && f <= RTM_FIELD_Q; ++f)
    if (prop->trace_fields & RTM_FIELD_BIT(f))
      RTM_TRY(rtm_output_traces_begin(run->output, rtm_field_name((rtm_field_t)f),
                                      prop->receivers.count, run->samples, run->stream_window,
                                      prop->dt_s, prop->receivers.position_m));
  if (run->stream_window) RTM_TRY(stream_writer_start(run));
  if (run->snapshot_count > 0 && (run->snapshot_fields & RTM_FIELD_BIT(RTM_FIELD_P)))
    RTM_TRY(rtm_output_snapshots_begin(run->output, "p", run->snapshot_count));
  if (run->snapshot_count > 0 && (run->snapshot_fields & RTM_FIELD_BIT(RTM_FIELD_Q)))
    RTM_TRY(rtm_output_snapshots_begin(run->output, "q", run->snapshot_count));
fail:
  return status;
}

/* Snapshot `level / every - 1` of each field snapshots.fields asks for: each rank's slab
 * written collectively, or by rank 0 as it comes (rank 0 never holds the volume). */
static int write_snapshots(model_run_t *run, int level) {
  int status = RTM_OK;
  const rtm_propagator_t *prop = &run->prop;
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (!(run->snapshot_fields & RTM_FIELD_BIT(f))) continue;
    RTM_TRY(prop->backend->read_field(prop->state, (rtm_field_t)f, RTM_LEVEL_CURRENT, run->field));
    if (!all_finite(run->field, run->local_cells))
      RTM_FAIL(RTM_ERR_NUMERIC, "the wavefield is not finite at step %d: the run is unstable%s",
               level, run->unstable_hint);
    const rtm_app_slab_target_t snapshot = {rtm_field_name((rtm_field_t)f), level / run->every - 1,
                                            level, level * prop->dt_s};
    if (run->writer.started) pthread_mutex_lock(&run->writer.file_lock);
    status = rtm_app_write_slabs(&run->grid, run->output, run->h5_path, &snapshot, run->field,
                                 run->slab_buffer);
    if (run->writer.started) pthread_mutex_unlock(&run->writer.file_lock);
    if (status != RTM_OK) goto fail;
  }
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
static int stream_step(model_run_t *run, int it);

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
    if (run->stream_window) RTM_TRY(stream_step(run, it));
    if (rtm_progress_due(progress, steps_before + it + 1) && prop->backend->synchronize)
      RTM_TRY(prop->backend->synchronize(prop->state)); /* the rate of steps done */
    rtm_progress_update(progress, steps_before + it + 1);
  }
  if (prop->backend->synchronize) RTM_TRY(prop->backend->synchronize(prop->state));
fail:
  return status;
}

/* Window k's samples [first, first + count): stream_window of them, fewer in the last. */
static int window_span(const model_run_t *run, int k, int *first) {
  *first = k * run->stream_window;
  return *first + run->stream_window <= run->samples ? run->stream_window : run->samples - *first;
}

/* Window k of each recorded field from the device into slot k % S, queued behind the steps
 * so far. */
static int stream_copy(model_run_t *run, int k) {
  int status = RTM_OK, first = 0;
  rtm_propagator_t *prop = &run->prop;
  const int count = window_span(run, k, &first);
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f)
    if (prop->trace_fields & RTM_FIELD_BIT(f))
      RTM_TRY(prop->backend->copy_traces(prop->state, (rtm_field_t)f, first, count,
                                         run->stream_slot[f][k % RTM_TRACE_SLOTS],
                                         k % RTM_TRACE_SLOTS));
fail:
  return status;
}

/* Window k of each recorded field from its slot into the file, checked first (the writer
 * thread's work). */
static int stream_write(model_run_t *run, int k) {
  int status = RTM_OK, first = 0;
  const rtm_propagator_t *prop = &run->prop;
  const int receivers = prop->receivers.count, count = window_span(run, k, &first);
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (!(prop->trace_fields & RTM_FIELD_BIT(f))) continue;
    const float *window = run->stream_slot[f][k % RTM_TRACE_SLOTS];
    if (!all_finite(window, (size_t)receivers * (size_t)count))
      RTM_FAIL(RTM_ERR_NUMERIC,
               "the recorded traces of %s are not finite by %.4g s: the run is unstable%s",
               rtm_field_name((rtm_field_t)f), (first + count - 1) * prop->dt_s,
               run->unstable_hint);
    RTM_TRY(rtm_output_traces_window(run->output, rtm_field_name((rtm_field_t)f), window, receivers,
                                     first, count));
  }
fail:
  return status;
}

/* The writer thread (stream_writer_t): each window once its copy has landed, until told to
 * stop with nothing left, told to abandon the rest, or at its first failure. */
static void *stream_writer_main(void *arg) {
  model_run_t *run = arg;
  stream_writer_t *w = &run->writer;
  for (;;) {
    pthread_mutex_lock(&w->lock);
    while (w->written == w->copied && !w->stop && !w->abandon)
      pthread_cond_wait(&w->changed, &w->lock);
    const int k = w->written, done = w->written == w->copied || w->abandon;
    pthread_mutex_unlock(&w->lock);
    if (done) return NULL;
    int status = run->prop.backend->wait_traces(run->prop.state, k % RTM_TRACE_SLOTS);
    if (status == RTM_OK) {
      pthread_mutex_lock(&w->file_lock);
      status = stream_write(run, k);
      pthread_mutex_unlock(&w->file_lock);
    }
    pthread_mutex_lock(&w->lock);
    if (status == RTM_OK)
      w->written = k + 1;
    else
      w->status = status;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    if (status != RTM_OK) return NULL;
  }
}

static int stream_writer_start(model_run_t *run) {
  stream_writer_t *w = &run->writer;
  pthread_mutex_init(&w->lock, NULL);
  pthread_mutex_init(&w->file_lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  if (pthread_create(&w->thread, NULL, stream_writer_main, run) != 0) {
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->file_lock);
    pthread_mutex_destroy(&w->lock);
    rtm_log_error("could not start the thread that writes the gathers during the run");
    return RTM_ERR_NOMEM;
  }
  w->started = 1;
  return RTM_OK;
}

/* Tells the writer that no more windows come and waits for it: to write those copied, or,
 * `abandon` (a failed run, whose file goes), to end at once; returns its status (a second
 * call returns RTM_OK). */
static int stream_writer_stop(model_run_t *run, int abandon) {
  stream_writer_t *w = &run->writer;
  if (!w->started) return RTM_OK;
  pthread_mutex_lock(&w->lock);
  w->stop = 1;
  w->abandon = abandon;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  w->started = 0;
  pthread_cond_destroy(&w->changed);
  pthread_mutex_destroy(&w->file_lock);
  pthread_mutex_destroy(&w->lock);
  return w->status;
}

/* After step `it`: every window whose last sample (it + 1 at most) is recorded is copied
 * out into slot k % S, once the writer has put window k - S (the slot's last) in the file,
 * and handed to the writer. A failure of the writer stops the run here. */
static int stream_step(model_run_t *run, int it) {
  int status = RTM_OK;
  stream_writer_t *w = &run->writer;
  pthread_mutex_lock(&w->lock); /* a writer's failure stops the run at the next step */
  status = w->status;
  pthread_mutex_unlock(&w->lock);
  if (status != RTM_OK) goto fail;
  while (run->stream_next < run->stream_windows) {
    const int k = run->stream_next;
    int first = 0;
    const int count = window_span(run, k, &first);
    const int last = first + count - 1;  /* its last sample */
    if (it >= 0 && last > it + 1) break; /* step it recorded sample it + 1 */
    pthread_mutex_lock(&w->lock);
    while (w->written < k - RTM_TRACE_SLOTS + 1 && w->status == RTM_OK)
      pthread_cond_wait(&w->changed, &w->lock);
    status = w->status;
    pthread_mutex_unlock(&w->lock);
    if (status != RTM_OK) goto fail;
    RTM_TRY(stream_copy(run, k));
    pthread_mutex_lock(&w->lock);
    w->copied = k + 1;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    ++run->stream_next;
  }
fail:
  return status;
}

/* After the loop: the windows not yet copied, then the writer drained and stopped. */
static int stream_finish(model_run_t *run) {
  int status = RTM_OK;
  if (!run->stream_window) return RTM_OK;
  RTM_TRY(stream_step(run, -1));
  RTM_TRY(stream_writer_stop(run, 0));
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
    nonfinite = !all_finite(run->field, run->local_cells);
  }
  if (nonfinite)
    RTM_FAIL(RTM_ERR_NUMERIC, "the final wavefield is not finite: the run is unstable%s",
             run->unstable_hint);
fail:
  return status;
}

/* One shot's gathers as its group's first rank holds them: the source, the receivers and,
 * for each field receivers.fields asks for, count x trace_samples samples (resampled to
 * output.trace_dt where it differs from dt). */
typedef struct {
  int count;       /* receivers */
  unsigned fields; /* RTM_FIELD_BIT mask */
  double source_m[3];
  double *position_m; /* [count][3] */
  float *samples;     /* [fields present][count][trace_samples] */
} shot_gathers_t;

static void gathers_release(shot_gathers_t *g) {
  free(g->position_m);
  free(g->samples);
  memset(g, 0, sizeof *g);
}

/* The samples of `g`'s traces: trace_samples a receiver and recorded field. */
static size_t gathers_samples(const shot_gathers_t *g, int trace_samples) {
  return (size_t)rtm_field_count(g->fields) * (size_t)g->count * (size_t)trace_samples;
}

static int gathers_alloc(shot_gathers_t *g, int count, unsigned fields, int trace_samples) {
  g->count = count;
  g->fields = fields;
  g->position_m = malloc(((size_t)count * 3 + 1) * sizeof *g->position_m);
  g->samples = rtm_mem_host_large((gathers_samples(g, trace_samples) + 1) * sizeof *g->samples);
  if (g->position_m && g->samples) return RTM_OK;
  rtm_log_error("out of memory for the gathers of %d receivers", count);
  return RTM_ERR_NOMEM;
}

/* The shot's traces recorded on the group's ranks summed on its first rank (rtm_mpi.h),
 * checked and resampled there into `g` (the other ranks' `g` stays empty). */
static int collect_gathers(model_run_t *run, shot_gathers_t *g) {
  int status = RTM_OK;
  const rtm_propagator_t *prop = &run->prop;
  const size_t count = (size_t)prop->receivers.count, samples = (size_t)run->samples;
  float *traces = NULL;
  int in_place = 0;
  memset(g, 0, sizeof *g);
  if (rtm_mpi_rank() == 0) {
    RTM_TRY(gathers_alloc(g, (int)count, prop->trace_fields, run->trace_samples));
    memcpy(g->source_m, prop->source_position_m, sizeof g->source_m);
    if (count) memcpy(g->position_m, prop->receivers.position_m, count * 3 * sizeof(double));
  }
  if (count == 0) return RTM_OK;
  /* without resampling the traces land in the gathers themselves (the other ranks, which
   * only contribute, and resampling need a buffer of their own) */
  in_place = rtm_mpi_rank() == 0 && !run->resample;
  if (!in_place) {
    traces = rtm_mem_host_large(count * samples * sizeof *traces);
    if (!traces) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %zu traces", count);
  }
  /* the time-dispersion warp where the traces are (a GPU), when it can be done there */
  const double correct_start_s = rtm_wall_seconds();
  int corrected = 0;
  RTM_TRY(rtm_propagator_correct_recorded(prop, &corrected));
  run->correct_s += rtm_wall_seconds() - correct_start_s;
  float *out = g->samples;
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (!(prop->trace_fields & RTM_FIELD_BIT(f))) continue;
    const char *name = rtm_field_name((rtm_field_t)f);
    if (in_place) traces = out;
    /* each rank recorded the taps in its slab: the group's first rank gets the sums */
    RTM_TRY(rtm_propagator_gather_traces(prop, (rtm_field_t)f, traces));
    if (rtm_mpi_rank() != 0) continue;
    if (!all_finite(traces, count * samples))
      RTM_FAIL(RTM_ERR_NUMERIC, "the recorded traces of %s are not finite: the run is unstable%s",
               name, run->unstable_hint);
    const char *pipeline = strcmp(prop->backend->name, "cuda") == 0 ? "cuda" : "cpu";
    if (!corrected) {
      const double host_start_s = rtm_wall_seconds();
      RTM_TRY(rtm_propagator_correct_traces(prop, pipeline, (int)count, traces));
      run->correct_s += rtm_wall_seconds() - host_start_s;
    }
    if (run->resample)
      RTM_TRY(rtm_traces_resample(pipeline, (int)count, run->samples, prop->dt_s, traces,
                                  run->trace_samples, run->trace_dt, out));
    out += count * (size_t)run->trace_samples;
  }
fail:
  if (!in_place) free(traces);
  if (status != RTM_OK) gathers_release(g);
  return status;
}

/* /traces/<field> with the source (shot < 0), or /shots/<shot>/traces/<field> with the
 * shot's source and receivers: the file's first rank writes. */
static int write_gathers(model_run_t *run, int shot, const shot_gathers_t *g) {
  int status = RTM_OK;
  const rtm_field_t first = g->fields & RTM_FIELD_BIT(RTM_FIELD_P) ? RTM_FIELD_P : RTM_FIELD_Q;
  if (g->count <= 0) {
    if (shot >= 0)
      RTM_TRY(rtm_output_write_shot(run->output, shot, g->source_m, rtm_field_name(first), NULL, 0,
                                    run->trace_samples, run->trace_dt, NULL));
  } else {
    const float *samples = g->samples;
    for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
      if (!(g->fields & RTM_FIELD_BIT(f))) continue;
      const char *name = rtm_field_name((rtm_field_t)f);
      if (shot < 0)
        RTM_TRY(rtm_output_write_traces(run->output, name, samples, g->count, run->trace_samples,
                                        run->trace_dt, g->position_m));
      else
        RTM_TRY(rtm_output_write_shot(run->output, shot, g->source_m, name, samples, g->count,
                                      run->trace_samples, run->trace_dt, g->position_m));
      samples += (size_t)g->count * (size_t)run->trace_samples;
    }
  }
  if (shot < 0) RTM_TRY(rtm_output_write_source(run->output, g->source_m));
fail:
  return status;
}

/* Shot groups: the gathers of a group's shot travel from its first rank to the file's
 * (rtm_mpi_leader_send): the receiver count and fields, then the source and receivers,
 * then the samples. */
enum { TAG_GATHER_HEAD = 21, TAG_GATHER_POSITIONS, TAG_GATHER_SAMPLES };

static int send_gathers(const model_run_t *run, const shot_gathers_t *g) {
  int status = RTM_OK;
  const int head[2] = {g->count, (int)g->fields};
  RTM_TRY(rtm_mpi_leader_send(head, sizeof head, TAG_GATHER_HEAD));
  RTM_TRY(rtm_mpi_leader_send(g->source_m, sizeof g->source_m, TAG_GATHER_POSITIONS));
  RTM_TRY(rtm_mpi_leader_send(g->position_m, (size_t)g->count * 3 * sizeof(double),
                              TAG_GATHER_POSITIONS));
  RTM_TRY(rtm_mpi_leader_send(g->samples, gathers_samples(g, run->trace_samples) * sizeof(float),
                              TAG_GATHER_SAMPLES));
fail:
  return status;
}

static int receive_gathers(const model_run_t *run, int from_group, shot_gathers_t *g) {
  int status = RTM_OK;
  int head[2] = {0, 0};
  RTM_TRY(rtm_mpi_leader_recv(from_group, head, sizeof head, TAG_GATHER_HEAD));
  RTM_TRY(gathers_alloc(g, head[0], (unsigned)head[1], run->trace_samples));
  RTM_TRY(rtm_mpi_leader_recv(from_group, g->source_m, sizeof g->source_m, TAG_GATHER_POSITIONS));
  RTM_TRY(rtm_mpi_leader_recv(from_group, g->position_m, (size_t)g->count * 3 * sizeof(double),
                              TAG_GATHER_POSITIONS));
  RTM_TRY(rtm_mpi_leader_recv(from_group, g->samples,
                              gathers_samples(g, run->trace_samples) * sizeof(float),
                              TAG_GATHER_SAMPLES));
fail:
  return status;
}

/* The traces of the shot just propagated into the file (shot < 0: the single-shot layout);
 * streamed ones have their windows not yet copied or written left, and the source. */
static int write_traces(model_run_t *run, int shot) {
  int status = RTM_OK;
  shot_gathers_t g;
  memset(&g, 0, sizeof g);
  if (run->stream_window) {
    RTM_TRY(stream_finish(run));
    RTM_TRY(rtm_output_write_source(run->output, run->prop.source_position_m));
    return RTM_OK;
  }
  RTM_TRY(collect_gathers(run, &g));
  if (run->root) RTM_TRY(write_gathers(run, shot, &g));
fail:
  gathers_release(&g);
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

/* The gathers of round `round`'s shots into the file, in shot order: the file's rank
 * writes its own group's (`own`, shot round G) and receives the other groups' from their
 * first ranks, which send theirs. */
static int write_round(model_run_t *run, int round, shot_gathers_t *own) {
  int status = RTM_OK;
  const int groups = rtm_mpi_groups(), count = run->shots.count;
  shot_gathers_t other = {0};
  if (run->root) {
    RTM_TRY(write_gathers(run, round * groups, own));
    for (int g = 1; g < groups && round * groups + g < count; ++g) {
      RTM_TRY(receive_gathers(run, g, &other));
      RTM_TRY(write_gathers(run, round * groups + g, &other));
      gathers_release(&other);
    }
  } else if (rtm_mpi_rank() == 0 && round * groups + rtm_mpi_group() < count) {
    RTM_TRY(send_gathers(run, own));
  }
fail:
  gathers_release(&other);
  return status;
}

/* Every shot on the one propagator, moved from shot to shot; its gathers under /shots/<k>.
 * With shot groups (mpi.shot_groups = G) group g takes shots g, g + G, ..., a round of G
 * shots at a time, and the gathers of each round are written in shot order. The progress
 * counts the steps of the first group's shots; a line per shot (from each group's first
 * rank) gives its own figures. */
static int run_many_shots(model_run_t *run) {
  int status = RTM_OK;
  const int count = run->shots.count, steps = run->prop.steps;
  const int groups = rtm_mpi_groups(), group = rtm_mpi_group();
  double *set_shot_s = run->shot_seconds, *propagate_s = set_shot_s + count;
  double *write_s = propagate_s + count;
  char label[64];
  rtm_progress_t progress;
  shot_gathers_t gathers = {0};
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
      RTM_TRY(collect_gathers(run, &gathers));
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
    RTM_TRY(write_round(run, round, &gathers));
    gathers_release(&gathers);
    if (k < count) {
      write_s[k] = rtm_wall_seconds() - propagated_s;
      run->write_s += write_s[k];
    }
  }
  rtm_progress_end(&progress);
  run->loop_end_s = rtm_wall_seconds();
  run->setup_s += run->setup_end_s - run->start_s;
fail:
  gathers_release(&gathers);
  return status;
}

/* The run file closed (and SEG-Y written from it) as partial files, listed in run->outputs
 * to be renamed with the report. */
static int close_output(model_run_t *run) {
  int status = RTM_OK;
  char h5_partial[sizeof run->h5_path + 16], segy_partial[sizeof run->segy_path + 16];
  run->end_s = rtm_wall_seconds(); /* a rank without the file ends here (its I/O time) */
  if (!run->root) return RTM_OK;
  status = rtm_output_finish(run->output, run->outputs); /* frees the output either way */
  run->output = NULL;
  if (status == RTM_OK && !run->segy_path[0] && run->cfg.output.overwrite) {
    /* an earlier run's NAME.sgy would sit beside this run's file as if it were its copy */
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

/* The gathers go to the file while the steps run when the backend can copy windows of them
 * out (cuda), one rank writes one shot's traces as recorded (no resampling, no
 * time-dispersion warp of whole traces) and there are several windows of about 64 MB
 * (output.stream_window samples instead); output.stream_traces = off writes them after the
 * run instead (the same file, bit for bit: tests/app/cli_stream_gpu.sh). */
static void release_streaming(model_run_t *run);

static int plan_streaming(model_run_t *run) {
  int status = RTM_OK;
  const rtm_propagator_t *prop = &run->prop;
  const rtm_config_t *cfg = &run->cfg;
  const int receivers = prop->receivers.count;
  if (!prop->backend->copy_traces || rtm_mpi_world_size() > 1 || run->many_shots || run->resample ||
      rtm_dispersion_corrects_recorded(prop->dispersion) || receivers == 0 ||
      cfg->output.stream_traces == RTM_STREAM_TRACES_OFF)
    return RTM_OK;
  long window = (64L << 20) / (4L * receivers);
  if (window < 32) window = 32;
  if (cfg->output.stream_window > 0) window = cfg->output.stream_window;
  if (window >= run->samples) return RTM_OK; /* one window: nothing to overlap */
  if ((double)receivers * (double)window * 4.0 > 2e9) return RTM_OK; /* HDF5's chunk limit */
  run->stream_slot_bytes = (size_t)receivers * (size_t)window * sizeof(float);
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f)
    for (int s = 0; s < RTM_TRACE_SLOTS && (prop->trace_fields & RTM_FIELD_BIT(f)); ++s) {
      float *slot = rtm_mem_host_large(run->stream_slot_bytes);
      if (!slot || rtm_mem_host_pin(slot, run->stream_slot_bytes, "streamed traces") != RTM_OK) {
        free(slot);
        release_streaming(run); /* the slots made so far */
        return RTM_OK;          /* written after the run, as without a device */
      }
      run->stream_slot[f][s] = slot;
    }
  /* the device's room for a window, now rather than at the first window */
  const rtm_field_t field =
      prop->trace_fields & RTM_FIELD_BIT(RTM_FIELD_P) ? RTM_FIELD_P : RTM_FIELD_Q;
  RTM_TRY(prop->backend->copy_traces(prop->state, field, 0, (int)window, NULL, 0));
  run->stream_window = (int)window;
  run->stream_windows = (int)((run->samples + window - 1) / window);
fail:
  return status;
}

static void release_streaming(model_run_t *run) {
  for (int f = 0; f < 2; ++f)
    for (int s = 0; s < RTM_TRACE_SLOTS; ++s)
      if (run->stream_slot[f][s]) {
        rtm_mem_host_unpin(run->stream_slot[f][s]);
        free(run->stream_slot[f][s]);
        run->stream_slot[f][s] = NULL;
      }
}

/* output.segy = true: SEG-Y can hold these gathers (segyio in the build, the interval in
 * whole microseconds, at most 32767 samples), and dir/name.sgy may be written; before any
 * step. */
static int plan_segy(model_run_t *run) {
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  if (!cfg->output.segy) return RTM_OK;
  if (!rtm_segy_available())
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.segy = true, but this build has no SEG-Y (install libsegyio-dev and "
             "configure again, or set output.segy = false)",
             cfg->path[0] ? cfg->path : "configuration");
  if (run->prop.receivers.count == 0)
    RTM_FAIL(RTM_ERR_CONFIG, "%s: output.segy = true, but the run records no receivers",
             cfg->path[0] ? cfg->path : "configuration");
  const double us = run->trace_dt * 1e6;
  if (fabs(us - round(us)) > 1e-6 * us || round(us) < 1 || round(us) > 32767)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.segy = true needs the gathers' interval in whole microseconds (1 to "
             "32767), and it is %.9g s (output.trace_dt %s): set output.trace_dt = %g, say",
             cfg->path[0] ? cfg->path : "configuration", run->trace_dt,
             isnan(cfg->output.trace_dt_s) ? "auto: the modelling dt" : "as set",
             floor(us) > 0 ? floor(us) * 1e-6 : 1e-6);
  if (run->trace_samples > 32767)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.segy = true: %d samples a trace, SEG-Y rev 1 holds at most 32767; "
             "raise output.trace_dt",
             cfg->path[0] ? cfg->path : "configuration", run->trace_samples);
  snprintf(run->segy_path, sizeof run->segy_path, "%s/%s.sgy", cfg->output.dir, cfg->output.name);
  RTM_TRY(rtm_app_check_overwrite(cfg, run->segy_path));
fail:
  return status;
}

enum { RANK_LINE = 400 };

/* Rank 0 gets a line per rank naming its host, where it runs, its planes, the memory it
 * took against the preflight's estimate (rtm_propagator_bytes), how a device's planes travel to
 * each neighbour and how many receivers (sinc, cut between ranks) are recorded in parts, for the
 * report. */
static int gather_rank_lines(model_run_t *run) {
  int status = RTM_OK;
  char line[RANK_LINE], host[64] = "?", halo[96] = "", group[32] = "", parts[48] = "";
  if (rtm_mpi_world_size() == 1) return RTM_OK;
  if (rtm_mpi_groups() > 1) snprintf(group, sizeof group, "group %d, ", rtm_mpi_group());
  gethostname(host, sizeof host - 1);
  if (run->prop.halo || run->prop.link)
    snprintf(halo, sizeof halo, ", halo below %s, above %s, buffers %zu bytes",
             rtm_propagator_transport(&run->prop, 0), rtm_propagator_transport(&run->prop, 1),
             run->prop.halo ? rtm_mpi_halo_bytes(run->prop.halo) : 0);
  if (run->prop.receiver_parts) {
    int split = 0;
    for (int r = 0; r < run->prop.receivers.count; ++r)
      split += run->prop.receiver_parts[r] > 1;
    snprintf(parts, sizeof parts, ", %d receivers recorded in parts", split);
  }
  snprintf(line, sizeof line,
           "rank %d: %s, %s, %splanes %d..%d, memory %.3f GB (preflight estimate %.3f GB)%s%s",
           rtm_mpi_world_rank(), host, run->device[0] ? run->device : run->prop.backend->name,
           group, run->grid.z_offset, run->grid.z_offset + run->grid.nz_local - 1,
           run->prop.ledger.total_bytes * 1e-9, rtm_propagator_bytes(&run->cfg, &run->grid) * 1e-9,
           halo, parts);
  if (run->root) {
    run->rank_lines = calloc((size_t)rtm_mpi_world_size(), RANK_LINE);
    if (!run->rank_lines) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the ranks' lines");
  }
  RTM_TRY(rtm_mpi_gather_lines(line, RANK_LINE, run->rank_lines));
fail:
  return status;
}

/* Under MPI, the ranks' phases (the split steps', the host's wait in the exchange, the
 * I/O) reduced over the ranks for the report. */
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

/* OUTPUT.json: the phases' times and the propagation's MCells/s, then the summary lines. */
static int write_report(model_run_t *run) {
  int status = RTM_OK;
  if (!run->root) return RTM_OK;
  const int steps = run->prop.steps, count = run->shots.count;
  const double propagate_s = run->propagate_s;
  const double mcells =
      propagate_s > 0.0 ? (double)run->cells * steps * count / propagate_s * 1e-6 : 0.0;
  /* setup's parts after the phases: the deck, model and shots; the propagator (device,
   * model upload, point operators); the rest (trace plans, the output file) */
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
                         .rank_line_size = RANK_LINE,
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
  RTM_TRY(plan_trace_sampling(run));
  RTM_TRY(plan_segy(run));
  RTM_TRY(plan_streaming(run));
  RTM_TRY(open_output(run));
  RTM_TRY(run->many_shots ? run_many_shots(run) : run_single_shot(run));
  RTM_TRY(close_output(run));
  RTM_TRY(reduce_rank_phases(run));
  RTM_TRY(gather_rank_lines(run));
  RTM_TRY(write_report(run));
fail:
  rtm_mpi_fail_fast(status); /* before the propagator's collective release */
  if (run) {
    stream_writer_stop(run, 1); /* a failed run's writer, before the file is closed */
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
    release_streaming(run); /* after the propagator, whose destroy waited for its copies */
    rtm_model_release(&run->model);
    free(run);
  }
  return rtm_status_exit_code(status);
}

/* model_output.c - what a modelling run writes (model_run.h): OUTPUT.h5 created with its
 * datasets planned (snapshots, streamed gathers) after the disk is weighed, the snapshots
 * and each shot's gathers written into it (the file side of rtm_gathers.h), SEG-Y planned
 * and written from it, and the JSON report. */
#define _POSIX_C_SOURCE 200809L /* lstat */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "model_run.h"
#include "rtm_mpi.h"
#include "rtm_status.h"
#include "rtm_version.h"

/* A window of the streamed gathers into the file: a job on the run's I/O thread
 * (rtm_gathers.h). */
static int write_window(void *context, rtm_field_t field, const float *window, int receivers,
                        int first, int count) {
  model_run_t *run = context;
  return rtm_output_traces_window(run->output, rtm_field_name(field), window, receivers, first,
                                  count);
}

/* OUTPUT.h5 with the run's provenance, the snapshot buffer and the snapshot datasets (and,
 * streaming, the trace datasets, their windows to be written on the run's I/O thread). */
int rtm_model_open_output(model_run_t *run) {
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  const rtm_propagator_t *prop = &run->prop;
  if (prop->backend->describe)
    prop->backend->describe(prop->state, run->device, sizeof run->device);
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
    /* the other ranks' slabs come one at a time (rtm_app_write_slabs): room for the largest */
    run->slab_buffer = malloc(slab_cells * sizeof *run->slab_buffer);
    if (!run->slab_buffer)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a %zu-cell slab of the snapshots", slab_cells);
  }
  const rtm_io_volume_t volume = rtm_app_volume(&run->whole_grid);
  RTM_TRY(rtm_app_create_output(run->h5_path, &volume, run->mpi, &run->info, &run->output));
  for (int f = RTM_FIELD_P; run->stream && f <= RTM_FIELD_Q; ++f)
    if (prop->trace_fields & RTM_FIELD_BIT(f))
      RTM_TRY(rtm_output_traces_begin(
          run->output, rtm_field_name((rtm_field_t)f), prop->receivers.count, run->sampling.samples,
          rtm_trace_stream_window(run->stream), prop->dt_s, prop->receivers.position_m));
  if (run->stream) {
    const rtm_job_queue_t queue = rtm_model_job_queue(run);
    RTM_TRY(rtm_trace_stream_start(run->stream, write_window, run, run->unstable_hint, &queue));
  }
  if (run->snapshot_count > 0 && (run->snapshot_fields & RTM_FIELD_BIT(RTM_FIELD_P)))
    RTM_TRY(rtm_output_snapshots_begin(run->output, "p", run->snapshot_count));
  if (run->snapshot_count > 0 && (run->snapshot_fields & RTM_FIELD_BIT(RTM_FIELD_Q)))
    RTM_TRY(rtm_output_snapshots_begin(run->output, "q", run->snapshot_count));
fail:
  return status;
}

/* Snapshot `level / every - 1` of each field snapshots.fields asks for: each rank's slab
 * written collectively, or by rank 0 as it comes (rank 0 never holds the volume). */
int rtm_model_write_snapshots(model_run_t *run, int level) {
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
    /* the streamed gathers' windows queued so far written first: HDF5 is this thread's */
    RTM_TRY(rtm_io_worker_drain(run->worker));
    RTM_TRY(rtm_app_write_slabs(&run->grid, run->output, run->h5_path, &snapshot, run->field,
                                run->slab_buffer));
    run->slabs_written = 1;
  }
fail:
  return status;
}

/* /traces/<field> with the source (shot < 0), or /shots/<shot>/traces/<field> with the
 * shot's source and receivers: the file's first rank writes (a shot of many on the run's
 * I/O thread, model_writes.c). */
int rtm_model_write_shot(model_run_t *run, int shot, const rtm_shot_gathers_t *g) {
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

/* output.segy = true: SEG-Y can hold these gathers (segyio in the build, the interval in
 * whole microseconds, at most 32767 samples), and dir/name.sgy may be written; before any
 * step. */
int rtm_model_plan_segy(model_run_t *run) {
  char where[RTM_CONFIG_ORIGIN_MAX];
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  if (!cfg->output.segy) return RTM_OK;
  if (!rtm_segy_available())
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.segy = true, but this build has no SEG-Y (install libsegyio-dev and "
             "configure again, or set output.segy = false)",
             rtm_config_origin(cfg, "output.segy", where, sizeof where));
  if (run->prop.receivers.count == 0)
    RTM_FAIL(RTM_ERR_CONFIG, "%s: output.segy = true, but the run records no receivers",
             rtm_config_origin(cfg, "output.segy, receivers.layout", where, sizeof where));
  const double us = run->sampling.trace_dt * 1e6;
  if (fabs(us - round(us)) > 1e-6 * us || round(us) < 1 || round(us) > 32767)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: output.segy = true needs the gathers' interval in whole microseconds (1 to "
             "32767), and it is %.9g s (output.trace_dt %s): set output.trace_dt = %g, say",
             rtm_config_origin(cfg, "output.segy, output.trace_dt", where, sizeof where),
             run->sampling.trace_dt,
             isnan(cfg->output.trace_dt_s) ? "auto: the modelling dt" : "as set",
             floor(us) > 0 ? floor(us) * 1e-6 : 1e-6);
  if (run->sampling.trace_samples > 32767)
    RTM_FAIL(
        RTM_ERR_CONFIG,
        "%s: output.segy = true: %d samples a trace, SEG-Y rev 1 holds at most 32767; "
        "raise output.trace_dt",
        rtm_config_origin(cfg, "output.segy, output.trace_dt, time.steps", where, sizeof where),
        run->sampling.trace_samples);
  snprintf(run->segy_path, sizeof run->segy_path, "%s/%s.sgy", cfg->output.dir, cfg->output.name);
  RTM_TRY(rtm_app_check_overwrite(cfg, run->segy_path, "output.name"));
fail:
  return status;
}

/* The run file closed (and SEG-Y written from it) as partial files, listed in run->outputs
 * to be renamed with the report. */
int rtm_model_close_output(model_run_t *run) {
  int status = RTM_OK;
  char h5_partial[sizeof run->h5_path + 16], segy_partial[sizeof run->segy_path + 16];
  /* each node's planes on the disk, where the ranks wrote any: not a rank of a run whose file
   * only rank 0 writes (many shots, shot groups), which may not even see it */
  if (run->slabs_written) RTM_TRY(rtm_app_sync_slabs(&run->grid, run->h5_path));
  run->end_s = rtm_wall_seconds(); /* a rank without the file ends here (its I/O time) */
  if (!run->root) return RTM_OK;
  RTM_TRY(rtm_io_worker_drain(run->worker)); /* no job under way: HDF5 is this thread's */
  status = rtm_output_finish(run->output, run->outputs); /* frees the output either way */
  run->output = NULL;
  if (status == RTM_OK) /* --force: an earlier NAME.sgy, a migration's figures */
    RTM_TRY(rtm_app_drop_other_outputs(&run->cfg, 0, run->h5_path, run->outputs));
  if (status == RTM_OK && run->segy_path[0]) {
    const unsigned fields = run->prop.trace_fields;
    RTM_TRY(rtm_io_partial_path(run->h5_path, h5_partial, sizeof h5_partial));
    RTM_TRY(rtm_io_outputs_add(run->outputs, run->segy_path, segy_partial, sizeof segy_partial));
    status =
        rtm_segy_write(h5_partial, run->h5_path, fields & RTM_FIELD_BIT(RTM_FIELD_P) ? "p" : "q",
                       segy_partial); /* rtm_model_plan_segy checked it */
  }
  run->end_s = rtm_wall_seconds();
fail:
  return status;
}

/* OUTPUT.json: the phases' times and the propagation's MCells/s, then the summary lines. */
int rtm_model_write_report(model_run_t *run) {
  int status = RTM_OK;
  if (!run->root) return RTM_OK;
  const int steps = run->prop.steps, count = run->shots.count;
  const double propagate_s = run->propagate_s;
  const double mcells =
      propagate_s > 0.0 ? (double)run->cells * steps * count / propagate_s * 1e-6 : 0.0;
  /* setup's parts after the phases: the deck, model and shots; the propagator (device,
   * model upload, point operators); the rest (trace plans, the output file) */
  /* write: this thread's seconds on the gathers after each shot and on the file at the end,
   * its waits for the I/O thread included; written_behind: that thread's seconds writing
   * gathers while the shots ran (or the steps, streamed); writer_waits: the steps' waits
   * for it to free a streamed window's slot (inside propagate) */
  enum { OWN_TIMINGS = 10 };
  rtm_timing_t timings[OWN_TIMINGS + RTM_APP_RANK_TIMINGS] = {
      {"setup", run->setup_s},
      {"propagate", propagate_s},
      {"snapshots", run->snapshot_s},
      {"write", run->write_s + run->end_s - run->loop_end_s},
      {"written_behind", run->behind_s},
      {"writer_waits", run->writer_waits_s},
      {"dispersion_correction", run->correct_s},
      {"setup_load", run->loaded_s - run->start_s},
      {"setup_propagator", run->created_s - run->loaded_s},
      {"setup_output", run->setup_end_s - run->created_s}};
  const int timing_count =
      rtm_mpi_world_size(run->mpi) > 1 ? OWN_TIMINGS + RTM_APP_RANK_TIMINGS : OWN_TIMINGS;
  for (int k = OWN_TIMINGS; k < timing_count; ++k)
    timings[k] = run->rank_timings[k - OWN_TIMINGS];
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
                         .rank_count = rtm_mpi_world_size(run->mpi),
                         .slab_writes = rtm_app_slab_writes(run->mpi)};
  char json_partial[sizeof run->json_path + 16];
  RTM_TRY(rtm_io_outputs_add(run->outputs, run->json_path, json_partial, sizeof json_partial));
  RTM_TRY(rtm_app_write_report(json_partial, &report, &run->whole_grid, &run->prop.ledger));
  RTM_TRY(rtm_io_outputs_commit(run->outputs, &run->lock)); /* together, or none */
  if (rtm_interrupted()) /* after the last step: the outputs went on, whole */
    rtm_log_info("model: %s came while the outputs were written; they are whole",
                 rtm_interrupt_name());
  if (!run->quiet) {
    rtm_log_info("done in %.2f s: propagation %.2f s, %.1f MCells/s", run->end_s - run->start_s,
                 propagate_s, mcells);
    if (run->segy_path[0]) rtm_log_info("wrote %s (SEG-Y)", run->segy_path);
    rtm_log_info("wrote %s and %s", run->h5_path, run->json_path);
  }
fail:
  return status;
}
